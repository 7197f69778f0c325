"""``error_retry``: the same tool error came back several times within a few calls.

Whatever the arguments: errors are compared by their normalised first
characters (``docs/neardup.md`` says what counts as an error). The detector is
registered once ``defaults.json`` has its block.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from loopguard import OptionError, load_defaults

try:  # exported once the library's __init__ re-exports it
    from loopguard import ErrorRetry  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - depends on the library version
    from loopguard._neardup import ErrorRetry

from ._base import Detector, Fire, Param, ParameterError, register

__all__ = ["PARAMS", "build"]

_BLOCK = "error_retry"

PARAMS = (
    Param("min_errors", "int", low=2, high=8, description="similar errors, the latest included"),
    Param("window", "int", low=2, high=64, description="settled results looked back over"),
    Param(
        "similarity_threshold",
        "float",
        low=0.3,
        high=1.0,
        description="minimum Jaccard similarity of two error signatures",
    ),
    Param("same_tool", "bool", description="count only errors of the same tool"),
    Param(
        "head_chars",
        "int",
        low=40,
        high=2000,
        log=True,
        description="characters of a result read for error markers and the signature",
    ),
)


class _Adapter:
    __slots__ = ("_monitor",)

    def __init__(self, options: Mapping[str, Any]) -> None:
        self._monitor = ErrorRetry(**options)

    def append(self, message: Mapping[str, Any]) -> Fire | None:
        if not self._monitor.append(message):
            return None
        return Fire(dict(self._monitor.last_match or {}))

    def finish(self) -> Mapping[str, Any] | None:
        return None


def build(params: Mapping[str, Any]) -> Callable[[], _Adapter]:
    """The adapter factory for complete parameters (``Detector.build``)."""
    options = dict(params)
    try:
        ErrorRetry(**options)
    except OptionError as exc:
        raise ParameterError(f"{_BLOCK}: {exc}") from None
    return lambda: _Adapter(options)


# Registered only once loopguard/defaults.json has the block (see near_duplicate_result_run).
if _BLOCK in load_defaults()["detectors"]:
    register(
        Detector(
            name=_BLOCK,
            kind="thread",
            description="ErrorRetry: the same tool error several times within a window of calls",
            defaults_key=_BLOCK,
            params=PARAMS,
            build=build,
        )
    )
