"""vLLM's ``repetition_detection`` stop condition: ``vllm_repetition``.

Source: ``vllm-project/vllm``, ``vllm/v1/core/sched/utils.py``
(``check_sequence_repetition``, called from ``check_stop`` after every sampled
token) and ``vllm/sampling_params.py`` (``RepetitionDetectionParams``).
Generation stops when, for some pattern size from ``min_pattern_size`` to
``max_pattern_size`` (smallest first), the last ``size`` tokens equal each of
the ``min_count - 1`` blocks of ``size`` tokens before them. vLLM ships it off
(every field 0); the defaults here are documented in ``docs/peers.md``.

Our tokens are whitespace-delimited words, checked after every completed word
of the streamed message. A size ``s`` can only match if the newest token also
occurred ``s`` tokens earlier, so only those sizes are compared: the same
first match as trying every size in order, in time linear in the occurrences.

Examples
--------
>>> from harness.detectors.peers import vllm
>>> adapter = vllm.DETECTOR.make({})()
>>> adapter.push("go on go on ") is None, adapter.push("go on ").reason["pattern_size"]
(True, 2)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._base import Fire, Param, ParameterError, register
from ._data import peer_detector
from ._text import WordStream

__all__ = ["DETECTOR", "VllmAdapter", "has_repeating_pattern"]


def has_repeating_pattern(tokens: list[str], size: int, count: int) -> bool:
    """``_has_repeating_pattern``: the last ``size`` tokens repeat ``count`` times in a row.

    Examples
    --------
    >>> has_repeating_pattern(list("xabab"), 2, 2), has_repeating_pattern(list("xabab"), 2, 3)
    (True, False)
    """
    if size * count > len(tokens):
        return False
    for n in range(1, size + 1):
        target = tokens[-n]
        for m in range(1, count):
            if tokens[-(size * m + n)] != target:
                return False
    return True


class VllmAdapter:
    """Per-message state of ``vllm_repetition``: the tokens and where each occurred."""

    __slots__ = ("_count", "_max", "_min", "_positions", "_tokens", "_words")

    def __init__(self, params: Mapping[str, Any]) -> None:
        self._min: int = params["min_pattern_size"]
        self._max: int = params["max_pattern_size"]
        self._count: int = params["min_count"]
        self._words = WordStream("words")
        self._tokens: list[str] = []
        self._positions: dict[str, list[int]] = {}

    def push(self, chunk: str) -> Fire | None:
        for token in self._words.push(chunk):
            size = self._add(token)
            if size:
                return Fire(
                    {
                        "check": "repetition_detected",
                        "pattern_size": size,
                        "count": self._count,
                        "pattern": self._tokens[-size:],
                    }
                )
        return None

    def _add(self, token: str) -> int:
        tokens = self._tokens
        index = len(tokens)
        tokens.append(token)
        seen = self._positions.setdefault(token, [])
        found = 0
        for earlier in reversed(seen):
            size = index - earlier
            if size > self._max or size * self._count > len(tokens):
                break
            if size >= self._min and has_repeating_pattern(tokens, size, self._count):
                found = size
                break
        seen.append(index)
        return found


def _build(params: Mapping[str, Any]) -> Callable[[], VllmAdapter]:
    options = dict(params)
    if options["min_pattern_size"] > options["max_pattern_size"]:
        raise ParameterError(
            "vllm_repetition: min_pattern_size must be at most max_pattern_size; got "
            f"{options['min_pattern_size']} > {options['max_pattern_size']}"
        )
    return lambda: VllmAdapter(options)


DETECTOR = register(
    peer_detector(
        name="vllm_repetition",
        kind="stream",
        description="vLLM repetition_detection: the tail repeats a 1..20-word pattern 3 times",
        params=(
            Param("min_pattern_size", "int", low=1, high=64, description="shortest pattern, words"),
            Param(
                "max_pattern_size",
                "int",
                low=1,
                high=1024,
                log=True,
                description="longest pattern, words",
            ),
            Param("min_count", "int", low=2, high=10, description="times the pattern repeats"),
        ),
        build=_build,
    )
)
