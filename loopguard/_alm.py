"""The Anti-Looping Monitor (ALM): a deterministic tool-call loop monitor and its ladder.

The protocol (``docs/spec/anti-looping-monitor.en.md``) hashes every tool call,
flags a run of identical calls that leave the state unchanged, flags a state
that stops drifting while tool calls go on, and answers a detected loop with a
three-step ladder: a temperature skew, an injected warning, an emergency halt.
Every point the protocol leaves open is an option; ``docs/alm.md`` explains
each decision.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from ._errors import OptionError
from ._js import UNSERIALIZABLE, safe_stringify
from ._options import OptionResolver

__all__ = [
    "ARGS_ENCODINGS",
    "HALT_COUNTINGS",
    "Action",
    "AntiLoopingMonitor",
    "EmergencyHalt",
    "InjectWarning",
    "TemperatureSkew",
    "action_hash",
    "canonical_json",
    "encode_arguments",
    "state_change_percent",
]

#: Accepted values of ``args_encoding`` / ``encoding``.
ARGS_ENCODINGS = ("canonical", "insertion")
#: Accepted values of ``halt_counting``.
HALT_COUNTINGS = ("session", "detection")

# Length of the result preview quoted in reasons and warnings: presentation only,
# long enough to recognise an error message, short enough for a system prompt.
_PREVIEW_CHARS = 120
# Memory bound on requests still waiting for their response (a trace may never
# answer some); a response whose request was dropped simply counts as a new turn.
_MAX_PENDING = 1024


def canonical_json(value: object) -> str:
    """The canonical JSON text of ``value``, or a fixed marker when there is none.

    ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    allow_nan=False)``. Values without a canonical text - NaN or infinities,
    circular structures, mixed-type keys that cannot be sorted, objects JSON does
    not know, nesting deeper than the recursion limit - all become
    ``'"[unserializable]"'`` (the ``safeStringify`` marker of the production
    library), so this never raises.

    Examples
    --------
    >>> canonical_json({"b": 1, "a": [True, None, "é"]})
    '{"a":[true,null,"é"],"b":1}'
    >>> canonical_json({"x": float("nan")})
    '"[unserializable]"'
    """
    try:
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except Exception:
        # Arbitrary objects (mapping subclasses, custom __iter__) can raise anything;
        # a monitor must never take the agent down with it.
        return UNSERIALIZABLE


def encode_arguments(arguments: object, *, encoding: str = "canonical") -> str:
    """The JSON text of a tool call's arguments as the action hash sees it.

    Parameters
    ----------
    arguments : object
        The ``function.arguments`` value; ``None`` also stands for missing arguments.
    encoding : {"canonical", "insertion"}
        ``"canonical"``: :func:`canonical_json` (sorted keys, Python number
        formatting, so ``1`` and ``1.0`` differ). ``"insertion"``: JavaScript's
        ``JSON.stringify`` (insertion key order with integer-like keys first, JS
        number formatting, NaN becomes ``null``) via ``safeStringify``; where
        JavaScript yields ``undefined`` the text is ``"undefined"``, as string
        concatenation in JavaScript would give.

    Raises
    ------
    OptionError
        When ``encoding`` is not one of :data:`ARGS_ENCODINGS`.

    Examples
    --------
    >>> encode_arguments({"b": 1, "a": 2})
    '{"a":2,"b":1}'
    >>> encode_arguments({"b": 1, "a": 2}, encoding="insertion")
    '{"b":1,"a":2}'
    """
    if encoding == "canonical":
        return canonical_json(arguments)
    if encoding == "insertion":
        text = safe_stringify(arguments)
        return "undefined" if text is None else text
    raise OptionError(f"encoding must be one of {', '.join(ARGS_ENCODINGS)}; got {encoding!r}")


def action_hash(name: str, arguments: object, *, encoding: str = "canonical") -> str:
    r"""``H_action = SHA-256(ToolName + JSON(Args))`` as 64 lowercase hex digits.

    The bytes hashed are the UTF-8 encoding of ``name + encode_arguments(arguments)``
    with no separator, as the protocol writes it. Lone surrogates (which UTF-8
    cannot carry) are encoded with ``surrogatepass`` so that hashing never
    raises. A non-string ``name`` is converted with ``str``.

    Without a separator two different calls can hash the same text when an
    argument is a scalar: ``("f1", 2)`` and ``("f", 12)`` both give ``f12``;
    ``("f", '"')`` and ``('f"\\', "")`` both give ``f"\""``. When both arguments
    are JSON objects or arrays it cannot happen (``docs/alm.md`` has the proof).

    Examples
    --------
    >>> action_hash("search", {"q": "ACME"})[:16]
    'c3ee2968f49a6743'
    >>> action_hash("s", {"b": 1, "a": 2}) == action_hash("s", {"a": 2, "b": 1})
    True
    >>> action_hash("f1", 2) == action_hash("f", 12)
    True
    """
    text = (name if isinstance(name, str) else str(name)) + encode_arguments(
        arguments, encoding=encoding
    )
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _common_prefix(a: str, b: str) -> int:
    # Binary search over slice equality: O(n log n) character work done in C,
    # far faster than a Python loop for large snapshots.
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def state_change_percent(old: str, new: str) -> float:
    """How much a snapshot text changed, in percent (0 to 100): the edit-span measure.

    Strip the longest common prefix and then the longest common suffix of the
    two texts; what is left of each is the edited span. The change is
    ``100 * max(len(span_old), len(span_new)) / max(len(old), len(new))``
    (0 when both texts are empty). One contiguous edit is measured exactly; two
    edits far apart count everything between them as changed, so the measure
    errs towards "progress", never towards a false stall. Cost: O(n log n)
    character comparisons in C and no quadratic diff, whatever the size.

    Examples
    --------
    >>> state_change_percent('{"n":1}', '{"n":1}')
    0.0
    >>> state_change_percent("abcdefghij", "abcdXfghij")
    10.0
    """
    if old == new:
        return 0.0
    longest = max(len(old), len(new))
    prefix = _common_prefix(old, new)
    suffix = _common_suffix(old, new, min(len(old), len(new)) - prefix)
    span = max(len(old), len(new)) - prefix - suffix
    return 100.0 * span / longest


def _preview(text: str) -> str:
    if len(text) <= _PREVIEW_CHARS:
        return text
    return text[: _PREVIEW_CHARS - 1] + "…"


def _quote_name(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)


@dataclass(frozen=True)
class Action:
    """One step of the mitigation ladder, for the runtime (or the harness) to carry out.

    Subclasses set the class attributes ``step`` (1, 2 or 3) and ``kind``.
    """

    step: ClassVar[int] = 0
    kind: ClassVar[str] = "action"

    def as_dict(self) -> dict[str, Any]:
        """``{"kind", "step", ...fields}``, JSON-ready."""
        out: dict[str, Any] = {"kind": self.kind, "step": self.step}
        for item in fields(self):
            out[item.name] = getattr(self, item.name)
        return out


@dataclass(frozen=True)
class TemperatureSkew(Action):
    """Step 1: sample the next generation step at ``to_temperature``, not ``from_temperature``.

    The skew is for one generation step; the runtime goes back to
    ``from_temperature`` afterwards.

    Examples
    --------
    >>> TemperatureSkew(from_temperature=0.0, to_temperature=0.7, reason="r").as_dict()["kind"]
    'temperature_skew'
    """

    step: ClassVar[int] = 1
    kind: ClassVar[str] = "temperature_skew"

    from_temperature: float
    to_temperature: float
    reason: str


@dataclass(frozen=True)
class InjectWarning(Action):
    """Step 2: insert ``text`` into the context as a high-priority system message.

    ``tool`` is the looping tool (for a state stall, the last tool called) or
    ``None`` when no tool is known.

    Examples
    --------
    >>> warning = InjectWarning(text="Warning: ...", tool="search", reason="r")
    >>> warning.as_message()["type"]
    'system'
    """

    step: ClassVar[int] = 2
    kind: ClassVar[str] = "inject_warning"

    text: str
    tool: str | None
    reason: str

    def as_message(self) -> dict[str, Any]:
        """The warning as a corpus-format message: ``{"type": "system", "text", "meta"}``."""
        return {"type": "system", "text": self.text, "meta": {"alm": self.as_dict()}}


@dataclass(frozen=True)
class EmergencyHalt(Action):
    """Step 3: block the session and alert the operator.

    ``turns`` is the number of turns of the session so far; ``counted_turns`` the
    count that reached ``max_turn_execution_count`` (equal to ``turns`` when
    ``halt_counting="session"``, the turns since the first detection otherwise).

    Examples
    --------
    >>> EmergencyHalt(turns=20, counted_turns=20, reason="r").step
    3
    """

    step: ClassVar[int] = 3
    kind: ClassVar[str] = "emergency_halt"

    turns: int
    counted_turns: int
    reason: str


class AntiLoopingMonitor:
    """Watch tool calls and state snapshots; answer a loop with the ALM ladder.

    Feed the conversation one message at a time to :meth:`observe`; it returns
    the actions to take now (usually none). A **turn** is one tool call: an
    ``activity`` request, or a response whose request was not seen. Synthetic
    notices (names starting with ``_``) are not tool calls.

    A loop is detected at a turn when either

    * the **repeat detector** holds: the last ``max_repeated_tool_calls`` turns
      have the same :func:`action_hash` and no state change happened since the
      first of them (other messages - reasoning, bot text, user text - do not
      break the run; another tool call or a state change does), or
    * the **drift detector** holds: the snapshot current at this turn differs
      from the one current ``drift_window`` turns earlier by less than
      ``state_drift_threshold_percent`` percent (:func:`state_change_percent`).

    The first detection answers :class:`TemperatureSkew`, the next
    :class:`InjectWarning`, and once ``max_turn_execution_count`` turns are
    counted (see ``halt_counting``) while in a loop, :class:`EmergencyHalt`;
    after the halt the monitor ignores every message until :meth:`reset`.

    Parameters
    ----------
    max_repeated_tool_calls : int, optional
        Identical calls in a row that make a loop (integer >= 2; default 3).
    drift_window : int, optional
        Turns over which the state must drift (integer >= 1; default 5).
    state_drift_threshold_percent : float, optional
        Minimum change, in percent of the snapshot size (``0.05`` means 0.05 %,
        one character in 2000), that counts as a state change (in [0, 100];
        default 0.05). ``0`` disables the drift detector and makes any
        difference a state change.
    base_temperature, skewed_temperature : float, optional
        The temperatures of the skew (finite, >= 0, ``skewed >= base``;
        defaults 0.0 and 0.7).
    max_turn_execution_count : int, optional
        Counted turns at which a loop halts the session (integer >= 1; default 20).
    args_encoding : {"canonical", "insertion"}, optional
        How arguments are turned into JSON for the hash (default ``"canonical"``);
        see :func:`encode_arguments`.
    halt_counting : {"session", "detection"}, optional
        ``"session"`` counts every turn of the session, ``"detection"`` the turns
        since the first detection, that turn included (default ``"session"``).
    reset_on_progress : bool, optional
        When a turn finds no loop (a different call, a state change) the ladder
        goes back to step 0 and the detection count restarts (default True).

    ``None`` or a non-finite number means "use the default" from ``defaults.json``.

    Raises
    ------
    OptionError
        When an option has a value outside its range (named in the message).

    Examples
    --------
    >>> def call(q):
    ...     fn = {"name": "search", "arguments": {"q": q}}
    ...     activity = {"type": "request", "function": fn}
    ...     return {"type": "activity", "text": "", "meta": {"activity": activity}}
    >>> alm = AntiLoopingMonitor()
    >>> [(i, a.kind) for i, a in alm.observe_all([call("x")] * 4)]
    [(2, 'temperature_skew'), (3, 'inject_warning')]
    >>> alm.step, alm.turns, alm.loop_detected
    (2, 4, True)
    """

    def __init__(
        self,
        *,
        max_repeated_tool_calls: object = None,
        drift_window: object = None,
        state_drift_threshold_percent: object = None,
        base_temperature: object = None,
        skewed_temperature: object = None,
        max_turn_execution_count: object = None,
        args_encoding: object = None,
        halt_counting: object = None,
        reset_on_progress: object = None,
    ) -> None:
        opts = OptionResolver("alm", nonfinite_is_absent=True)
        self._max_repeated = opts.integer("max_repeated_tool_calls", max_repeated_tool_calls, 2)
        self._drift_window = opts.integer("drift_window", drift_window, 1)
        self._threshold = opts.number(
            "state_drift_threshold_percent", state_drift_threshold_percent, 0.0, 100.0
        )
        self._base_temperature = opts.number("base_temperature", base_temperature, 0.0, math.inf)
        self._skewed_temperature = opts.number(
            "skewed_temperature", skewed_temperature, 0.0, math.inf
        )
        if self._skewed_temperature < self._base_temperature:
            raise OptionError(
                f"skewed_temperature must be >= base_temperature ({self._base_temperature:g}); "
                f"got {self._skewed_temperature:g}"
            )
        self._max_turns = opts.integer("max_turn_execution_count", max_turn_execution_count, 1)
        self._encoding = opts.choice("args_encoding", args_encoding, ARGS_ENCODINGS)
        self._halt_counting = opts.choice("halt_counting", halt_counting, HALT_COUNTINGS)
        self._reset_on_progress = opts.flag("reset_on_progress", reset_on_progress)
        self.reset()

    def reset(self) -> None:
        """Forget the session: turns, runs, snapshots and the ladder."""
        self._turns = 0
        # Requests waiting for their response: [turn, name, hash].
        self._pending: deque[tuple[int, str, str]] = deque(maxlen=_MAX_PENDING)
        self._run_hash: str | None = None
        self._run_name: str | None = None
        self._run_length = 0
        self._run_start = 0
        self._run_result: str | None = None
        self._run_latest: str | None = None
        self._run_results_vary = False
        # _current is the latest snapshot text, carried forward over messages without one;
        # _reference the snapshot at the last registered state change (or the first one).
        self._current: str | None = None
        self._reference: str | None = None
        self._window: deque[str | None] = deque(maxlen=self._drift_window + 1)
        self._window_tools: deque[str] = deque(maxlen=self._drift_window)
        self._drift_percent: float | None = None
        self._stalled = False
        self._step = 0
        self._loop_detected = False
        self._halted = False
        self._first_detection: int | None = None
        self._detections = 0
        self._last_reason: str | None = None

    # -- introspection -------------------------------------------------------------

    @property
    def options(self) -> dict[str, object]:
        """The options in effect, defaults filled in."""
        return {
            "max_repeated_tool_calls": self._max_repeated,
            "drift_window": self._drift_window,
            "state_drift_threshold_percent": self._threshold,
            "base_temperature": self._base_temperature,
            "skewed_temperature": self._skewed_temperature,
            "max_turn_execution_count": self._max_turns,
            "args_encoding": self._encoding,
            "halt_counting": self._halt_counting,
            "reset_on_progress": self._reset_on_progress,
        }

    @property
    def turns(self) -> int:
        """Tool calls (turns) seen in the session."""
        return self._turns

    @property
    def step(self) -> int:
        """Ladder position: 0 none yet, 1 skewed, 2 warned, 3 halted."""
        return self._step

    @property
    def loop_detected(self) -> bool:
        """Whether the last turn (or state change since) left the session in a loop."""
        return self._loop_detected

    @property
    def halted(self) -> bool:
        """Whether the emergency halt was issued (the monitor is then inert)."""
        return self._halted

    @property
    def last_reason(self) -> str | None:
        """The reason of the most recent detection, or ``None``."""
        return self._last_reason

    @property
    def detections(self) -> int:
        """Turns at which a loop was detected."""
        return self._detections

    @property
    def run_length(self) -> int:
        """Identical calls in the current run (since the last other call or state change)."""
        return self._run_length

    @property
    def run_tool(self) -> str | None:
        """The tool of the current run of identical calls."""
        return self._run_name

    @property
    def stalled(self) -> bool:
        """Whether the drift detector held at the last turn."""
        return self._stalled

    @property
    def drift_percent(self) -> float | None:
        """The state change over the last full drift window, when one was measured."""
        return self._drift_percent

    @property
    def status(self) -> dict[str, object]:
        """The monitor's own state (not the agent's) as a JSON-ready dict."""
        return {
            "turns": self._turns,
            "step": self._step,
            "loop_detected": self._loop_detected,
            "halted": self._halted,
            "detections": self._detections,
            "last_reason": self._last_reason,
            "run_tool": self._run_name,
            "run_length": self._run_length,
            "stalled": self._stalled,
            "drift_percent": self._drift_percent,
            "first_detection_turn": self._first_detection,
        }

    # -- observation ---------------------------------------------------------------

    def observe_all(self, messages: Iterable[object] | None) -> list[tuple[int, Action]]:
        """Observe ``messages`` in order; return ``(message index, action)`` pairs.

        ``None`` or a non-iterable (including a single dict or a string) is no messages.
        """
        if messages is None or isinstance(messages, str | bytes | Mapping):
            return []
        try:
            items = iter(messages)
        except TypeError:
            return []
        out: list[tuple[int, Action]] = []
        for index, message in enumerate(items):
            out.extend((index, action) for action in self.observe(message))
        return out

    def observe(self, message: object) -> list[Action]:
        """Take the next message; return the actions to carry out now (usually none).

        Anything that is not a message (not a mapping, missing fields, wrong
        types) is ignored rather than rejected: the monitor must not fail the
        agent it watches.
        """
        if self._halted or not isinstance(message, Mapping):
            return []
        actions = self._observe_call(message)
        state = message.get("state")
        if isinstance(state, dict):
            self._observe_state(state)
        return actions

    def _observe_call(self, message: Mapping[Any, Any]) -> list[Action]:
        if message.get("type") != "activity":
            return []
        meta = message.get("meta")
        activity = meta.get("activity") if isinstance(meta, Mapping) else None
        if not isinstance(activity, Mapping):
            return []
        kind = activity.get("type")
        function = activity.get("function")
        if kind not in ("request", "response") or not isinstance(function, Mapping):
            return []
        name = function.get("name")
        if not isinstance(name, str) or name.startswith("_"):
            return []
        digest = action_hash(name, function.get("arguments"), encoding=self._encoding)
        if kind == "request":
            self._pending.append((self._turns + 1, name, digest))
            return self._open_turn(name, digest)
        settled = "result" in function
        result = canonical_json(function.get("result")) if settled else None
        matched = self._match_pending(name, digest, settled)
        if matched is not None:
            if result is not None:
                self._record_result(*matched, result)
            return []
        # A response whose request was never seen is itself the call.
        if not settled:
            self._pending.append((self._turns + 1, name, digest))
        return self._open_turn(name, digest, result)

    def _match_pending(self, name: str, digest: str, settled: bool) -> tuple[int, str] | None:
        # Same call first; then same tool, for runtimes that echo rewritten arguments.
        for key, wanted in ((2, digest), (1, name)):
            for position, entry in enumerate(self._pending):
                if entry[key] == wanted:
                    if settled:
                        del self._pending[position]
                    return entry[0], entry[2]
        return None

    def _record_result(self, turn: int, digest: str, result: str) -> None:
        if digest != self._run_hash or turn < self._run_start:
            return
        if self._run_result is None:
            self._run_result = result
        elif result != self._run_result:
            self._run_results_vary = True
        self._run_latest = result

    def _changed(self, percent: float) -> bool:
        return percent > 0.0 and percent >= self._threshold

    def _observe_state(self, state: dict[Any, Any]) -> None:
        text = canonical_json(state)
        self._current = text
        if self._reference is None:
            # The first snapshot is the baseline, not a change.
            self._reference = text
            return
        if not self._changed(state_change_percent(self._reference, text)):
            return
        self._reference = text
        self._run_hash = None
        self._run_name = None
        self._run_length = 0
        self._stalled = False
        self._progress()

    def _progress(self) -> None:
        self._loop_detected = False
        if self._reset_on_progress and self._step:
            self._step = 0
            self._first_detection = None

    def _open_turn(self, name: str, digest: str, result: str | None = None) -> list[Action]:
        self._turns += 1
        if digest == self._run_hash:
            self._run_length += 1
        else:
            self._run_hash = digest
            self._run_name = name
            self._run_length = 1
            self._run_start = self._turns
            self._run_result = None
            self._run_latest = None
            self._run_results_vary = False
        if result is not None:
            self._record_result(self._turns, digest, result)
        self._window.append(self._current)
        self._window_tools.append(name)
        self._stalled = False
        oldest = self._window[0]
        newest = self._window[-1]
        if len(self._window) == self._window.maxlen and oldest is not None and newest is not None:
            self._drift_percent = state_change_percent(oldest, newest)
            self._stalled = self._drift_percent < self._threshold
        return self._ladder()

    def _reason(self) -> str:
        if self._run_length >= self._max_repeated:
            reason = (
                f"repeat: tool {_quote_name(self._run_name or '')} called {self._run_length} "
                "times in a row with the same arguments and no state change"
            )
            if self._run_latest is not None:
                if self._run_results_vary:
                    reason += f"; results vary, latest: {_preview(self._run_latest)}"
                else:
                    reason += f"; same result: {_preview(self._run_latest)}"
            return reason
        tools = ", ".join(_quote_name(t) for t in dict.fromkeys(self._window_tools))
        return (
            f"drift: state changed {self._drift_percent:.4g}% "
            f"(< {self._threshold:g}%) over the last {self._drift_window} turns "
            f"while tool calls kept going ({tools})"
        )

    def _warning(self) -> InjectWarning:
        reason = self._last_reason or ""
        if self._run_length >= self._max_repeated:
            tool = self._run_name
            head = f"Warning: an infinite loop was detected. Tool {_quote_name(tool or '')}"
            if self._run_latest is None:
                body = " keeps being called with the same arguments."
            elif self._run_results_vary:
                body = (
                    " keeps being called with the same arguments (latest result: "
                    f"{_preview(self._run_latest)})."
                )
            else:
                body = f" keeps returning the same result: {_preview(self._run_latest)}."
            text = head + body
        else:
            tool = self._window_tools[-1] if self._window_tools else None
            tools = ", ".join(_quote_name(t) for t in dict.fromkeys(self._window_tools))
            text = (
                f"Warning: an infinite loop was detected. The last {self._drift_window} tool "
                f"calls ({tools}) left the state unchanged."
            )
        text += " You must change the arguments or use a different tool."
        return InjectWarning(text=text, tool=tool, reason=reason)

    def _ladder(self) -> list[Action]:
        if self._run_length < self._max_repeated and not self._stalled:
            self._progress()
            return []
        self._loop_detected = True
        self._detections += 1
        self._last_reason = self._reason()
        if self._first_detection is None:
            self._first_detection = self._turns
        counted = self._turns
        if self._halt_counting == "detection":
            counted = self._turns - self._first_detection + 1
        if counted >= self._max_turns:
            self._step = 3
            self._halted = True
            return [
                EmergencyHalt(turns=self._turns, counted_turns=counted, reason=self._last_reason)
            ]
        if self._step == 0:
            self._step = 1
            return [
                TemperatureSkew(
                    from_temperature=self._base_temperature,
                    to_temperature=self._skewed_temperature,
                    reason=self._last_reason,
                )
            ]
        if self._step == 1:
            self._step = 2
            return [self._warning()]
        return []
