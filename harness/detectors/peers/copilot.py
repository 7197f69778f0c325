"""GitHub Copilot's completion repetition filter: ``copilot_repetition``.

Source: ``microsoft/vscode-copilot-chat``,
``src/extension/completions-core/vscode-node/lib/src/suggestions/anomalyDetection.ts``
(``isRepetitive``; the same table ships minified in the ``github.copilot``
extension). A completion is dropped when, for one of four rules, its last
``window`` tokens are a repetition of a pattern of at most ``pattern`` tokens
(the last repetition may be cut short): 10 tokens of a 1-token pattern, 30 of
10, 45 of 20, 60 of 30. The period is read off the Knuth-Morris-Pratt prefix
function of the reversed tokens. The check runs on all tokens and again on the
tokens that are not whitespace.

Our tokens are whitespace-delimited words (``tokens="words"``), or words and
whitespace runs (``"words_and_spaces"``, where the second pass matters). The
check runs after every completed token of the streamed message (the last word
of a message, never followed by whitespace, is not checked).

Examples
--------
>>> from harness.detectors.peers import copilot
>>> adapter = copilot.DETECTOR.make({})()
>>> adapter.push("ok " * 9) is None, adapter.push("ok ").reason["pattern_length"]
(True, 1)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from itertools import islice
from typing import Any

from loopguard._js import JS_WHITESPACE

from .._base import Fire, Param, register
from ._data import peer_detector
from ._text import TOKEN_MODES, WordStream

__all__ = ["DETECTOR", "RULES", "CopilotAdapter", "period_of_tail", "prefix_function"]

#: The four rules, as (window parameter, pattern parameter) names.
RULES = (
    ("window_1", "pattern_1"),
    ("window_2", "pattern_2"),
    ("window_3", "pattern_3"),
    ("window_4", "pattern_4"),
)


def prefix_function(tokens: Sequence[str]) -> list[int]:
    """``kmp_prefix_function``: ``pi[i]`` is the end index of the longest proper border
    of ``tokens[: i + 1]`` (``-1`` when there is none).

    Examples
    --------
    >>> prefix_function(["a", "b", "a", "b", "a"])
    [-1, -1, 0, 1, 2]
    """
    pi = [-1] * len(tokens)
    k = -1
    for q in range(1, len(tokens)):
        while k >= 0 and tokens[k + 1] != tokens[q]:
            k = pi[k]
        if tokens[k + 1] == tokens[q]:
            k += 1
        pi[q] = k
    return pi


def period_of_tail(backwards: Sequence[str], rules: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """``isRepeatedPattern`` on tokens listed newest first: the first rule that holds.

    Returns ``(window, period)``, or ``(0, 0)`` when no rule holds.

    Examples
    --------
    >>> period_of_tail(list("abcabcabcx"), [(9, 3)]), period_of_tail(list("xabcabcabc"), [(9, 3)])
    ((9, 3), (0, 0))
    """
    if not backwards:
        return 0, 0
    pi = prefix_function(backwards)
    for window, longest in rules:
        if len(backwards) < window:
            continue
        period = window - 1 - pi[window - 1]
        if period <= longest:
            return window, period
    return 0, 0


class CopilotAdapter:
    """Per-message state of ``copilot_repetition``."""

    __slots__ = ("_all", "_reach", "_rules", "_spaces", "_span", "_words", "_words_only")

    def __init__(self, params: Mapping[str, Any]) -> None:
        self._rules = [(params[w], params[p]) for w, p in RULES]
        self._span = max(window for window, _ in self._rules)
        self._reach = max(pattern for _, pattern in self._rules)
        self._spaces = params["tokens"] == "words_and_spaces"
        self._words = WordStream(params["tokens"])
        self._all: deque[str] = deque(maxlen=self._span)
        self._words_only: deque[str] = deque(maxlen=self._span)

    def push(self, chunk: str) -> Fire | None:
        for token in self._words.push(chunk):
            self._all.appendleft(token)
            passes = [("all", self._all)]
            if self._spaces and token.strip(JS_WHITESPACE):
                self._words_only.appendleft(token)
                passes.append(("non_whitespace", self._words_only))
            for name, tokens in passes:
                # A period p (1 <= p <= pattern < window) needs the newest token p back.
                if tokens[0] not in islice(tokens, 1, self._reach + 1):
                    continue
                window, period = period_of_tail(list(tokens), self._rules)
                if window:
                    return Fire(
                        {
                            "check": "repetitive",
                            "tokens": name,
                            "window": window,
                            "pattern_length": period,
                            "pattern": [tokens[i] for i in range(period - 1, -1, -1)],
                        }
                    )
        return None


def _build(params: Mapping[str, Any]) -> Callable[[], CopilotAdapter]:
    options = dict(params)
    return lambda: CopilotAdapter(options)


DETECTOR = register(
    peer_detector(
        name="copilot_repetition",
        kind="stream",
        description="GitHub Copilot: the last 10/30/45/60 tokens repeat a 1/10/20/30-token pattern",
        params=(
            # Every pattern bound is below its window's lower bound: a pattern as
            # long as the window would match any text.
            Param("window_1", "int", low=4, high=30, description="tokens of rule 1"),
            Param("pattern_1", "int", low=1, high=3, description="longest pattern of rule 1"),
            Param("window_2", "int", low=16, high=60, description="tokens of rule 2"),
            Param("pattern_2", "int", low=2, high=15, description="longest pattern of rule 2"),
            Param("window_3", "int", low=25, high=90, description="tokens of rule 3"),
            Param("pattern_3", "int", low=5, high=24, description="longest pattern of rule 3"),
            Param("window_4", "int", low=41, high=120, description="tokens of rule 4"),
            Param("pattern_4", "int", low=10, high=40, description="longest pattern of rule 4"),
            Param(
                "tokens",
                "categorical",
                choices=TOKEN_MODES,
                description="words, or words and whitespace runs",
            ),
        ),
        build=_build,
    )
)
