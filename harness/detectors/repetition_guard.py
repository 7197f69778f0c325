"""``repetition_guard``: the streaming ``RepetitionGuard`` on each model message.

Without ``--params`` it runs with the library's defaults (``min_chars`` 0); the
production wiring's ``min_chars`` 2000 is the preset ``production``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from loopguard import RepetitionGuard

from ._base import Detector, Fire, Param, register

__all__ = ["PARAMS"]

_BLOCK = "repetition_guard"

PARAMS = (
    Param("ngram", "int", low=2, high=8, description="words per tracked phrase"),
    Param("window", "int", low=16, high=256, description="words of history"),
    Param("max_repeats", "int", low=2, high=10, description="occurrences that trip it"),
    Param(
        "max_unique_ratio",
        "float",
        low=0.1,
        high=0.9,
        description="distinct words / words ceiling of the window",
    ),
    Param("min_chars", "int", low=0, high=4000, description="characters before it may trip"),
)


class _Adapter:
    __slots__ = ("_guard", "_push")

    def __init__(self, options: Mapping[str, Any]) -> None:
        self._guard = RepetitionGuard(**options)
        self._push = self._guard.push

    def push(self, chunk: str) -> Fire | None:
        if not self._push(chunk):
            return None
        reason = self._guard.reason()
        return Fire(reason.as_dict() if reason is not None else "repetition_guard")


def _build(params: Mapping[str, Any]) -> Callable[[], _Adapter]:
    options = dict(params)
    return lambda: _Adapter(options)


register(
    Detector(
        name="repetition_guard",
        kind="stream",
        description="RepetitionGuard fed each model message's chunks (fresh guard per message)",
        defaults_key=_BLOCK,
        params=PARAMS,
        build=_build,
    )
)
