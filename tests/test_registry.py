"""The detector registry: names, kinds, parameters, bounds, defaults and presets."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import loopguard as lg
from harness.detectors import (
    BUILTIN,
    REGISTRY,
    Detector,
    DetectorError,
    Fire,
    Param,
    ParameterError,
    UnknownDetectorError,
    get_detector,
    prefix_check,
    register,
    resolve_params,
)
from harness.replay import Replayer

KINDS = {
    "repeated_suffix": "thread",
    "repeated_activity_tail": "thread",
    "repeated_result_run": "thread",
    "repeated_message_text_run": "thread",
    "thread_cycle": "thread",
    "repetition_guard": "stream",
    "text_run": "stream",
    "overthinking": "stream",
    "alm": "thread",
    "near_duplicate_result_run": "thread",
    "error_retry": "thread",
    "paraphrase_loop": "thread",
    "stall": "thread",
}


@pytest.fixture
def scratch_registry() -> Iterator[None]:
    saved = dict(REGISTRY)
    try:
        yield
    finally:
        REGISTRY.clear()
        REGISTRY.update(saved)


def test_the_built_in_detectors_are_registered_in_order() -> None:
    assert list(REGISTRY)[: len(BUILTIN)] == list(BUILTIN)
    assert {name: get_detector(name).kind for name in BUILTIN} == KINDS


@pytest.mark.parametrize("name", BUILTIN)
def test_defaults_come_from_defaults_json(name: str) -> None:
    detector = get_detector(name)
    for param in detector.params:
        block = lg.detector_defaults(param.block or detector.defaults_key)
        assert detector.defaults[param.name] == block[param.name], param.name
    json.dumps(detector.as_dict())  # JSON-ready, for manifests and the tuner


def test_thread_cycle_takes_the_four_heuristics_options() -> None:
    names = set(get_detector("thread_cycle").param_names)
    assert names == set(lg.CYCLE_OPTIONS)


def test_repetition_guard_defaults_and_production_preset() -> None:
    guard = get_detector("repetition_guard")
    assert guard.resolve()["min_chars"] == lg.detector_defaults("repetition_guard")["min_chars"]
    production = guard.resolve(preset="production")
    assert production == lg.preset("repetition_guard", "production")
    assert guard.resolve({"ngram": 5}, preset="production")["ngram"] == 5
    with pytest.raises(ParameterError, match="known: production"):
        guard.resolve(preset="nope")


def test_search_bounds_of_the_issue() -> None:
    guard = get_detector("repetition_guard")
    assert (guard.param("ngram").low, guard.param("ngram").high) == (2, 8)
    assert (guard.param("min_chars").low, guard.param("min_chars").high) == (0, 4000)
    over = get_detector("overthinking")
    assert set(over.param("lexicon").choices) == {
        "seed",
        "nowait",
        "self_braking",
        "dynasor",
        "r1",
        "union",
    }
    assert over.param("density_threshold").nullable
    alm = get_detector("alm")
    assert (alm.param("state_drift_threshold_percent").low, alm.param("drift_window").high) == (
        0.0,
        10,
    )


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        (
            "repetition_guard",
            {"ngram": 12},
            r"repetition_guard\.ngram must be an integer in \[2, 8\]",
        ),
        ("repetition_guard", {"ngram": 2.5}, r"integer in \[2, 8\]; got 2\.5"),
        ("repetition_guard", {"ngram": True}, r"got True"),
        ("repetition_guard", {"max_unique_ratio": 0.95}, r"a number in \[0\.1, 0\.9\]"),
        ("repetition_guard", {"speed": 1}, r"no parameter 'speed'; allowed: ngram, window"),
        ("overthinking", {"lexicon": "klingon"}, r"one of 'seed', 'nowait'"),
        ("overthinking", {"max_doubt_markers": None}, r"got null"),
        ("alm", {"reset_on_progress": "yes"}, r"true or false"),
        ("text_run", {"max_unique_ratio": float("nan")}, r"a number in"),
    ],
)
def test_bad_parameters_name_the_parameter_and_the_allowed_values(
    name: str, params: dict[str, Any], message: str
) -> None:
    with pytest.raises(ParameterError, match=message):
        get_detector(name).validate(params)


def test_good_parameters_are_normalised() -> None:
    guard = get_detector("repetition_guard")
    assert guard.validate({"ngram": 3.0, "max_unique_ratio": 1 // 2 + 0.5}) == {
        "ngram": 3,
        "max_unique_ratio": 0.5,
    }
    over = get_detector("overthinking")
    assert over.validate({"density_threshold": None, "lexicon": "r1"})["density_threshold"] is None


def test_unknown_detector_lists_the_known_ones() -> None:
    with pytest.raises(UnknownDetectorError, match="known: repeated_suffix, "):
        get_detector("nope")
    with pytest.raises(UnknownDetectorError, match="'nope'"):
        resolve_params(["repetition_guard"], {"nope": {}})


def test_resolve_params_ignores_unselected_detectors_unless_strict() -> None:
    resolved = resolve_params(["text_run"], {"repetition_guard": {"ngram": 3}})
    assert list(resolved) == ["text_run"]
    with pytest.raises(ParameterError, match="not selected"):
        resolve_params(["text_run"], {"repetition_guard": {"ngram": 3}}, strict=True)


def test_a_default_outside_the_bounds_is_refused_at_definition() -> None:
    with pytest.raises(DetectorError, match="out of the search bounds"):
        Detector(
            name="tight_guard",
            kind="stream",
            description="bounds exclude the default ngram",
            defaults_key="repetition_guard",
            params=(Param("ngram", "int", low=5, high=8),),
            build=lambda params: lambda: None,
            presets={},
        )
    with pytest.raises(DetectorError, match=r"no default for repetition_guard\.speed"):
        Detector(
            name="fast_guard",
            kind="stream",
            description="a parameter without a default",
            defaults_key="repetition_guard",
            params=(Param("speed", "int", low=1, high=2),),
            build=lambda params: lambda: None,
            presets={},
        )


def test_adding_a_detector_is_one_registration(scratch_registry: None) -> None:
    def ends_with_same_bot_text(messages: list[dict[str, Any]], *, min_repetitions: int) -> bool:
        texts = [m.get("text") for m in messages if m.get("type") == "bot"]
        tail = texts[-min_repetitions:]
        return len(tail) == min_repetitions and len(set(tail)) == 1

    detector = register(
        Detector(
            name="same_bot_text",
            kind="thread",
            description="the last bot texts are all the same",
            defaults_key="repeated_suffix",
            params=(Param("min_repetitions", "int", low=1, high=6),),
            build=prefix_check(ends_with_same_bot_text),
        )
    )
    with pytest.raises(DetectorError, match="already registered"):
        register(detector)
    bot = {"type": "bot", "text": "same"}
    (outcome,) = Replayer(["same_bot_text"]).replay("c", [bot, {"type": "user", "text": "?"}, bot])
    assert outcome.fired_at == (2, None)
    assert outcome.reason == "ends_with_same_bot_text"


def test_detectors_with_their_own_defaults_document() -> None:
    document = {"detectors": {"mine": {"k": 3}}, "presets": {"mine": {"strict": {"k": 5}}}}
    detector = Detector(
        name="mine",
        kind="thread",
        description="defaults outside loopguard",
        defaults_key="mine",
        params=(Param("k", "int", low=1, high=9),),
        build=lambda params: lambda: None,
        defaults_document=document,
    )
    assert detector.defaults == {"k": 3}
    assert detector.resolve(preset="strict") == {"k": 5}


def test_fire_is_a_small_value() -> None:
    assert Fire("x") == Fire("x") and Fire("x").extra is None
