"""Property tests: robustness of every detector, chunking invariance, bounded memory."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopguard as lg
from tests.reference_guard import ReferenceGuard

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text that exercises every branch: words, the JS-only and Python-only whitespace,
# newlines, punctuation, marks, astral characters and CJK.
ALPHABET = st.sampled_from(
    list("ab cd\n\t.!?-|")
    + [
        "let",
        "me",
        "check",
        "Σ",
        "İ",
        "\u00a0",
        "\u2028",
        "\ufeff",
        "\x1c",
        "\x85",
        "\u0301",
        "🎉",
        "漢字",
        "\r",
        "\v",
        "  ",
        "1",
        "é",
    ]
)
TEXT = st.lists(ALPHABET, max_size=400).map("".join)
LOOPY = st.tuples(st.lists(ALPHABET, min_size=1, max_size=12).map("".join), st.integers(2, 40)).map(
    lambda pair: (pair[0] + " ") * pair[1]
)
WEIRD_NUMBERS = st.one_of(
    st.none(),
    st.just(math.nan),
    st.just(math.inf),
    st.just(-math.inf),
    st.booleans(),
    st.integers(-10, 300),
    st.floats(-1e6, 1e6),
    st.text(max_size=3),
)


def cuts(text: str, data: st.DataObject) -> list[str]:
    sizes = data.draw(st.lists(st.integers(1, 9), min_size=1, max_size=50))
    out, i, k = [], 0, 0
    while i < len(text):
        size = sizes[k % len(sizes)]
        out.append(text[i : i + size])
        i += size
        k += 1
    return out


def replay(guard: Any, chunks: list[str]) -> tuple[int | None, Any]:
    tripped_at = None
    for index, chunk in enumerate(chunks):
        if guard.push(chunk) and tripped_at is None:
            tripped_at = index
    reason = guard.reason
    reason = reason() if callable(reason) else reason
    if reason is not None and not isinstance(reason, dict):
        reason = reason.as_dict()
    return tripped_at, reason


def assert_matches_reference(chunks: list[str], **options: Any) -> None:
    """The optimised guard and the literal transcription agree on trip and reason."""
    assert replay(lg.RepetitionGuard(**options), chunks) == replay(
        ReferenceGuard(**options), chunks
    )


@FAST
@given(
    text=st.one_of(TEXT, LOOPY),
    data=st.data(),
    ngram=st.integers(2, 5),
    window=st.integers(2, 60),
    max_repeats=st.integers(2, 5),
    ratio=st.sampled_from([0.2, 0.4, 0.5, 0.9]),
    min_chars=st.sampled_from([0, 30, 200]),
)
def test_guard_matches_literal_reading_of_spec(
    text: str,
    data: st.DataObject,
    ngram: int,
    window: int,
    max_repeats: int,
    ratio: float,
    min_chars: int,
) -> None:
    assert_matches_reference(
        cuts(text, data),
        ngram=ngram,
        window=window,
        max_repeats=max_repeats,
        max_unique_ratio=ratio,
        min_chars=min_chars,
    )


@FAST
@given(text=st.one_of(TEXT, LOOPY), data=st.data())
def test_guard_verdict_and_reason_do_not_depend_on_chunking(text: str, data: st.DataObject) -> None:
    whole = lg.RepetitionGuard()
    whole.push(text)
    pieces = lg.RepetitionGuard()
    for chunk in cuts(text, data):
        pieces.push(chunk)
    assert whole.tripped == pieces.tripped
    assert whole.reason() == pieces.reason()


@FAST
@given(text=st.one_of(TEXT, LOOPY), window=st.integers(4, 64))
def test_guard_memory_is_bounded_by_window(text: str, window: int) -> None:
    guard = lg.RepetitionGuard(window=window, max_repeats=10**6)
    for _ in range(3):
        guard.push(text + " ")
        assert guard.window_words <= window
        assert guard.tracked_phrases <= window


def test_guard_memory_bounded_on_a_long_stream() -> None:
    guard = lg.RepetitionGuard(max_repeats=10**6)
    for i in range(20_000):
        guard.push(f"word{i} ")
    assert guard.window_words == 48
    assert guard.tracked_phrases <= 48


def test_guard_whitespace_free_stream_is_linear() -> None:
    # A 2 MB token pushed in 4-character chunks: quadratic copying would take minutes.
    guard = lg.RepetitionGuard()
    for _ in range(500_000):
        guard.push("lint")
    assert guard.push(" ") is False
    assert guard.window_words == 1


def cyclic_meta() -> dict[str, Any]:
    meta: dict[str, Any] = {"a": 1}
    meta["self"] = meta
    return meta


JSONISH = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=20)
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=12,
)
MESSAGE = st.one_of(
    st.none(),
    st.text(max_size=5),
    st.integers(),
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.one_of(st.sampled_from(["user", "bot", "reasoning", "activity"]), JSONISH),
            "text": st.one_of(TEXT, JSONISH),
            "meta": st.one_of(
                JSONISH,
                st.builds(cyclic_meta),
                st.fixed_dictionaries(
                    {
                        "activity": st.fixed_dictionaries(
                            {},
                            optional={
                                "type": st.sampled_from(["request", "response", 3]),
                                "function": st.one_of(
                                    JSONISH,
                                    st.fixed_dictionaries(
                                        {},
                                        optional={
                                            "name": st.one_of(
                                                st.sampled_from(["search", "_notice"]), JSONISH
                                            ),
                                            "arguments": st.one_of(JSONISH, st.builds(cyclic_meta)),
                                            "result": st.one_of(JSONISH, st.builds(cyclic_meta)),
                                        },
                                    ),
                                ),
                            },
                        )
                    }
                ),
            ),
            "usage": st.one_of(JSONISH, st.fixed_dictionaries({"tokens": JSONISH})),
        },
    ),
)
THREAD_FUNCTIONS = [
    lg.has_repeated_suffix,
    lg.has_repeated_activity_tail,
    lg.has_repeated_result_run,
    lg.has_repeated_message_text_run,
    lg.is_thread_cyclic,
]


@FAST
@given(
    messages=st.one_of(st.none(), st.lists(MESSAGE, max_size=12)),
    a=WEIRD_NUMBERS,
    b=WEIRD_NUMBERS,
    c=WEIRD_NUMBERS,
    d=WEIRD_NUMBERS,
)
def test_thread_detectors_never_raise(messages: Any, a: Any, b: Any, c: Any, d: Any) -> None:
    options = dict(
        min_repetitions=a, min_pattern_length=b, max_pattern_length=c, min_result_repetitions=d
    )
    for function in THREAD_FUNCTIONS:
        assert isinstance(function(messages, **options), bool)
    name = lg.describe_thread_cycle(messages, **options)
    assert name is None or name in dict(lg.HEURISTICS)
    doubled = list(messages or []) * 2
    assert isinstance(lg.is_thread_cyclic(doubled, **options), bool)


@FAST
@given(text=st.one_of(TEXT, LOOPY, JSONISH), a=WEIRD_NUMBERS, b=WEIRD_NUMBERS, c=WEIRD_NUMBERS)
def test_text_run_never_raises(text: Any, a: Any, b: Any, c: Any) -> None:
    assert isinstance(
        lg.has_repeated_text_run(text, min_units=a, window=b, max_unique_ratio=c), bool
    )


@FAST
@given(
    chunks=st.lists(st.one_of(TEXT, JSONISH), max_size=20),
    a=WEIRD_NUMBERS,
    b=WEIRD_NUMBERS,
    c=WEIRD_NUMBERS,
    d=WEIRD_NUMBERS,
    e=WEIRD_NUMBERS,
)
def test_guard_never_raises(chunks: list[Any], a: Any, b: Any, c: Any, d: Any, e: Any) -> None:
    guard = lg.RepetitionGuard(ngram=a, window=b, max_repeats=c, max_unique_ratio=d, min_chars=e)
    for chunk in chunks:
        assert isinstance(guard.push(chunk), bool)


def test_huge_inputs() -> None:
    huge = ("Let me check the build again. " * 200_000)[:5_000_000]
    assert lg.has_repeated_text_run(huge)
    guard = lg.RepetitionGuard()
    assert guard.push(huge)
    assert guard.reason() is not None
    thread = [{"type": "bot", "text": huge}]
    assert lg.is_thread_cyclic(thread)


def test_build_thread_with_weird_usages_never_raises() -> None:
    messages = [
        {"text": "x", "usage": u}
        for u in [
            None,
            {"tokens": None},
            {"tokens": "5"},
            {"tokens": math.nan},
            {"tokens": -3},
            {"tokens": [7]},
            {"tokens": {}},
            {"tokens": True},
            5,
            "x",
            {"tokens": math.inf},
        ]
    ]
    result = lg.build_thread(messages, max_tokens=math.nan, estimate=lambda m: {"tokens": 2})
    assert len(result.messages) == len(messages)
    assert all(math.isfinite(m["usage"]["tokens"]) for m in result.messages)


# Alternating diverse and looping stretches: the guard stops counting n-grams while its
# window is diverse and rebuilds the counts when the diversity gate opens again.
SEGMENT = st.one_of(
    st.integers(1, 120).map(lambda n: " ".join(f"w{i}x{n}" for i in range(n)) + " "),
    st.tuples(
        st.sampled_from(["let me check", "a b", "retry now ok", "x"]), st.integers(1, 12)
    ).map(lambda pair: (pair[0] + " ") * pair[1]),
    st.just("- item one\n- item two\n"),
)
SWINGING = st.lists(SEGMENT, min_size=1, max_size=12).map("".join)


@FAST
@given(
    text=SWINGING,
    data=st.data(),
    ngram=st.integers(2, 5),
    window=st.integers(4, 64),
    max_repeats=st.integers(2, 6),
    ratio=st.sampled_from([0.1, 0.3, 0.4, 0.6, 0.85]),
    min_chars=st.sampled_from([0, 100]),
)
def test_guard_matches_literal_reading_when_diversity_swings(
    text: str,
    data: st.DataObject,
    ngram: int,
    window: int,
    max_repeats: int,
    ratio: float,
    min_chars: int,
) -> None:
    assert_matches_reference(
        cuts(text, data),
        ngram=ngram,
        window=window,
        max_repeats=max_repeats,
        max_unique_ratio=ratio,
        min_chars=min_chars,
    )
