"""``near_duplicate_result_run``: the last results of one tool are near-identical calls and results.

The fuzzy twin of ``repeated_result_run``: values are compared after masking
digits, hex ids, UUIDs and whitespace, by word-set or character-shingle
Jaccard, and other tools' results in between are skipped (``docs/neardup.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loopguard import NearDuplicateResultRun

from ._base import Detector, Param, register
from ._monitor import monitor_build

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


def _make(options: Mapping[str, Any]) -> NearDuplicateResultRun:
    return NearDuplicateResultRun(**options)


build = monitor_build(_BLOCK, _make)

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
