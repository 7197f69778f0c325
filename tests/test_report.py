"""``harness report``: provenance, leaderboard, figures, galleries and studies of saved runs.

The runs are made here on ``tests/data/eval/mini.jsonl`` (plus a few cases written
below), and the studies are small real Optuna studies in the layout of a
``harness sweep`` folder (``fabricate_study``, also used by ``test_notebooks.py``).
"""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import harness
from harness import HarnessError
from harness._cli_report import report as report_command
from harness.evaluate import run_evaluation
from harness.report import _figures
from harness.report._gallery import _md, reason_phrases
from harness.report._study import pareto_mask

MINI = Path(__file__).parent / "data" / "eval" / "mini.jsonl"
DETECTORS = ["repetition_guard", "thread_cycle"]
# Tuned search space of the fabricated studies (within the detector's bounds).
SPACE = {"ngram": (2, 6), "window": (16, 96), "max_repeats": (2, 6)}

# A false positive whose text needs escaping in HTML and Markdown.
ESCAPE_TEXT = "<b>ship</b> & go *now* | [x]\n"
EXTRA_CASES: list[dict[str, Any]] = [
    {
        "id": "escape-fp",
        "messages": [
            {"type": "user", "text": "Write the release note."},
            {"type": "bot", "text": "Notes:\n" + ESCAPE_TEXT * 12},
        ],
        "label": {"looping": False, "source": "human", "kind": "requested-repetition"},
        "group": "escape",
        "tags": ["requested"],
    },
]


def fabricate_study(
    run_dir: Path, train: Path, test: Path, *, trials: int = 5, multi: bool = False
) -> Path:
    """A real small Optuna study of ``repetition_guard`` in the ``harness sweep`` layout."""
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    run_dir.mkdir(parents=True, exist_ok=True)
    storage = JournalStorage(JournalFileBackend(str(run_dir / "journal.log")))
    objectives = ["precision", "recall"] if multi else ["f1"]
    directions = ["maximize"] * len(objectives)
    sampler = optuna.samplers.RandomSampler(seed=3)
    study = optuna.create_study(
        study_name=run_dir.name, storage=storage, directions=directions, sampler=sampler
    )
    if multi:
        # As `harness sweep` does: trials.csv then names the columns values_precision ...
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study.set_metric_names(objectives)

    def params_of(trial: Any) -> dict[str, dict[str, Any]]:
        return {"repetition_guard": {k.split(".", 1)[1]: v for k, v in trial.params.items()}}

    def objective(trial: Any) -> Any:
        for name, (low, high) in SPACE.items():
            trial.suggest_int(f"repetition_guard.{name}", low, high)
        result = harness.evaluate(train, ["repetition_guard"], params_of(trial), bootstrap=0)
        block = result.metrics_json["detectors"]["repetition_guard"]
        values = [float(block[o] or 0.0) for o in objectives]
        return tuple(values) if multi else values[0]

    study.optimize(objective, n_trials=trials)
    study.trials_dataframe().to_csv(run_dir / "trials.csv", index=False)
    dimensions = [
        {"name": f"repetition_guard.{k}", "type": "int", "low": lo, "high": hi, "log": False}
        for k, (lo, hi) in SPACE.items()
    ]
    info: dict[str, Any] = {
        "study_name": run_dir.name,
        "directions": directions,
        "storage": {"kind": "journal", "path": str(run_dir / "journal.log")},
    }
    if multi:
        # The shape `harness sweep` writes.
        info["metric_names"] = objectives
        info["objective"] = {"kind": "multi", "metrics": objectives}
        info["space"] = {"grid": False, "dimensions": dimensions}
    else:
        info["objective"] = objectives
        info["space"] = {d["name"]: d for d in dimensions}
    (run_dir / "study.json").write_text(json.dumps(info), encoding="utf-8")
    (run_dir / "experiment.toml").write_text(f'name = "{run_dir.name}"\n', encoding="utf-8")
    run_evaluation(test, ["repetition_guard"], out=run_dir / "test" / "defaults", bootstrap=20)
    if multi:
        best = study.best_trials[:2]
        (run_dir / "best.json").write_text(
            json.dumps({"pareto": [{"trial": t.number, "values": t.values} for t in best]}),
            encoding="utf-8",
        )
        for trial in best:
            run_evaluation(
                test,
                ["repetition_guard"],
                params_of(trial),
                out=run_dir / "test" / f"pareto-{trial.number}",
                bootstrap=20,
            )
        comparison = {"verdict": "multi-objective: see the Pareto trials"}
    else:
        trial = study.best_trial
        (run_dir / "best.json").write_text(
            json.dumps({"repetition_guard": {"trial": trial.number, "params": trial.params}}),
            encoding="utf-8",
        )
        run_evaluation(
            test,
            ["repetition_guard"],
            params_of(trial),
            out=run_dir / "test" / "tuned",
            bootstrap=20,
        )
        comparison = {"objective": "f1", "verdict": "tuned and defaults do not differ on test"}
    (run_dir / "comparison.json").write_text(json.dumps(comparison), encoding="utf-8")
    return run_dir


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "mini-plus.jsonl"
    cases = [json.loads(line) for line in MINI.read_text(encoding="utf-8").splitlines() if line]
    harness.write_corpus(path, cases + EXTRA_CASES)
    return path


@pytest.fixture(scope="module")
def eval_run(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "mini"
    run_evaluation(corpus, DETECTORS, out=out, bootstrap=50)
    return out


@pytest.fixture(scope="module")
def small_run(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One detector: a report of it has few figures (quick to build)."""
    out = tmp_path_factory.mktemp("runs") / "small"
    run_evaluation(corpus, ["repetition_guard"], out=out, bootstrap=20)
    return out


@pytest.fixture(scope="module")
def studies(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("sweeps")
    # The single-objective study is tested on cases of one label source.
    test_split = root / "synthetic-only.jsonl"
    harness.write_corpus(
        test_split, [c.raw for c in harness.iter_cases(corpus) if c.source == "synthetic"]
    )
    single = fabricate_study(root / "guard-f1", corpus, test_split, trials=4)
    multi = fabricate_study(root / "guard-pr", corpus, corpus, trials=5, multi=True)
    return single, multi


@pytest.fixture(scope="module")
def built(
    eval_run: Path, studies: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    out = tmp_path_factory.mktemp("report")
    harness.build_report([eval_run, *studies], out, gallery_size=3)
    return out


def test_report_files_and_figures(built: Path, studies: tuple[Path, Path]) -> None:
    html = (built / "index.html").read_text(encoding="utf-8")
    markdown = (built / "report.md").read_text(encoding="utf-8")
    stems = {p.stem for p in (built / "figures").glob("*.png")}
    assert stems == {p.stem for p in (built / "figures").glob("*.svg")}
    for detector in DETECTORS:
        for what in (
            "precision-recall",
            "confusion",
            "latency",
            "tokens",
            "by-kind",
            "by-tag",
            "by-source",
        ):
            assert f"detector-{detector}-{what}" in stems
    for study in ("guard-f1", "guard-pr"):
        for what in ("history", "importances", "slices"):
            assert f"study-{study}-{what}" in stems
    # A Pareto front only for the study with two objectives.
    assert "study-guard-pr-pareto" in stems and "study-guard-f1-pareto" not in stems
    for stem in stems:
        assert f"figures/{stem}.png" in html and f"figures/{stem}.png" in markdown
    png = (built / "figures" / "detector-thread_cycle-confusion.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(png[16:20], "big")
    assert width == round(_figures.WIDTH * _figures.DPI)
    svg = (built / "figures" / "detector-thread_cycle-confusion.svg").read_text(encoding="utf-8")
    assert "<dc:date>" not in svg
    # Leaderboard as CSV too, one row per detector, corpus and label source.
    assert (built / "leaderboard.csv").read_text(encoding="utf-8").startswith("config,role,")


def test_report_shows_provenance(built: Path, eval_run: Path) -> None:
    manifest = json.loads((eval_run / "manifest.json").read_text(encoding="utf-8"))
    for name in ("index.html", "report.md"):
        text = (built / name).read_text(encoding="utf-8")
        assert manifest["corpora"][0]["sha256"] in text
        sha = manifest["code_version"]["git_sha"]
        if sha:
            assert sha in text
        # Complete parameters of each detector, as the manifest has them.
        assert (
            '"max_unique_ratio": '
            + json.dumps(manifest["detectors"]["repetition_guard"]["max_unique_ratio"])
            in text
        )
        # The corpus mixes label sources: said, not pooled silently.
        assert "mix label sources" in text


def test_leaderboard_matches_metrics_and_splits_sources(eval_run: Path) -> None:
    run = harness.load_run(eval_run)
    board = harness.leaderboard(run)
    verdicts = run.verdicts
    sources = sorted(verdicts["source"].unique())
    assert len(sources) > 1
    for detector in DETECTORS:
        rows = board[board["detector"] == detector]
        assert sorted(rows["source"]) == sources
        for row in rows.to_dict("records"):
            mine = verdicts[
                (verdicts["detector"] == detector) & (verdicts["source"] == row["source"])
            ]
            counts = mine["outcome"].value_counts()
            for outcome in ("tp", "fp", "tn", "fn"):
                assert row[outcome] == counts.get(outcome, 0)
            assert row["cases"] == len(mine)
            assert row["basis"].startswith("verdicts.jsonl")
        # The per-source rows add up to the pooled metrics.json figures.
        block = run.metrics["detectors"][detector]
        for outcome in ("tp", "fp", "tn", "fn"):
            assert rows[outcome].sum() == block[outcome]
        # And each per-source row equals metrics.json's breakdown by source (same cases).
        for row in rows.to_dict("records"):
            part = block["breakdown"]["source"][row["source"]]
            assert row["tp"] == part["tp"] and row["fn"] == part["fn"]


def test_single_source_rows_come_from_metrics_json(studies: tuple[Path, Path]) -> None:
    study = harness.load_study(studies[0])
    board = harness.leaderboard(study)
    assert set(board["config"]) == {"guard-f1: defaults", "guard-f1: tuned"}
    for row in board.to_dict("records"):
        run = study.tests[row["role"]]
        block = run.metrics["detectors"][row["detector"]]
        assert row["basis"] == "metrics.json"
        assert (
            row["f1"] == pytest.approx(block["f1"])
            if block["f1"] is not None
            else np.isnan(row["f1"])
        )
        low, high = block["f1_ci"]
        if low is not None:
            assert (row["f1_lo"], row["f1_hi"]) == pytest.approx((low, high))


def test_gallery_escapes_and_highlights(built: Path, eval_run: Path) -> None:
    html = (built / "index.html").read_text(encoding="utf-8")
    markdown = (built / "report.md").read_text(encoding="utf-8")
    assert "escape-fp" in html and "escape-fp" in markdown
    assert "<b>ship</b>" not in html and "<b>ship</b>" not in markdown
    assert "&lt;b&gt;ship&lt;/b&gt;" in html
    run = harness.load_run(eval_run)
    context = harness.case_context(run, "escape-fp", "repetition_guard")
    assert context.outcome == "fp" and context.marker is not None
    assert context.highlights, "the guard's phrase is highlighted"
    phrase = context.reason["text"]
    for start, end in context.highlights:
        assert (
            re.sub(r"\W+", " ", context.text[start:end]).strip().lower()
            == re.sub(r"\W+", " ", phrase).strip().lower()
        )
    fragment = context.html()
    assert fragment.count("<mark>") == len(context.highlights)
    assert '<span class="fire"' in fragment and "&amp;" in fragment
    assert "**" in context.markdown() and "&lt;b&gt;" in context.markdown()
    # The window is about CONTEXT_CHARS long and ends after the fire.
    assert len(context.text) <= harness.report.CONTEXT_CHARS
    fired = run.verdicts.set_index(["case", "detector"]).loc[("escape-fp", "repetition_guard")]
    assert fired["fired_at"]["message"] == 1


def test_gallery_of_a_miss_starts_at_the_onset(eval_run: Path) -> None:
    run = harness.load_run(eval_run)
    context = harness.case_context(run, "overthink", "repetition_guard")
    assert context.outcome == "fn" and context.marker is None
    assert "onset at message" in context.where()
    assert context.text and not context.highlights


def test_missing_or_changed_corpus_is_said(eval_run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(eval_run, copy)
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    manifest["corpora"][0]["path"] = str(tmp_path / "gone.jsonl")
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    context = harness.case_context(harness.load_run(copy), "escape-fp", "repetition_guard")
    assert context.text == "" and "is missing" in (context.note or "")
    # A corpus file that changed since the run is read, with a warning.
    changed = tmp_path / "changed.jsonl"
    shutil.copy(
        manifest_path := Path(
            json.loads((eval_run / "manifest.json").read_text(encoding="utf-8"))["corpora"][0][
                "path"
            ]
        ),
        changed,
    )
    with changed.open("a", encoding="utf-8") as handle:
        handle.write("\n")
    assert manifest_path.is_file()
    manifest["corpora"][0]["path"] = str(changed)
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    context = harness.case_context(harness.load_run(copy), "escape-fp", "repetition_guard")
    assert context.text and "changed since the run" in (context.note or "")


def test_report_is_deterministic(small_run: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    harness.build_report(small_run, first, gallery_size=2)
    # A rebuild removes figures it no longer makes (an earlier report's).
    (second / "figures").mkdir(parents=True)
    (second / "figures" / "stale.png").write_bytes(b"x")
    harness.build_report(small_run, second, gallery_size=2)
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert Path("figures/detector-repetition_guard-by-kind.svg") in files
    for name in files:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_study_loading_and_pareto(studies: tuple[Path, Path]) -> None:
    import optuna

    study = harness.load_study(studies[1])
    assert study.multi_objective and study.objectives == ["precision", "recall"]
    assert set(study.tests) >= {"defaults"} and any(k.startswith("pareto-") for k in study.tests)
    trials = study.complete_trials()
    mask = pareto_mask(trials[study.value_columns].to_numpy(dtype=float), study.directions)
    expected = {t.number for t in study.study.best_trials}
    assert set(trials["number"][mask]) == expected
    importances = harness.param_importances(study)
    assert set(importances["objective"]) <= {"precision", "recall"}
    if not importances.empty:
        sums = importances.groupby("objective")["importance"].sum()
        assert np.allclose(sums, 1.0)
    assert isinstance(study.study, optuna.Study)


def test_study_without_journal_still_reports(studies: tuple[Path, Path], tmp_path: Path) -> None:
    copy = tmp_path / "sweep"
    shutil.copytree(studies[0], copy)
    (copy / "journal.log").unlink()
    info = json.loads((copy / "study.json").read_text(encoding="utf-8"))
    info["storage"]["path"] = str(copy / "journal.log")
    (copy / "study.json").write_text(json.dumps(info), encoding="utf-8")
    study = harness.load_study(copy)
    assert study.study is None and "no journal" in (study.study_error or "")
    importances = harness.param_importances(study)
    assert importances.empty and "need the Optuna study" in importances.attrs["note"]
    # The trials come from trials.csv: history and slices still draw every trial.
    figure = harness.plot_history(study)
    points = figure.axes[0].collections[0].get_offsets()
    assert len(points) == len(study.complete_trials()) == 4
    assert {c.removeprefix("params_") for c in study.param_columns} == {
        f"repetition_guard.{k}" for k in SPACE
    }


def test_reason_phrases_and_markdown_escaping() -> None:
    assert reason_phrases({"phrase": "a b c", "text": "A, b c"}) == ["A, b c", "a b c"]
    assert reason_phrases({"check": "x", "pattern": ["go", " ", "go"]}) == ["go go"]
    assert reason_phrases({"reason": 'repeat: tool "search" called 3 times'}) == ["search"]
    assert reason_phrases("repeated_suffix") == [] and reason_phrases(None) == []
    assert _md("- [x] a_b <i>") == "\\- \\[x\\] a\\_b &lt;i&gt;"
    assert _md("12. item") == "12\\. item"


def test_bad_inputs_give_clear_errors(tmp_path: Path, eval_run: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(HarnessError, match="neither a `harness eval` folder"):
        harness.build_report(empty, tmp_path / "out")
    with pytest.raises(HarnessError, match="gallery_size"):
        harness.build_report(eval_run, tmp_path / "out", gallery_size=-1)
    with pytest.raises(HarnessError, match="no such run folder"):
        harness.load_run(tmp_path / "nowhere")
    broken = tmp_path / "broken"
    shutil.copytree(eval_run, broken)
    (broken / "metrics.json").write_text("{", encoding="utf-8")
    with pytest.raises(HarnessError, match=r"metrics\.json: not valid JSON"):
        harness.load_run(broken)
    with pytest.raises(HarnessError, match="give the detector"):
        harness.case_context(harness.load_run(eval_run), "escape-fp")


def test_cli(small_run: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "cli"
    done = runner.invoke(report_command, [str(small_run), "--out", str(out), "--gallery-size", "1"])
    assert done.exit_code == 0, done.output
    assert "wrote" in done.output and (out / "index.html").is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    done = runner.invoke(report_command, [str(empty), "--out", str(out)])
    assert done.exit_code == 1 and "neither a `harness eval` folder" in done.output
    done = runner.invoke(report_command, [str(tmp_path / "missing")])
    assert done.exit_code == 2 and "does not exist" in done.output


def test_a_sweeps_ensemble_is_reported_as_a_detector(small_run: Path, tmp_path: Path) -> None:
    # A multi-detector sweep writes ensemble.json and ensemble_verdicts.jsonl beside the
    # member evaluation; the report lists the ensemble next to its members.
    run = tmp_path / "tuned"
    shutil.copytree(small_run, run)
    metrics = json.loads((run / "metrics.json").read_text())
    block = dict(metrics["detectors"]["repetition_guard"], tp=1234)
    (run / "ensemble.json").write_text(json.dumps({"detectors": {"ensemble": block}}))
    verdicts = [json.loads(line) for line in (run / "verdicts.jsonl").read_text().splitlines()]
    (run / "ensemble_verdicts.jsonl").write_text(
        "".join(json.dumps({**v, "detector": "ensemble"}) + "\n" for v in verdicts)
    )
    loaded = harness.load_run(run)
    assert loaded.detectors == ["repetition_guard", "ensemble"]
    assert loaded.metrics["detectors"]["ensemble"]["tp"] == 1234
    assert (loaded.verdicts["detector"] == "ensemble").sum() == len(verdicts)
    table = harness.leaderboard([loaded])
    assert "ensemble" in set(table["detector"])
