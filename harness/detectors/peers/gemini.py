"""Gemini CLI's loop detection service: ``gemini_tool_cycle`` and ``gemini_chanting``.

Source: ``google-gemini/gemini-cli``,
``packages/core/src/services/loopDetectionService.ts`` (``LoopDetectionService``).
The LLM judge it runs after 30 turns is not reproduced. See ``docs/peers.md``.

``gemini_tool_cycle`` (thread): every tool call is keyed by
``sha256(name + ":" + JSON.stringify(args))`` (JavaScript's ``JSON.stringify``:
insertion key order with integer-like keys first, compact separators, absent
arguments give the text ``undefined``); the last ``history`` keys are kept; it
fires when the call history ends in a block of 1..``max_cycle_length`` calls
repeated ``repeats`` times. A ``user`` message starts a new prompt, which resets
the service.

``gemini_chanting`` (stream, the answer text, not reasoning): every
``window``-unit substring of the streamed text (history capped at ``history``
UTF-16 units) is recorded; it fires when one occurs ``threshold`` times with a
mean gap of at most ``gap_factor * window`` and at most ``threshold // 2``
distinct texts between consecutive occurrences. Each chunk first goes through
the source's prefilters: code fences are skipped; a chunk with a table, list
item, heading, blockquote or divider resets the tracking. Two of those regexes
are buggy in the source and reproduced unless ``fix_prefilter_bugs``.

Examples
--------
>>> from harness.detectors.peers import gemini
>>> call = {"type": "activity", "text": "", "meta": {"activity": {"type": "request",
...     "function": {"name": "ls", "arguments": {"path": "."}}}}}
>>> adapter = gemini.TOOL_CYCLE.make({})()
>>> [adapter.append(call) is not None for _ in range(5)]
[False, False, False, False, True]
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Mapping
from itertools import pairwise
from typing import Any

from .._base import Fire, Param, is_model_text, register
from ._data import peer_detector
from ._text import JS_WS, to_utf16_units
from ._tools import CallReader, stringify

__all__ = [
    "CHANTING",
    "DIVIDER_BUGGY",
    "DIVIDER_FIXED",
    "LIST_ITEM_BUGGY",
    "LIST_ITEM_FIXED",
    "TOOL_CYCLE",
    "ChantingAdapter",
    "ToolCycleAdapter",
    "tool_call_key",
]


def tool_call_key(name: str, arguments: Any) -> str:
    """``getToolCallKey``: sha256 hex of ``name + ":" + JSON.stringify(args)`` (UTF-8).

    Examples
    --------
    >>> tool_call_key("ls", {"path": "."}) == hashlib.sha256(b'ls:{"path":"."}').hexdigest()
    True
    """
    text = f"{name}:{stringify(arguments)}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ToolCycleAdapter:
    """Per-case state of ``gemini_tool_cycle``."""

    follow_after_fire = False

    def __init__(self, params: Mapping[str, Any]) -> None:
        self._repeats: int = params["repeats"]
        self._max_cycle: int = params["max_cycle_length"]
        self._calls: deque[tuple[str, str]] = deque(maxlen=params["history"])
        self._reader = CallReader()

    def append(self, message: Mapping[str, Any]) -> Fire | None:
        if message.get("type") == "user":
            # A user message is a new prompt: the service is reset (reset(promptId)).
            self._calls.clear()
            return None
        for event in self._reader.read(message):
            if event.kind != "call":
                continue
            self._calls.append((tool_call_key(event.name, event.arguments), event.name))
            length = self._cycle_length()
            if length:
                tail = list(self._calls)[-length:]
                check = "consecutive_identical_tool_calls" if length == 1 else "tool_call_cycle"
                return Fire(
                    {
                        "check": check,
                        "cycle_length": length,
                        "repeats": self._repeats,
                        "tools": [name for _, name in tail],
                    }
                )
        return None

    def _cycle_length(self) -> int:
        calls = list(self._calls)
        for length in range(1, self._max_cycle + 1):
            span = length * self._repeats
            if span > len(calls):
                break
            tail = calls[-span:]
            if all(tail[i][0] == tail[i - length][0] for i in range(length, span)):
                return length
        return 0

    def finish(self) -> None:
        return None


# The source's prefilters, as JavaScript reads them (no flags: ^ and $ are the
# ends of the chunk; . stops at JS line terminators; \s is JS whitespace).
_DOT = "[^\n\r\u2028\u2029]"
_TABLE = re.compile(rf"(?:^|\n){JS_WS}*(?:\|{_DOT}*\||[|+-]{{3,}})")
_NUMBERED = re.compile(rf"(?:^|\n){JS_WS}*[0-9]+\.{JS_WS}")
_HEADING = re.compile(rf"(?:^|\n)#+{JS_WS}")
_BLOCKQUOTE = re.compile(rf"(?:^|\n)>{JS_WS}")
#: The source's list-item class ``[*-+]`` is the range U+002A..U+002B: ``*`` and ``+``, not ``-``.
LIST_ITEM_BUGGY = re.compile(rf"(?:^|\n){JS_WS}*[*-+]{JS_WS}")
#: The fix (Qwen Code's): ``-`` first, a literal.
LIST_ITEM_FIXED = re.compile(rf"(?:^|\n){JS_WS}*[-*+]{JS_WS}")
#: The source's divider class ``[+-_=*...]`` has the range U+002B..U+005F: digits, capitals...
DIVIDER_BUGGY = re.compile("[+-_=*\u2500-\u257f]+")
#: The fix: only the box-drawing span is a range.
DIVIDER_FIXED = re.compile("[-+_=*\u2500-\u257f]+")


class ChantingAdapter:
    """Per-message state of ``gemini_chanting`` (``checkContentLoop``).

    Positions are absolute UTF-16 offsets into the text appended since the last
    reset; ``_base`` is the offset of the first unit still in the history. The
    source re-bases every stored offset on each truncation; dropping offsets
    below ``_base`` when a window's list is next read gives the same lists.
    """

    __slots__ = (
        "_base",
        "_divider",
        "_gap",
        "_history",
        "_in_code",
        "_list_item",
        "_max_history",
        "_pos",
        "_purged",
        "_stats",
        "_threshold",
        "_window",
    )

    def __init__(self, params: Mapping[str, Any]) -> None:
        self._window: int = params["window"]
        self._max_history: int = params["history"]
        self._threshold: int = params["threshold"]
        self._gap: float = params["gap_factor"] * params["window"]
        fixed = params["fix_prefilter_bugs"]
        self._list_item = LIST_ITEM_FIXED if fixed else LIST_ITEM_BUGGY
        self._divider = DIVIDER_FIXED if fixed else DIVIDER_BUGGY
        self._in_code = False
        self._reset()

    def _reset(self) -> None:
        self._history = ""
        self._base = 0
        self._pos = 0
        self._purged = 0
        self._stats: dict[str, list[int]] = {}

    def push(self, chunk: str) -> Fire | None:
        content = to_utf16_units(chunk)
        fences = content.count("```")
        divider = self._divider.fullmatch(content) is not None
        if (
            fences
            or divider
            or _TABLE.search(content)
            or self._list_item.search(content)
            or _NUMBERED.search(content)
            or _HEADING.search(content)
            or _BLOCKQUOTE.search(content)
        ):
            self._reset()
        was_in_code = self._in_code
        if fences % 2:
            self._in_code = not self._in_code
        if was_in_code or self._in_code or divider:
            return None
        self._history += content
        excess = len(self._history) - self._max_history
        if excess > 0:
            self._history = self._history[excess:]
            self._base += excess
            self._pos = max(self._pos, self._base)
            if self._base - self._purged > self._max_history:
                self._purge()
        return self._analyze()

    def _purge(self) -> None:
        # Drop windows whose every offset fell out of the history (the source deletes them).
        base = self._base
        self._stats = {k: v for k, v in self._stats.items() if v[-1] >= base}
        self._purged = base

    def _analyze(self) -> Fire | None:
        window, base, history = self._window, self._base, self._history
        end = base + len(history)
        while self._pos + window <= end:
            start = self._pos - base
            text = history[start : start + window]
            fire = self._record(text, self._pos)
            if fire is not None:
                return fire
            self._pos += 1
        return None

    def _record(self, text: str, pos: int) -> Fire | None:
        seen = self._stats.get(text)
        if seen:
            stale = bisect_left(seen, self._base)
            if stale:
                del seen[:stale]
        if not seen:
            self._stats[text] = [pos]
            return None
        seen.append(pos)
        threshold = self._threshold
        if len(seen) < threshold:
            return None
        recent = seen[-threshold:]
        mean_gap = (recent[-1] - recent[0]) / (threshold - 1)
        if mean_gap > self._gap:
            return None
        base = self._base
        periods = {self._history[a - base : b - base] for a, b in pairwise(recent)}
        if len(periods) > threshold // 2:
            return None
        readable = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return Fire(
            {
                "check": "chanting",
                "window": readable,
                "occurrences": threshold,
                "mean_gap": mean_gap,
                "periods": len(periods),
            }
        )


def _answer_text(message: Mapping[str, Any]) -> bool:
    # Gemini checks Content events (the answer), not Thought events.
    return message.get("type") != "reasoning" and is_model_text(message)


def _tool_cycle_build(params: Mapping[str, Any]) -> Callable[[], ToolCycleAdapter]:
    options = dict(params)
    return lambda: ToolCycleAdapter(options)


def _chanting_build(params: Mapping[str, Any]) -> Callable[[], ChantingAdapter]:
    options = dict(params)
    return lambda: ChantingAdapter(options)


TOOL_CYCLE = register(
    peer_detector(
        name="gemini_tool_cycle",
        kind="thread",
        description="Gemini CLI: a cycle of 1..5 identical tool calls repeated 5 times",
        params=(
            Param("repeats", "int", low=2, high=10, description="times the cycle repeats"),
            Param("max_cycle_length", "int", low=1, high=8, description="longest cycle, in calls"),
            Param("history", "int", low=5, high=100, description="calls kept"),
        ),
        build=_tool_cycle_build,
    )
)

CHANTING = register(
    peer_detector(
        name="gemini_chanting",
        kind="stream",
        description="Gemini CLI: one 50-unit window chanted 10 times in the streamed answer",
        params=(
            Param("window", "int", low=10, high=200, description="window length, UTF-16 units"),
            Param("history", "int", low=500, high=20000, log=True, description="units of history"),
            Param("threshold", "int", low=3, high=30, description="occurrences that trip it"),
            Param(
                "gap_factor",
                "float",
                low=1.0,
                high=10.0,
                description="largest mean gap between occurrences, in windows",
            ),
            Param(
                "fix_prefilter_bugs",
                "bool",
                description="fix the list-item and divider regexes of the source",
            ),
        ),
        build=_chanting_build,
        reads=_answer_text,
    )
)
