"""OverthinkingDetector: the design's behaviour, hand-traced, and every option.

SOURCE: the expected behaviour is traced by hand from the overthinking-detector
design (seeds/overthinking-detector.ts of the spec; OverthinkingDetector.analyzeChunk),
whose relevant rules are restated in docs/overthinking.md.
"""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from loopguard import _overthinking
from loopguard._defaults import detector_defaults
from loopguard._errors import OptionError
from loopguard._lexicons import LEXICONS, SEED_PATTERNS, lexicon_patterns, marker_pattern
from loopguard._overthinking import (
    COUNTING_MODES,
    OverthinkingDetector,
    OverthinkingResult,
    js_to_fixed,
    js_words,
)

# Large enough that neither rule interferes with what a test looks at.
NO_CAP = 10**9
NO_COUNT = 10**9


def feed(detector: OverthinkingDetector, chunks: list[str]) -> list[OverthinkingResult]:
    return [detector.analyze_chunk(chunk) for chunk in chunks]


# --- the seed's default behaviour -------------------------------------------------


def test_defaults_come_from_defaults_json() -> None:
    defaults = detector_defaults("overthinking")
    options = OverthinkingDetector().options
    for key, value in defaults.items():
        assert options[key] == value
    assert options["doubt_patterns"] is None


def test_result_is_a_frozen_dataclass() -> None:
    result = OverthinkingDetector().analyze_chunk("hello")
    assert result == OverthinkingResult(False, None, 0, 0.0)
    with pytest.raises(AttributeError):
        result.doubt_count = 3  # type: ignore[misc]


def test_marker_split_across_chunks_is_missed_per_chunk() -> None:
    split = feed(OverthinkingDetector(), ["Hmm, wait,", " but the lock is fine"])
    assert [r.doubt_count for r in split] == [0, 0]
    whole = OverthinkingDetector().analyze_chunk("Hmm, wait, but the lock is fine")
    assert whole.doubt_count == 1


def test_each_seed_pattern_counts_at_most_once_per_chunk() -> None:
    detector = OverthinkingDetector()
    result = detector.analyze_chunk("Wait, but A. wait but B. WAIT,\tBUT C.")
    assert result.doubt_count == 1
    assert not result.is_loop_detected


def test_all_eight_seed_markers_and_the_doubt_trip() -> None:
    text = (
        "Wait, but no. Let me reconsider. On second thought, wait what if it fails? "
        "This might be wrong. Actually let's rethink. Hold on, there is a flaw. "
        "Alternatively, maybe not."
    )
    result = OverthinkingDetector().analyze_chunk(text)
    assert result == OverthinkingResult(
        True, "Excessive doubt markers threshold exceeded (8 occurrences)", 8, 0.8
    )


def test_doubt_threshold_and_no_latch() -> None:
    detector = OverthinkingDetector()
    first, second, third = feed(
        detector,
        [
            "Wait, but the cache. Let me reconsider.",
            "On second thought, this might be wrong.",
            "plain text",
        ],
    )
    assert (first.doubt_count, first.is_loop_detected) == (2, False)
    assert second.reason == "Excessive doubt markers threshold exceeded (4 occurrences)"
    assert second.repetition_score == 0.8
    # The seed re-evaluates on every call: the count stays at the threshold.
    assert third.is_loop_detected and third.doubt_count == 4
    detector.reset()
    assert detector.analyze_chunk("plain text") == OverthinkingResult(False, None, 0, 0.0)


def test_seed_regexes_have_javascript_semantics() -> None:
    def count(text: str) -> int:
        return OverthinkingDetector().analyze_chunk(text).doubt_count

    # JS \b is ASCII: a non-ASCII letter before "wait" is a word boundary.
    assert count("éwait, but") == 1
    # JS \s includes NBSP and U+FEFF but not the separators \x1c-\x1f (Python's \s does).
    assert count("wait,\u00a0but") == 1
    assert count("wait,\ufeffbut") == 1
    assert count("wait,\x1cbut") == 0
    # /i without the u flag never folds a non-ASCII letter onto an ASCII one.
    assert count("on \u017fecond thought") == 0
    assert count("awaits, but") == 0
    assert count("Actually, let's rethink") == 1


def test_hard_cap_counts_utf16_units_and_keeps_firing() -> None:
    detector = OverthinkingDetector(max_thinking_tokens_hard_cap=2)
    # Four astral characters are 8 UTF-16 units: ceil(8/4) = 2 tokens (len() would say 1).
    result = detector.analyze_chunk("\U0001f600" * 4)
    assert result == OverthinkingResult(True, "Hard cap of 2 thinking tokens reached", 0, 1.0)
    again = detector.analyze_chunk("")
    assert again.is_loop_detected and detector.tokens_seen == 2


def test_hard_cap_is_checked_before_markers_and_rounds_up() -> None:
    detector = OverthinkingDetector(max_thinking_tokens_hard_cap=3)
    assert not detector.analyze_chunk("a").is_loop_detected
    assert not detector.analyze_chunk("b").is_loop_detected
    assert detector.tokens_seen == 2
    result = detector.analyze_chunk("Wait, but x")  # ceil(11/4) = 3 -> 5 tokens
    assert detector.tokens_seen == 5
    assert result.reason == "Hard cap of 3 thinking tokens reached"
    assert result.doubt_count == 0  # the seed returns before counting markers


def test_default_hard_cap_message() -> None:
    cap = detector_defaults("overthinking")["max_thinking_tokens_hard_cap"]
    detector = OverthinkingDetector()
    result = detector.analyze_chunk("x" * (4 * cap - 1))
    assert result.reason == f"Hard cap of {cap} thinking tokens reached"
    assert result.repetition_score == 1.0


def test_repetition_needs_ten_words_and_a_full_window() -> None:
    detector = OverthinkingDetector(window_size_words=10)
    nine = detector.analyze_chunk("alpha " * 9)
    assert nine == OverthinkingResult(False, None, 0, 0.0)
    ten = detector.analyze_chunk("alpha")
    assert ten == OverthinkingResult(
        True, "High semantic repetition detected (score: 0.90)", 0, 1 - 1 / 10
    )
    # Default window of 60: a high score alone does not fire before 60 words.
    short = OverthinkingDetector().analyze_chunk("loop " * 20)
    assert short == OverthinkingResult(False, None, 0, 1 - 1 / 20)


def test_repetition_reason_uses_javascript_to_fixed() -> None:
    detector = OverthinkingDetector(window_size_words=16, repetition_threshold=0.6)
    words = ["a", "b", "c", "d", "e", "f"] + ["a"] * 10  # 16 words, 6 unique -> 0.625
    result = detector.analyze_chunk(" ".join(words))
    assert result.repetition_score == 0.625
    assert result.reason == "High semantic repetition detected (score: 0.63)"
    assert format(0.625, ".2f") == "0.62"  # what Python's rounding would have printed


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (0.125, 2, "0.13"),
        (0.625, 2, "0.63"),
        (0.875, 2, "0.88"),
        (1.005, 2, "1.00"),
        (2.5, 0, "3"),
        (-1.5, 0, "-2"),
        (-0.0, 2, "0.00"),
        (-0.001, 2, "-0.00"),
        (0.65, 2, "0.65"),
        (1.0, 2, "1.00"),
    ],
)
def test_js_to_fixed(value: float, digits: int, expected: str) -> None:
    assert js_to_fixed(value, digits) == expected


def test_rolling_window_keeps_twice_the_window() -> None:
    detector = OverthinkingDetector(window_size_words=10)
    detector.analyze_chunk("x " * 20)
    fresh = " ".join(f"w{i}" for i in range(20))
    result = detector.analyze_chunk(fresh)
    # Only the last 20 words (all distinct) remain; with 40 words it would be 1 - 21/40.
    assert result.repetition_score == 0.0


def test_word_split_has_javascript_semantics() -> None:
    assert js_words("Niño, NIO! a_b c\x1cd e\ufefff") == ["nio", "nio", "a_b", "cd", "e", "f"]
    detector = OverthinkingDetector(window_size_words=10)
    # Unicode-aware \w would keep "niño" and "nio" apart (score 0.8).
    assert detector.analyze_chunk("niño nio " * 5).repetition_score == 0.9


def test_non_string_input_is_an_empty_chunk() -> None:
    detector = OverthinkingDetector()
    for value in (None, 42, b"wait, but", ["wait, but"]):
        result = detector.analyze_chunk(value)  # type: ignore[arg-type]
        assert result == OverthinkingResult(False, None, 0, 0.0)
    assert detector.tokens_seen == 0


# --- lexicons -----------------------------------------------------------------------


def test_lexicon_contents() -> None:
    assert set(LEXICONS) == {"seed", "nowait", "self_braking", "dynasor", "r1", "union"}
    assert LEXICONS["seed"] == SEED_PATTERNS and len(SEED_PATTERNS) == 8
    sizes = {name: len(LEXICONS[name]) for name in ("nowait", "self_braking", "dynasor", "r1")}
    assert sizes == {"nowait": 17, "self_braking": 25, "dynasor": 6, "r1": 10}
    union = LEXICONS["union"]
    assert union[:8] == SEED_PATTERNS
    words = [m.casefold() for m in union[8:]]
    assert len(words) == len(set(words))
    for name in ("nowait", "self_braking", "dynasor", "r1"):
        assert {m.casefold() for m in LEXICONS[name]} <= set(words)
    assert len(lexicon_patterns("union")) == len(union)


def test_lexicon_markers_match_whole_words_case_insensitively() -> None:
    def count(lexicon: str, text: str) -> int:
        return (
            OverthinkingDetector(lexicon=lexicon, max_doubt_markers=NO_COUNT)
            .analyze_chunk(text)
            .doubt_count
        )

    assert count("nowait", "Wait, hmm, BUT") == 3
    assert count("nowait", "waiting awaited buttons hmmm nowhere") == 0
    assert count("dynasor", "nothing is known") == 0
    assert count("dynasor", "no.") == 1
    assert count("self_braking", "Hold\n   on") == 1
    assert count("self_braking", "holdon") == 0
    # Markers count independently: "double-check" also contains the word "check".
    assert count("self_braking", "Let me just double-check") == 2
    # "wait" is in four lexicons but counts once in the union.
    assert count("union", "wait") == 1


def test_marker_pattern_rejects_blank_markers() -> None:
    with pytest.raises(OptionError, match="marker"):
        marker_pattern("   ")


def test_custom_doubt_patterns() -> None:
    detector = OverthinkingDetector(
        doubt_patterns=[r"\bdeadlock\b", re.compile("mutex")], max_doubt_markers=NO_COUNT
    )
    # Strings get re.IGNORECASE; compiled patterns are used as they are.
    assert detector.analyze_chunk("Mutex DEADLOCK").doubt_count == 1
    assert detector.options["lexicon"] is None
    assert detector.options["doubt_patterns"] == (r"\bdeadlock\b", "mutex")
    assert OverthinkingDetector(doubt_patterns=[]).analyze_chunk("wait, but").doubt_count == 0


# --- occurrence counting ---------------------------------------------------------


def test_occurrences_finds_split_markers_once() -> None:
    detector = OverthinkingDetector(counting="occurrences")
    counts = [r.doubt_count for r in feed(detector, ["Hmm, wait,", " but the lock", " is fine"])]
    assert counts == [0, 1, 1]
    many = OverthinkingDetector(lexicon="nowait", counting="occurrences")
    assert many.analyze_chunk("wait wait wait").doubt_count == 3
    per_chunk = OverthinkingDetector(lexicon="nowait", max_doubt_markers=NO_COUNT)
    assert per_chunk.analyze_chunk("wait wait wait").doubt_count == 1


def test_occurrences_withdraws_a_marker_the_next_chunk_extends() -> None:
    detector = OverthinkingDetector(lexicon="nowait", counting="occurrences")
    assert [r.doubt_count for r in feed(detector, ["so wait", "ing for it"])] == [1, 0]


def split_by_sizes(text: str, sizes: list[int]) -> list[str]:
    """Cut ``text`` into chunks of the given sizes, cycling them (empty chunks too)."""
    chunks: list[str] = []
    start = 0
    index = 0
    while start < len(text):
        size = sizes[index % len(sizes)]
        chunks.append(text[start : start + size])
        start += size
        index += 1
        if index > 10 * len(text) + 10:  # all sizes zero: give up on cutting
            break
    return [*chunks, text[start:]]


def _reference_count(patterns: tuple[re.Pattern[str], ...], text: str) -> int:
    return sum(1 for p in patterns for m in p.finditer(text) if m.end() > m.start())


FRAGMENTS = [
    "wait",
    "Wait,",
    " but",
    "but",
    "ing",
    "hold",
    " on",
    " ",
    "\n",
    "\u00a0",
    ",",
    "let me ",
    "reconsider",
    "double-check",
    "hmm",
    "Hmm",
    "no",
    "x",
    "alternatively, maybe",
    "lorem ipsum dolor sit amet " * 4,
]


def count_in_chunks(lexicon: str, chunks: list[str], tail: int) -> list[int]:
    """Doubt counts after each chunk, occurrence counting with a ``tail``-character buffer."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_overthinking, "_TAIL_CHARS", tail)
        patch.setattr(_overthinking, "_CONTEXT_CHARS", 1)
        detector = OverthinkingDetector(
            lexicon=lexicon,
            counting="occurrences",
            max_thinking_tokens_hard_cap=NO_CAP,
            max_doubt_markers=NO_COUNT,
        )
        return [detector.analyze_chunk(chunk).doubt_count for chunk in chunks]


@pytest.mark.parametrize("tail", [24, 40])
def test_occurrences_with_a_small_buffer_every_chunk_size(tail: int) -> None:
    text = (
        "x" * 50
        + " wait "
        + "y" * 33
        + "Wait, but hold on. wait"
        + " z" * 20
        + "hmm hmm,hmm"
        + "q" * 45
        + "alternatively, maybe"
    )
    for lexicon in ("nowait", "seed", "union"):
        patterns = lexicon_patterns(lexicon)
        for size in range(1, 31):
            chunks = split_by_sizes(text, [size])
            prefixes = ["".join(chunks[: i + 1]) for i in range(len(chunks))]
            expected = [_reference_count(patterns, prefix) for prefix in prefixes]
            assert count_in_chunks(lexicon, chunks, tail) == expected, (lexicon, size)


@settings(max_examples=60, deadline=None)
@given(
    lexicon=st.sampled_from(sorted(LEXICONS)),
    parts=st.lists(st.sampled_from(FRAGMENTS), min_size=5, max_size=40),
    sizes=st.lists(st.integers(min_value=0, max_value=60), min_size=1, max_size=20),
    small_buffer=st.booleans(),
)
def test_occurrences_counting_is_chunking_invariant(
    lexicon: str, parts: list[str], sizes: list[int], small_buffer: bool
) -> None:
    text = "".join(parts)
    chunks = split_by_sizes(text, sizes)
    patterns = lexicon_patterns(lexicon)
    # A small tail buffer makes trimming happen on short texts. The guarantee holds
    # while every match plus its one character of look-ahead fits in the tail.
    tail = 40 if small_buffer else _overthinking._TAIL_CHARS
    longest = max((m.end() - m.start() for p in patterns for m in p.finditer(text)), default=0)
    assume(longest + 1 < tail)
    options = {
        "lexicon": lexicon,
        "counting": "occurrences",
        "max_thinking_tokens_hard_cap": NO_CAP,
        "max_doubt_markers": NO_COUNT,
    }
    with pytest.MonkeyPatch.context() as patch:
        if small_buffer:
            patch.setattr(_overthinking, "_TAIL_CHARS", tail)
            patch.setattr(_overthinking, "_CONTEXT_CHARS", 1)
        chunked = OverthinkingDetector(**options)  # type: ignore[arg-type]
        seen = ""
        for chunk in chunks:
            seen += chunk
            # After every chunk the count is that of the text so far, read as a whole.
            assert chunked.analyze_chunk(chunk).doubt_count == _reference_count(patterns, seen)
        whole = OverthinkingDetector(**options).analyze_chunk(text)  # type: ignore[arg-type]
    assert chunked.doubt_count == whole.doubt_count == _reference_count(patterns, text)


# --- doubt-marker density -------------------------------------------------------


def test_density_rule_replaces_the_count_rule() -> None:
    detector = OverthinkingDetector(
        lexicon="nowait", window_size_words=10, density_threshold=60, max_doubt_markers=1
    )
    first, second, third, fourth = feed(
        detector,
        [
            "wait alpha bravo charlie delta echo foxtrot golf hotel india",
            "juliet kilo lima mike november oscar papa quebec romeo sierra",
            "tango uniform victor whiskey xray yankee zulu one two three",
            "hmm four five six seven eight nine ten eleven twelve",
        ],
    )
    # 1 marker in 10 words: 100 per 1,000 >= 60.
    assert first == OverthinkingResult(
        True, "Doubt marker density threshold exceeded (100.0 per 1000 words)", 1, 0.8
    )
    # 1 marker in the 20-word window: 50 < 60; the count (1 >= max_doubt_markers) is unused.
    assert second == OverthinkingResult(False, None, 1, 0.0)
    assert detector.doubt_density is not None
    # The marker's chunk has left the window.
    assert third.doubt_count == 1 and not third.is_loop_detected
    assert fourth.doubt_count == 2 and not fourth.is_loop_detected
    assert detector.doubt_density == 50.0


def test_density_waits_for_a_full_window() -> None:
    detector = OverthinkingDetector(lexicon="nowait", window_size_words=10, density_threshold=60)
    result = detector.analyze_chunk("wait hmm")
    assert not result.is_loop_detected
    assert detector.doubt_density == 1000.0


def test_density_after_window_eviction_is_zero() -> None:
    detector = OverthinkingDetector(lexicon="nowait", window_size_words=5, density_threshold=500)
    detector.analyze_chunk("wait a b c d")
    assert detector.doubt_density == 200.0
    detector.analyze_chunk("e f g h i j k l m n")
    assert detector.doubt_density == 0.0


# --- validation -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"max_doubt_markers": 0}, "max_doubt_markers"),
        ({"max_doubt_markers": True}, "max_doubt_markers"),
        ({"max_doubt_markers": "4"}, "max_doubt_markers"),
        ({"window_size_words": 2.5}, "window_size_words"),
        ({"repetition_threshold": 1.5}, "repetition_threshold"),
        ({"repetition_threshold": -0.1}, "repetition_threshold"),
        ({"max_thinking_tokens_hard_cap": 0}, "max_thinking_tokens_hard_cap"),
        ({"lexicon": "nope"}, "lexicon"),
        ({"counting": "all"}, "counting"),
        ({"density_threshold": 0}, "density_threshold"),
        ({"doubt_patterns": "wait"}, "doubt_patterns"),
        ({"doubt_patterns": ["("]}, r"doubt_patterns\[0\]"),
        ({"doubt_patterns": [b"wait"]}, r"doubt_patterns\[0\]"),
        ({"doubt_patterns": ["x"], "lexicon": "seed"}, "lexicon or doubt_patterns"),
    ],
)
def test_invalid_options_name_the_parameter(options: dict[str, object], name: str) -> None:
    with pytest.raises(OptionError, match=name):
        OverthinkingDetector(**options)  # type: ignore[arg-type]


def test_non_finite_numbers_mean_default() -> None:
    detector = OverthinkingDetector(
        max_doubt_markers=math.nan,  # type: ignore[arg-type]
        repetition_threshold=math.inf,
        density_threshold=-math.inf,
    )
    assert detector.options == OverthinkingDetector().options
    assert OverthinkingDetector(window_size_words=30.0).options["window_size_words"] == 30  # type: ignore[arg-type]


# --- robustness -------------------------------------------------------------------

ANY_INPUT = st.one_of(
    st.text(max_size=300),
    st.text(alphabet=st.sampled_from(list("wait,but hmm\n\u00a0\U0001f600é")), max_size=200),
    st.none(),
    st.integers(),
    st.binary(max_size=20),
    st.lists(st.text(max_size=5), max_size=3),
)


@settings(max_examples=80, deadline=None)
@given(
    lexicon=st.sampled_from(sorted(LEXICONS)),
    counting=st.sampled_from(COUNTING_MODES),
    density=st.sampled_from([None, 25.0]),
    window=st.integers(min_value=1, max_value=30),
    inputs=st.lists(ANY_INPUT, max_size=8),
)
def test_analyze_chunk_never_raises(
    lexicon: str, counting: str, density: float | None, window: int, inputs: list[object]
) -> None:
    detector = OverthinkingDetector(
        lexicon=lexicon,
        counting=counting,
        density_threshold=density,
        window_size_words=window,
        max_thinking_tokens_hard_cap=200,
    )
    for value in inputs:
        result = detector.analyze_chunk(value)  # type: ignore[arg-type]
        assert isinstance(result.doubt_count, int) and result.doubt_count >= 0
        assert 0.0 <= result.repetition_score <= 1.0
        assert (result.reason is not None) == result.is_loop_detected
