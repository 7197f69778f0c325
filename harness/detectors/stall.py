"""``stall``: nothing new (tool, arguments, result, state) in the last steps.

The Anti-Looping Monitor's drift idea for traces without state snapshots
(``docs/neardup.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loopguard import StallDetector

from ._base import Detector, Param, register
from ._monitor import monitor_build

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


def _make(options: Mapping[str, Any]) -> StallDetector:
    return StallDetector(**options)


build = monitor_build(_BLOCK, _make)

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
