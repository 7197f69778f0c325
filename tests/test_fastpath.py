"""The fast evaluation path gives the replay's outcomes exactly (issue 5, "trials must be cheap").

Checked on a fixed sample of the default synthetic corpus for parameter sets at
the defaults, the production preset and the bounds (the benchmark
``benchmarks/sweep_fastpath.py`` checks the whole corpus), and on random
corpora with random parameters (hypothesis).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.chunking import ChunkingError
from harness.corpus import load_cases
from harness.detectors import ParameterError, UnknownDetectorError, get_detector
from harness.fastpath import FAST_PATHS, get_fast_evaluator
from harness.fastpath import _guard as fast_guard
from harness.fastpath._textrun import _unit
from harness.replay import Outcome, Replayer
from loopguard import text_units

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO / "corpora" / "synthetic" / "default.jsonl"
# Every 8th case: all case kinds, about 600 cases, a few seconds of replay per parameter set.
SAMPLE_STEP = 8

GUARD = get_detector("repetition_guard")
TEXT_RUN = get_detector("text_run")


def bounds(detector: Any, which: str) -> dict[str, Any]:
    """Every tuned parameter at its low or high bound."""
    out: dict[str, Any] = {}
    for param in detector.params:
        if param.tune and param.type in ("int", "float"):
            value = param.low if which == "low" else param.high
            out[param.name] = int(value) if param.type == "int" else float(value)
    return out


GUARD_SETS = [
    {},
    dict((GUARD.presets or {})["production"]),
    bounds(GUARD, "low"),
    bounds(GUARD, "high"),
    {"ngram": 2, "window": 256, "max_repeats": 2, "max_unique_ratio": 0.9},
    {"ngram": 8, "window": 16, "max_repeats": 10, "max_unique_ratio": 0.1, "min_chars": 0},
    # Below 0.5 the enumeration exemption applies; 0.45 lets many windows reach it.
    {"ngram": 3, "window": 100, "max_repeats": 3, "max_unique_ratio": 0.45},
    {"ngram": 2, "window": 48, "max_repeats": 2, "max_unique_ratio": 0.49, "min_chars": 4000},
]
TEXT_RUN_SETS = [
    {},
    bounds(TEXT_RUN, "low"),
    bounds(TEXT_RUN, "high"),
    {"min_units": 2, "window": 8, "max_unique_ratio": 1.0},
    {"min_units": 3, "window": 20, "max_unique_ratio": 0.6, "tail_limit": 256},
    {"min_units": 8, "window": 200, "max_unique_ratio": 0.7, "tail_limit": 1000},
]


def replay_all(name: str, cases: list[Any], params: dict[str, Any], **kwargs: Any) -> list[Any]:
    replayer = Replayer([name], {name: params}, **kwargs)
    out = []
    for case in cases:
        case_id, messages = (
            (case["id"], case["messages"]) if isinstance(case, dict) else (case.id, case.messages)
        )
        out.append(replayer.replay(case_id, messages)[0])
    return out


def assert_same(fast: list[Outcome], slow: list[Outcome], cases: list[Any], label: str) -> None:
    assert len(fast) == len(slow)
    wrong = [i for i, (a, b) in enumerate(zip(fast, slow, strict=True)) if a != b]
    if wrong:
        i = wrong[0]
        case_id = cases[i]["id"] if isinstance(cases[i], dict) else cases[i].id
        pytest.fail(
            f"{label}: {len(wrong)} outcomes differ; first {case_id}:\n"
            f"fast   {fast[i]}\nreplay {slow[i]}"
        )


@pytest.fixture(scope="module")
def sample() -> list[Any]:
    return load_cases(DEFAULT_CORPUS)[::SAMPLE_STEP]


@pytest.fixture(scope="module")
def guard_fast(sample: list[Any]) -> Any:
    return get_fast_evaluator("repetition_guard", sample)


@pytest.fixture(scope="module")
def text_run_fast(sample: list[Any]) -> Any:
    return get_fast_evaluator("text_run", sample)


@pytest.mark.parametrize("params", GUARD_SETS, ids=lambda p: ",".join(map(str, p.values())))
def test_guard_matches_replay_on_default_corpus(
    sample: list[Any], guard_fast: Any, params: dict[str, Any]
) -> None:
    slow = replay_all("repetition_guard", sample, params)
    fast = guard_fast.outcomes(params)
    assert_same(fast, slow, sample, f"repetition_guard {params}")
    assert guard_fast.fired(params).tolist() == [o.fired for o in slow]


def test_guard_sample_exercises_fires_and_exemption(sample: list[Any], guard_fast: Any) -> None:
    # The comparisons above would be weak if nothing fired or nothing was spared.
    fired = guard_fast.fired({})
    assert 0 < fired.sum() < len(sample)
    loose = {"ngram": 3, "window": 100, "max_repeats": 3, "max_unique_ratio": 0.49}
    exempted = {**loose, "max_unique_ratio": 0.5}  # the exemption needs a ratio below 0.5
    assert guard_fast.fired(loose).sum() < guard_fast.fired(exempted).sum()


def test_text_run_sample_has_fires_and_silences(sample: list[Any], text_run_fast: Any) -> None:
    for params in ({}, {"tail_limit": 256}):
        fired = text_run_fast.fired(params)
        assert 0 < fired.sum() < len(sample)


@pytest.mark.parametrize("params", TEXT_RUN_SETS, ids=lambda p: ",".join(map(str, p.values())))
def test_text_run_matches_replay_on_default_corpus(
    sample: list[Any], text_run_fast: Any, params: dict[str, Any]
) -> None:
    slow = replay_all("text_run", sample, params)
    fast = text_run_fast.outcomes(params)
    assert_same(fast, slow, sample, f"text_run {params}")
    assert text_run_fast.fired(params).tolist() == [o.fired for o in slow]


# -- random corpora ------------------------------------------------------------------------

WORDS = st.sampled_from(
    ["let", "me", "check", "the", "file", "Again", "İstanbul", "Σίσυφος", "漢字", "🎉", "x1"]
    + ["-", "|", "K\u212a", "e\u0301", "lone\ud83d"]
)
SEPARATORS = st.sampled_from(
    [" ", " ", " ", "  ", "\n", "\n\n", "\t", "\u00a0", "\u2028", "\ufeff", "\x1c", "\x85", "\r\n"]
)
PUNCTUATION = st.sampled_from(["", "", "", ".", "!", "?", ",", "...", ".\n"])


@st.composite
def phrases(draw: st.DrawFn) -> str:
    words = draw(st.lists(WORDS, min_size=1, max_size=6))
    out = []
    for word in words:
        out.append(word + draw(PUNCTUATION) + draw(SEPARATORS))
    return "".join(out)


@st.composite
def texts(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["loop", "list", "prose"]))
        if kind == "loop":
            parts.append(draw(phrases()) * draw(st.integers(2, 40)))
        elif kind == "list":
            lead = draw(WORDS)
            count = draw(st.integers(2, 30))
            parts.append("".join(f"{i}. {lead} {draw(WORDS)} item\n" for i in range(count)))
        else:
            parts.append(draw(phrases()))
    return "".join(parts)


def cut(text: str, sizes: list[int]) -> list[str]:
    out, i, k = [], 0, 0
    while i < len(text):
        out.append(text[i : i + sizes[k % len(sizes)]])
        i += sizes[k % len(sizes)]
        k += 1
    return out


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["bot", "reasoning", "bot", "user", "activity", "system"]))
    text = draw(texts())
    message: dict[str, Any] = {"type": kind, "text": text}
    if draw(st.booleans()):
        sizes = draw(st.lists(st.integers(0, 12), min_size=1, max_size=8))
        if not any(sizes):
            sizes.append(1)
        message["chunks"] = cut(text, sizes)
    return message


CORPORA = st.lists(
    st.lists(messages(), min_size=1, max_size=3).map(lambda ms: {"messages": ms}),
    min_size=1,
    max_size=4,
).map(lambda cases: [{"id": f"r{i}", **case} for i, case in enumerate(cases)])
CHUNKING = st.sampled_from(["provider", "word", "sentence", "fixed:5", "whole"])


def params_of(detector: Any, draw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for param in detector.params:
        if draw(st.booleans()):  # missing ones take their defaults
            continue
        low, high = param.low, param.high
        if param.name == "tail_limit":
            high = 1200  # short enough that random texts are cut
        if param.type == "int":
            out[param.name] = draw(st.integers(int(low), int(high)))
        else:
            out[param.name] = draw(st.floats(low, high, allow_nan=False))
    return out


RANDOM = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@RANDOM
@given(corpus=CORPORA, chunking=CHUNKING, seed=st.integers(0, 3), data=st.data())
def test_guard_matches_replay_on_random_corpora(
    corpus: list[dict[str, Any]], chunking: str, seed: int, data: st.DataObject
) -> None:
    fast = get_fast_evaluator("repetition_guard", corpus, chunking=chunking, seed=seed)
    assert fast is not None
    for _ in range(3):
        params = params_of(GUARD, data.draw)
        slow = replay_all("repetition_guard", corpus, params, chunking=chunking, seed=seed)
        assert_same(fast.outcomes(params), slow, corpus, f"repetition_guard {params}")
        assert fast.fired(params).tolist() == [o.fired for o in slow]


@RANDOM
@given(corpus=CORPORA, chunking=CHUNKING, seed=st.integers(0, 3), data=st.data())
def test_text_run_matches_replay_on_random_corpora(
    corpus: list[dict[str, Any]], chunking: str, seed: int, data: st.DataObject
) -> None:
    fast = get_fast_evaluator("text_run", corpus, chunking=chunking, seed=seed)
    assert fast is not None
    for _ in range(3):
        params = params_of(TEXT_RUN, data.draw)
        slow = replay_all("text_run", corpus, params, chunking=chunking, seed=seed)
        assert_same(fast.outcomes(params), slow, corpus, f"text_run {params}")
        assert fast.fired(params).tolist() == [o.fired for o in slow]


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.one_of(
            st.sampled_from(list("aZ09 \t-_İKß\u0130\u212a\u00a0\ufeff\u0301Σς１")),
            st.characters(exclude_characters=".!?\n"),
        ),
        max_size=30,
    )
)
def test_unit_of_a_piece_is_the_library_unit(piece: str) -> None:
    assert [_unit(piece)] == (text_units(piece) or [""])


# -- interface -----------------------------------------------------------------------------


def test_only_the_streaming_detectors_with_a_fast_path_get_one() -> None:
    assert set(FAST_PATHS) == {"repetition_guard", "text_run"}
    assert get_fast_evaluator("thread_cycle", []) is None
    assert get_fast_evaluator("overthinking", []) is None
    with pytest.raises(UnknownDetectorError, match="known"):
        get_fast_evaluator("no_such_detector", [])


def test_bad_arguments_are_refused_clearly() -> None:
    with pytest.raises(ChunkingError, match="allowed"):
        get_fast_evaluator("repetition_guard", [], chunking="paragraph")
    with pytest.raises(TypeError, match="id"):
        get_fast_evaluator("repetition_guard", [{"messages": []}])
    with pytest.raises(TypeError, match=r"\.id and \.messages"):
        get_fast_evaluator("repetition_guard", [42])
    fast = get_fast_evaluator("repetition_guard", [])
    assert fast is not None
    with pytest.raises(ParameterError, match="allowed: ngram"):
        fast.outcomes({"n_gram": 3})
    with pytest.raises(ParameterError, match=r"ngram must be an integer in \[2, 8\]"):
        fast.outcomes({"ngram": 12})
    assert fast.outcomes({}) == []
    assert fast.fired({}).shape == (0,)


LOOP = "Let me call lint() again. " * 30


def test_cases_may_be_corpus_cases_or_dicts_and_fallback_cases_are_replayed(
    sample: list[Any],
) -> None:
    odd = {
        "id": "odd",
        # A message that is not a mapping: the replay records an error for the case.
        "messages": [{"type": "bot", "text": "fine"}, None, {"type": "bot", "text": LOOP}],
    }
    plain = {"id": "plain", "messages": [{"type": "user", "text": LOOP}]}
    looping = {"id": "loop", "messages": [{"type": "bot", "text": LOOP, "chunks": [LOOP]}]}
    cases = [*sample[:3], odd, plain, looping]
    for name in FAST_PATHS:
        fast = get_fast_evaluator(name, cases, chunking="word")
        assert fast is not None
        assert fast.case_ids == [c.id for c in sample[:3]] + ["odd", "plain", "loop"]
        slow = replay_all(name, cases, {}, chunking="word")
        got = fast.outcomes({})
        assert_same(got, slow, cases, name)
        assert got[3].error is not None  # the replay's error, through the fallback
        assert got[4].fired_at is None  # user text is not read
        assert got[5].fired
        assert fast.fired({}).tolist() == [o.fired for o in slow]


def test_guard_reason_and_position_are_the_replays() -> None:
    case = {"id": "c", "messages": [{"type": "reasoning", "text": "Intro line.\n" + LOOP}]}
    fast = get_fast_evaluator("repetition_guard", [case], chunking="fixed:7")
    assert fast is not None
    outcome = fast.outcomes({})[0]
    assert outcome.reason["phrase"] == "let me call lint"
    assert outcome.reason["text"] == "Let me call lint()"
    assert outcome.reason["count"] == 4
    assert outcome.fired_at is not None
    message, char = outcome.fired_at
    # fixed:7 fires at the end of a 7-character chunk
    assert message == 0 and char is not None and char % 7 == 0
    assert outcome == replay_all("repetition_guard", [case], {}, chunking="fixed:7")[0]


def test_guard_far_windows_use_the_uncached_chain(
    sample: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Gaps are cached capped at _GAP_CAP; a window reaching further walks the chain.
    monkeypatch.setattr(fast_guard, "_GAP_CAP", 20)
    cases = sample[:200]
    fast = get_fast_evaluator("repetition_guard", cases)
    assert fast is not None
    for params in ({"window": 16}, {"window": 100, "ngram": 2, "max_repeats": 5}):
        slow = replay_all("repetition_guard", cases, params)
        assert_same(fast.outcomes(params), slow, cases, f"capped {params}")


def test_fired_is_a_numpy_bool_array(guard_fast: Any, sample: list[Any]) -> None:
    fired = guard_fast.fired({"max_repeats": 3})
    assert isinstance(fired, np.ndarray) and fired.dtype == bool and fired.shape == (len(sample),)


def test_the_docs_give_the_benchmark_command() -> None:
    doc = (REPO / "docs" / "fastpath.md").read_text(encoding="utf-8")
    assert "python benchmarks/sweep_fastpath.py" in doc
    assert re.search(r"\d+(\.\d+)?[x×] faster", doc)
