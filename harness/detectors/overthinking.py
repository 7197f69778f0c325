"""``overthinking``: the ``OverthinkingDetector`` on each reasoning message's chunks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loopguard import OverthinkingDetector

from ._base import Detector, Fire, Param, reads_types, register
from ._monitor import checked_build

__all__ = ["PARAMS"]

_LEXICONS = ("seed", "nowait", "self_braking", "dynasor", "r1", "union")

PARAMS = (
    Param("max_doubt_markers", "int", low=1, high=20, description="doubt markers that fire"),
    Param("window_size_words", "int", low=20, high=200, description="words before scoring"),
    Param(
        "repetition_threshold",
        "float",
        low=0.3,
        high=0.95,
        description="repetition score that fires",
    ),
    Param(
        "max_thinking_tokens_hard_cap",
        "int",
        low=512,
        high=16384,
        log=True,
        description="estimated thinking tokens that fire",
    ),
    Param("lexicon", "categorical", choices=_LEXICONS, description="doubt-marker lexicon"),
    Param(
        "counting",
        "categorical",
        choices=("per_chunk", "occurrences"),
        description="markers once per chunk per pattern, or every occurrence",
    ),
    Param(
        "density_threshold",
        "float",
        low=1.0,
        high=200.0,
        log=True,
        nullable=True,
        description="doubt markers per 1000 words instead of max_doubt_markers (null: off)",
    ),
)


class _Adapter:
    __slots__ = ("_analyze",)

    def __init__(self, options: Mapping[str, Any]) -> None:
        self._analyze = OverthinkingDetector(**options).analyze_chunk

    def push(self, chunk: str) -> Fire | None:
        result = self._analyze(chunk)
        if not result.is_loop_detected:
            return None
        return Fire(
            {
                "reason": result.reason,
                "doubt_count": result.doubt_count,
                "repetition_score": result.repetition_score,
            }
        )


_build = checked_build("overthinking", lambda options: OverthinkingDetector(**options), _Adapter)

register(
    Detector(
        name="overthinking",
        kind="stream",
        description="OverthinkingDetector fed each reasoning message's chunks (fresh per message)",
        defaults_key="overthinking",
        params=PARAMS,
        build=_build,
        reads=reads_types("reasoning"),
    )
)
