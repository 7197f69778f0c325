"""Sweeps against a real PostgreSQL server: two workers on one study, heartbeats and retries.

The server is a throwaway one (``harness._pgserver.postgres_server``: initdb and
pg_ctl into a temporary directory, on a free local port; as root it runs as
the ``postgres`` user). Without the server binaries the tests are skipped with
that reason, except in CI (``CI=true``), where they fail: ``make test`` installs
PostgreSQL there.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import optuna
import pytest

from harness._pgserver import PostgresUnavailable, find_postgres_bin, postgres_server
from harness.corpus import write_corpus
from harness.sweep import run_sweep
from harness.synthetic import generate_corpus

pytestmark = pytest.mark.postgres

FAMILIES = ["runaway-stream", "chant", "text-run", "requested-repetition", "enumeration"]


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    try:
        find_postgres_bin()
    except PostgresUnavailable as exc:
        if _in_ci():
            pytest.fail(f"CI must run the PostgreSQL tests: {exc}")
        pytest.skip(str(exc))
    with postgres_server() as url:
        yield url


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pg") / "text.jsonl"
    write_corpus(path, generate_corpus(FAMILIES, n_per_family=10))
    return path


def _experiment(path: Path, corpus: Path, name: str, body: str) -> Path:
    path.write_text(
        f'name = "{name}"\ncorpora = ["{corpus}"]\ndetectors = ["repetition_guard"]\n'
        f'unlisted = "default"\nbootstrap = 0\n{body}',
        encoding="utf-8",
    )
    return path


GRID = """
[sampler]
kind = "grid"
[space.repetition_guard]
ngram = {low = 2, high = 5}
max_repeats = {low = 2, high = 5}
"""


def _combos(study: optuna.Study) -> list[tuple[int, int, float]]:
    out = []
    for trial in study.trials:
        params = json.loads(trial.user_attrs["params"])["repetition_guard"]
        out.append((params["ngram"], params["max_repeats"], trial.value))
    return out


def test_two_workers_share_one_postgres_study(tmp_path: Path, corpus: Path, pg_url: str) -> None:
    exp = _experiment(tmp_path / "grid.toml", corpus, "grid", GRID)
    shared = run_sweep(exp, out=tmp_path / "pg", storage=pg_url, workers=2, evaluate_test=False)
    sequential = run_sweep(exp, out=tmp_path / "seq", evaluate_test=False)
    assert shared.complete_trials == sequential.complete_trials == 17  # 16 points + baseline
    study = optuna.load_study(study_name="grid", storage=pg_url)
    assert len(study.trials) == 17
    assert {t.state for t in study.trials} == {optuna.trial.TrialState.COMPLETE}
    grid_points = [
        (t.params["repetition_guard.ngram"], t.params["repetition_guard.max_repeats"])
        for t in study.trials
        if not t.user_attrs.get("baseline")
    ]
    assert sorted(grid_points) == [(n, r) for n in range(2, 6) for r in range(2, 6)]
    assert len({t.user_attrs["worker"] for t in study.trials}) == 2
    from optuna.storages.journal import JournalFileBackend, JournalStorage

    local = optuna.load_study(
        study_name="grid",
        storage=JournalStorage(JournalFileBackend(str(tmp_path / "seq" / "journal.log"))),
    )
    assert sorted(_combos(study)) == sorted(_combos(local))
    assert shared.best is not None and sequential.best is not None
    assert shared.best["value"] == sequential.best["value"]
    assert shared.best["params"] == sequential.best["params"]
    manifest = json.loads((tmp_path / "pg" / "manifest.json").read_text())
    assert manifest["storage"]["kind"] == "rdb" and manifest["storage"]["dialect"] == "postgresql"
    # running the same command again adds nothing: the budget is met, trial 0 not re-queued
    again = run_sweep(exp, out=tmp_path / "pg", storage=pg_url, workers=2, evaluate_test=False)
    assert again.complete_trials == 17
    assert len(optuna.load_study(study_name="grid", storage=pg_url).trials) == 17


def test_a_dead_workers_trial_is_retried_after_its_heartbeat_stops(
    tmp_path: Path, corpus: Path, pg_url: str
) -> None:
    body = (
        '[sampler]\nkind = "tpe"\nn_startup_trials = 2\n'
        "[space.repetition_guard]\nngram = {low = 2, high = 6}\nmax_repeats = {low = 2, high = 8}\n"
    )
    exp = _experiment(tmp_path / "tpe.toml", corpus, "tpe", body)
    options = {
        "storage": pg_url,
        "heartbeat_interval": 1,
        "grace_period": 2,
        "evaluate_test": False,
    }
    run_sweep(exp, out=tmp_path / "run", trials=3, **options)
    # a worker starts a trial, beats once and dies
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # experimental heartbeats, used outside Study.optimize
        storage = optuna.storages.RDBStorage(pg_url, heartbeat_interval=1, grace_period=2)
        study = optuna.load_study(study_name="tpe", storage=storage)
        orphan = study.ask()
    orphan.suggest_int("repetition_guard.ngram", 2, 6)
    orphan.suggest_int("repetition_guard.max_repeats", 2, 8)
    storage.record_heartbeat(orphan._trial_id)
    started = time.monotonic()
    result = run_sweep(exp, out=tmp_path / "run", trials=6, **options)
    assert result.complete_trials == 6
    trials = optuna.load_study(study_name="tpe", storage=pg_url).trials
    dead = trials[orphan.number]
    assert dead.state == optuna.trial.TrialState.FAIL
    retried = [t for t in trials if t.system_attrs.get("failed_trial") == orphan.number]
    assert len(retried) == 1 and retried[0].state == optuna.trial.TrialState.COMPLETE
    assert retried[0].params == dead.params
    states = [t.state for t in trials]
    assert states.count(optuna.trial.TrialState.COMPLETE) == 6
    assert time.monotonic() - started >= 2  # it waited for the grace period
