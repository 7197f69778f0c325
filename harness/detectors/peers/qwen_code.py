"""Qwen Code's loop detection service: ``qwen_code``.

Source: ``QwenLM/qwen-code``, ``packages/core/src/services/loopDetectionService.ts``
(a fork of Gemini CLI's), with ``utils/tool-call-repeat-key.ts`` and
``utils/thoughtUtils.ts``. Three checks, in the source's order:

* ``consecutive_identical_tool_calls``: ``tool_call_threshold`` (5) identical
  calls in a row, the key being
  ``sha256(name + ":" + JSON.stringify(args with keys sorted at every depth))``.
  For a *polling* (stateful read) tool the guard is result-aware: at the
  threshold, if every result seen in the streak was recorded and one of them
  changed, the streak restarts instead of firing;
* ``alternating_tool_call_pattern``: the last ``2 * alternating_cycles`` call
  keys alternate between two distinct keys (A B A B A B), unless a polling
  participant's recorded results in that window changed;
* ``repetitive_thoughts``: the last ``thought_threshold`` thought summaries are
  identical. Each ``reasoning`` message is one thought; its signature is the
  ``**subject**`` and the rest of the text (the description, first 200 UTF-16
  units), trimmed and lower-cased. A tool call clears the thoughts.

A ``user`` message starts a new prompt, which resets everything. Which tools
are polling tools is the categorical ``polling_tools``: a named set of tool
names from the peers' ``defaults.json`` (``qwen``: the source's
``task_list``; ``none``), or ``all``.

Examples
--------
>>> from harness.detectors.peers import qwen_code
>>> think = {"type": "reasoning", "text": "**Checking** the config again"}
>>> adapter = qwen_code.DETECTOR.make({})()
>>> [getattr(adapter.append(think), "reason", None) for _ in range(3)][-1]["check"]
'repetitive_thoughts'
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._base import Fire, Param, register
from ._data import constants, peer_detector
from ._text import utf16_head
from ._tools import CallReader, canonical, stringify_sorted

__all__ = ["DETECTOR", "QwenAdapter", "parse_thought", "repeat_key", "thought_signature"]

_CONSTANTS = constants("qwen_code")
_SETS: dict[str, frozenset[str]] = {
    name: frozenset(tools) for name, tools in _CONSTANTS["polling_tool_sets"].items()
}
_DESCRIPTION_UNITS: int = _CONSTANTS["thought_description_units"]
_ALL = "all"


def repeat_key(name: str, arguments: Any) -> str:
    """``getToolCallRepeatKey`` (legacy tool-name aliases are not resolved).

    Examples
    --------
    >>> repeat_key("ls", {"b": 1, "a": 2}) == repeat_key("ls", {"a": 2, "b": 1})
    True
    """
    text = f"{name}:{stringify_sorted(arguments, deep=True)}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def parse_thought(text: str) -> tuple[str, str]:
    """``parseThought``: (subject, description); the subject is the first ``**...**``.

    Examples
    --------
    >>> parse_thought("I am **Planning the fix** now")
    ('Planning the fix', 'I am  now')
    >>> parse_thought("no subject")
    ('', 'no subject')
    """
    start = text.find("**")
    end = text.find("**", start + 2) if start != -1 else -1
    if end == -1:
        return "", text
    return text[start + 2 : end].strip(), (text[:start] + text[end + 2 :]).strip()


def thought_signature(text: str) -> str:
    """``trackThought``'s signature: ``subject|description``, lower-cased, description capped."""
    subject, description = parse_thought(text)
    head = utf16_head(description.strip().lower(), _DESCRIPTION_UNITS)
    return f"{subject.strip().lower()}|{head}"


@dataclass
class _Streak:
    """``statefulRepeatState`` of one key: result evidence within the current streak."""

    observed: int = 0
    unchanged: int = 0
    last: str | None = None


@dataclass
class _State:
    last_key: str | None = None
    count: int = 0
    streaks: dict[str, _Streak] = field(default_factory=dict)
    window: list[str] = field(default_factory=list)
    history: dict[str, list[str]] = field(default_factory=dict)
    in_flight: dict[str, int] = field(default_factory=dict)
    stateful_keys: set[str] = field(default_factory=set)
    thoughts: list[str] = field(default_factory=list)


class QwenAdapter:
    """Per-case state of ``qwen_code``."""

    follow_after_fire = False

    def __init__(self, params: Mapping[str, Any]) -> None:
        self._threshold: int = params["tool_call_threshold"]
        self._cycles: int = params["alternating_cycles"]
        self._thought_threshold: int = params["thought_threshold"]
        choice: str = params["polling_tools"]
        self._polling_all = choice == _ALL
        self._polling: frozenset[str] = _SETS.get(choice, frozenset())
        self._reader = CallReader()
        self._state = _State()

    def _is_polling(self, name: str) -> bool:
        return self._polling_all or name in self._polling

    def append(self, message: Mapping[str, Any]) -> Fire | None:
        kind = message.get("type")
        if kind == "user":
            self._state = _State()
            self._reader.reset()
            return None
        if kind == "reasoning":
            text = message.get("text")
            if isinstance(text, str) and text:
                return self._thought(text)
            return None
        for event in self._reader.read(message):
            key = repeat_key(event.name, event.arguments)
            if event.kind == "result":
                if self._is_polling(event.name):
                    self._record_result(key, canonical(event.result))
                continue
            reason = self._call(event.name, key)
            if reason is not None:
                return Fire({"check": reason, "tool": event.name})
        return None

    def finish(self) -> None:
        return None

    # -- tool calls -----------------------------------------------------------------

    def _call(self, name: str, key: str) -> str | None:
        state = self._state
        state.thoughts.clear()
        polling = self._is_polling(name)
        if polling:
            state.stateful_keys.add(key)
            state.in_flight[key] = state.in_flight.get(key, 0) + 1
        if self._consecutive(key, polling):
            return "consecutive_identical_tool_calls"
        if self._alternating(key):
            return "alternating_tool_call_pattern"
        return None

    def _consecutive(self, key: str, polling: bool) -> bool:
        state = self._state
        if key == state.last_key:
            state.count += 1
        else:
            # A new streak: the result evidence of both keys restarts.
            for streak_key in (state.last_key, key):
                streak = state.streaks.get(streak_key) if streak_key else None
                if streak is not None:
                    streak.observed = streak.unchanged = 0
            state.last_key = key
            state.count = 1
        if state.count < self._threshold:
            return False
        streak = state.streaks.get(key)
        expected = state.count - 1
        # All results of the streak recorded and one changed: productive polling.
        if polling and streak and streak.observed >= expected and streak.unchanged < expected - 1:
            state.count = 1
            streak.observed = streak.unchanged = 0
            return False
        return True

    def _alternating(self, key: str) -> bool:
        state = self._state
        size = 2 * self._cycles
        state.window.append(key)
        if len(state.window) > size:
            del state.window[0]
        if len(state.window) < size:
            return False
        a, b = state.window[0], state.window[1]
        if a == b or any(k != (a if i % 2 == 0 else b) for i, k in enumerate(state.window)):
            return False
        for participant in (a, b):
            if participant not in state.stateful_keys:
                continue
            occurrences = state.window.count(participant)
            expected = occurrences - min(state.in_flight.get(participant, 0), occurrences)
            history = state.history.get(participant, [])
            if expected <= 0 or len(history) < expected:
                continue
            recent = history[-expected:]
            if any(fp != recent[0] for fp in recent):
                state.window.clear()
                return False
        return True

    def _record_result(self, key: str, fingerprint: str) -> None:
        state = self._state
        if state.in_flight.get(key, 0) > 0:
            state.in_flight[key] -= 1
        history = state.history.setdefault(key, [])
        history.append(fingerprint)
        if len(history) > self._cycles:
            del history[0]
        streak = state.streaks.setdefault(key, _Streak())
        if state.last_key == key:
            streak.observed += 1
            if streak.last is None:
                streak.last = fingerprint
            elif streak.last == fingerprint:
                streak.unchanged += 1
            else:
                streak.unchanged = 0
                streak.last = fingerprint
        else:
            streak.last = fingerprint

    # -- thoughts -------------------------------------------------------------------

    def _thought(self, text: str) -> Fire | None:
        thoughts = self._state.thoughts
        thoughts.append(thought_signature(text))
        n = self._thought_threshold
        del thoughts[:-n]
        if len(thoughts) == n and all(t == thoughts[-1] for t in thoughts):
            return Fire({"check": "repetitive_thoughts", "thoughts": n})
        return None


def _build(params: Mapping[str, Any]) -> Callable[[], QwenAdapter]:
    options = dict(params)
    return lambda: QwenAdapter(options)


DETECTOR = register(
    peer_detector(
        name="qwen_code",
        kind="thread",
        description="Qwen Code: 5 identical calls, A-B-A-B x3, 3 identical thoughts",
        params=(
            Param(
                "tool_call_threshold",
                "int",
                low=2,
                high=10,
                description="identical consecutive calls",
            ),
            Param("alternating_cycles", "int", low=2, high=6, description="A-B cycles in a row"),
            Param("thought_threshold", "int", low=2, high=10, description="identical thoughts"),
            Param(
                "polling_tools",
                "categorical",
                choices=(*sorted(_SETS), _ALL),
                description="tools whose results are compared (named set, or all)",
            ),
        ),
        build=_build,
    )
)
