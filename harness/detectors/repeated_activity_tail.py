"""``repeated_activity_tail``: a trailing run of tool calls re-treading a few signatures."""

from __future__ import annotations

from loopguard import has_repeated_activity_tail

from ._base import Detector, Param, prefix_check, register

__all__ = ["PARAMS"]

_BLOCK = "repeated_activity_tail"

PARAMS = (
    Param("min_tail_length", "int", low=4, high=16, block=_BLOCK, description="activity messages"),
    Param("min_io_count", "int", low=2, high=8, block=_BLOCK, description="inputs and outputs"),
    Param(
        "compression_factor",
        "float",
        low=1.5,
        high=4.0,
        block=_BLOCK,
        description="tail length / distinct signatures",
    ),
    Param(
        "progress_repeats",
        "int",
        low=2,
        high=6,
        block=_BLOCK,
        description="repeats with all-distinct outputs that count as progress",
    ),
)

register(
    Detector(
        name="repeated_activity_tail",
        kind="thread",
        description="has_repeated_activity_tail on every prefix of the thread",
        defaults_key=_BLOCK,
        params=PARAMS,
        build=prefix_check(has_repeated_activity_tail, "repeated_activity_tail"),
    )
)
