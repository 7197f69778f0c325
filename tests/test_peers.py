"""Tests of the peer detectors (``harness/detectors/peers``): the loop detectors of
Gemini CLI, OpenHands, Roo Code, Cline, Qwen Code, GitHub Copilot and vLLM.

Each check is tested from the peer's documented behaviour (``docs/peers.md``)
with positive and negative cases; the golden cases in ``tests/golden/peers``
pin fire positions and reasons end to end.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness.detectors.peers  # noqa: F401  (registers the peers)
from harness.detectors import (
    REGISTRY,
    Detector,
    DetectorError,
    Fire,
    Param,
    ParameterError,
    get_detector,
)
from harness.detectors.peers import PEERS, _data, cline, copilot, gemini, qwen_code, vllm
from harness.detectors.peers._text import WordStream, to_utf16_units, utf16_head
from harness.detectors.peers._tools import (
    CallReader,
    is_error_result,
    stringify_with_key_list,
)

GOLDEN = Path(__file__).resolve().parent / "golden" / "peers"
PEERS_DEFAULTS = (
    Path(__file__).resolve().parent.parent / "harness" / "detectors" / "peers" / "defaults.json"
)


# -- message builders and replay helpers --------------------------------------------------


def call(name: str, arguments: Any = None) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name}
    if arguments is not None:
        function["arguments"] = arguments
    return {
        "type": "activity",
        "text": "",
        "meta": {"activity": {"type": "request", "function": function}},
    }


def result(name: str, arguments: Any, value: Any) -> dict[str, Any]:
    function = {"name": name, "arguments": arguments, "result": value}
    return {
        "type": "activity",
        "text": "",
        "meta": {"activity": {"type": "response", "function": function}},
    }


def exchange(name: str, arguments: Any, value: Any) -> list[dict[str, Any]]:
    return [call(name, arguments), result(name, arguments, value)]


def bot(text: str) -> dict[str, Any]:
    return {"type": "bot", "text": text}


def user(text: str = "go on") -> dict[str, Any]:
    return {"type": "user", "text": text}


def think(text: str) -> dict[str, Any]:
    return {"type": "reasoning", "text": text}


def replay_thread(
    name: str, messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any] | None = None
) -> tuple[int | None, Any, dict[str, Any] | None]:
    """(index of the first fire, its reason, extra) by the replay rules of docs/corpus-format.md."""
    detector = get_detector(name)
    adapter: Any = detector.make(params)()
    fired: int | None = None
    reason: Any = None
    extra: dict[str, Any] | None = None
    for index, message in enumerate(messages):
        fire = adapter.append(message)
        if fire is not None and fired is None:
            fired, reason = index, fire.reason
            extra = dict(fire.extra) if fire.extra else None
            if not getattr(adapter, "follow_after_fire", False):
                break
    more = adapter.finish()
    if more:
        extra = {**(extra or {}), **more}
    return fired, reason, extra


def replay_stream(
    name: str, messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any] | None = None
) -> tuple[tuple[int, int] | None, Any]:
    """((message, char) of the first fire, its reason); chunks from ``chunks`` or whole text."""
    detector = get_detector(name)
    factory: Any = detector.make(params)
    for index, message in enumerate(messages):
        if not detector.reads(message):
            continue
        push = factory().push
        position = 0
        for chunk in message.get("chunks") or [message["text"]]:
            position += len(chunk)
            fire = push(chunk)
            if fire is not None:
                return (index, position), fire.reason
    return None, None


def stream(
    name: str, chunks: Iterable[str], params: Mapping[str, Any] | None = None
) -> tuple[int | None, Any]:
    """(char offset at the end of the firing chunk, reason) for one model message."""
    adapter: Any = get_detector(name).make(params)()
    position = 0
    for chunk in chunks:
        position += len(chunk)
        fire = adapter.push(chunk)
        if fire is not None:
            return position, fire.reason
    return None, None


def words_text(count: int, seed: int) -> str:
    """Non-repetitive prose: random words from a large vocabulary."""
    rng = random.Random(seed)
    vocab = [f"{a}{b}{c}" for a in "bcdfghklmnprst" for b in "aeiou" for c in "lmnrst"]
    return " ".join(rng.choice(vocab) for _ in range(count)) + " "


# -- registry, data file, parameters ---------------------------------------------------------


def test_every_peer_is_registered_with_the_data_file_defaults() -> None:
    document = json.loads(PEERS_DEFAULTS.read_text(encoding="utf-8"))
    assert set(PEERS) <= set(REGISTRY)
    assert set(document["detectors"]) == set(PEERS)
    for name in PEERS:
        detector = get_detector(name)
        assert isinstance(detector, Detector)
        assert detector.defaults == document["detectors"][name], name
        assert set(detector.param_names) == set(document["detectors"][name]), name
        assert detector.presets == document.get("presets", {}).get(name, {}), name
        for preset in detector.presets or {}:
            detector.resolve(preset=preset)


def test_every_default_has_its_provenance() -> None:
    document = json.loads(PEERS_DEFAULTS.read_text(encoding="utf-8"))
    for name in PEERS:
        provenance = document["provenance"][name]
        assert provenance["source"], name
        described = " ".join(provenance)
        for param in document["detectors"][name]:
            assert param in described or param.rstrip("1234") in described, (name, param)


def test_peers_register_when_the_registry_package_is_imported() -> None:
    import harness.detectors as registry

    assert [n for n in registry.detector_names() if n in PEERS] == list(PEERS)


@pytest.mark.parametrize(
    ("name", "params", "fragment"),
    [
        (
            "gemini_tool_cycle",
            {"repeats": 1},
            "gemini_tool_cycle.repeats must be an integer in [2, 10]",
        ),
        ("gemini_chanting", {"window": 2.5}, "gemini_chanting.window must be an integer"),
        ("gemini_chanting", {"fix_prefilter_bugs": 1}, "must be true or false"),
        ("openhands_stuck", {"headless": "yes"}, "openhands_stuck.headless must be true or false"),
        ("roo_code", {"limit": 0}, "roo_code.limit must be an integer in [1, 10]"),
        ("roo_code", {"limt": 3}, "has no parameter 'limt'; allowed: limit"),
        ("cline", {"fire_on": "halt"}, "cline.fire_on must be one of 'nudge', 'give_up'"),
        ("qwen_code", {"polling_tools": "some"}, "one of 'none', 'qwen', 'all'"),
        ("copilot_repetition", {"pattern_1": 4}, "pattern_1 must be an integer in [1, 3]"),
        ("vllm_repetition", {"min_count": None}, "vllm_repetition.min_count must be"),
    ],
)
def test_parameters_are_validated(name: str, params: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ParameterError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        get_detector(name).make(params)


@pytest.mark.parametrize(
    ("name", "params", "fragment"),
    [
        ("cline", {"soft_threshold": 6, "hard_threshold": 5}, "soft_threshold must be at most"),
        ("vllm_repetition", {"min_pattern_size": 30}, "min_pattern_size must be at most"),
    ],
)
def test_inconsistent_parameter_pairs_are_refused(
    name: str, params: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(ParameterError, match=fragment):
        get_detector(name).make(params)


def _fake_build(params: Mapping[str, Any]) -> Any:
    return lambda: None


def test_a_peer_without_a_default_in_the_peers_file_is_refused() -> None:
    made = _data.peer_detector(
        name="roo_code",
        kind="thread",
        description="x",
        params=(Param("limit", "int", low=1, high=10),),
        build=_fake_build,
    )
    assert made.defaults == {"limit": 3}
    assert made.defaults_document is not None
    with pytest.raises(DetectorError, match=r"no default for roo_code\.window"):
        _data.peer_detector(
            name="roo_code",
            kind="thread",
            description="x",
            params=(Param("window", "int", low=1, high=10),),
            build=_fake_build,
        )
    with pytest.raises(DetectorError, match="out of the search bounds"):
        _data.peer_detector(
            name="roo_code",
            kind="thread",
            description="x",
            params=(Param("limit", "int", low=4, high=10),),
            build=_fake_build,
        )


def test_constants_of_an_unknown_peer_are_an_error() -> None:
    with pytest.raises(DetectorError, match="no constants for 'nobody'"):
        _data.constants("nobody")


# -- shared helpers ----------------------------------------------------------------------------


def test_call_reader_pairs_requests_with_responses_and_skips_notices() -> None:
    reader = CallReader()
    events = [
        [e.kind for e in reader.read(m)]
        for m in (
            call("ls", {"p": 1}),
            result("ls", {"p": 1}, []),
            result("ls", {"p": 2}, []),
            call("_loop_notice", {}),
            bot("hello"),
        )
    ]
    assert events == [["call"], ["result"], ["call", "result"], [], []]


def test_error_results() -> None:
    assert is_error_result({"ok": False, "error": "lock timeout"})
    assert is_error_result({"isError": True, "content": "x"})
    assert is_error_result("  error: not found")
    assert is_error_result("Traceback (most recent call last):\n ...")
    assert not is_error_result({"error": ""})
    assert not is_error_result({"records": []})
    assert not is_error_result("all good, no error")
    assert not is_error_result(404)


def test_array_replacer_semantics() -> None:
    # JSON.stringify({b: [{a: 1, c: 2}], a: "x"}, ["a", "b"]) in JavaScript:
    assert stringify_with_key_list({"b": [{"a": 1, "c": 2}], "a": "x"}, ["a", "b"]) == (
        '{"a":"x","b":[{"a":1}]}'
    )


def test_utf16_helpers() -> None:
    assert to_utf16_units("a😀b") == "a\ud83d\ude00b"
    assert utf16_head("😀😀", 3) == "\ud83d\ude00\ud83d"
    assert utf16_head("abc", 2) == "ab"


@given(st.lists(st.text(alphabet="ab \n", max_size=6), max_size=12))
@settings(max_examples=60, deadline=None)
def test_word_stream_emits_every_complete_token_once(chunks: list[str]) -> None:
    for mode in ("words", "words_and_spaces"):
        words = WordStream(mode)
        emitted = [token for chunk in chunks for token in words.push(chunk)]
        text = "".join(chunks)
        runs = re.findall(r"\s+|\S+", text)[:-1]
        expected = runs if mode == "words_and_spaces" else [r for r in runs if not r.isspace()]
        assert emitted == expected


# -- gemini_tool_cycle ---------------------------------------------------------------------


def test_gemini_five_identical_calls_fire_on_the_fifth() -> None:
    messages = [m for _ in range(5) for m in exchange("read_file", {"path": "a.py"}, "x")]
    fired, reason, _ = replay_thread("gemini_tool_cycle", messages)
    assert fired == 8  # the fifth request
    assert reason["check"] == "consecutive_identical_tool_calls"
    assert reason["cycle_length"] == 1
    assert replay_thread("gemini_tool_cycle", messages[:8])[0] is None


def test_gemini_cycles_of_two_to_five_calls() -> None:
    names = ["a", "b", "c", "d", "e"]
    for length in range(2, 6):
        calls = [call(names[i % length], {"i": i % length}) for i in range(5 * length)]
        fired, reason, _ = replay_thread("gemini_tool_cycle", calls)
        assert fired == 5 * length - 1, length
        assert reason["check"] == "tool_call_cycle"
        assert reason["cycle_length"] == length
        assert reason["tools"] == names[:length]
        assert replay_thread("gemini_tool_cycle", calls[:-1])[0] is None
    six = [call(str(i % 6)) for i in range(40)]
    assert replay_thread("gemini_tool_cycle", six)[0] is None
    four = [call(str(i % 4)) for i in range(20)]
    assert replay_thread("gemini_tool_cycle", four, {"max_cycle_length": 3})[0] is None


def test_gemini_history_bounds_the_cycles() -> None:
    calls = [call("ab"[i % 2]) for i in range(10)]
    assert replay_thread("gemini_tool_cycle", calls, {"history": 9})[0] is None
    assert replay_thread("gemini_tool_cycle", calls, {"history": 10})[0] == 9


def test_gemini_user_message_starts_a_new_prompt() -> None:
    same = call("ls", {"path": "."})
    messages = [same] * 4 + [user()] + [same] * 4
    assert replay_thread("gemini_tool_cycle", messages)[0] is None
    assert replay_thread("gemini_tool_cycle", [*messages, same])[0] == 9


def test_gemini_key_is_json_stringify_in_insertion_order() -> None:
    key = gemini.tool_call_key
    assert key("f", {"a": 1, "b": 2}) != key("f", {"b": 2, "a": 1})
    # Integer-like keys come first in any JavaScript object.
    assert key("f", {"b": 1, "2": 0}) == key("f", {"2": 0, "b": 1})
    assert key("f", {"x": 1.0}) == key("f", {"x": 1})
    messages = [call("f", {"a": 1, "b": 2}), call("f", {"b": 2, "a": 1})] * 5
    fired, reason, _ = replay_thread("gemini_tool_cycle", messages)
    assert (fired, reason["cycle_length"]) == (9, 2)


def test_gemini_response_only_corpus_and_notices() -> None:
    messages = [result("ls", {}, [])] * 5
    assert replay_thread("gemini_tool_cycle", messages)[0] == 4
    noisy = [m for _ in range(5) for m in (call("ls", {}), call("_loop_notice", {"n": 1}))]
    assert replay_thread("gemini_tool_cycle", noisy)[0] == 8


# -- gemini_chanting -----------------------------------------------------------------------


def reference_chanting(chunks: Iterable[str], params: Mapping[str, Any]) -> int | None:
    """A literal port of checkContentLoop (eager re-basing), for the optimised adapter.

    Returns the index of the chunk that fires. The prefilters are those of the
    adapter (tested separately).
    """
    window, max_history, threshold = params["window"], params["history"], params["threshold"]
    max_gap = window * params["gap_factor"]
    fixed = params["fix_prefilter_bugs"]
    stats: dict[str, list[int]] = {}
    history, last, in_code = "", 0, False
    for number, chunk in enumerate(chunks):
        content = to_utf16_units(chunk)
        fences = content.count("```")
        divider = (gemini.DIVIDER_FIXED if fixed else gemini.DIVIDER_BUGGY).fullmatch(content)
        item = (gemini.LIST_ITEM_FIXED if fixed else gemini.LIST_ITEM_BUGGY).search(content)
        others = [gemini._TABLE, gemini._NUMBERED, gemini._HEADING, gemini._BLOCKQUOTE]
        if fences or divider or item or any(r.search(content) for r in others):
            history, stats, last = "", {}, 0
        was = in_code
        if fences % 2:
            in_code = not in_code
        if was or in_code or divider:
            continue
        history += content
        if len(history) > max_history:
            cut = len(history) - max_history
            history = history[cut:]
            last = max(0, last - cut)
            stats = {k: [i - cut for i in v if i - cut >= 0] for k, v in stats.items()}
            stats = {k: v for k, v in stats.items() if v}
        while last + window <= len(history):
            text = history[last : last + window]
            seen = stats.get(text)
            if seen is None:
                stats[text] = [last]
            else:
                seen.append(last)
                if len(seen) >= threshold:
                    recent = seen[-threshold:]
                    mean = (recent[-1] - recent[0]) / (threshold - 1)
                    periods = {history[a:b] for a, b in pairwise(recent)}
                    if mean <= max_gap and len(periods) <= threshold // 2:
                        return number
            last += 1
    return None


def chant(sentence: str, times: int) -> list[str]:
    return [sentence] * times


def test_chanting_fires_on_a_repeated_sentence() -> None:
    chunks = chant("I will check the logs again now. ", 20)
    position, reason = stream("gemini_chanting", chunks)
    assert position is not None
    assert reason["check"] == "chanting"
    assert reason["occurrences"] == 10
    assert reason["periods"] == 1
    assert reason["mean_gap"] == len(chunks[0])
    assert reason["window"] in "".join(chunks)
    # Ten occurrences of a 50-unit window need 9 periods of 33 units plus one window.
    assert position >= 9 * 33 + 50


def test_chanting_ignores_prose() -> None:
    text = words_text(1600, seed=1)
    assert len(text) > 6000
    assert stream("gemini_chanting", [text[i : i + 7] for i in range(0, len(text), 7)])[0] is None


def test_chanting_mean_gap_and_distinct_periods() -> None:
    # The same 60-unit phrase, each time after 300 units of fresh prose: gap too wide.
    phrase = "Let me look at the configuration file once more, carefully. "
    wide = [phrase + words_text(60, seed=i)[:300] for i in range(12)]
    assert stream("gemini_chanting", wide)[0] is None
    # A shared prefix with distinct items after it (a list of things): too many periods.
    items = [phrase + f"item {i:03d} is {words_text(6, seed=i)}" for i in range(14)]
    assert max(len(i) for i in items) < 250
    assert stream("gemini_chanting", items)[0] is None
    assert stream("gemini_chanting", [items[0]] * 14)[0] is not None


def test_chanting_skips_code_and_resets_on_structure() -> None:
    loop = chant("x = compute(x) + 1; ", 40)
    assert stream("gemini_chanting", ["```python\n", *loop, "```\n"])[0] is None
    assert stream("gemini_chanting", ["```python\n", *loop, "```\n", *loop])[0] is not None
    sentence = "I will check the logs again now. "
    broken = []
    for _ in range(5):
        broken += [*chant(sentence, 8), "\n## Next step\n"]
    assert stream("gemini_chanting", broken)[0] is None
    assert stream("gemini_chanting", [c.replace("## ", "") for c in broken])[0] is not None


@pytest.mark.parametrize(
    ("name", "chunks", "buggy", "fixed"),
    [
        # `[*-+]` misses "-" bullets: a bulleted chant is tracked by the buggy filter only.
        ("dash bullets", ["- Retry the request to the server now.\n"] * 30, True, False),
        ("star bullets", ["* Retry the request to the server now.\n"] * 30, False, False),
        # `[+-_=*...]` takes capitals and digits for a divider: the chunk is dropped.
        ("capital words", ["RETRY", " "] * 120, False, True),
        ("digits", ["404", " "] * 120, False, True),
        ("real divider", ["-----", " "] * 120, False, False),
        ("lowercase words", ["retry", " "] * 120, True, True),
    ],
)
def test_chanting_prefilter_bugs(name: str, chunks: list[str], buggy: bool, fixed: bool) -> None:
    assert (stream("gemini_chanting", chunks)[0] is not None) is buggy, name
    params = {"fix_prefilter_bugs": True}
    assert (stream("gemini_chanting", chunks, params)[0] is not None) is fixed, name


def test_chanting_prefilter_bugs_measured_on_a_mini_corpus() -> None:
    # Twelve streamed answers: the verdicts differ exactly on the four bug-exposing ones.
    sentences = ["Retry the request to the server now.", "Check the config file once more."]
    answers = {}
    for i, s in enumerate(sentences):
        answers[f"dash-{i}"] = [f"- {s}\n"] * 30
        answers[f"star-{i}"] = [f"* {s}\n"] * 30
        answers[f"caps-{i}"] = [s.upper().replace(" ", "_"), " "] * 60
        answers[f"plain-{i}"] = [s + " "] * 30
        answers[f"prose-{i}"] = [words_text(400, seed=i)]
        answers[f"numbered-{i}"] = [f"{n}. {s}\n" for n in range(30)]
    verdicts = {
        fix: {
            k: stream("gemini_chanting", v, {"fix_prefilter_bugs": fix})[0] is not None
            for k, v in answers.items()
        }
        for fix in (False, True)
    }
    differ = sorted(k for k in answers if verdicts[False][k] != verdicts[True][k])
    assert differ == ["caps-0", "caps-1", "dash-0", "dash-1"]
    assert sum(verdicts[False].values()) == 4  # dash x2, plain x2
    assert sum(verdicts[True].values()) == 4  # caps x2, plain x2


def test_chanting_counts_utf16_units() -> None:
    position, reason = stream("gemini_chanting", ["😀"] * 400)
    assert reason["window"] == "😀" * 25
    # Period 2 units: the 10th occurrence of the first window starts at unit 18.
    assert position == (18 + 50) // 2


def test_chanting_history_truncation_matches_the_source() -> None:
    prose = words_text(1400, seed=3)
    chunks = [prose[i : i + 9] for i in range(0, len(prose), 9)] + chant("Trying once more. ", 30)
    params = get_detector("gemini_chanting").defaults
    expected = reference_chanting(chunks, params)
    assert expected is not None
    assert stream("gemini_chanting", chunks)[0] == sum(len(c) for c in chunks[: expected + 1])


# Streams of a repeated unit between noise, from pieces that hit every prefilter.
_PIECES = st.sampled_from(
    ["ab", "ab ", "b", " ", "a", "- ", "* ", "AB", "12", "```", "\n", "# ", "--", "\n- ", "x"]
)
_CHANTS = st.builds(
    lambda pre, unit, reps, post: pre + unit * reps + post,
    st.lists(_PIECES, max_size=8),
    st.lists(_PIECES, min_size=1, max_size=4),
    st.integers(1, 14),
    st.lists(_PIECES, max_size=8),
)


@given(_CHANTS, st.booleans())
@settings(max_examples=150, deadline=None)
def test_chanting_agrees_with_a_literal_port(chunks: list[str], fix: bool) -> None:
    # Tiny windows and history (below the tuning bounds) exercise truncation and re-basing.
    params = {
        "window": 4,
        "history": 24,
        "threshold": 4,
        "gap_factor": 2.0,
        "fix_prefilter_bugs": fix,
    }
    expected = reference_chanting(chunks, params)
    adapter = gemini.ChantingAdapter(params)
    fired = next((i for i, chunk in enumerate(chunks) if adapter.push(chunk) is not None), None)
    assert fired == expected


def test_chanting_reads_answers_not_reasoning() -> None:
    detector = get_detector("gemini_chanting")
    assert detector.reads(bot("text"))
    assert not detector.reads(think("text"))
    assert not detector.reads(user("text"))


# -- openhands_stuck -------------------------------------------------------------------------


def scenario(
    messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any] | None = None
) -> tuple[int | None, str | None]:
    fired, reason, _ = replay_thread("openhands_stuck", messages, params)
    return fired, None if reason is None else reason["scenario"]


def test_openhands_repeating_action_observation() -> None:
    loop = [m for _ in range(4) for m in exchange("grep", {"q": "TODO"}, "3 matches")]
    assert scenario(loop) == (7, "repeating_action_observation")
    assert scenario(loop[:7]) == (None, None)
    varied = [m for i in range(4) for m in exchange("grep", {"q": "TODO"}, f"{i} matches")]
    assert scenario(varied) == (None, None)


def test_openhands_repeating_action_error() -> None:
    loop = [m for _ in range(3) for m in exchange("edit", {"f": "a.py"}, {"error": "hunk failed"})]
    assert scenario(loop) == (5, "repeating_action_error")
    fine = [m for _ in range(3) for m in exchange("edit", {"f": "a.py"}, {"ok": True})]
    assert scenario(fine) == (None, None)
    # Different errors still count: only the actions must be identical.
    errors = [m for i in range(3) for m in exchange("edit", {"f": "a.py"}, f"Error: {i}")]
    assert scenario(errors) == (5, "repeating_action_error")


def test_openhands_monologue() -> None:
    same = bot("I should check the tests.")
    assert scenario([same, think("hmm"), same, same]) == (3, "monologue")
    assert scenario([same, bot("Something else."), same]) == (None, None)
    between = [same, *exchange("ls", {}, []), same, same]
    assert scenario(between) == (None, None)
    assert scenario([*between, same]) == (5, "monologue")


def test_openhands_alternating_pattern() -> None:
    pair_a = exchange("read", {"f": "a"}, "A")
    pair_b = exchange("read", {"f": "b"}, "B")
    loop = (pair_a + pair_b) * 3
    assert scenario(loop) == (11, "repeating_action_observation_pattern")
    assert scenario(loop[:11]) == (None, None)
    drifting = pair_a + pair_b + pair_a + exchange("read", {"f": "b"}, "B2") + pair_a + pair_b
    assert scenario(drifting) == (None, None)


def test_openhands_condensation_loop_and_its_source_quirk() -> None:
    condensed = {"type": "condensation", "text": "summary"}
    notice = call("_condensation", {})
    assert scenario([condensed] * 10) == (9, "context_window_error")
    assert scenario([notice] * 10) == (9, "context_window_error")
    assert scenario([condensed] * 9) == (None, None)
    # Ten condensations, only two of them adjacent: the source fires on any adjacent pair.
    spread = [condensed, condensed]
    for i in range(8):
        spread += [bot(f"working on step {i}"), condensed]
    assert scenario(spread) == (len(spread) - 1, "context_window_error")
    assert scenario(spread, {"fix_condensation_check": True}) == (None, None)
    assert scenario([condensed] * 10, {"fix_condensation_check": True})[1] == "context_window_error"


def test_openhands_empty_response_loop() -> None:
    empties = [bot(""), bot(" "), bot("\n")]
    assert scenario(empties) == (2, "empty_response_loop")
    assert scenario([bot(""), bot(" "), *exchange("ls", {}, []), bot("\n")]) == (None, None)


def test_openhands_headless_and_interactive_windows() -> None:
    same = bot("Waiting for the build.")
    messages = [same, same, user("any news?"), same]
    assert scenario(messages) == (3, "monologue")
    assert scenario(messages, {"headless": False}) == (None, None)
    nudge = user(
        "Your last response did not include a function call. Please use a tool to proceed."
    )
    assert scenario([same, same, nudge, same], {"headless": False}) == (3, "monologue")


def test_openhands_needs_three_events_and_compares_commands_like_cmd_output() -> None:
    same = bot("ok")
    assert scenario([same, same], {"monologue": 2}) == (None, None)
    assert scenario([same, same, same], {"monologue": 2})[0] == 2
    runs = [
        m
        for i in range(4)
        for m in exchange("bash", {"command": "make"}, {"exit_code": 2, "output": f"t={i}"})
    ]
    assert scenario(runs) == (7, "repeating_action_observation")
    outputs = [
        m for i in range(4) for m in exchange("bash", {"command": "make"}, {"output": f"t={i}"})
    ]
    assert scenario(outputs) == (None, None)


# -- roo_code ---------------------------------------------------------------------------------


def test_roo_blocks_the_fourth_identical_call() -> None:
    same = call("read_file", {"path": "a.py", "mode": "r"})
    fired, reason, _ = replay_thread("roo_code", [same] * 4)
    assert fired == 3
    assert reason == {
        "check": "consecutive_identical_tool_calls",
        "tool": "read_file",
        "limit": 3,
        "blocked_call": 4,
    }
    assert replay_thread("roo_code", [same] * 3)[0] is None
    other = call("read_file", {"path": "b.py"})
    assert replay_thread("roo_code", [same, same, same, other, same, same])[0] is None
    assert replay_thread("roo_code", [same] * 2, {"limit": 1})[0] == 1


def test_roo_sorts_top_level_keys_only() -> None:
    a = call("write", {"path": "x", "body": {"k": 1, "v": 2}})
    b = call("write", {"body": {"k": 1, "v": 2}, "path": "x"})
    assert replay_thread("roo_code", [a, b, a, b])[0] == 3
    c = call("write", {"path": "x", "body": {"v": 2, "k": 1}})
    assert replay_thread("roo_code", [a, c] * 4)[0] is None


def test_roo_exempts_browser_scrolls() -> None:
    scroll = call("browser_action", {"action": "scroll_down"})
    assert replay_thread("roo_code", [scroll] * 10)[0] is None
    click = call("browser_action", {"action": "click", "coordinate": "10,10"})
    assert replay_thread("roo_code", [click, scroll, click, click, scroll, click])[0] == 5


# -- cline ------------------------------------------------------------------------------------


def test_cline_nudges_at_three_and_reports_the_give_up() -> None:
    same = exchange("search_files", {"path": ".", "regex": "TODO"}, "none")
    messages = same * 6
    fired, reason, extra = replay_thread("cline", messages)
    assert fired == 4  # the third request
    assert reason == {
        "check": "repeated_tool_call",
        "level": "nudge",
        "tool": "search_files",
        "count": 3,
    }
    assert extra == {"nudges": [4], "give_up": 8}
    fired, reason, extra = replay_thread("cline", messages, {"fire_on": "give_up"})
    assert (fired, reason["level"], reason["count"]) == (8, "give_up", 5)
    assert extra == {"nudges": [4], "give_up": 8}
    assert replay_thread("cline", same * 2)[0] is None
    assert replay_thread("cline", same * 4, {"fire_on": "give_up"})[0] is None
    equal = {"soft_threshold": 4, "hard_threshold": 4}
    for level in ("nudge", "give_up"):
        fired, reason, extra = replay_thread("cline", messages, {**equal, "fire_on": level})
        assert (fired, reason["level"], extra) == (6, level, {"nudges": [6], "give_up": 6})


def test_cline_ignores_task_progress_and_restarts_on_a_new_call() -> None:
    calls = [call("read_file", {"path": "a", "task_progress": f"- [x] step {i}"}) for i in range(3)]
    assert replay_thread("cline", calls)[0] == 2
    other = call("read_file", {"path": "b"})
    fired, _, extra = replay_thread("cline", [calls[0], calls[1], other, calls[2]])
    assert fired is None
    assert extra == {"nudges": [], "give_up": None}


def test_cline_nested_parameters_and_their_fix() -> None:
    calls = [call("update", {"id": 7, "fields": {"stage": s}}) for s in ("a", "b", "c")]
    assert cline.tool_call_signature(calls[0]["meta"]["activity"]["function"]["arguments"]) == (
        '{"fields":{},"id":7}'
    )
    assert replay_thread("cline", calls)[0] == 2
    assert replay_thread("cline", calls, {"fix_nested_params": True})[0] is None


# -- qwen_code --------------------------------------------------------------------------------


def qwen(
    messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any] | None = None
) -> tuple[int | None, str | None]:
    fired, reason, _ = replay_thread("qwen_code", messages, params)
    return fired, None if reason is None else reason["check"]


def test_qwen_five_identical_calls() -> None:
    same = exchange("read_file", {"path": "a", "opts": {"x": 1, "y": 2}}, "text")
    assert qwen(same * 5) == (8, "consecutive_identical_tool_calls")
    assert qwen(same * 4) == (None, None)
    shuffled = exchange("read_file", {"opts": {"y": 2, "x": 1}, "path": "a"}, "text")
    assert qwen((same + shuffled) * 2 + same) == (8, "consecutive_identical_tool_calls")
    assert qwen(same * 4 + [user()] + same) == (None, None)


def test_qwen_polling_tools_compare_results() -> None:
    args = {"status": "open"}
    changing = [m for i in range(6) for m in exchange("task_list", args, {"tasks": i})]
    frozen = [m for _ in range(5) for m in exchange("task_list", args, {"tasks": 1})]
    assert qwen(changing) == (None, None)
    assert qwen(frozen) == (8, "consecutive_identical_tool_calls")
    # Requests without results: no evidence, so the argument-only guard stands.
    assert qwen([call("task_list", args)] * 5) == (4, "consecutive_identical_tool_calls")
    assert qwen(changing, {"polling_tools": "none"}) == (8, "consecutive_identical_tool_calls")
    other = [m for i in range(6) for m in exchange("get_status", args, {"n": i})]
    assert qwen(other) == (8, "consecutive_identical_tool_calls")
    assert qwen(other, {"polling_tools": "all"}) == (None, None)


def test_qwen_alternating_pattern() -> None:
    a, b = call("read", {"f": "a"}), call("read", {"f": "b"})
    assert qwen([a, b, a, b, a, b]) == (5, "alternating_tool_call_pattern")
    assert qwen([a, b, a, b, a]) == (None, None)
    assert qwen([a, b, a, b, a, call("read", {"f": "c"})]) == (None, None)
    assert qwen([a, b, a, b], {"alternating_cycles": 2}) == (3, "alternating_tool_call_pattern")


def test_qwen_alternating_pattern_with_a_changing_poller() -> None:
    board = [exchange("task_list", {}, {"done": i}) for i in range(4)]
    work = exchange("send_message", {"to": "lead"}, "sent")
    messages = [m for i in range(3) for m in board[i] + work]
    assert qwen(messages) == (None, None)
    frozen = [m for _ in range(3) for m in exchange("task_list", {}, {"done": 0}) + work]
    assert qwen(frozen) == (10, "alternating_tool_call_pattern")


def test_qwen_repetitive_thoughts() -> None:
    t = think("**Checking the config** I need to read it again.")
    assert qwen([t, t, t]) == (2, "repetitive_thoughts")
    assert qwen([t, t, call("read", {}), t]) == (None, None)
    same_signature = think("  **checking the CONFIG**   i need to read it again.  ")
    assert qwen([t, same_signature, t]) == (2, "repetitive_thoughts")
    assert qwen([t, think("**Checking the config** Now the other file."), t]) == (None, None)
    long = "x" * 200
    cut = [think(f"**Plan** {long} tail {i}") for i in range(3)]
    assert qwen(cut) == (2, "repetitive_thoughts")
    assert qwen_code.parse_thought("**only") == ("", "**only")


# -- copilot_repetition ----------------------------------------------------------------------


def brute_period(backwards: Sequence[str], window: int) -> int:
    for p in range(1, window + 1):
        if all(backwards[i] == backwards[i + p] for i in range(window - p)):
            return p
    return window


@given(st.lists(st.sampled_from("abc"), min_size=1, max_size=40))
@settings(max_examples=200, deadline=None)
def test_copilot_period_is_the_smallest_shift(tokens: list[str]) -> None:
    pi = copilot.prefix_function(tokens)
    for window in range(1, len(tokens) + 1):
        assert window - 1 - pi[window - 1] == brute_period(tokens, window)


def test_copilot_rules() -> None:
    assert stream("copilot_repetition", ["ok "] * 9)[0] is None
    position, reason = stream("copilot_repetition", ["ok "] * 12)
    assert position == 30
    assert reason == {
        "check": "repetitive",
        "tokens": "all",
        "window": 10,
        "pattern_length": 1,
        "pattern": ["ok"],
    }
    ten = " ".join(f"w{i}" for i in range(10)) + " "
    position, reason = stream("copilot_repetition", [ten] * 4)
    assert (position, reason["window"], reason["pattern_length"]) == (3 * len(ten), 30, 10)
    eleven = " ".join(f"w{i}" for i in range(11)) + " "
    tokens = (eleven * 5).split()
    position, reason = stream("copilot_repetition", [t + " " for t in tokens])
    assert (reason["window"], reason["pattern_length"]) == (45, 11)
    assert position == 4 * (10 * 3 + 4) + 3  # 4 lines of 11 tokens, then "w0 "
    assert stream("copilot_repetition", [words_text(500, seed=5)])[0] is None


def test_copilot_longest_rule() -> None:
    thirty = [f"t{i} " for i in range(30)]
    position, reason = stream("copilot_repetition", thirty * 2 + ["end "])
    assert (reason["window"], reason["pattern_length"]) == (60, 30)
    assert position == sum(len(t) for t in thirty) * 2
    thirty_one = [f"t{i} " for i in range(31)]
    assert stream("copilot_repetition", thirty_one * 3)[0] is None


@given(st.lists(st.sampled_from(["a ", "b ", "c ", "a", "\n"]), max_size=80))
@settings(max_examples=150, deadline=None)
def test_copilot_adapter_checks_after_every_token(chunks: list[str]) -> None:
    rules: dict[str, Any] = {"window_1": 4, "pattern_1": 1, "window_2": 6, "pattern_2": 2}
    rules |= {"window_3": 9, "pattern_3": 4, "window_4": 12, "pattern_4": 5, "tokens": "words"}
    adapter = copilot.CopilotAdapter(rules)
    fired = next((i for i, chunk in enumerate(chunks) if adapter.push(chunk) is not None), None)
    words, tokens, expected = WordStream("words"), [], None
    table = [(4, 1), (6, 2), (9, 4), (12, 5)]
    for i, chunk in enumerate(chunks):
        for token in words.push(chunk):
            tokens.append(token)
            if expected is None and copilot.period_of_tail(tokens[::-1], table)[0]:
                expected = i
    assert fired == expected


def test_copilot_last_repetition_may_be_cut_short() -> None:
    seven = [f"t{i} " for i in range(7)]
    chunks = (seven * 5)[:30]
    position, reason = stream("copilot_repetition", chunks)
    assert (position, reason["pattern_length"]) == (90, 7)


def test_copilot_whitespace_tokens_and_the_second_pass() -> None:
    rng = random.Random(4)
    chunks = [
        c
        for _ in range(40)
        for c in ("go", " " * rng.randint(1, 5), "on", "\n" * rng.randint(1, 3))
    ]
    _, reason = stream("copilot_repetition", chunks, {"tokens": "words_and_spaces"})
    assert reason["tokens"] == "non_whitespace"
    assert (reason["window"], reason["pattern"]) == (30, ["go", "on"])
    # In words mode every token is a word: the first pass sees the same tokens.
    _, reason = stream("copilot_repetition", chunks)
    assert (reason["tokens"], reason["window"]) == ("all", 30)


# -- vllm_repetition -------------------------------------------------------------------------


def check_sequence_repetition(tokens: list[str], low: int, high: int, count: int) -> int:
    """A literal port of vLLM's check (returns the size found, 0 for none)."""
    for size in range(max(low, 1), high + 1):
        if size * count > len(tokens):
            return 0
        if vllm.has_repeating_pattern(tokens, size, count):
            return size
    return 0


def test_vllm_repeated_tail() -> None:
    position, reason = stream("vllm_repetition", ["go on "] * 3)
    assert position == 18
    assert reason == {
        "check": "repetition_detected",
        "pattern_size": 2,
        "count": 3,
        "pattern": ["go", "on"],
    }
    assert stream("vllm_repetition", ["go on "] * 2)[0] is None
    assert stream("vllm_repetition", ["no no no "])[1]["pattern_size"] == 1
    two = {"min_pattern_size": 2}
    assert stream("vllm_repetition", ["no "] * 5, two)[0] is None
    assert stream("vllm_repetition", ["no "] * 6, two)[1]["pattern_size"] == 2
    phrase = " ".join(f"p{i}" for i in range(21)) + " "
    assert stream("vllm_repetition", [phrase] * 3)[0] is None
    assert (
        stream("vllm_repetition", [phrase] * 3, {"max_pattern_size": 21})[1]["pattern_size"] == 21
    )
    assert stream("vllm_repetition", [words_text(800, seed=9)])[0] is None


@given(
    st.lists(st.sampled_from("abc"), min_size=1, max_size=60),
    st.integers(1, 4),
    st.integers(0, 8),
    st.integers(2, 4),
)
@settings(max_examples=200, deadline=None)
def test_vllm_agrees_with_the_source_check(
    tokens: list[str], low: int, extra: int, count: int
) -> None:
    params = {"min_pattern_size": low, "max_pattern_size": low + extra, "min_count": count}
    adapter = vllm.VllmAdapter(params)
    for i in range(len(tokens)):
        assert adapter._add(tokens[i]) == check_sequence_repetition(
            tokens[: i + 1], low, low + extra, count
        )


# -- golden cases -------------------------------------------------------------------------------


def golden_cases() -> list[Path]:
    return sorted(GOLDEN.glob("*/*.json"))


def test_golden_cases_cover_every_peer() -> None:
    assert {p.parent.name for p in golden_cases()} == set(PEERS)


@pytest.mark.parametrize("path", golden_cases(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_golden(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    name = path.parent.name
    detector = get_detector(name)
    expected = case["expected"]
    if detector.kind == "thread":
        fired, reason, extra = replay_thread(name, case["messages"], case.get("params"))
        at = None if fired is None else {"message": fired, "char": None}
    else:
        position, reason = replay_stream(name, case["messages"], case.get("params"))
        at = None if position is None else {"message": position[0], "char": position[1]}
        extra = None
    assert at == expected["fired_at"]
    assert reason == expected["reason"]
    if "extra" in expected:
        assert extra == expected["extra"]


def test_golden_cases_replay_the_same_through_the_harness() -> None:
    from harness.replay import Replayer

    for path in golden_cases():
        case = json.loads(path.read_text(encoding="utf-8"))
        name = path.parent.name
        replayer = Replayer([name], {name: case.get("params") or {}}, chunking="whole")
        outcome = replayer.replay(path.stem, case["messages"])[0]
        assert outcome.error is None, (path, outcome.error)
        expected = case["expected"]["fired_at"]
        got = (
            None
            if outcome.fired_at is None
            else dict(zip(("message", "char"), outcome.fired_at, strict=True))
        )
        assert got == expected, path
        assert outcome.reason == (case["expected"]["reason"] if expected else None), path


def test_fire_is_the_registry_type() -> None:
    adapter: Any = get_detector("roo_code").make({"limit": 1})()
    adapter.append(call("x"))
    assert isinstance(adapter.append(call("x")), Fire)
