"""Sweeps: experiment files, search spaces, splits, objectives, workers, resume, outputs.

The corpora are generated in tmp_path by ``harness.synthetic`` (seeded, a few
families, small): no test reads ../shared.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pandas as pd
import pytest
from click.testing import CliRunner

from harness.corpus import Case, write_corpus
from harness.detectors import get_detector
from harness.evaluate import CorpusInput, evaluate
from harness.replay import Replayer
from harness.sweep import (
    SweepError,
    build_space,
    load_cases,
    make_split,
    parse_experiment,
    run_sweep,
)
from harness.sweep._experiment import to_toml
from harness.sweep._split import SweepCase
from harness.synthetic import generate_corpus

REPO = Path(__file__).resolve().parent.parent
TEXT_FAMILIES = ["runaway-stream", "chant", "text-run", "requested-repetition", "enumeration"]


def _journal(path: Path) -> Any:
    from optuna.storages.journal import JournalFileBackend, JournalStorage

    return JournalStorage(JournalFileBackend(str(path)))


def _load_study(run_dir: Path, name: str) -> optuna.Study:
    return optuna.load_study(study_name=name, storage=_journal(run_dir / "journal.log"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "text.jsonl"
    write_corpus(path, generate_corpus(TEXT_FAMILIES, n_per_family=10))
    return path


@pytest.fixture(scope="module")
def thread_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "thread.jsonl"
    families = ["verbatim-exchange", "tool-repeat", "ab-cycle", "polling", "batch", "user-repeat"]
    write_corpus(path, generate_corpus(families, n_per_family=6))
    return path


def _experiment(path: Path, corpus: Path, body: str, name: str = "t") -> Path:
    text = f'name = "{name}"\ncorpora = ["{corpus}"]\nbootstrap = 100\n' + body
    path.write_text(text, encoding="utf-8")
    return path


GUARD = """
detectors = ["repetition_guard"]
[sampler]
kind = "tpe"
n_startup_trials = 3
[space.repetition_guard]
ngram = {low = 2, high = 6}
max_repeats = {low = 2, high = 8}
min_chars = {low = 0, high = 1000, step = 50}
"""


# -- experiment files ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('corpora = ["a"]\ndetectors = ["g"]', "name: Field required"),
        ('name = "x"\ncorpora = ["a"]\ndetectors = ["g"]\ntypo = 1', "typo: Extra inputs"),
        (
            'name = "x"\ncorpora = ["a"]\ndetectors = ["g"]\n[objective]\nkind = "auc"',
            "does not match any of the expected tags",
        ),
        (
            'name = "x"\ncorpora = ["a"]\ndetectors = ["g"]\n'
            '[objective]\nkind = "recall_at_precision"',
            "objective.min_precision: Field required",
        ),
        ('name = "x"\ncorpora = ["a"]\ndetectors = ["g"]\n[space.g]\nn = {lo = 1}', "space.g.n.lo"),
        ('name = "x"\ncorpora = ["a"]\ndetectors = ["g", "g"]', "a detector is listed twice"),
        ('name = "x"\ncorpora = ["a"', "not valid TOML"),
    ],
)
def test_bad_experiment_files_are_refused_with_the_field_named(body: str, message: str) -> None:
    with pytest.raises(SweepError, match=r"demo\.toml") as info:
        parse_experiment(body, source="demo.toml")
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("space", "message"),
    [
        ("[space.repetition_guard]\nngram = {low = 1, high = 4}", "outside the registry's bounds"),
        ("[space.repetition_guard]\nbogus = 3", "unknown parameter 'bogus'; allowed: ngram"),
        ("[space.repetition_guard]\nngram = 12", "must be an integer in [2, 8]"),
        ("[space.repetition_guard]\nngram = {values = [3, 9]}", "got 9"),
        ("[space.alm]\nmax_repeated_tool_calls = 3", "not in detectors"),
        ("[space.repetition_guard]\nngram = {null = true}", "cannot be null"),
        ("[space.repetition_guard]\nngram = {low = 5, high = 3}", "above high"),
    ],
)
def test_space_overrides_may_only_narrow_and_name_the_parameter(space: str, message: str) -> None:
    experiment = parse_experiment(
        f'name = "x"\ncorpora = ["a"]\ndetectors = ["repetition_guard"]\n{space}'
    )
    with pytest.raises(SweepError) as info:
        build_space(experiment)
    assert message in str(info.value)


def test_space_dimensions_fixed_values_nulls_and_baseline() -> None:
    experiment = parse_experiment(
        """
name = "x"
corpora = ["a"]
detectors = ["overthinking", "repetition_guard"]
[space.overthinking]
max_doubt_markers = {low = 6, high = 12}
lexicon = {values = ["seed", "union"]}
[space.repetition_guard]
min_chars = 2000
ngram = {low = 3, high = 3}
"""
    )
    space = build_space(experiment)
    names = {d.name: d for d in space.dimensions}
    # every registry parameter is searched unless fixed; single-value ranges become fixed
    assert space.fixed["repetition_guard"] == {"min_chars": 2000, "ngram": 3}
    assert "overthinking.density_threshold" in names
    assert names["overthinking.density_threshold"].null_flag
    assert names["overthinking.lexicon"].choices == ("seed", "union")
    # the baseline is the library defaults, whatever the experiment fixes
    defaults = get_detector("repetition_guard").defaults
    assert space.baseline["repetition_guard"] == defaults
    enqueued = space.enqueue_params()
    assert enqueued["overthinking.density_threshold.is_null"] is True
    assert "overthinking.density_threshold" not in enqueued
    # max_doubt_markers default 4 is outside the narrowed [6, 12]: not sent to Optuna
    assert "overthinking.max_doubt_markers" in space.unrepresentable()
    assert "overthinking.max_doubt_markers" not in enqueued
    assert enqueued["overthinking.lexicon"] == "seed"
    # the grid needs explicit values for floats
    grid = experiment.model_copy(
        update={"sampler": experiment.sampler.model_copy(update={"kind": "grid"})}
    )
    with pytest.raises(SweepError, match="explicit values for a float"):
        build_space(grid)


def test_grid_space_expands_ranges_and_adds_null() -> None:
    experiment = parse_experiment(
        """
name = "x"
corpora = ["a"]
detectors = ["repeated_suffix"]
[sampler]
kind = "grid"
[space.repeated_suffix]
min_repetitions = {low = 2, high = 3}
min_pattern_length = 2
max_pattern_length = {low = 4, high = 6, step = 2}
"""
    )
    space = build_space(experiment)
    grid = space.grid_search_space()
    assert grid == {
        "repeated_suffix.min_repetitions": [2, 3],
        "repeated_suffix.max_pattern_length": [4, 6, None],
    }
    assert space.grid_size() == 6
    assert len(space.grid_points()) == 6
    # the library default (max_pattern_length null) is a grid point: the baseline is representable
    assert space.unrepresentable() == []


def test_resolved_experiment_round_trips_through_toml() -> None:
    experiment = parse_experiment(
        'name = "x"\ncorpora = ["a"]\ndetectors = ["repetition_guard"]\n'
        '[objective]\nkind = "multi"\nmetrics = ["precision", "recall"]\n'
        "[space.repetition_guard]\nngram = {low = 3, high = 5}\nmax_unique_ratio = 0.5\n"
        "min_chars = {values = [0, 2000]}\n"
    )
    data = experiment.model_dump(mode="json", exclude_none=True)
    text = to_toml(data, header="resolved\ncopy")
    assert tomllib.loads(text) == data
    assert parse_experiment(text) == experiment


# -- data and split -----------------------------------------------------------------------


def _cases(rows: list[tuple[str, str, bool, str | None, str]]) -> list[SweepCase]:
    out = []
    for i, (cid, group, looping, split, source) in enumerate(rows):
        raw: dict[str, Any] = {
            "id": cid,
            "group": group,
            "messages": [{"type": "user", "text": "x"}],
            "label": {"looping": looping, "source": source},
        }
        if split is not None:
            raw["split"] = split
        out.append(SweepCase("c", Case(raw, "c.jsonl", i + 1)))
    return out


def test_corpus_split_field_is_used_and_crossing_groups_refused() -> None:
    cases = _cases([("a", "g1", True, "train", "s"), ("b", "g2", False, "test", "s")])
    split = make_split(cases)
    assert split.method == "corpus" and split.train == (0,) and split.test == (1,)
    crossing = _cases([("a", "g1", True, "train", "s"), ("b", "g1", False, "test", "s")])
    with pytest.raises(SweepError, match="both sides"):
        make_split(crossing)
    missing = _cases([("a", "g1", True, "train", "s"), ("b", "g2", False, None, "s")])
    with pytest.raises(SweepError, match="needs a split field"):
        make_split(missing, method="corpus")
    with pytest.raises(SweepError, match="cannot make a stratified group split"):
        make_split(missing, method="auto", test_size=0.5)
    enough = _cases([(f"c{i}", f"g{i}", i % 2 == 0, None, "s") for i in range(8)])
    assert make_split(enough, method="auto", test_size=0.5).method == "stratified-group"


def test_stratified_group_split_keeps_groups_whole_and_labels_balanced() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for g in range(60):
        looping = bool(g % 3 == 0)
        for k in range(int(rng.integers(1, 4))):
            rows.append((f"c{g}-{k}", f"g{g}", looping, None, "s"))
    cases = _cases(rows)
    split = make_split(cases, method="stratified-group", test_size=0.25, seed=7)
    assert split.folds == 4
    train_groups = {cases[i].group_key for i in split.train}
    assert not any(cases[i].group_key in train_groups for i in split.test)
    assert sorted(split.train + split.test) == list(range(len(cases)))
    rate = np.mean([cases[i].looping for i in split.test])
    overall = np.mean([c.looping for c in cases])
    assert abs(rate - overall) < 0.12
    assert split.digest(cases) == make_split(
        cases, method="stratified-group", test_size=0.25, seed=7
    ).digest(cases)
    assert split.digest(cases) != make_split(
        cases, method="stratified-group", test_size=0.25, seed=8
    ).digest(cases)


def test_mixed_label_sources_need_an_explicit_choice(tmp_path: Path) -> None:
    first = generate_corpus(["chant"], n_per_family=3)
    other = []
    for case in generate_corpus(["batch"], n_per_family=3):
        case["label"]["source"] = "human"
        other.append(case)
    write_corpus(tmp_path / "a.jsonl", first)
    write_corpus(tmp_path / "b.jsonl", other)
    inputs = [CorpusInput("a", tmp_path / "a.jsonl"), CorpusInput("b", tmp_path / "b.jsonl")]
    with pytest.raises(SweepError, match="mix label sources"):
        load_cases(inputs)
    mixed = load_cases(inputs, allow_mixed_sources=True)
    assert mixed.mixed_sources and "mixed on purpose" in mixed.notes[0]
    only = load_cases(inputs, sources=["human"])
    assert {c.case.source for c in only.cases} == {"human"} and not only.mixed_sources


# -- running sweeps -----------------------------------------------------------------------


def test_sweep_writes_the_run_folder_and_resumes(tmp_path: Path, corpus: Path) -> None:
    exp = _experiment(tmp_path / "guard.toml", corpus, GUARD + "[budget]\ntrials = 6\n")
    run = tmp_path / "run"
    result = run_sweep(exp, out=run)
    for name in (
        "experiment.toml",
        "manifest.json",
        "study.json",
        "journal.log",
        "split.json",
        "trials.csv",
        "best.json",
        "comparison.json",
        "test/tuned/verdicts.jsonl",
        "test/tuned/metrics.json",
        "test/tuned/manifest.json",
        "test/defaults/metrics.json",
    ):
        assert (run / name).is_file(), name
    assert result.complete_trials == 6 and result.stopped == "budget"
    trials = pd.read_csv(run / "trials.csv")
    assert list(trials["number"]) == list(range(6))
    assert set(trials["state"]) == {"COMPLETE"}
    # trial 0 is the production defaults
    first = json.loads(trials.loc[0, "user_attrs_params"])
    assert first == {"repetition_guard": get_detector("repetition_guard").defaults}
    assert bool(trials.loc[0, "user_attrs_baseline"])
    best = json.loads((run / "best.json").read_text())
    assert best["value"] == pytest.approx(trials["value_f1"].max())
    assert best["trial"] == int(
        trials.loc[trials["value_f1"] == trials["value_f1"].max(), "number"].min()
    )
    # the objective is F1 from the recorded confusion counts
    row = trials.loc[best["trial"]]
    tp, fp, fn = row["user_attrs_tp"], row["user_attrs_fp"], row["user_attrs_fn"]
    assert best["value"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
    # the test scoring is harness eval on the test split, for the tuned params and the defaults
    split = json.loads((run / "split.json").read_text())
    direct = evaluate(
        sorted((run / "splits" / "test").glob("*.jsonl")),
        ["repetition_guard"],
        best["params"],
        bootstrap=100,
    )
    tuned = json.loads((run / "test" / "tuned" / "metrics.json").read_text())
    block = tuned["detectors"]["repetition_guard"]
    assert block["cases"] == split["test"]["cases"] == len(direct.verdicts)
    assert block["tp"] == direct.metrics_json["detectors"]["repetition_guard"]["tp"]
    comparison = json.loads((run / "comparison.json").read_text())
    assert comparison["tuned"]["value"] == pytest.approx(
        block["f1"] if block["f1"] is not None else math.nan, nan_ok=True
    )
    # the paired bootstrap draws are those of metrics.json (no detector errors here)
    assert comparison["tuned"]["ci"] == pytest.approx(block["f1_ci"])
    assert comparison["verdict"].startswith(("tuned is better", "tuned is not", "not better"))
    assert ("better" in comparison) and isinstance(comparison["better"], bool)
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["split"]["method"] == "corpus"
    assert manifest["corpora"][0]["sha256"] and manifest["packages"]["optuna"]
    study_doc = json.loads((run / "study.json").read_text())
    assert study_doc["storage_kind"] == "journal" and study_doc["directions"] == ["maximize"]

    # same command again with a larger budget: the study continues, trial 0 is not re-enqueued
    again = run_sweep(exp, out=run, trials=9, evaluate_test=False)
    assert again.complete_trials == 9
    study = _load_study(run, "t")
    assert len(study.trials) == 9
    assert sum(bool(t.user_attrs.get("baseline")) for t in study.trials) == 1
    # a different experiment on the same run folder is refused
    other = _experiment(tmp_path / "other.toml", corpus, GUARD.replace("high = 6", "high = 5"))
    with pytest.raises(SweepError, match="different experiment"):
        run_sweep(other, out=run)


def test_a_timeout_before_any_trial_keeps_the_defaults(tmp_path: Path, corpus: Path) -> None:
    exp = _experiment(tmp_path / "e.toml", corpus, GUARD + "[budget]\ntrials = 5\n")
    result = run_sweep(exp, out=tmp_path / "run", timeout=1e-6)
    assert result.stopped == "timeout" and result.complete_trials == 0
    assert result.comparison is not None and result.comparison["better"] is False
    assert result.comparison["verdict"] == (
        "no tuned configuration: no trial finished (stopped: timeout) (the defaults stay)"
    )
    assert (tmp_path / "run" / "test" / "defaults" / "metrics.json").is_file()
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["stopped"] == "timeout" and manifest["trials"]["waiting"] == 1


def test_tuning_never_replays_a_test_case(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: set[str] = set()
    original = Replayer.replay

    def spy(self: Replayer, case_id: str, messages: Any, **kwargs: Any) -> Any:
        seen.add(case_id)
        return original(self, case_id, messages, **kwargs)

    given: list[str] = []

    def fake_fast(detector: str, cases: Any, **kwargs: Any) -> None:
        given.extend(c.id for c in cases)
        return None  # force the replay, which the spy watches

    monkeypatch.setattr(Replayer, "replay", spy)
    monkeypatch.setattr("harness.sweep._objective.fast_evaluator", fake_fast)
    exp = _experiment(tmp_path / "e.toml", corpus, GUARD + "[budget]\ntrials = 3\n")
    run_sweep(exp, out=tmp_path / "run", evaluate_test=False)
    split = json.loads((tmp_path / "run" / "split.json").read_text())
    train = {cid for _, cid in split["train"]["ids"]}
    test = {cid for _, cid in split["test"]["ids"]}
    assert test and seen == train and set(given) == train
    assert not seen & test


def test_recall_at_precision_uses_a_constraint(tmp_path: Path, corpus: Path) -> None:
    body = (
        GUARD
        + '[objective]\nkind = "recall_at_precision"\nmin_precision = 0.8\n[budget]\ntrials = 10\n'
    )
    exp = _experiment(tmp_path / "e.toml", corpus, body)
    result = run_sweep(exp, out=tmp_path / "run")
    study = _load_study(tmp_path / "run", "t")
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    for trial in complete:
        assert trial.constraints["min_precision"] == pytest.approx(
            0.8 - trial.user_attrs["precision"]
        )
        assert trial.value == pytest.approx(trial.user_attrs["recall"])
    feasible = [t for t in complete if t.user_attrs["precision"] >= 0.8]
    best = result.best
    assert best is not None
    if feasible:
        top = max(t.value for t in feasible)
        assert best["value"] == pytest.approx(top)
        assert best["best"]["train"]["precision"] >= 0.8
        assert result.comparison is not None and "constraint" in result.comparison
    else:
        assert best["best"] is None and "no tuned configuration" in result.comparison["verdict"]


def test_multi_objective_keeps_the_pareto_front(tmp_path: Path, corpus: Path) -> None:
    body = GUARD.replace('kind = "tpe"', 'kind = "nsga2"\npopulation_size = 4')
    body += '[objective]\nkind = "multi"\nmetrics = ["precision", "recall", "latency_tokens"]\n'
    body += "[budget]\ntrials = 8\n"
    exp = _experiment(tmp_path / "e.toml", corpus, body)
    result = run_sweep(exp, out=tmp_path / "run")
    best = json.loads((tmp_path / "run" / "best.json").read_text())
    front = best["pareto"]
    assert front
    points = [(p["values"][0], p["values"][1], -p["values"][2]) for p in front]
    study = _load_study(tmp_path / "run", "t")
    for trial in study.trials:
        p = (trial.values[0], trial.values[1], -trial.values[2])
        # nothing in the study dominates a Pareto trial
        for q in points:
            pairs = list(zip(p, q, strict=True))
            assert not (all(a >= b for a, b in pairs) and any(a > b for a, b in pairs))
    comparison = result.comparison
    assert comparison is not None and len(comparison["pareto"]) == len(front)
    for entry in comparison["pareto"]:
        assert (tmp_path / "run" / "test" / f"pareto-{entry['trial']}" / "metrics.json").is_file()
        assert set(entry["metrics"]) == {"precision", "recall", "latency_tokens"}
        rate = entry["metrics"]["recall"]
        assert rate["difference"] == pytest.approx(rate["tuned"] - rate["defaults"])
    assert "Pareto" in comparison["verdict"]
    assert pd.read_csv(tmp_path / "run" / "trials.csv").filter(like="values_").shape[1] == 3


def test_ensemble_fires_if_any_member_fires(tmp_path: Path, thread_corpus: Path) -> None:
    body = """
detectors = ["repeated_suffix", "repeated_result_run"]
unlisted = "default"
[sampler]
kind = "random"
[budget]
trials = 4
[space.repeated_suffix]
min_repetitions = {low = 2, high = 4}
[space.repeated_result_run]
min_result_repetitions = {low = 2, high = 5}
"""
    exp = _experiment(tmp_path / "e.toml", thread_corpus, body)
    run_sweep(exp, out=tmp_path / "run")
    split = json.loads((tmp_path / "run" / "split.json").read_text())
    train_ids = {cid for _, cid in split["train"]["ids"]}
    cases = [json.loads(line) for line in thread_corpus.read_text().splitlines() if line.strip()]
    train = [c for c in cases if c["id"] in train_ids]
    study = _load_study(tmp_path / "run", "t")
    for trial in study.trials[:3]:
        params = json.loads(trial.user_attrs["params"])
        replayer = Replayer(list(params), params, chunking="provider", seed=0)
        tp = fp = 0
        for case in train:
            fired = any(o.fired for o in replayer.replay(case["id"], case["messages"]))
            tp += fired and case["label"]["looping"]
            fp += fired and not case["label"]["looping"]
        assert (trial.user_attrs["tp"], trial.user_attrs["fp"]) == (tp, fp)
    ensemble = json.loads((tmp_path / "run" / "test" / "tuned" / "ensemble.json").read_text())
    assert ensemble["members"] == ["repeated_suffix", "repeated_result_run"]
    assert ensemble["detectors"]["ensemble"]["cases"] == split["test"]["cases"]


def test_cross_validation_by_group_averages_the_folds(tmp_path: Path, corpus: Path) -> None:
    body = GUARD + "[cv]\nfolds = 3\n[budget]\ntrials = 3\n"
    exp = _experiment(tmp_path / "e.toml", corpus, body)
    run_sweep(exp, out=tmp_path / "run", evaluate_test=False)
    study = _load_study(tmp_path / "run", "t")
    for trial in study.trials:
        values = trial.user_attrs["cv_values"]
        assert len(values) == 3
        assert trial.value == pytest.approx(np.mean([v[0] for v in values]))


GRID = """
detectors = ["repetition_guard"]
unlisted = "default"
[sampler]
kind = "grid"
[space.repetition_guard]
ngram = {low = 3, high = 5}
max_repeats = {low = 2, high = 5}
"""


def test_two_local_workers_share_the_budget_exactly(tmp_path: Path, corpus: Path) -> None:
    exp = _experiment(tmp_path / "e.toml", corpus, GRID)
    result = run_sweep(exp, out=tmp_path / "run", workers=2, evaluate_test=False)
    study = _load_study(tmp_path / "run", "t")
    assert result.complete_trials == 13 == len(study.trials)  # 12 grid points + the baseline
    assert {t.state for t in study.trials} == {optuna.trial.TrialState.COMPLETE}
    combos = [
        (t.params["repetition_guard.ngram"], t.params["repetition_guard.max_repeats"])
        for t in study.trials
        if not t.user_attrs.get("baseline")
    ]
    assert sorted(combos) == [(n, r) for n in (3, 4, 5) for r in (2, 3, 4, 5)]
    assert len({t.user_attrs["worker"] for t in study.trials}) == 2


def test_a_killed_sweep_loses_no_finished_trial_and_resumes(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    write_corpus(path, generate_corpus(TEXT_FAMILIES, n_per_family=30))
    exp = _experiment(tmp_path / "e.toml", path, GUARD + "[budget]\ntrials = 30\n")
    run = tmp_path / "run"
    command = [
        sys.executable,
        "-c",
        "import sys; from harness._cli_sweep import sweep_command; sweep_command(sys.argv[1:])",
        str(exp),
        "--out",
        str(run),
        "--no-progress",
        "--no-test",
    ]
    env = {**os.environ, "LOOPGUARD_SWEEP_NO_FASTPATH": "1"}  # slower trials: a kill mid-sweep
    process = subprocess.Popen(
        command, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    finished: dict[int, Any] = {}
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if (run / "journal.log").is_file() and (run / "study.json").is_file():
                study = _load_study(run, "t")
                done = study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
                if len(done) >= 5:
                    finished = {t.number: (t.params, t.value) for t in done}
                    break
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    assert len(finished) >= 5, "the sweep did not reach 5 trials in time"
    after_kill = _load_study(run, "t")
    assert len(after_kill.get_trials(states=(optuna.trial.TrialState.COMPLETE,))) < 30
    resumed = subprocess.run(
        command, env=env, cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr
    study = _load_study(run, "t")
    complete = {
        t.number: (t.params, t.value)
        for t in study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    }
    assert len(complete) == 30
    for number, (params, value) in finished.items():
        assert complete[number] == (params, value)
    assert sum(bool(t.user_attrs.get("baseline")) for t in study.trials) == 1
    failed = [t for t in study.trials if t.state == optuna.trial.TrialState.FAIL]
    for trial in failed:  # the trial running at the kill was failed and queued again
        retried = [t for t in study.trials if t.system_attrs.get("failed_trial") == trial.number]
        assert retried and retried[0].state == optuna.trial.TrialState.COMPLETE


def test_cli_sweep_and_dashboard(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness._cli_sweep import dashboard_command, dashboard_plan, sweep_command

    exp = _experiment(tmp_path / "e.toml", corpus, GUARD + "[budget]\ntrials = 3\n")
    runner = CliRunner()
    result = runner.invoke(
        sweep_command, [str(exp), "--out", str(tmp_path / "run"), "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    assert "3 finished trial(s)" in result.output and "on the test split" in result.output
    bad = runner.invoke(
        sweep_command, [str(exp), "--out", str(tmp_path / "run2"), "--storage", "nowhere"]
    )
    assert bad.exit_code != 0 and "database URL" in bad.output
    plan = dashboard_plan(tmp_path / "run", port=8123)
    assert plan.kind == "journal" and plan.storage == str(tmp_path / "run" / "journal.log")
    assert plan.argv == ["optuna-dashboard", "--host", "127.0.0.1", "--port", "8123", plan.storage]
    printed = runner.invoke(dashboard_command, [str(tmp_path / "run"), "--print-command"])
    assert printed.output.strip() == " ".join(dashboard_plan(tmp_path / "run").argv)
    url = dashboard_plan(tmp_path / "run", storage="postgresql://u@h/db")
    assert url.kind == "rdb" and url.argv[-1] == "postgresql://u@h/db"
    monkeypatch.setitem(sys.modules, "optuna_dashboard", None)
    missing = runner.invoke(dashboard_command, [str(tmp_path / "run")])
    assert missing.exit_code != 0 and "pip install optuna-dashboard" in missing.output
    nothing = runner.invoke(dashboard_command, [str(tmp_path)])
    assert nothing.exit_code != 0 and "not a sweep run folder" in nothing.output


@pytest.mark.parametrize(
    "name", ["smoke", "guard", "overthinking", "cycle-heuristics", "alm", "ensemble"]
)
def test_shipped_experiments_are_valid(name: str) -> None:
    from harness.sweep import load_experiment

    experiment = load_experiment(REPO / "experiments" / f"{name}.toml")
    space = build_space(experiment)
    assert space.dimensions
    assert experiment.name == name
