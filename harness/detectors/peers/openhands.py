"""OpenHands' ``StuckDetector``: ``openhands_stuck``.

Source: ``OpenHands/OpenHands``, ``openhands/controller/stuck.py`` (the V0
controller; the V1 SDK's ``stuck_detector.py`` has the same scenarios with
configurable thresholds). ``is_stuck`` runs on the event history; this adapter
maps corpus messages to events and runs the scenarios, in the source's order,
after every message:

* an activity request is an action (a tool call: name and arguments); an
  activity response is an observation (name, arguments, result), an *error*
  observation when :func:`~harness.detectors.peers._tools.is_error_result`
  holds; a result with an ``exit_code`` for a call with a ``command`` is
  compared on those two only, as ``CmdOutputObservation`` is;
* a message of type ``condensation`` or ``_condensation``, or an activity
  named ``_condensation``, is a condensation observation
  (``AgentCondensationObservation``);
* a ``user`` message is a user message action (filtered out; with
  ``headless`` false it also restarts the window, unless it is one of the
  source's corrective nudges); ``reasoning`` (a thought, which OpenHands keeps
  inside the next action), ``system`` and other ``_``-named notices (message
  types or activity names) are skipped;
  every other message is an agent message action with its text.

The reason names the scenario: ``repeating_action_observation``,
``repeating_action_error``, ``monologue``,
``repeating_action_observation_pattern``, ``context_window_error`` or
``empty_response_loop``.

Examples
--------
>>> from harness.detectors.peers import openhands
>>> bot = {"type": "bot", "text": "Let me check."}
>>> adapter = openhands.DETECTOR.make({})()
>>> [getattr(adapter.append(bot), "reason", None) for _ in range(3)][-1]["scenario"]
'monologue'
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal

from .._base import Fire, Param, register
from ._data import constants, peer_detector
from ._tools import CallReader, activity_of, canonical, is_error_result

__all__ = ["DETECTOR", "Event", "StuckAdapter"]

_CONSTANTS = constants("openhands_stuck")


@dataclass(frozen=True, slots=True)
class Event:
    """An OpenHands event as this adapter models it."""

    role: Literal["action", "observation"]
    kind: Literal["tool", "message", "condensation"]
    identity: str
    error: bool = False
    empty: bool = False


def _observation_identity(name: str, arguments: Any, result: Any) -> str:
    if (
        isinstance(result, Mapping)
        and "exit_code" in result
        and isinstance(arguments, Mapping)
        and "command" in arguments
    ):
        # CmdOutputObservation equality ignores the output: command and exit code only.
        return canonical(["cmd", arguments["command"], result["exit_code"]])
    return canonical([name, arguments, result])


class StuckAdapter:
    """Per-case state of ``openhands_stuck``: the filtered event history, indexed."""

    follow_after_fire = False

    def __init__(self, params: Mapping[str, Any]) -> None:
        self._n_pairs: int = params["action_observation"]
        self._n_errors: int = params["action_error"]
        self._n_monologue: int = params["monologue"]
        self._n_pattern: int = params["alternating_pattern"]
        self._n_condensed: int = params["context_window"]
        self._n_empty: int = params["empty_response"]
        self._headless: bool = params["headless"]
        self._all_adjacent: bool = params["fix_condensation_check"]
        self._min_events: int = _CONSTANTS["min_events"]
        self._nudges: tuple[str, ...] = tuple(_CONSTANTS["corrective_nudges"])
        self._reader = CallReader()
        self._clear()

    def _clear(self) -> None:
        self._events: list[Event] = []
        self._actions: list[int] = []
        self._observations: list[int] = []
        self._messages: list[int] = []
        self._condensations: list[int] = []

    def append(self, message: Mapping[str, Any]) -> Fire | None:
        if not self._add(message):
            return None
        scenario = self._stuck()
        return None if scenario is None else Fire({"scenario": scenario})

    def finish(self) -> None:
        return None

    # -- mapping messages to events -------------------------------------------------

    def _add(self, message: Mapping[str, Any]) -> bool:
        kind = message.get("type")
        text = message.get("text")
        text = text if isinstance(text, str) else ""
        if kind == "user":
            if not self._headless and not any(n in text for n in self._nudges):
                self._clear()
            return False
        if kind in ("condensation", "_condensation") or self._is_condensation_notice(message):
            self._push(Event("observation", "condensation", canonical(["condensation", text])))
            return True
        if kind == "activity":
            added = False
            for event in self._reader.read(message):
                if event.kind == "call":
                    identity = canonical([event.name, event.arguments])
                    self._push(Event("action", "tool", identity))
                else:
                    identity = _observation_identity(event.name, event.arguments, event.result)
                    self._push(
                        Event("observation", "tool", identity, error=is_error_result(event.result))
                    )
                added = True
            return added
        if kind in ("system", "reasoning") or (isinstance(kind, str) and kind.startswith("_")):
            return False
        self._push(Event("action", "message", canonical(text), empty=not text.strip()))
        return True

    @staticmethod
    def _is_condensation_notice(message: Mapping[str, Any]) -> bool:
        activity = activity_of(message)
        function = activity.get("function") if activity is not None else None
        return isinstance(function, Mapping) and function.get("name") == "_condensation"

    def _push(self, event: Event) -> None:
        index = len(self._events)
        self._events.append(event)
        if event.role == "action":
            self._actions.append(index)
            if event.kind == "message":
                self._messages.append(index)
        else:
            self._observations.append(index)
            if event.kind == "condensation":
                self._condensations.append(index)

    # -- the scenarios ----------------------------------------------------------------

    def _last(self, indices: list[int], count: int) -> list[Event]:
        """The last ``count`` events of an index list, newest first (as the source collects)."""
        return [self._events[i] for i in reversed(indices[-count:])] if count else []

    def _stuck(self) -> str | None:
        if len(self._events) < self._min_events:
            return None
        if self._repeating_action_observation():
            return "repeating_action_observation"
        if self._repeating_action_error():
            return "repeating_action_error"
        if self._monologue():
            return "monologue"
        if len(self._events) >= self._n_pattern and self._alternating_pattern():
            return "repeating_action_observation_pattern"
        if len(self._events) >= self._n_condensed and self._condensation_loop():
            return "context_window_error"
        if self._empty_responses():
            return "empty_response_loop"
        return None

    def _repeating_action_observation(self) -> bool:
        n = self._n_pairs
        actions = self._last(self._actions, n)
        observations = self._last(self._observations, n)
        if len(actions) < n or len(observations) < n:
            return False
        return _all_same(actions) and _all_same(observations)

    def _repeating_action_error(self) -> bool:
        n = self._n_errors
        actions = self._last(self._actions, n)
        observations = self._last(self._observations, n)
        if len(actions) < n or len(observations) < n:
            return False
        return _all_same(actions) and all(o.error for o in observations)

    def _monologue(self) -> bool:
        n = self._n_monologue
        if len(self._messages) < n:
            return False
        last = self._messages[-n:]
        if not _all_same([self._events[i] for i in last]):
            return False
        # An observation between the first and the last of them: it may still recover.
        between = bisect_left(self._observations, last[-1]) - bisect_right(
            self._observations, last[0]
        )
        return between == 0

    def _alternating_pattern(self) -> bool:
        n = self._n_pattern
        actions = self._last(self._actions, n)
        observations = self._last(self._observations, n)
        if len(actions) < n or len(observations) < n:
            return False
        return all(
            _same(actions[i], actions[i + 2]) and _same(observations[i], observations[i + 2])
            for i in range(n - 2)
        )

    def _condensation_loop(self) -> bool:
        n = self._n_condensed
        if len(self._condensations) < n:
            return False
        last = self._condensations[-n:]
        adjacent = [b == a + 1 for a, b in pairwise(last)]
        # The source returns at the first adjacent pair; its docstring asks for all of them.
        return all(adjacent) if self._all_adjacent else any(adjacent)

    def _empty_responses(self) -> bool:
        count = 0
        for event in reversed(self._events):
            if event.kind != "message" or not event.empty:
                break
            count += 1
        return count >= self._n_empty


def _same(a: Event, b: Event) -> bool:
    return a.kind == b.kind and a.identity == b.identity


def _all_same(events: list[Event]) -> bool:
    return all(_same(events[0], e) for e in events)


def _build(params: Mapping[str, Any]) -> Callable[[], StuckAdapter]:
    options = dict(params)
    return lambda: StuckAdapter(options)


DETECTOR = register(
    peer_detector(
        name="openhands_stuck",
        kind="thread",
        description="OpenHands StuckDetector: the six is_stuck scenarios; reason names the one",
        params=(
            Param(
                "action_observation",
                "int",
                low=2,
                high=10,
                description="identical action-observation pairs",
            ),
            Param(
                "action_error", "int", low=2, high=10, description="identical actions, all errors"
            ),
            Param(
                "monologue", "int", low=2, high=10, description="identical agent messages in a row"
            ),
            Param(
                "alternating_pattern",
                "int",
                low=4,
                high=16,
                description="actions and observations in the A-B-A-B window",
            ),
            Param("context_window", "int", low=3, high=30, description="condensation events"),
            Param(
                "empty_response", "int", low=2, high=10, description="empty agent messages in a row"
            ),
            Param(
                "headless",
                "bool",
                description="all history (true) or only since the last user message",
            ),
            Param(
                "fix_condensation_check",
                "bool",
                description="require all condensation events in a row (source: any two)",
            ),
        ),
        build=_build,
    )
)
