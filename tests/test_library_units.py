"""Hand-checked cases for the parts the conformance corpus does not pin down."""

from __future__ import annotations

import json
import math

import pytest

import loopguard as lg
from loopguard._js import js_number, js_stringify, safe_stringify, utf16_len, utf16_tail


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1"),
        (3.5, "3.5"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1.5e-6, "0.0000015"),
        (-0.0, "0"),
        (2**70, "1.1805916207174113e+21"),
        (math.nan, "null"),
        (math.inf, "null"),
        (5e-324, "5e-324"),
        (123.456, "123.456"),
        (-1e-7, "-1e-7"),
    ],
)
def test_numbers_format_as_javascript(value: float, expected: str) -> None:
    assert js_number(value) == expected


def test_stringify_orders_integer_keys_first_and_escapes_like_javascript() -> None:
    assert js_stringify({"b": 1, "10": 2, "2": 3, "01": 4}) == '{"2":3,"10":2,"b":1,"01":4}'
    assert (
        js_stringify(["\u2028", "\ud800", "\x01", "\n"]) == '["\u2028","\\ud800","\\u0001","\\n"]'
    )
    assert js_stringify([lambda: 1]) == "[null]"
    assert js_stringify({"f": lambda: 1}) == "{}"


def test_safe_stringify_marks_circular_values() -> None:
    loop: list[object] = []
    loop.append(loop)
    assert safe_stringify(loop) == '"[unserializable]"'
    assert len(safe_stringify(loop) or "") == 18


def test_utf16_helpers_count_astral_characters_twice() -> None:
    assert utf16_len("a🎉") == 3
    assert utf16_tail("a🎉b", 2) == "\udf89b"  # the low half of the cut pair survives
    assert utf16_tail("abc", 5) == "abc"


def test_options_that_are_not_finite_numbers_mean_default() -> None:
    default = lg.RepetitionGuard().options
    for bad in (None, math.nan, math.inf, -math.inf, "5", True):
        assert (
            lg.RepetitionGuard(
                ngram=bad, window=bad, max_repeats=bad, max_unique_ratio=bad, min_chars=bad
            ).options
            == default
        )


def test_options_are_floored_and_clamped() -> None:
    guard = lg.RepetitionGuard(
        ngram=0, window=1.9, max_repeats=-4, max_unique_ratio=7, min_chars=-3
    )
    assert guard.options == {
        "ngram": 2,
        "window": 2,
        "max_repeats": 2,
        "max_unique_ratio": 1.0,
        "min_chars": 0,
    }


def test_cycle_option_zero_clamps_to_one() -> None:
    a, b = {"type": "bot", "text": "a"}, {"type": "bot", "text": "b"}
    assert lg.has_repeated_suffix([a, b], min_repetitions=0, min_pattern_length=0)
    assert not lg.has_repeated_suffix([a, b])


def test_unknown_cycle_option_is_an_error_naming_it() -> None:
    with pytest.raises(TypeError, match="min_repetition"):
        lg.is_thread_cyclic([], min_repetition=3)


def test_absent_and_null_meta_differ() -> None:
    a = {"type": "bot", "text": "x"}
    b = {"type": "bot", "text": "x", "meta": None}
    assert lg.has_repeated_suffix([a, a], min_pattern_length=1)
    assert not lg.has_repeated_suffix([a, b], min_pattern_length=1)


def test_production_constants_of_activity_tail_are_options() -> None:
    def call(kind: str, **fn: object) -> dict[str, object]:
        return {"type": "activity", "meta": {"activity": {"type": kind, "function": fn}}}

    pair = [
        call("request", name="ls", arguments={}),
        call("response", name="ls", arguments={}, result="x"),
    ]
    assert not lg.has_repeated_activity_tail(pair * 3)  # 6 < 8 messages
    assert lg.has_repeated_activity_tail(pair * 3, min_tail_length=6, min_io_count=3)


def test_message_text_adapter_window_is_an_option() -> None:
    loop = {"type": "bot", "text": "Same again. " * 10}
    later = [{"type": "user", "text": f"q{i}"} for i in range(5)]
    assert not lg.has_repeated_message_text_run([loop, *later])
    assert lg.has_repeated_message_text_run([loop, *later], last_messages=6)


class TestBuildThread:
    def test_negative_min_messages_works_like_positive(self) -> None:
        msgs = [{"text": t, "usage": {"tokens": 50}} for t in "abc"]
        assert len(lg.build_thread(msgs, max_tokens=10, min_messages=-2).messages) == 2

    def test_usage_is_moved_last_and_other_fields_kept(self) -> None:
        out = lg.build_thread([{"usage": {"tokens": 1}, "text": "a", "x": 1}], max_tokens=5)
        assert list(out.messages[0]) == ["text", "x", "usage"]

    def test_js_coercions_of_usage(self) -> None:
        calls: list[object] = []

        def estimate(message: dict[str, object]) -> dict[str, int]:
            calls.append(message["text"])
            return {"tokens": 7}

        msgs = [
            {"text": "null", "usage": {"tokens": None}},
            {"text": "str5", "usage": {"tokens": "5"}},
            {"text": "nan", "usage": {"tokens": math.nan}},
            {"text": "abc", "usage": {"tokens": "abc"}},
        ]
        out = lg.build_thread(msgs, max_tokens=100, estimate=estimate)
        assert calls == ["nan", "abc"]
        assert [m["usage"]["tokens"] for m in out.messages] == [0, 0, 7, 7]

    def test_inclusive_true_keeps_the_straddler_whole(self) -> None:
        msgs = [{"text": t, "usage": {"tokens": n}} for t, n in (("a", 40), ("b", 30))]
        assert lg.build_thread(msgs, max_tokens=50).usage == {"tokens": 30}
        assert lg.build_thread(msgs, max_tokens=50, inclusive=True).usage == {"tokens": 70}

    def test_inclusive_function_result_is_clamped(self) -> None:
        msgs = [{"text": t, "usage": {"tokens": n}} for t, n in (("a", 40), ("b", 30))]

        def trim(message: dict[str, object], trim_to: float) -> dict[str, object]:
            return {**message, "text": "a…", "usage": {"tokens": 99, "note": "kept"}}

        out = lg.build_thread(msgs, max_tokens=50, inclusive=trim)
        assert out.usage == {"tokens": 50}
        assert out.messages[0] == {"text": "a…", "usage": {"tokens": 20, "note": "kept"}}

    def test_missing_estimator_is_a_clear_error(self) -> None:
        with pytest.raises(lg.OptionError, match="message 0"):
            lg.build_thread([{"text": "a"}], max_tokens=5)

    def test_input_is_not_mutated(self) -> None:
        msgs = [{"text": "a", "usage": {"tokens": 2}}]
        before = json.dumps(msgs)
        lg.build_thread(msgs, max_tokens=5)
        assert json.dumps(msgs) == before


def test_every_default_comes_from_defaults_json() -> None:
    data = lg.load_defaults()
    guard = data["detectors"]["repetition_guard"]
    assert lg.RepetitionGuard().options == {k: guard[k] for k in lg.RepetitionGuard().options}
    assert lg.preset("repetition_guard", "production")["min_chars"] == 2000
    with pytest.raises(lg.DefaultsError, match="known"):
        lg.detector_defaults("nope")
    assert data["provenance"]["kind"] == "production"


def test_text_run_tail_is_cut_in_utf16_units() -> None:
    # Six emoji: the text fits the limit in code points but not in UTF-16 units, so
    # JavaScript's slice(-limit) drops exactly the leading "abc. " and the rest loops.
    text = "abc. " + "🎉" * 6 + " x. x."
    limit = len(text) + 6 - 5
    assert len(text) <= limit
    assert not lg.has_repeated_text_run(text, min_units=2)
    assert lg.has_repeated_text_run(text, min_units=2, tail_limit=limit)
