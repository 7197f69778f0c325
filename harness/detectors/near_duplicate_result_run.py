"""``near_duplicate_result_run``: the last results of one tool are near-identical calls and results.

The fuzzy twin of ``repeated_result_run``: values are compared after masking
digits, hex ids, UUIDs and whitespace, by word-set or character-shingle
Jaccard, and other tools' results in between are skipped (``docs/neardup.md``).
The detector is registered once ``defaults.json`` has its block.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from loopguard import OptionError, load_defaults

try:  # exported once the library's __init__ re-exports it
    from loopguard import NearDuplicateResultRun  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - depends on the library version
    from loopguard._neardup import NearDuplicateResultRun

from ._base import Detector, Fire, Param, ParameterError, register

__all__ = ["PARAMS", "build"]

_BLOCK = "near_duplicate_result_run"

PARAMS = (
    Param(
        "min_result_repetitions",
        "int",
        low=2,
        high=8,
        description="near-identical results of one tool, the latest included",
    ),
    Param("window", "int", low=2, high=32, description="settled results looked back over"),
    Param(
        "similarity_threshold",
        "float",
        low=0.5,
        high=1.0,
        description="minimum similarity of each result (and arguments) to the latest",
    ),
    Param(
        "method",
        "categorical",
        choices=("jaccard", "shingles"),
        description="word-set Jaccard or character-shingle Jaccard",
    ),
    Param("shingle_size", "int", low=2, high=8, description="characters per shingle (shingles)"),
    Param("compare_arguments", "bool", description="arguments must be near-identical too"),
    Param(
        "max_chars",
        "int",
        low=200,
        high=20000,
        log=True,
        nullable=True,
        description="compare only this many normalised characters (null: all)",
    ),
)


class _Adapter:
    __slots__ = ("_monitor",)

    def __init__(self, options: Mapping[str, Any]) -> None:
        self._monitor = NearDuplicateResultRun(**options)

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
        NearDuplicateResultRun(**options)  # refuse bad values before any case runs
    except OptionError as exc:
        raise ParameterError(f"{_BLOCK}: {exc}") from None
    return lambda: _Adapter(options)


# Registered only once loopguard/defaults.json has the block, so that the
# registry (which imports every module here) keeps working before it is merged.
if _BLOCK in load_defaults()["detectors"]:
    register(
        Detector(
            name=_BLOCK,
            kind="thread",
            description="NearDuplicateResultRun: the last results of one tool are near-identical",
            defaults_key=_BLOCK,
            params=PARAMS,
            build=build,
        )
    )
