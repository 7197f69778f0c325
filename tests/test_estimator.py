"""Detectors as scikit-learn estimators, and their agreement with ``harness sweep``.

The corpora are generated in tmp_path by ``harness.synthetic`` (seeded): no
test reads ../shared.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pytest
from sklearn.base import clone
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import f1_score
from sklearn.model_selection import (
    GridSearchCV,
    GroupKFold,
    PredefinedSplit,
    TunedThresholdClassifierCV,
    cross_validate,
)

from harness.corpus import iter_cases, write_corpus
from harness.detectors import get_detector
from harness.replay import Replayer
from harness.sweep import SCORE_PARAMS, DetectorClassifier, corpus_arrays, run_sweep
from harness.synthetic import generate_corpus

FAMILIES = ["runaway-stream", "chant", "text-run", "requested-repetition", "enumeration"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("est") / "text.jsonl"
    write_corpus(path, generate_corpus(FAMILIES, n_per_family=10))
    return path


@pytest.fixture(scope="module")
def data(corpus: Path) -> tuple[list[Any], Any, Any]:
    return corpus_arrays(str(corpus))


def test_parameters_are_the_detectors_and_clone_keeps_them() -> None:
    clf = DetectorClassifier("repetition_guard", ngram=3)
    params = clf.get_params()
    defaults = get_detector("repetition_guard").defaults
    assert set(params) == {"detector", "chunking", "seed", *defaults}
    assert params["ngram"] == 3 and params["window"] == defaults["window"]
    copy = clone(clf)
    assert copy.get_params() == params and copy is not clf
    copy.set_params(max_repeats=6)
    assert copy.get_params()["max_repeats"] == 6 and clf.get_params()["max_repeats"] == 4
    with pytest.raises(ValueError, match="invalid parameter 'bogus'"):
        clf.set_params(bogus=1)
    assert "ngram=3" in repr(clf)
    with pytest.raises(ValueError, match=r"ngram must be an integer in \[2, 8\]"):
        DetectorClassifier("repetition_guard", ngram=99).fit([], [])
    with pytest.raises(TypeError, match=r"X\[0\]"):
        DetectorClassifier().predict([42])


def test_predict_is_the_replay_verdict(data: tuple[list[Any], Any, Any]) -> None:
    X, y, _ = data
    clf = DetectorClassifier("repetition_guard", chunking="word", max_repeats=3).fit(X, y)
    params = clf.detector_params()
    replayer = Replayer(["repetition_guard"], {"repetition_guard": params}, chunking="word")
    expected = [int(replayer.replay(c.id, c.messages)[0].fired) for c in X]
    assert clf.predict(X).tolist() == expected
    assert 0 < sum(expected) < len(expected)
    # raw dicts work too
    assert clf.predict([c.raw for c in X[:5]]).tolist() == expected[:5]


def test_grid_search_cv_agrees_with_a_grid_sweep(tmp_path: Path, corpus: Path) -> None:
    grid = {"ngram": [2, 3, 4], "max_repeats": [2, 3, 4, 5]}
    experiment = tmp_path / "grid.toml"
    experiment.write_text(
        f'name = "grid"\ncorpora = ["{corpus}"]\ndetectors = ["repetition_guard"]\n'
        'unlisted = "default"\nbootstrap = 0\n[sampler]\nkind = "grid"\n'
        "[space.repetition_guard]\nngram = {values = [2, 3, 4]}\n"
        "max_repeats = {low = 2, high = 5}\n",
        encoding="utf-8",
    )
    result = run_sweep(experiment, out=tmp_path / "run", evaluate_test=False)
    assert result.complete_trials == 13
    from optuna.storages.journal import JournalFileBackend, JournalStorage

    study = optuna.load_study(
        study_name="grid",
        storage=JournalStorage(JournalFileBackend(str(tmp_path / "run" / "journal.log"))),
    )
    sweep_scores = {}
    for trial in study.trials:
        params = json.loads(trial.user_attrs["params"])["repetition_guard"]
        sweep_scores[(params["ngram"], params["max_repeats"])] = trial.value
    # the same split: GridSearchCV scores the sweep's training cases (fit learns nothing)
    X, y, _ = corpus_arrays(str(corpus))
    sides = [c.raw["split"] for c in X]
    split = json.loads((tmp_path / "run" / "split.json").read_text())
    assert [cid for _, cid in split["train"]["ids"]] == [
        c.id for c, s in zip(X, sides, strict=True) if s == "train"
    ]
    test_fold = np.array([0 if s == "train" else -1 for s in sides])
    search = GridSearchCV(
        DetectorClassifier("repetition_guard"), grid, scoring="f1", cv=PredefinedSplit(test_fold)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        search.fit(X, y)
    cv_scores = {
        (p["ngram"], p["max_repeats"]): s
        for p, s in zip(
            search.cv_results_["params"], search.cv_results_["mean_test_score"], strict=True
        )
    }
    for combo, score in cv_scores.items():
        assert sweep_scores[combo] == pytest.approx(score), combo
    best = max(cv_scores.values())
    assert result.best is not None and result.best["value"] == pytest.approx(search.best_score_)
    assert search.best_score_ == pytest.approx(best)
    tied = {c for c, s in cv_scores.items() if math.isclose(s, best)}
    sweep_best = result.best["params"]["repetition_guard"]
    assert (sweep_best["ngram"], sweep_best["max_repeats"]) in tied
    assert (search.best_params_["ngram"], search.best_params_["max_repeats"]) in tied
    assert len({s for s in cv_scores.values()}) > 1  # the grid is not flat


def test_cross_validate_with_groups(data: tuple[list[Any], Any, Any]) -> None:
    X, y, groups = data
    clf = DetectorClassifier("repetition_guard", max_repeats=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        scores = cross_validate(clf, X, y, groups=groups, cv=GroupKFold(3), scoring="f1")
    predicted = clf.fit(X, y).predict(X)
    for (_, held), score in zip(
        GroupKFold(3).split(X, y, groups), scores["test_score"], strict=True
    ):
        assert score == pytest.approx(f1_score(y[held], predicted[held], zero_division=0))


@pytest.mark.parametrize("detector", ["repetition_guard", "text_run"])
def test_decision_function_is_the_largest_firing_threshold(
    detector: str, data: tuple[list[Any], Any, Any]
) -> None:
    X, y, _ = data
    name = SCORE_PARAMS[detector]
    param = get_detector(detector).param(name)
    scores = DetectorClassifier(detector).fit(X, y).decision_function(X)
    assert scores.min() >= param.low - 1 and scores.max() <= param.high
    # predict at any value of the threshold parameter is "score >= value" (monotone)
    values = sorted({int(param.low), int(param.high), int((param.low + param.high) // 2), 4})
    for value in values:
        fired = DetectorClassifier(detector, **{name: value}).fit(X, y).predict(X)
        assert fired.tolist() == (scores >= value).astype(int).tolist(), value
    assert not hasattr(DetectorClassifier("thread_cycle"), "decision_function")


def test_tuned_threshold_classifier_tunes_the_count_threshold(
    data: tuple[list[Any], Any, Any],
) -> None:
    X, y, groups = data
    base = DetectorClassifier("repetition_guard")
    tuned = TunedThresholdClassifierCV(
        base,
        scoring="f1",
        response_method="decision_function",
        cv=list(GroupKFold(2).split(X, y, groups)),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        tuned.fit(X, y)
    threshold = tuned.best_threshold_
    param = get_detector("repetition_guard").param("max_repeats")
    value = math.ceil(threshold)
    if param.low <= value <= param.high:
        direct = DetectorClassifier("repetition_guard", max_repeats=value).fit(X, y).predict(X)
        assert tuned.predict(X).tolist() == direct.tolist()


def test_cases_from_a_corpus_file(corpus: Path) -> None:
    X, y, groups = corpus_arrays(str(corpus))
    cases = list(iter_cases(corpus))
    assert [c.id for c in X] == [c.id for c in cases]
    assert y.tolist() == [int(c.looping) for c in cases]
    assert len(set(groups)) == len({c.group for c in cases})
