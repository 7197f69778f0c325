"""``stall``: nothing new (tool, arguments, result, state) in the last steps.

The Anti-Looping Monitor's drift idea for traces without state snapshots
(``docs/neardup.md``). The detector is registered once ``defaults.json`` has
its block.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from loopguard import OptionError, load_defaults

try:  # exported once the library's __init__ re-exports it
    from loopguard import StallDetector  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - depends on the library version
    from loopguard._stall import StallDetector

from ._base import Detector, Fire, Param, ParameterError, register

__all__ = ["PARAMS", "build"]

_BLOCK = "stall"

PARAMS = (
    Param("steps", "int", low=2, high=32, description="steps in a row without anything new"),
    Param(
        "min_novelty",
        "float",
        low=0.0,
        high=0.9,
        description="share of a value's distinct words that must be unseen for it to be new",
    ),
    Param("include_text", "bool", description="bot messages count as steps too"),
)


class _Adapter:
    __slots__ = ("_monitor",)

    def __init__(self, options: Mapping[str, Any]) -> None:
        self._monitor = StallDetector(**options)

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
        StallDetector(**options)
    except OptionError as exc:
        raise ParameterError(f"{_BLOCK}: {exc}") from None
    return lambda: _Adapter(options)


# Registered only once loopguard/defaults.json has the block (see near_duplicate_result_run).
if _BLOCK in load_defaults()["detectors"]:
    register(
        Detector(
            name=_BLOCK,
            kind="thread",
            description="StallDetector: no new tool, argument, result or state in the last steps",
            defaults_key=_BLOCK,
            params=PARAMS,
            build=build,
        )
    )
