"""``repeated_suffix``: the thread ends in a verbatim repeating block of messages.

Evaluated on every prefix with :class:`~harness.detectors._incremental.SuffixCheck`,
which gives ``has_repeated_suffix(prefix, **params)`` without re-serialising the
earlier messages.
"""

from __future__ import annotations

from ._base import Detector, Param, incremental_check, register
from ._incremental import SuffixCheck

__all__ = ["PARAMS"]

_BLOCK = "repeated_suffix"

PARAMS = (
    Param(
        "min_repetitions", "int", low=1, high=6, block=_BLOCK, description="times the block repeats"
    ),
    Param(
        "min_pattern_length",
        "int",
        low=1,
        high=6,
        block=_BLOCK,
        description="shortest block, in messages",
    ),
    Param(
        "max_pattern_length",
        "int",
        low=1,
        high=20,
        nullable=True,
        block=_BLOCK,
        description="longest block (null: messages // min_repetitions)",
    ),
)

register(
    Detector(
        name="repeated_suffix",
        kind="thread",
        description="has_repeated_suffix on every prefix of the thread",
        defaults_key=_BLOCK,
        params=PARAMS,
        build=incremental_check(SuffixCheck, "repeated_suffix"),
    )
)
