"""Running a sweep: the run folder, the study, the workers, and the honest test-split scoring.

:func:`run_sweep` is what ``harness sweep`` calls. The run folder layout,
which the report generator reads, is documented in ``docs/tuning.md``::

    RUN_DIR/experiment.toml      the experiment as resolved (defaults filled in, budget)
    RUN_DIR/manifest.json        code version, packages, corpora sha256, split, sampler, ...
    RUN_DIR/study.json           study name, directions, objective, space searched, storage
    RUN_DIR/journal.log          the study (default journal storage)
    RUN_DIR/split.json           the split: definition, hash, case ids per side
    RUN_DIR/splits/test/*.jsonl  the test-split cases, one file per corpus
    RUN_DIR/trials.csv           one row per trial (study.trials_dataframe())
    RUN_DIR/best.json            the best trial (single objective) or the Pareto trials
    RUN_DIR/test/defaults/       harness eval output of the defaults on the test split
    RUN_DIR/test/tuned/          ... of the best trial (single objective)
    RUN_DIR/test/pareto-<N>/     ... of each Pareto trial (multi-objective)
    RUN_DIR/comparison.json      tuned vs defaults on the test split, with a plain verdict

Workers: ``workers = 1`` runs the study in this process; more start that
many processes (fork where available), each looping "take the budget lock,
count the trials, start one (``study.optimize(n_trials=1)``), release the
lock from inside the objective", so the budget is met exactly and grid points
are not claimed twice.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._atomic import atomic_write_json, atomic_write_jsonl, atomic_write_text
from .._manifest import code_version, now_iso, package_versions
from ..evaluate import CorpusInput, resolve_corpora
from ._compare import ScoredConfig, compare_multi, compare_single, score_on_test
from ._experiment import (
    Experiment,
    RecallAtPrecisionObjective,
    SweepError,
    experiment_hash,
    load_experiment,
    to_toml,
)
from ._objective import TrialEvaluator, make_objective
from ._space import SearchSpace, build_space
from ._split import LoadedData, Split, SweepCase, cv_folds, load_cases, make_split
from ._storage import (
    BudgetLock,
    RunDirLock,
    StorageSpec,
    recover_orphans,
    remove_stale_journal_lock,
    storage_spec,
)

__all__ = ["DEFAULT_RUNS_DIR", "DEFAULT_TRIALS", "SweepResult", "run_sweep"]

#: Where run folders go when ``--out`` is not given: ``runs/sweeps/<experiment name>``.
DEFAULT_RUNS_DIR = Path("runs") / "sweeps"
#: The budget when neither the experiment nor ``--trials`` sets one (grids: the grid + 1).
DEFAULT_TRIALS = 50
# Seconds a worker sleeps while other workers finish the last trials.
_POLL_S = 0.25
# Extra packages recorded in the manifest.
_PACKAGES = ("optuna", "sqlalchemy", "psycopg2-binary", "pydantic", "optuna-dashboard")


@dataclass
class Prepared:
    """Everything a worker needs (built once; inherited by forked workers)."""

    experiment: Experiment
    run_dir: Path
    study_name: str
    storage: StorageSpec
    data: LoadedData
    split: Split
    space: SearchSpace
    folds: list[Any]
    budget: int
    deadline: float | None

    @property
    def train(self) -> list[SweepCase]:
        """The training cases, in case order."""
        return [self.data.cases[i] for i in self.split.train]


@dataclass
class SweepResult:
    """What :func:`run_sweep` returns."""

    run_dir: Path
    study_name: str
    complete_trials: int
    budget: int
    best: dict[str, Any] | None
    comparison: dict[str, Any] | None
    stopped: str
    recovered: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# -- workers ------------------------------------------------------------------------------


def make_sampler(experiment: Experiment, space: SearchSpace, index: int = 0) -> Any:
    """The Optuna sampler of ``experiment`` for worker ``index`` (seed + index).

    The grid sampler keeps the seed: it numbers the grid points in a seeded
    shuffle, and every worker must number them alike.
    """
    import optuna

    config = experiment.sampler
    base = experiment.seed if config.seed is None else config.seed
    seed = base + index
    if config.kind == "grid":
        return optuna.samplers.GridSampler(space.grid_search_space(), seed=base)
    if config.kind == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed, population_size=config.population_size)
    if config.kind == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.samplers.TPESampler(
            seed=seed,
            n_startup_trials=config.n_startup_trials,
            multivariate=config.multivariate,
            group=config.multivariate,
            constant_liar=True,
        )


def _budget_state(study: Any, prepared: Prepared) -> str:
    """``run`` (start a trial), ``wait`` (others are finishing) or ``done``."""
    from optuna.trial import TrialState

    trials = study.get_trials(deepcopy=False)
    done = sum(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in trials)
    running = sum(t.state == TrialState.RUNNING for t in trials)
    waiting = sum(t.state == TrialState.WAITING for t in trials)
    if done >= prepared.budget:
        return "done"
    if done + running >= prepared.budget:
        return "wait" if running else "done"
    if prepared.space.grid and not waiting:
        claimed = {
            t.system_attrs["grid_id"]
            for t in trials
            if "grid_id" in t.system_attrs and t.state != TrialState.FAIL
        }
        if len(claimed) >= prepared.space.grid_size():
            return "wait" if running else "done"
    return "run"


def run_worker(
    prepared: Prepared,
    *,
    index: int = 0,
    parent: int | None = None,
    on_trial: Callable[[Any], None] | None = None,
) -> int:
    """Run trials until the budget, the deadline or the grid's end; return how many ran here."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    experiment = prepared.experiment
    storage = prepared.storage.open()
    sampler = make_sampler(experiment, prepared.space, index)
    study = optuna.load_study(study_name=prepared.study_name, storage=storage, sampler=sampler)
    evaluator = TrialEvaluator(
        experiment.detectors,
        prepared.train,
        chunking=experiment.chunking,
        seed=experiment.seed,
        folds=prepared.folds,
    )
    objective = make_objective(experiment, prepared.space, evaluator)
    lock = BudgetLock(prepared.storage, prepared.study_name, prepared.run_dir)

    def gated(trial: Any) -> Any:
        # The trial is RUNNING now, so the others count it: let them go on.
        lock.release()
        return objective(trial)

    ran = 0
    try:
        while True:
            if prepared.deadline is not None and time.time() >= prepared.deadline:
                break
            if parent is not None and os.getppid() != parent:
                break
            lock.acquire()
            try:
                state = _budget_state(study, prepared)
                if state == "done":
                    break
                if state == "wait":
                    if prepared.storage.kind == "rdb":
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            optuna.storages.fail_stale_trials(study)
                    lock.release()
                    time.sleep(_POLL_S)
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                    study.optimize(gated, n_trials=1, catch=())
                ran += 1
            finally:
                lock.release()
            if on_trial is not None:
                on_trial(study)
    finally:
        lock.close()
    return ran


def _die_with_parent() -> None:
    """Linux: ask the kernel to kill this worker when the sweep process dies (SIGKILL too)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return


_PREPARED: dict[str, Prepared] = {}


def _worker_entry(key: str, index: int, parent: int, payload: Prepared | None) -> None:
    _die_with_parent()
    if os.getppid() != parent:
        return
    prepared = _PREPARED.get(key) or payload
    assert prepared is not None
    run_worker(prepared, index=index, parent=parent)


# -- progress -----------------------------------------------------------------------------


class _Progress:
    """A rich progress bar: trials done / budget, best value so far, trials per second."""

    def __init__(self, enabled: bool, total: int, already: int) -> None:
        self.enabled = enabled
        self.total = total
        self.already = already
        self.start = time.monotonic()
        self._bar: Any = None
        self._task: Any = None

    def open(self) -> None:
        if not self.enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("{task.fields[best]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(file=sys.stderr),
        )
        self._bar.start()
        self._task = self._bar.add_task(
            "trials", total=self.total, completed=self.already, rate="", best=""
        )

    def update(self, done: int, best: str) -> None:
        if self._bar is None:
            return
        elapsed = max(time.monotonic() - self.start, 1e-9)
        rate = (done - self.already) / elapsed
        self._bar.update(self._task, completed=done, rate=f"{rate:.2f} trials/s", best=best)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _status(study: Any, experiment: Experiment) -> tuple[int, str]:
    from optuna.trial import TrialState

    trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED))
    done = len(trials)
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    if experiment.is_multi:
        return done, f"Pareto front: {len(_pareto(complete, experiment))} trial(s)"
    best = _best_of(complete)
    if best is None:
        return done, "best: -"
    name = experiment.metric_names[0]
    return done, f"best {name} {best.value:.4f} (trial {best.number})"


# -- the study ----------------------------------------------------------------------------


def _feasible(trial: Any) -> bool:
    return all(v <= 0.0 for v in trial.constraints.values())


def _best_of(trials: Sequence[Any]) -> Any:
    """The best feasible complete trial (highest value; ties: the lowest number)."""
    feasible = [t for t in trials if t.values is not None and _feasible(t)]
    if not feasible:
        return None
    return min(feasible, key=lambda t: (-t.value, t.number))


def _pareto(trials: Sequence[Any], experiment: Experiment) -> list[Any]:
    signs = [1.0 if d == "maximize" else -1.0 for d in experiment.directions]
    points = [(t, [s * v for s, v in zip(signs, t.values, strict=True)]) for t in trials]
    front = []
    for trial, p in points:
        dominated = any(
            all(a >= b for a, b in zip(q, p, strict=True))
            and any(a > b for a, b in zip(q, p, strict=True))
            for _, q in points
        )
        if not dominated:
            front.append(trial)
    return sorted(front, key=lambda t: t.number)


def _open_study(prepared: Prepared, *, digest: str) -> Any:
    import optuna

    experiment = prepared.experiment
    storage = prepared.storage.open()
    study = optuna.create_study(
        study_name=prepared.study_name,
        storage=storage,
        directions=experiment.directions,
        load_if_exists=True,
    )
    stored = study.user_attrs.get("experiment_sha256")
    if stored is None:
        study.set_user_attr("experiment_sha256", digest)
        study.set_user_attr("experiment_name", experiment.name)
        study.set_user_attr("split_sha256", prepared.split.digest(prepared.data.cases))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study.set_metric_names(experiment.metric_names)
    elif stored != digest:
        where = prepared.storage.describe().get("url") or prepared.storage.path
        raise SweepError(
            f"the study {prepared.study_name!r} in {where} was made by a different experiment "
            f"(sha256 {stored[:12]}, this one {digest[:12]}); use another --study-name or --out"
        )
    elif study.user_attrs.get("split_sha256") != prepared.split.digest(prepared.data.cases):
        raise SweepError(
            f"the study {prepared.study_name!r} was made on a different training/test split "
            "(the corpora changed?); use another --study-name or --out"
        )
    if [d.name.lower() for d in study.directions] != experiment.directions:
        raise SweepError(f"the study {prepared.study_name!r} has other directions")
    return study


def _enqueue_baseline(study: Any, prepared: Prepared) -> bool:
    lock = BudgetLock(prepared.storage, prepared.study_name, prepared.run_dir)
    try:
        with lock.held():
            if any(t.user_attrs.get("baseline") for t in study.get_trials(deepcopy=False)):
                return False
            study.enqueue_trial(prepared.space.enqueue_params(), user_attrs={"baseline": True})
            return True
    finally:
        lock.close()


# -- the run ------------------------------------------------------------------------------


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "corpus"


def _write_split_files(prepared: Prepared) -> list[CorpusInput]:
    cases = prepared.data.cases
    atomic_write_json(prepared.run_dir / "split.json", prepared.split.document(cases))
    inputs: list[CorpusInput] = []
    folder = prepared.run_dir / "splits" / "test"
    for number, corpus in enumerate(prepared.data.inputs):
        chosen = [cases[i].case.raw for i in prepared.split.test if cases[i].corpus == corpus.name]
        if not chosen:
            continue
        path = folder / f"{number}-{_slug(corpus.name)}.jsonl"
        atomic_write_jsonl(path, chosen)
        inputs.append(CorpusInput(corpus.name, path))
    return inputs


def _resolve_experiment(
    experiment: str | os.PathLike[str] | Experiment,
) -> tuple[Experiment, Path | None]:
    if isinstance(experiment, Experiment):
        return experiment, None
    path = Path(experiment)
    return load_experiment(path), path


def _corpus_inputs(experiment: Experiment, source: Path | None) -> list[CorpusInput]:
    items: list[str] = []
    for item in experiment.corpora:
        candidate = Path(item)
        if (
            source is not None
            and not candidate.is_absolute()
            and not candidate.exists()
            and (source.parent / candidate).exists()
        ):
            items.append(str(source.parent / candidate))
        else:
            items.append(item)
    return resolve_corpora(items)


def _budget_for(experiment: Experiment, space: SearchSpace, trials: int | None) -> int:
    if trials is not None:
        return trials
    if experiment.budget.trials is not None:
        return experiment.budget.trials
    if space.grid:
        return space.grid_size() + 1
    return DEFAULT_TRIALS


def _check_run_dir(run_dir: Path, experiment: Experiment) -> None:
    copy = run_dir / "experiment.toml"
    if not copy.exists():
        return
    from ._experiment import parse_experiment

    try:
        previous = parse_experiment(copy.read_text(encoding="utf-8"), source=str(copy))
    except SweepError:
        return
    if experiment_hash(previous) != experiment_hash(experiment):
        raise SweepError(
            f"{run_dir} holds a sweep of a different experiment (see its experiment.toml); "
            "use another --out, or remove that folder to start over"
        )


def _manifest(
    prepared: Prepared,
    *,
    started: str,
    finished: str | None,
    workers: int,
    status: str,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    from importlib import metadata

    packages = package_versions()
    for name in _PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            packages[name] = None
    experiment = prepared.experiment
    return {
        "format": 1,
        "kind": "sweep",
        "status": status,
        "code_version": code_version(),
        "packages": packages,
        "argv": list(sys.argv),
        "experiment": {"name": experiment.name, "sha256": experiment_hash(experiment)},
        "corpora": prepared.data.corpora,
        "label_sources": prepared.data.sources,
        "mixed_label_sources": prepared.data.mixed_sources,
        "data_notes": prepared.data.notes,
        "split": {
            **prepared.split.definition(),
            "sha256": prepared.split.digest(prepared.data.cases),
            "train_cases": len(prepared.split.train),
            "test_cases": len(prepared.split.test),
        },
        "cv_folds": len(prepared.folds),
        "detectors": list(experiment.detectors),
        "chunking": experiment.chunking,
        "seed": experiment.seed,
        "sampler": experiment.sampler.model_dump(mode="json"),
        "objective": experiment.objective.model_dump(mode="json"),
        "budget": {"trials": prepared.budget, "timeout": experiment.budget.timeout},
        "storage": prepared.storage.describe(),
        "study_name": prepared.study_name,
        "workers": workers,
        **(extra or {}),
        "started": started,
        "finished": finished,
    }


def _study_document(prepared: Prepared, study: Any) -> dict[str, Any]:
    experiment = prepared.experiment
    return {
        "study_name": prepared.study_name,
        "directions": experiment.directions,
        "metric_names": experiment.metric_names,
        "objective": experiment.objective.model_dump(mode="json"),
        "constraints": (
            [f"precision >= {experiment.objective.min_precision:g}"]
            if isinstance(experiment.objective, RecallAtPrecisionObjective)
            else []
        ),
        "sampler": experiment.sampler.model_dump(mode="json"),
        "space": prepared.space.describe(),
        "storage": prepared.storage.describe(),
        "storage_kind": prepared.storage.kind,
        "experiment_sha256": study.user_attrs.get("experiment_sha256"),
        "cross_validation_folds": len(prepared.folds),
    }


def _run_workers(prepared: Prepared, workers: int, progress: _Progress) -> str:
    import optuna

    monitor = optuna.load_study(study_name=prepared.study_name, storage=prepared.storage.open())

    def refresh(study: Any) -> None:
        done, best = _status(study, prepared.experiment)
        progress.update(done, best)

    if workers == 1:
        progress.open()
        try:
            run_worker(prepared, index=0, on_trial=refresh)
        finally:
            progress.close()
        return _stop_reason(monitor, prepared)
    methods = multiprocessing.get_all_start_methods()
    context: Any = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    key = str(prepared.run_dir.resolve())
    _PREPARED[key] = prepared
    payload = None if context.get_start_method() == "fork" else prepared
    processes = [
        context.Process(
            target=_worker_entry,
            args=(key, index, os.getpid(), payload),
            name=f"sweep-worker-{index}",
        )
        for index in range(workers)
    ]
    for process in processes:
        process.start()
    progress.open()
    failed: list[str] = []
    try:
        while any(p.is_alive() for p in processes):
            refresh(monitor)
            for process in processes:
                if process.exitcode not in (None, 0):
                    failed.append(f"{process.name} (exit code {process.exitcode})")
            if failed:
                break
            time.sleep(_POLL_S)
        refresh(monitor)
    except BaseException:
        for process in processes:
            if process.is_alive():
                process.terminate()
        raise
    finally:
        progress.close()
        _PREPARED.pop(key, None)
    for process in processes:
        if failed and process.is_alive():
            process.terminate()
        process.join()
        if process.exitcode not in (0, None) and f"{process.name} " not in " ".join(failed):
            failed.append(f"{process.name} (exit code {process.exitcode})")
    if failed:
        raise SweepError(
            f"worker(s) failed: {', '.join(failed)}; finished trials are kept: run the same "
            "command again to resume"
        )
    return _stop_reason(monitor, prepared)


def _stop_reason(study: Any, prepared: Prepared) -> str:
    from optuna.trial import TrialState

    done = len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED)))
    if done >= prepared.budget:
        return "budget"
    if prepared.deadline is not None and time.time() >= prepared.deadline:
        return "timeout"
    if prepared.space.grid:
        return "grid exhausted"
    return "stopped"


def run_sweep(
    experiment: str | os.PathLike[str] | Experiment,
    *,
    trials: int | None = None,
    timeout: float | None = None,
    workers: int = 1,
    storage: str | None = None,
    out: str | os.PathLike[str] | None = None,
    study_name: str | None = None,
    progress: bool = False,
    heartbeat_interval: int | None = None,
    grace_period: int | None = None,
    evaluate_test: bool = True,
) -> SweepResult:
    """Run (or resume) the sweep of ``experiment``; score the result on the test split.

    Parameters
    ----------
    experiment : path or Experiment
        An experiment file (``experiments/*.toml``) or a parsed one.
    trials : int, optional
        The study's total budget of finished trials (default: the experiment's
        ``budget.trials``; for a grid, the grid size + 1; else 50). Running
        again with a larger budget continues the study.
    timeout : float, optional
        Seconds after which no new trial starts (default: ``budget.timeout``).
    workers : int
        Worker processes (1: this process).
    storage : str, optional
        A database URL (``postgresql://...``) shared by workers on several
        machines; default: ``RUN_DIR/journal.log``.
    out : path, optional
        The run folder (default ``runs/sweeps/<experiment name>``).
    study_name : str, optional
        Default: the experiment's name.
    progress : bool
        Show a progress bar on stderr.
    evaluate_test : bool
        Score the best (or Pareto) trials and the defaults on the test split.

    Raises
    ------
    SweepError
        A bad experiment, a run folder or study made by another experiment,
        another sweep on the same folder, or a failed worker.
    """
    if not isinstance(workers, int) or workers < 1:
        raise SweepError(f"workers must be an integer >= 1; got {workers!r}")
    if trials is not None and (not isinstance(trials, int) or trials < 1):
        raise SweepError(f"trials must be an integer >= 1; got {trials!r}")
    if timeout is not None and timeout <= 0:
        raise SweepError(f"timeout must be > 0 seconds; got {timeout!r}")
    spec_experiment, source = _resolve_experiment(experiment)
    run_dir = Path(out) if out is not None else DEFAULT_RUNS_DIR / spec_experiment.name
    run_dir.mkdir(parents=True, exist_ok=True)
    with RunDirLock(run_dir):
        return _run_locked(
            spec_experiment,
            source,
            run_dir,
            trials=trials,
            timeout=timeout,
            workers=workers,
            storage=storage,
            study_name=study_name,
            progress=progress,
            heartbeat_interval=heartbeat_interval,
            grace_period=grace_period,
            evaluate_test=evaluate_test,
        )


def _run_locked(
    experiment: Experiment,
    source: Path | None,
    run_dir: Path,
    *,
    trials: int | None,
    timeout: float | None,
    workers: int,
    storage: str | None,
    study_name: str | None,
    progress: bool,
    heartbeat_interval: int | None,
    grace_period: int | None,
    evaluate_test: bool,
) -> SweepResult:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    started = now_iso()
    space = build_space(experiment)
    budget = _budget_for(experiment, space, trials)
    timeout = timeout if timeout is not None else experiment.budget.timeout
    resolved = experiment.model_copy(
        update={
            "budget": experiment.budget.model_copy(update={"trials": budget, "timeout": timeout})
        }
    )
    _check_run_dir(run_dir, resolved)
    inputs = _corpus_inputs(resolved, source)
    data = load_cases(
        inputs,
        sources=resolved.sources,
        kinds=resolved.kinds,
        allow_mixed_sources=resolved.allow_mixed_sources,
        subsample=resolved.subsample,
        seed=resolved.seed,
    )
    split_seed = resolved.split.seed if resolved.split.seed is not None else resolved.seed
    split = make_split(
        data.cases,
        method=resolved.split.method,
        test_size=resolved.split.test_size,
        seed=split_seed,
    )
    train = [data.cases[i] for i in split.train]
    folds = cv_folds(train, resolved.cv.folds, split_seed) if resolved.cv.folds >= 2 else []
    kwargs: dict[str, int] = {}
    if heartbeat_interval is not None:
        kwargs["heartbeat_interval"] = heartbeat_interval
    if grace_period is not None:
        kwargs["grace_period"] = grace_period
    spec = storage_spec(run_dir, storage, **kwargs)
    if spec.dialect == "sqlite" and workers > 1:
        raise SweepError(
            "SQLite storage is not safe with several workers (Optuna can lose trials): use the "
            "default journal storage, or PostgreSQL"
        )
    deadline = None if timeout is None else time.time() + float(timeout)
    prepared = Prepared(
        resolved,
        run_dir,
        study_name or resolved.name,
        spec,
        data,
        split,
        space,
        folds,
        budget,
        deadline,
    )
    header = (
        f"Experiment {resolved.name}, as resolved by harness sweep (defaults filled in).\n"
        f"Source: {source if source is not None else '(in memory)'}"
    )
    atomic_write_text(
        run_dir / "experiment.toml",
        to_toml(resolved.model_dump(mode="json", exclude_none=True), header=header),
    )
    test_inputs = _write_split_files(prepared)
    notes = list(data.notes) + list(space.notes)
    if spec.kind == "journal" and remove_stale_journal_lock(spec):
        notes.append("removed a stale journal lock left by a killed process")
    study = _open_study(prepared, digest=experiment_hash(resolved))
    recovered = recover_orphans(study) if spec.kind == "journal" else []
    if recovered:
        notes.append(
            f"trial(s) {', '.join(map(str, recovered))} were running when a previous sweep "
            "stopped: marked failed and queued again"
        )
    _enqueue_baseline(study, prepared)
    atomic_write_json(run_dir / "study.json", _study_document(prepared, study))
    atomic_write_json(
        run_dir / "manifest.json",
        _manifest(prepared, started=started, finished=None, workers=workers, status="running"),
    )
    from optuna.trial import TrialState

    already = len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED)))
    bar = _Progress(progress, budget, already)
    stopped = _run_workers(prepared, workers, bar)
    return _finalize(
        prepared,
        started=started,
        workers=workers,
        stopped=stopped,
        recovered=recovered,
        notes=notes,
        test_inputs=test_inputs,
        evaluate_test=evaluate_test,
    )


def _trial_summary(trial: Any) -> dict[str, Any]:
    attrs = trial.user_attrs
    return {
        "trial": trial.number,
        "values": list(trial.values or []),
        "baseline": bool(attrs.get("baseline")),
        "params": json.loads(attrs["params"]),
        "train": {
            k: attrs.get(k)
            for k in (
                "precision",
                "recall",
                "f1",
                "tp",
                "fp",
                "tn",
                "fn",
                "errors",
                "latency_tokens_median",
            )
        },
        "constraints": dict(trial.constraints),
        "cv_values": attrs.get("cv_values"),
    }


def _finalize(
    prepared: Prepared,
    *,
    started: str,
    workers: int,
    stopped: str,
    recovered: list[int],
    notes: list[str],
    test_inputs: list[CorpusInput],
    evaluate_test: bool,
) -> SweepResult:
    import optuna
    from optuna.trial import TrialState

    experiment = prepared.experiment
    run_dir = prepared.run_dir
    study = optuna.load_study(study_name=prepared.study_name, storage=prepared.storage.open())
    trials = study.get_trials(deepcopy=False)
    attrs = ["number", "state", "values" if experiment.is_multi else "value"]
    attrs += ["datetime_start", "datetime_complete", "duration", "params", "user_attrs"]
    frame = study.trials_dataframe(attrs=tuple(attrs))
    atomic_write_text(run_dir / "trials.csv", frame.to_csv(index=False))
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    baseline_trials = [t for t in complete if t.user_attrs.get("baseline")]
    best_doc: dict[str, Any]
    chosen: list[dict[str, Any]] = []
    if experiment.is_multi:
        front = _pareto(complete, experiment)
        best_doc = {
            "kind": "multi",
            "metric_names": experiment.metric_names,
            "directions": experiment.directions,
            "pareto": [_trial_summary(t) for t in front],
        }
        chosen = best_doc["pareto"][: experiment.max_pareto_test]
    else:
        best = _best_of(complete)
        best_doc = {
            "kind": "single",
            "metric_name": experiment.metric_names[0],
            "direction": "maximize",
            "best": None if best is None else _trial_summary(best),
            "baseline": _trial_summary(baseline_trials[0]) if baseline_trials else None,
        }
        if best is not None:
            best_doc.update(
                trial=best.number,
                value=best.value,
                params=json.loads(best.user_attrs["params"]),
            )
            chosen = [best_doc["best"]]
        else:
            best_doc["reason"] = (
                "no trial met the constraint on the training split"
                if complete
                else f"no trial finished (stopped: {stopped})"
            )
    best_doc["complete_trials"] = len(complete)
    best_doc["split"] = "train"
    atomic_write_json(run_dir / "best.json", best_doc)
    comparison: dict[str, Any] | None = None
    if evaluate_test:
        comparison = _score_test(prepared, best_doc, chosen, test_inputs)
        if prepared.data.mixed_sources:
            comparison["label_sources"] = prepared.data.sources
            comparison["verdict"] += f" (label sources mixed: {', '.join(prepared.data.sources)})"
        atomic_write_json(run_dir / "comparison.json", comparison)
    done = sum(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in trials)
    extra = {
        "stopped": stopped,
        "trials": {
            state.name.lower(): sum(t.state == state for t in trials) for state in TrialState
        },
        "recovered_trials": recovered,
        "evaluators": TrialEvaluator(
            experiment.detectors,
            prepared.train[:1],
            chunking=experiment.chunking,
            seed=experiment.seed,
        ).modes
        if prepared.train
        else {},
        "notes": notes,
    }
    atomic_write_json(
        run_dir / "manifest.json",
        _manifest(
            prepared,
            started=started,
            finished=now_iso(),
            workers=workers,
            status="complete",
            extra=extra,
        ),
    )
    return SweepResult(
        run_dir,
        prepared.study_name,
        done,
        prepared.budget,
        best_doc,
        comparison,
        stopped,
        recovered,
        notes,
    )


def _score_test(
    prepared: Prepared,
    best_doc: dict[str, Any],
    chosen: list[dict[str, Any]],
    test_inputs: list[CorpusInput],
) -> dict[str, Any]:
    experiment = prepared.experiment
    cases = {c.key: c for c in prepared.data.cases}
    test_dir = prepared.run_dir / "test"

    def score(label: str, params: dict[str, Any], folder: str) -> ScoredConfig:
        return score_on_test(
            label,
            params,
            experiment=experiment,
            inputs=test_inputs,
            cases=cases,
            out=test_dir / folder,
        )

    defaults = score("defaults", prepared.space.baseline, "defaults")
    if experiment.is_multi:
        scored = [
            (t, score(f"pareto-{t['trial']}", t["params"], f"pareto-{t['trial']}")) for t in chosen
        ]
        truncated = len(best_doc["pareto"]) - len(chosen)
        return compare_multi(experiment, scored, defaults, truncated=truncated)
    best = best_doc.get("best")
    if best is None:
        return compare_single(experiment, None, defaults, best=best_doc, same_as_defaults=False)
    tuned = score("tuned", best["params"], "tuned")
    same = best["params"] == prepared.space.baseline
    return compare_single(experiment, tuned, defaults, best=best, same_as_defaults=same)
