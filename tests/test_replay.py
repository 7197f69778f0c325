"""Replay semantics: chunking, online evaluation, incremental checks, golden verdicts."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import loopguard as lg
from harness._atomic import atomic_write_jsonl
from harness.chunking import ChunkingError, message_chunks, parse_policy
from harness.corpus import Case, load_cases
from harness.detectors import Detector, Fire, Param, get_detector
from harness.detectors._incremental import ResultRunCheck, SuffixCheck
from harness.detectors.repeated_message_text_run import MessageTextRunCheck
from harness.detectors.text_run import IncrementalTextRun
from harness.replay import Replayer, TokenIndex, estimate_tokens, verdict_record

GOLDEN = Path(__file__).parent / "golden" / "replay"
UPDATE = os.environ.get("LOOPGUARD_UPDATE_GOLDEN") == "1"


def act(kind: str, name: str, args: Any, **extra: Any) -> dict[str, Any]:
    function = {"name": name, "arguments": args, **extra}
    return {
        "type": "activity",
        "text": "",
        "meta": {"activity": {"type": kind, "function": function}},
    }


# -- chunking --------------------------------------------------------------------------------

POLICIES = ["provider", "word", "sentence", "fixed:1", "fixed:7", "whole"]


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=200), policy=st.sampled_from(POLICIES), seed=st.integers(0, 9))
def test_every_policy_gives_the_text_back(text: str, policy: str, seed: int) -> None:
    chunks = parse_policy(policy).chunks(text, case_id="c", index=2, seed=seed)
    assert "".join(chunks) == text
    assert all(chunks) or text == ""


def test_provider_chunks_are_seeded_and_1_to_9_characters() -> None:
    policy = parse_policy("provider")
    text = "x" * 500
    first = policy.chunks(text, case_id="a", index=0, seed=1)
    assert first == policy.chunks(text, case_id="a", index=0, seed=1)
    assert first != policy.chunks(text, case_id="a", index=0, seed=2)
    assert first != policy.chunks(text, case_id="b", index=0, seed=1)
    assert {len(c) for c in first[:-1]} <= set(range(1, 10))
    assert len({len(c) for c in first}) > 5


def test_word_sentence_and_fixed_cuts() -> None:
    assert parse_policy("word").chunks(" a  bc\nd", case_id="c", index=0, seed=0) == [
        " a  ",
        "bc\n",
        "d",
    ]
    assert parse_policy("sentence").chunks("Hi. Yes!! ok\nend", case_id="c", index=0, seed=0) == [
        "Hi. ",
        "Yes!! ",
        "ok\n",
        "end",
    ]
    assert parse_policy("fixed:3").chunks("abcdefg", case_id="c", index=0, seed=0) == [
        "abc",
        "def",
        "g",
    ]


def test_recorded_chunks_win_over_the_policy() -> None:
    message = {"type": "bot", "text": "abcdef", "chunks": ["ab", "cdef"]}
    for policy in POLICIES:
        assert message_chunks(message, parse_policy(policy), case_id="c", index=0, seed=0) == [
            "ab",
            "cdef",
        ]


@pytest.mark.parametrize("bad", ["", "fixed:0", "fixed:x", "chars", "fixed"])
def test_bad_policy_names_list_the_allowed_ones(bad: str) -> None:
    with pytest.raises(ChunkingError, match="fixed:N"):
        parse_policy(bad)


# -- incremental checks equal the library on every prefix -------------------------------------

_POOL = [
    {"type": "user", "text": "again?"},
    {"type": "bot", "text": "same"},
    {"type": "bot", "text": "Same again. Same again. Same again. Same again. Same again."},
    {"type": "reasoning", "text": "think"},
    act("request", "search", {"q": "x"}),
    act("response", "search", {"q": "x"}, result=[]),
    act("response", "search", {"q": "x"}, result=[1]),
    act("request", "ls", {}),
    act("response", "ls", {}, result="a"),
    act("response", "_notice", {}, result="a"),
    {"type": "activity", "text": "", "meta": {"activity": {"type": "response"}}},
]

thread_strategy = st.lists(st.sampled_from(range(len(_POOL))), max_size=24)


@settings(max_examples=60, deadline=None)
@given(
    picks=thread_strategy,
    reps=st.integers(1, 4),
    min_len=st.integers(1, 3),
    max_len=st.one_of(st.none(), st.integers(1, 6)),
    results=st.integers(2, 4),
)
def test_incremental_suffix_and_result_run_match_the_library(
    picks: list[int], reps: int, min_len: int, max_len: int | None, results: int
) -> None:
    messages = [_POOL[i] for i in picks]
    options = {
        "min_repetitions": reps,
        "min_pattern_length": min_len,
        "max_pattern_length": max_len,
    }
    suffix = SuffixCheck(options)
    result_run = ResultRunCheck({"min_result_repetitions": results})
    for n in range(1, len(messages) + 1):
        prefix = messages[:n]
        assert suffix.add(messages[n - 1]) == lg.has_repeated_suffix(prefix, **options)
        assert result_run.add(messages[n - 1]) == lg.has_repeated_result_run(
            prefix, min_result_repetitions=results
        )


@settings(max_examples=40, deadline=None)
@given(picks=thread_strategy, last=st.integers(1, 4), units=st.integers(2, 6))
def test_thread_cycle_and_text_check_match_describe_thread_cycle(
    picks: list[int], last: int, units: int
) -> None:
    messages = [_POOL[i] for i in picks]
    detector = get_detector("thread_cycle")
    params = detector.resolve({"last_messages": last, "text_min_units": units})
    adapter = detector.build(params)()
    text_check = MessageTextRunCheck(params)
    for n in range(1, len(messages) + 1):
        prefix = messages[:n]
        fire = adapter.append(messages[n - 1])
        assert (fire.reason if fire else None) == lg.describe_thread_cycle(prefix, **params)
        assert text_check.add(messages[n - 1]) == lg.has_repeated_message_text_run(
            prefix,
            last_messages=last,
            text_min_units=units,
            text_window=params["text_window"],
            text_max_unique_ratio=params["text_max_unique_ratio"],
        )


_SENTENCES = [
    "Again.",
    "again",
    "Hello world!",
    "x",
    "😀 ok.",
    "Ünï?",
    "\n",
    "...",
    " ",
    "İi",
    "\u2028",
]


@settings(max_examples=80, deadline=None)
@given(
    parts=st.lists(st.sampled_from(_SENTENCES), max_size=50),
    min_units=st.integers(2, 8),
    window=st.integers(2, 16),
    ratio=st.sampled_from([0.1, 0.3, 0.5, 1.0]),
    limit=st.sampled_from([5, 13, 40, 41, 4000]),
    policy=st.sampled_from(POLICIES),
    seed=st.integers(0, 50),
)
def test_incremental_text_run_matches_the_library_after_every_chunk(
    parts: list[str],
    min_units: int,
    window: int,
    ratio: float,
    limit: int,
    policy: str,
    seed: int,
) -> None:
    text = " ".join(parts)
    options = {
        "min_units": min_units,
        "window": window,
        "max_unique_ratio": ratio,
        "tail_limit": limit,
    }
    run = IncrementalTextRun(**options)
    so_far = ""
    for chunk in parse_policy(policy).chunks(text, case_id="c", index=0, seed=seed):
        so_far += chunk
        assert run.push(chunk) == lg.has_repeated_text_run(so_far, **options), repr(so_far)


def test_text_run_fires_inside_an_unfinished_sentence() -> None:
    # Evaluating only when a terminator arrives would miss this fire position.
    run = IncrementalTextRun(min_units=3, window=64, max_unique_ratio=0.5, tail_limit=4000)
    fired = [run.push(c) for c in ["Go on. ", "Go on. ", "Go ", "on"]]
    assert fired == [False, False, False, True]
    assert lg.has_repeated_text_run("Go on. Go on. Go on", min_units=3)
    assert not lg.has_repeated_text_run("Go on. Go on. Go ", min_units=3)


# -- online replay --------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "period"), [(0, 2), (1, 2), (3, 3), (2, 5)])
def test_a_loop_from_message_k_fires_when_its_second_period_completes(k: int, period: int) -> None:
    intro = [{"type": "user", "text": f"Intro {i}."} for i in range(k)]
    block = [{"type": "bot", "text": f"Part {j}."} for j in range(period)]
    messages = intro + block * 3
    (outcome,) = Replayer(["repeated_suffix"]).replay("c", messages)
    assert outcome.fired_at == (k + 2 * period - 1, None)


def test_the_guard_fires_at_the_end_of_the_chunk_that_trips_it() -> None:
    chunks = ["Let me ", "call lint(). "] * 6
    guard = lg.RepetitionGuard()
    trip = next(i for i, c in enumerate(chunks) if guard.push(c))
    message = {"type": "bot", "text": "".join(chunks), "chunks": chunks}
    (outcome,) = Replayer(["repetition_guard"]).replay(
        "c", [{"type": "user", "text": "go"}, message]
    )
    assert outcome.fired_at == (1, sum(len(c) for c in chunks[: trip + 1]))
    assert outcome.reason == guard.reason().as_dict()  # type: ignore[union-attr]


def test_stream_detectors_get_a_fresh_instance_per_message() -> None:
    half = {"type": "bot", "text": "Let me call lint(). " * 3}
    assert lg.RepetitionGuard().push(half["text"] * 2)  # one shared guard would trip
    (outcome,) = Replayer(["repetition_guard"], chunking="whole").replay("c", [half, half])
    assert not outcome.fired


def test_overthinking_reads_only_reasoning_and_guard_skips_user_text() -> None:
    doubt = "Wait, but why? Let me reconsider. On second thought, no. This might be wrong. "
    bot = {"type": "bot", "text": doubt}
    user = {"type": "user", "text": "Let me call lint(). " * 10}
    replayer = Replayer(["overthinking", "repetition_guard"], chunking="whole")
    assert [o.fired for o in replayer.replay("c", [user, bot])] == [False, False]
    reasoning = {"type": "reasoning", "text": doubt}
    outcome = replayer.replay("c", [bot, reasoning])[0]
    assert outcome.fired_at == (1, len(doubt))


def test_alm_fires_at_its_first_ladder_step_and_reports_every_step() -> None:
    calls = [act("request", "write", {"f": "a"}) for _ in range(5)]
    expected = lg.AntiLoopingMonitor().observe_all(calls)
    (outcome,) = Replayer(["alm"]).replay("c", calls)
    assert outcome.fired_at == (expected[0][0], None)
    assert outcome.extra is not None
    assert [(s["message"], s["step"]) for s in outcome.extra["ladder"]] == [
        (i, a.step) for i, a in expected
    ]


def _raising(params: Any) -> Any:
    class Adapter:
        def push(self, chunk: str) -> Fire | None:
            raise RuntimeError("boom")

    return Adapter


def test_a_raising_detector_is_an_error_and_the_others_go_on() -> None:
    broken = Detector(
        name="broken_for_test",
        kind="stream",
        description="raises",
        defaults_key="repetition_guard",
        params=(Param("ngram", "int", low=2, high=8),),
        build=_raising,
        presets={},
    )
    replayer = Replayer([broken, "repetition_guard"], chunking="whole")
    text = {"type": "bot", "text": "Let me call lint(). " * 8}
    first, second = replayer.replay("c", [text])
    assert first.error is not None and "RuntimeError: boom" in first.error and not first.fired
    assert second.fired


def test_tokens_latency_and_savings_by_hand() -> None:
    messages = [
        {"type": "user", "text": "u" * 40},  # not model text
        {"type": "bot", "text": "b" * 8},  # 2 tokens
        {"type": "bot", "text": "c" * 20},  # 5 tokens
        {"type": "bot", "text": "d" * 12},  # 3 tokens
    ]
    raw = {
        "id": "t",
        "messages": messages,
        "label": {"looping": True, "onset": {"message": 1, "char": 4}, "source": "human"},
    }
    case = Case(raw, "x.jsonl", 1)
    index = TokenIndex(messages)
    assert index.total == 10
    from harness.replay import Outcome

    stream = verdict_record(case, Outcome("s", (2, 6)), corpus="x")
    # onset (1, 4) to fire (2, 6): "bbbb" (1 token) + "cccccc" (2 tokens)
    assert stream["latency_tokens"] == 3 and stream["latency_messages"] == 1
    # after the fire: 14 c's (4 tokens) + message 3 (3 tokens)
    assert stream["tokens_saved"] == 7 and stream["outcome"] == "tp" and stream["early"] is False
    early = verdict_record(case, Outcome("s", (1, 2)), corpus="x")
    assert early["early"] is True and early["latency_tokens"] == -1
    thread = verdict_record(case, Outcome("t", (2, None)), corpus="x")
    assert thread["tokens_saved"] == 3 and thread["latency_tokens"] == 1 + 5
    negative = Case({**raw, "label": {"looping": False, "source": "human"}}, "x.jsonl", 1)
    lost = verdict_record(negative, Outcome("t", (1, None)), corpus="x")
    assert lost["outcome"] == "fp" and lost["tokens_lost"] == 8 and lost["tokens_saved"] is None
    assert estimate_tokens("😀😀") == 1 and estimate_tokens("abcde") == 2


# -- golden cases ---------------------------------------------------------------------------


def _observed(replayer: Replayer, case: Case) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for outcome in replayer.replay(case.id, case.messages):
        at = outcome.fired_at
        entry: dict[str, Any] = {
            "fired": outcome.fired,
            "fired_at": None if at is None else {"message": at[0], "char": at[1]},
        }
        if outcome.extra and "ladder" in outcome.extra:
            entry["ladder"] = [[s["message"], s["step"]] for s in outcome.extra["ladder"]]
        seen[outcome.detector] = entry
    return seen


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.jsonl")), ids=lambda p: p.stem)
def test_golden_replay(path: Path) -> None:
    """Expected verdicts are each case's ``expect`` field (LOOPGUARD_UPDATE_GOLDEN=1 rewrites)."""
    cases = load_cases(path)
    assert cases
    records = []
    mismatches = []
    for case in cases:
        names = list(case.raw["expect"])
        replayer = Replayer(names, chunking="word", seed=0)
        seen = _observed(replayer, case)
        if seen != case.raw["expect"]:
            mismatches.append(f"{case.id}: expected {case.raw['expect']}\n   got {seen}")
        records.append({**case.raw, "expect": seen})
    if UPDATE:
        atomic_write_jsonl(path, records)
        pytest.skip(f"rewrote {path.name}")
    assert not mismatches, "\n".join(mismatches)


def test_golden_files_encode_the_stated_rules() -> None:
    """A few expectations restated from first principles, so the golden files cannot drift."""
    thread = {c.id: c.raw["expect"] for c in load_cases(GOLDEN / "thread.jsonl")}
    for case_id, expect in thread.items():
        if case_id.startswith("suffix-"):
            k, p = (int(x[1:]) for x in case_id.split("-")[1:])
            assert expect["repeated_suffix"]["fired_at"] == {"message": k + 2 * p - 1, "char": None}
    assert thread["result-run-3"]["repeated_result_run"]["fired_at"]["message"] == 9
    assert thread["activity-tail-8"]["repeated_activity_tail"]["fired_at"]["message"] == 8
    assert thread["polling-progress"]["thread_cycle"]["fired"] is False
    assert thread["alm-ladder"]["alm"]["ladder"][:2] == [[3, 1], [4, 2]]
    stream = {c.id: c.raw["expect"] for c in load_cases(GOLDEN / "stream.jsonl")}
    assert stream["guard-fresh-per-message"]["repetition_guard"]["fired"] is False
    assert stream["user-text-ignored"]["repetition_guard"]["fired"] is False
    text_run = stream["text-run-mid-sentence"]["text_run"]["fired_at"]
    assert text_run == {"message": 0, "char": len("Same again. " * 7 + "Same ")}
    assert stream["overthinking-reasoning-only"]["overthinking"]["fired_at"]["message"] == 1


def test_replay_is_deterministic_across_runs() -> None:
    cases = load_cases(GOLDEN / "stream.jsonl")
    names = ["repetition_guard", "text_run", "overthinking"]
    rng = random.Random(0)
    for _ in range(2):
        seed = rng.randint(0, 100)
        a = [Replayer(names, seed=seed).replay(c.id, c.messages) for c in cases]
        b = [Replayer(names, seed=seed).replay(c.id, c.messages) for c in cases]
        assert a == b
    assert json.dumps([o.fired for o in a[0]])
