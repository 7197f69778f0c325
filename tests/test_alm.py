"""Tests of the Anti-Looping Monitor (``loopguard._alm``)."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopguard._alm import (
    Action,
    AntiLoopingMonitor,
    EmergencyHalt,
    InjectWarning,
    TemperatureSkew,
    action_hash,
    canonical_json,
    encode_arguments,
    state_change_percent,
)
from loopguard._defaults import detector_defaults
from loopguard._errors import OptionError

# Options spelled out so that a retuned defaults.json does not change what these tests mean.
PROTOCOL = {
    "max_repeated_tool_calls": 3,
    "drift_window": 5,
    "state_drift_threshold_percent": 0.05,
    "base_temperature": 0.0,
    "skewed_temperature": 0.7,
    "max_turn_execution_count": 20,
    "args_encoding": "canonical",
    "halt_counting": "session",
    "reset_on_progress": True,
}


def monitor(**overrides: Any) -> AntiLoopingMonitor:
    return AntiLoopingMonitor(**{**PROTOCOL, **overrides})


def request(name: str, arguments: Any = None, state: Any = None) -> dict[str, Any]:
    fn: dict[str, Any] = {"name": name}
    if arguments is not None:
        fn["arguments"] = arguments
    message: dict[str, Any] = {
        "type": "activity",
        "text": "",
        "meta": {"activity": {"type": "request", "function": fn}},
    }
    if state is not None:
        message["state"] = state
    return message


def response(name: str, arguments: Any, result: Any, state: Any = None) -> dict[str, Any]:
    fn = {"name": name, "arguments": arguments, "result": result}
    message: dict[str, Any] = {
        "type": "activity",
        "text": "",
        "meta": {"activity": {"type": "response", "function": fn}},
    }
    if state is not None:
        message["state"] = state
    return message


def text(kind: str, body: str) -> dict[str, Any]:
    return {"type": kind, "text": body}


def kinds(pairs: list[tuple[int, Action]]) -> list[tuple[int, str]]:
    return [(index, action.kind) for index, action in pairs]


# -- action hashing --------------------------------------------------------------------


def test_canonical_hash_matches_an_independent_sha256() -> None:
    args = {"status": "open", "q": "ACME", "limit": 10, "tags": ["é", None, True]}
    expected_text = 'search{"limit":10,"q":"ACME","status":"open","tags":["é",null,true]}'
    expected = hashlib.sha256(expected_text.encode("utf-8")).hexdigest()
    assert action_hash("search", args) == expected
    assert action_hash("search", args, encoding="canonical") == expected


def test_canonical_hash_ignores_key_order_but_insertion_does_not() -> None:
    first = {"b": 1, "a": {"y": 2, "x": 3}}
    second = {"a": {"x": 3, "y": 2}, "b": 1}
    assert action_hash("t", first) == action_hash("t", second)
    assert action_hash("t", first, encoding="insertion") != action_hash(
        "t", second, encoding="insertion"
    )
    insertion_text = 't{"b":1,"a":{"y":2,"x":3}}'
    assert (
        action_hash("t", first, encoding="insertion")
        == hashlib.sha256(insertion_text.encode("utf-8")).hexdigest()
    )


def test_insertion_encoding_follows_javascript() -> None:
    # JSON.stringify puts integer-like keys first and prints 1.0 as 1 and NaN as null.
    assert encode_arguments({"b": 1.0, "2": 0, "1": math.nan}, encoding="insertion") == (
        '{"1":null,"2":0,"b":1}'
    )
    assert encode_arguments({"b": 1.0}) == '{"b":1.0}'
    assert encode_arguments(lambda: 0, encoding="insertion") == "undefined"


def test_unserializable_arguments_fall_back_to_a_stable_marker() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    marker = '"[unserializable]"'
    assert canonical_json({"x": math.nan}) == marker
    assert canonical_json(cyclic) == marker
    assert canonical_json({1: "a", "b": 2}) == marker  # keys of mixed types cannot be sorted
    assert canonical_json({"s": {1, 2}}) == marker
    assert encode_arguments(cyclic, encoding="insertion") == marker
    assert action_hash("f", cyclic) == hashlib.sha256(b"f" + marker.encode()).hexdigest()
    assert action_hash("f", {"x": math.inf}) == action_hash("f", cyclic)
    # Lone surrogates cannot be UTF-8; hashing must still not raise.
    assert len(action_hash("f\ud800", {"k": "\udfff"})) == 64


def test_unknown_encoding_is_an_option_error() -> None:
    with pytest.raises(OptionError, match="encoding must be one of canonical, insertion"):
        action_hash("f", {}, encoding="sorted")


def test_documented_scalar_collisions_are_real() -> None:
    # The protocol concatenates name and JSON with no separator (docs/alm.md).
    assert action_hash("f1", 2) == action_hash("f", 12)
    assert action_hash("f", '"') == action_hash('f"\\', "")
    assert action_hash("f", {"a": 1}) != action_hash("f{", '"a":1}')


_KEYS = st.text(alphabet='ab{}[]":,\\ 1', max_size=4)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-50, 50) | _KEYS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)
_CONTAINERS = st.lists(_JSON, max_size=3) | st.dictionaries(_KEYS, _JSON, max_size=3)


@settings(max_examples=150, deadline=None)
@given(_CONTAINERS, st.sampled_from(["canonical", "insertion"]))
def test_no_proper_suffix_of_a_container_encoding_is_a_container(value: Any, encoding: str) -> None:
    # The claim behind "objects and arrays cannot collide": name1 + T1 == name2 + T2 with
    # len(name1) < len(name2) would make T2 a proper suffix of T1.
    encoded = encode_arguments(value, encoding=encoding)
    for start in range(1, len(encoded)):
        if encoded[start] not in "{[":
            continue
        try:
            json.loads(encoded[start:])
        except ValueError:
            continue
        pytest.fail(f"suffix {encoded[start:]!r} of {encoded!r} is valid JSON")


# -- state change measure --------------------------------------------------------------


def test_state_change_percent_measures_the_edited_span() -> None:
    assert state_change_percent("", "") == 0.0
    assert state_change_percent("abc", "abc") == 0.0
    assert state_change_percent("abcdefghij", "abcdXfghij") == pytest.approx(10.0)
    assert state_change_percent("abcdefghij", "abcdefghijKLMNOPQRST") == pytest.approx(50.0)
    assert state_change_percent("a" * 10_000, "a" * 5000 + "b" + "a" * 4999) == pytest.approx(0.01)
    # Two edits far apart count everything between them.
    assert state_change_percent("x" + "a" * 98 + "x", "y" + "a" * 98 + "y") == pytest.approx(100.0)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40))
def test_state_change_percent_is_bounded_and_zero_only_when_equal(old: str, new: str) -> None:
    percent = state_change_percent(old, new)
    assert 0.0 <= percent <= 100.0
    assert (percent == 0.0) == (old == new)


# -- repeat detector -------------------------------------------------------------------


def test_three_identical_calls_in_a_row_are_a_loop() -> None:
    alm = monitor()
    trace = [request("lint", {"path": "a.py"}) for _ in range(3)]
    actions = alm.observe_all(trace)
    assert kinds(actions) == [(2, "temperature_skew")]
    assert alm.loop_detected and alm.run_tool == "lint" and alm.run_length == 3
    assert "lint" in (alm.last_reason or "")


def test_two_identical_calls_are_not_a_loop_and_a_different_call_breaks_the_run() -> None:
    alm = monitor()
    trace = [
        request("lint", {"path": "a.py"}),
        request("lint", {"path": "a.py"}),
        request("lint", {"path": "b.py"}),
        request("lint", {"path": "a.py"}),
        request("lint", {"path": "a.py"}),
    ]
    assert alm.observe_all(trace) == []
    assert not alm.loop_detected and alm.run_length == 2 and alm.turns == 5


def test_state_change_resets_the_repeat_run() -> None:
    args = {"cmd": "make"}
    alm = monitor()
    trace = [
        request("run", args),
        response("run", args, "error 1", state={"state.json": '{"attempt": 1, "log": "a"}'}),
        request("run", args),
        response("run", args, "error 1", state={"state.json": '{"attempt": 2, "log": "ab"}'}),
        request("run", args),
        response("run", args, "error 1", state={"state.json": '{"attempt": 3, "log": "abc"}'}),
    ]
    assert alm.observe_all(trace) == []
    assert alm.run_length == 0
    # The same calls with the state frozen are a loop at the third request.
    frozen = {"state.json": '{"attempt": 1, "log": "a"}'}
    for message in trace:
        if "state" in message:
            message["state"] = frozen
    assert kinds(monitor().observe_all(trace)) == [(4, "temperature_skew")]


def test_interleaved_reasoning_bot_user_and_notices_do_not_break_the_run() -> None:
    args = {"q": "ACME"}
    notice = {
        "type": "activity",
        "text": "",
        "meta": {"activity": {"type": "response", "function": {"name": "_cycleDetected"}}},
    }
    trace = [
        text("reasoning", "Let me search."),
        request("search", args),
        response("search", args, {"records": []}),
        text("reasoning", "Nothing; try again."),
        text("bot", "Searching again."),
        notice,
        request("search", args),
        response("search", args, {"records": []}),
        text("user", "keep going"),
        text("reasoning", "Once more."),
        request("search", args),
    ]
    alm = monitor()
    assert kinds(alm.observe_all(trace)) == [(10, "temperature_skew")]
    assert alm.turns == 3
    assert '{"records":[]}' in (alm.last_reason or "")


def test_a_response_without_its_request_is_a_turn_and_a_pair_is_one() -> None:
    alm = monitor()
    only_responses = [response("ping", {}, "timeout") for _ in range(3)]
    assert kinds(alm.observe_all(only_responses)) == [(2, "temperature_skew")]
    assert alm.turns == 3
    paired = monitor()
    trace = [
        message for _ in range(2) for message in (request("ping", {}), response("ping", {}, 1))
    ]
    assert paired.observe_all(trace) == []
    assert paired.turns == 2


def test_streaming_response_then_settled_response_is_one_turn() -> None:
    partial = response("ping", {}, None)
    del partial["meta"]["activity"]["function"]["result"]
    alm = monitor()
    alm.observe_all([request("ping", {}), partial, response("ping", {}, "ok")])
    assert alm.turns == 1


def test_a_response_with_rewritten_arguments_settles_its_request() -> None:
    # Runtimes may echo normalised arguments; the response still answers the pending call.
    alm = monitor()
    trace = [
        request("read", {"path": "a"}),
        response("read", {"path": "a", "encoding": "utf-8"}, "same"),
    ] * 3
    assert kinds(alm.observe_all(trace)) == [(4, "temperature_skew")]
    assert alm.turns == 3
    assert "same result" in (alm.last_reason or "")


# -- state drift -----------------------------------------------------------------------


def _file_state(body: str) -> dict[str, str]:
    return {"state.json": body}


def test_stalled_state_with_varied_calls_is_a_stall() -> None:
    state = _file_state(json.dumps({"done": [], "todo": ["a", "b", "c"]}))
    trace: list[dict[str, Any]] = [text("user", "Do the todo list.")]
    for i in range(6):
        trace.append(request("read_file", {"path": f"f{i}.txt"}))
        trace.append(response("read_file", {"path": f"f{i}.txt"}, f"content {i}", state=state))
    alm = monitor()
    actions = alm.observe_all(trace)
    # Snapshots exist from the first response on; six turns later the window is full.
    assert kinds(actions) == []
    alm.observe(request("read_file", {"path": "f6.txt"}))
    assert alm.stalled and alm.loop_detected and alm.drift_percent == 0.0
    assert alm.step == 1
    assert (alm.last_reason or "").startswith("drift: state changed 0%")


def test_slowly_progressing_state_is_not_a_stall() -> None:
    alm = monitor()
    done: list[str] = []
    actions: list[Action] = []
    for i in range(12):
        actions += alm.observe(request("process", {"item": i}))
        done.append(f"item {i} processed ok")
        actions += alm.observe(
            response("process", {"item": i}, "ok", state=_file_state(json.dumps(done)))
        )
    assert actions == []
    assert not alm.stalled and alm.drift_percent is not None and alm.drift_percent > 0.05


def test_drift_threshold_is_in_percent() -> None:
    # 10,000 characters: a 1-character edit is 0.01 % (a stall at 0.05 %), 10 are 0.1 %.
    base = "x" * 10_000

    def run(edit: int) -> AntiLoopingMonitor:
        alm = monitor()
        body = base
        for i in range(7):
            alm.observe(request("tick", {"i": i}))
            body = body[:100] + str(i % 10) * edit + body[100 + edit :]
            alm.observe(response("tick", {"i": i}, "ok", state=_file_state(body)))
        return alm

    assert run(1).stalled
    size = len(canonical_json(_file_state(base)))  # the measure runs on canonical JSON
    assert run(1).drift_percent == pytest.approx(100 / size)
    assert not run(10).stalled


def test_drift_is_inactive_without_snapshots_and_carries_the_last_one_forward() -> None:
    alm = monitor()
    assert alm.observe_all([request("read", {"n": i}) for i in range(20)]) == []
    assert alm.drift_percent is None and not alm.stalled
    carried = monitor()
    trace = [text("user", "go"), {**text("bot", "start"), "state": {"k": "v"}}]
    trace += [request("read", {"n": i}) for i in range(6)]
    assert kinds(carried.observe_all(trace)) == [(7, "temperature_skew")]


def test_zero_threshold_disables_the_drift_check() -> None:
    state = {"k": "v"}
    trace = [{**text("bot", "s"), "state": state}] + [request("r", {"n": i}) for i in range(12)]
    alm = monitor(state_drift_threshold_percent=0)
    assert alm.observe_all(trace) == []


# -- the ladder ------------------------------------------------------------------------


def _looping_trace() -> list[dict[str, Any]]:
    """A coding agent that fixes two things, then retries the same failing test forever."""
    error = {"exit_code": 1, "stderr": "ImportError: cannot import name 'parse' from 'app'"}
    state = {"state.json": json.dumps({"files": {"app.py": "def run(): ..."}, "tests": "red"})}
    trace: list[dict[str, Any]] = [
        text("user", "Make the test suite pass."),
        text("reasoning", "Look at the layout first."),
        request("list_files", {"dir": "."}),
        response("list_files", {"dir": "."}, ["app.py", "test_app.py"], state=state),
        request("read_file", {"path": "app.py"}),
        response("read_file", {"path": "app.py"}, "def run(): ..."),
        request("write_file", {"path": "app.py", "content": "def run(): ...\n# v2"}),
        response(
            "write_file",
            {"path": "app.py", "content": "def run(): ...\n# v2"},
            "ok",
            state={"state.json": json.dumps({"files": {"app.py": "v2"}, "tests": "red"})},
        ),
    ]
    for attempt in range(30):
        trace.append(text("reasoning", f"Attempt {attempt}: run the tests again."))
        trace.append(request("run_tests", {"path": "tests", "verbose": True}))
        trace.append(response("run_tests", {"verbose": True, "path": "tests"}, error))
    return trace


def test_the_whole_ladder_on_a_real_looking_trace() -> None:
    trace = _looping_trace()
    alm = monitor()
    actions = alm.observe_all(trace)
    turn_at = {}
    seen = AntiLoopingMonitor(**PROTOCOL)
    for index, message in enumerate(trace):
        seen.observe(message)
        turn_at[index] = seen.turns
    assert [type(a) for _, a in actions] == [TemperatureSkew, InjectWarning, EmergencyHalt]
    (skew_at, skew), (warn_at, warning), (halt_at, halt) = actions
    # Three turns of progress, then run_tests: the third identical call is turn 6.
    assert turn_at[skew_at] == 6 and turn_at[warn_at] == 7 and turn_at[halt_at] == 20
    assert isinstance(skew, TemperatureSkew)
    assert (skew.from_temperature, skew.to_temperature) == (0.0, 0.7)
    assert isinstance(warning, InjectWarning)
    assert warning.tool == "run_tests"
    assert warning.text.startswith('Warning: an infinite loop was detected. Tool "run_tests"')
    assert "keeps returning the same result" in warning.text
    assert "ImportError: cannot import name 'parse'" in warning.text
    assert warning.text.endswith("You must change the arguments or use a different tool.")
    assert isinstance(halt, EmergencyHalt)
    assert (halt.turns, halt.counted_turns, halt.step) == (20, 20, 3)
    assert alm.halted and alm.step == 3
    # Halted: the monitor ignores the rest of the session.
    assert alm.observe(request("run_tests", {"path": "tests", "verbose": True})) == []
    assert alm.turns == 20


def test_halt_counting_detection_counts_from_the_first_detection() -> None:
    trace = _looping_trace()
    alm = monitor(halt_counting="detection")
    actions = alm.observe_all(trace)
    halt = actions[-1][1]
    assert isinstance(halt, EmergencyHalt)
    # First detection at turn 6 counts as 1; the 20th counted turn is turn 25.
    assert (halt.turns, halt.counted_turns) == (25, 20)
    assert [a.step for _, a in actions] == [1, 2, 3]


def test_halt_can_come_before_the_other_steps_when_the_budget_is_spent() -> None:
    alm = monitor()
    trace = [request("step", {"n": i}) for i in range(17)] + [request("poll", {})] * 3
    actions = alm.observe_all(trace)
    assert kinds(actions) == [(19, "emergency_halt")]
    assert alm.turns == 20 and alm.step == 3


def _loop_progress_loop() -> list[dict[str, Any]]:
    loop_a = [request("fetch", {"url": "a"})] * 4
    progress = [request("fetch", {"url": "b"})]
    loop_c = [request("fetch", {"url": "c"})] * 3
    return loop_a + progress + loop_c


def test_reset_on_progress_restarts_the_ladder() -> None:
    alm = monitor(reset_on_progress=True)
    actions = alm.observe_all(_loop_progress_loop())
    assert kinds(actions) == [
        (2, "temperature_skew"),
        (3, "inject_warning"),
        (7, "temperature_skew"),
    ]
    assert alm.step == 1


def test_without_reset_on_progress_the_ladder_keeps_its_step() -> None:
    alm = monitor(reset_on_progress=False)
    trace = _loop_progress_loop()
    actions = alm.observe_all(trace[:5])
    assert kinds(actions) == [(2, "temperature_skew"), (3, "inject_warning")]
    assert (alm.step, alm.loop_detected) == (2, False)
    assert alm.observe_all(trace[5:]) == []
    assert (alm.step, alm.loop_detected, alm.detections) == (2, True, 3)


def test_without_reset_detection_counting_starts_at_the_first_detection_ever() -> None:
    trace = _loop_progress_loop() + [request("fetch", {"url": "c"})] * 20
    kept = monitor(reset_on_progress=False, halt_counting="detection")
    halt = kept.observe_all(trace)[-1][1]
    assert isinstance(halt, EmergencyHalt) and (halt.turns, halt.counted_turns) == (22, 20)
    restarted = monitor(reset_on_progress=True, halt_counting="detection")
    halt = restarted.observe_all(trace)[-1][1]
    assert isinstance(halt, EmergencyHalt) and (halt.turns, halt.counted_turns) == (27, 20)


def test_state_change_is_progress_for_the_ladder() -> None:
    alm = monitor()
    alm.observe_all([request("a", {})] * 3)
    assert (alm.step, alm.loop_detected) == (1, True)
    alm.observe({**text("bot", "first snapshot"), "state": {"v": 1}})
    assert (alm.step, alm.loop_detected) == (1, True)
    alm.observe({**text("bot", "changed"), "state": {"v": 2}})
    assert (alm.step, alm.loop_detected, alm.run_length) == (0, False, 0)


def test_warning_with_varying_results_does_not_claim_the_same_result() -> None:
    alm = monitor()
    trace: list[dict[str, Any]] = []
    for i in range(4):
        trace += [request("status", {"job": 7}), response("status", {"job": 7}, {"pct": i})]
    actions = alm.observe_all(trace)
    warning = actions[1][1]
    assert isinstance(warning, InjectWarning)
    assert "same result" not in warning.text
    assert 'latest result: {"pct":2}' in warning.text


def test_actions_as_data() -> None:
    skew = TemperatureSkew(from_temperature=0.0, to_temperature=0.7, reason="r")
    assert skew.as_dict() == {
        "kind": "temperature_skew",
        "step": 1,
        "from_temperature": 0.0,
        "to_temperature": 0.7,
        "reason": "r",
    }
    warning = InjectWarning(text="w", tool="t", reason="r")
    assert warning.as_message() == {
        "type": "system",
        "text": "w",
        "meta": {
            "alm": {"kind": "inject_warning", "step": 2, "text": "w", "tool": "t", "reason": "r"}
        },
    }
    halt = EmergencyHalt(turns=3, counted_turns=2, reason="r")
    assert json.loads(json.dumps(halt.as_dict()))["kind"] == "emergency_halt"
    with pytest.raises(AttributeError):
        halt.turns = 4  # type: ignore[misc]


def test_reset_forgets_the_session() -> None:
    alm = monitor()
    alm.observe_all([request("a", {})] * 4)
    alm.reset()
    assert (alm.turns, alm.step, alm.loop_detected, alm.last_reason) == (0, 0, False, None)
    assert alm.status["run_length"] == 0
    assert kinds(alm.observe_all([request("a", {})] * 3)) == [(2, "temperature_skew")]


# -- options ---------------------------------------------------------------------------


def test_defaults_come_from_defaults_json() -> None:
    assert AntiLoopingMonitor().options == detector_defaults("alm")


def test_non_finite_and_none_mean_default() -> None:
    alm = AntiLoopingMonitor(
        max_repeated_tool_calls=math.nan,
        drift_window=math.inf,
        state_drift_threshold_percent=-math.inf,
        max_turn_execution_count=None,
    )
    assert alm.options == detector_defaults("alm")
    assert monitor(max_repeated_tool_calls=4.0).options["max_repeated_tool_calls"] == 4


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("max_repeated_tool_calls", 1, "max_repeated_tool_calls must be an integer >= 2"),
        ("max_repeated_tool_calls", 2.5, "max_repeated_tool_calls must be an integer >= 2"),
        ("max_repeated_tool_calls", True, "max_repeated_tool_calls must be an integer >= 2"),
        ("max_repeated_tool_calls", "3", "max_repeated_tool_calls must be an integer >= 2"),
        ("drift_window", 0, "drift_window must be an integer >= 1"),
        ("state_drift_threshold_percent", -0.1, r"must be a finite number in \[0, 100\]"),
        ("state_drift_threshold_percent", 101, r"must be a finite number in \[0, 100\]"),
        ("base_temperature", -1, "base_temperature must be a finite number >= 0"),
        ("skewed_temperature", "hot", "skewed_temperature must be a finite number >= 0"),
        ("skewed_temperature", 10**400, "skewed_temperature must be a finite number >= 0"),
        ("max_turn_execution_count", 0, "max_turn_execution_count must be an integer >= 1"),
        ("args_encoding", "sorted", "args_encoding must be one of 'canonical', 'insertion'"),
        ("halt_counting", "turns", "halt_counting must be one of 'session', 'detection'"),
        ("reset_on_progress", 1, "reset_on_progress must be True or False"),
    ],
)
def test_bad_options_are_option_errors_naming_the_parameter(
    option: str, value: object, message: str
) -> None:
    with pytest.raises(OptionError, match=message):
        monitor(**{option: value})


def test_skewed_temperature_below_base_is_rejected() -> None:
    with pytest.raises(
        OptionError, match=r"skewed_temperature must be >= base_temperature \(0.5\)"
    ):
        monitor(base_temperature=0.5, skewed_temperature=0.2)


def test_insertion_encoding_option_changes_what_repeats() -> None:
    trace = [request("f", {"a": 1, "b": 2}), request("f", {"b": 2, "a": 1})] * 2
    assert kinds(monitor(args_encoding="canonical").observe_all(trace[:3])) == [
        (2, "temperature_skew")
    ]
    assert monitor(args_encoding="insertion").observe_all(trace) == []


# -- robustness ------------------------------------------------------------------------

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
_FUNCTIONS = st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(["search", "_notice", "run"]) | _SCALARS,
        "arguments": _VALUES,
        "result": _VALUES,
    },
)
_ACTIVITIES = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["request", "response", "trigger"]) | _SCALARS,
        "function": _FUNCTIONS | _SCALARS,
    },
)
_MESSAGES = st.one_of(
    _SCALARS,
    st.lists(_SCALARS, max_size=2),
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["activity", "user", "bot", "reasoning"]) | _SCALARS,
            "text": _SCALARS,
            "meta": st.fixed_dictionaries({}, optional={"activity": _ACTIVITIES | _SCALARS})
            | _SCALARS,
            "state": st.dictionaries(st.text(max_size=3), _VALUES, max_size=2) | _SCALARS,
        },
    ),
)


@settings(max_examples=120, deadline=None)
@given(st.lists(_MESSAGES, max_size=25), st.sampled_from(["canonical", "insertion"]))
def test_never_raises_on_weird_input(messages: list[Any], encoding: str) -> None:
    alm = monitor(args_encoding=encoding, max_turn_execution_count=8)
    for message in messages:
        actions = alm.observe(message)
        assert all(isinstance(action, Action) for action in actions)
        assert 0 <= alm.step <= 3
    json.dumps(alm.status)


def test_cyclic_and_odd_values_in_messages_do_not_raise() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    odd: list[Any] = [
        None,
        42,
        "text",
        {"type": "activity"},
        {"type": "activity", "meta": None},
        {"type": "activity", "meta": {"activity": {"type": "request", "function": None}}},
        {"type": "activity", "meta": {"activity": {"type": "request", "function": {"name": 7}}}},
        request("loop", cyclic),
        response("loop", cyclic, cyclic, state={"s": cyclic}),
        request("loop", cyclic),
        request("loop", {"x": math.nan}),
        {"type": "bot", "state": [1, 2]},
    ]
    alm = monitor()
    actions = alm.observe_all(odd)
    # The cyclic arguments hash to the fallback marker, so the three calls are one run.
    assert kinds(actions) == [(10, "temperature_skew")]
    assert alm.observe_all(None) == [] and alm.observe_all(42) == []  # type: ignore[arg-type]
    assert alm.observe_all({"type": "user"}) == []
