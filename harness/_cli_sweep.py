"""``harness sweep`` (tune detectors with Optuna) and ``harness dashboard`` (look at a study)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from ._errors import HarnessError

__all__ = ["DashboardPlan", "dashboard_command", "dashboard_plan", "sweep_command"]

# Width of console output when it is not a terminal (a log file, CI).
_PLAIN_WIDTH = 160


def _console() -> Console:
    console = Console(highlight=False, soft_wrap=True)
    if not console.is_terminal:
        console.width = _PLAIN_WIDTH
    return console


@click.command("sweep")
@click.argument("experiment", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--trials",
    type=click.IntRange(min=1),
    help="Total finished trials the study should reach (default: the experiment's budget).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds after which no new trial starts.",
)
@click.option(
    "--workers", default=1, show_default=True, type=click.IntRange(min=1), help="Processes."
)
@click.option(
    "--storage",
    metavar="URL",
    help="Database URL shared by workers on several machines (postgresql://...); "
    "default: RUN_DIR/journal.log.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Run folder (default: runs/sweeps/<experiment name>).",
)
@click.option("--study-name", help="Study name in the storage (default: the experiment's name).")
@click.option(
    "--heartbeat",
    type=click.IntRange(min=1),
    help="Seconds between heartbeats of a running trial (database storage; default 10).",
)
@click.option(
    "--grace",
    type=click.IntRange(min=2),
    help="Seconds without a heartbeat before a trial is retried (database storage; default 60).",
)
@click.option("--no-test", is_flag=True, help="Skip the test-split scoring (tuning only).")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
def sweep_command(
    experiment: Path,
    trials: int | None,
    timeout: float | None,
    workers: int,
    storage: str | None,
    out: Path | None,
    study_name: str | None,
    heartbeat: int | None,
    grace: int | None,
    no_test: bool,
    no_progress: bool,
) -> None:
    """Tune detectors on the training split of an experiment's corpora; score on the test split.

    \b
    Running the same command again resumes the study (no finished trial is
    lost, even after SIGKILL); a larger --trials continues it. The run folder
    gets experiment.toml, manifest.json, study.json, journal.log, split.json,
    trials.csv, best.json, test/{defaults,tuned or pareto-N}/ and
    comparison.json (see docs/tuning.md).

    \b
    Examples:
      harness sweep experiments/guard.toml --trials 200 --workers 2
      harness sweep experiments/alm.toml --storage postgresql://optuna@db/optuna
    """
    from .sweep import run_sweep

    console = _console()
    try:
        result = run_sweep(
            experiment,
            trials=trials,
            timeout=timeout,
            workers=workers,
            storage=storage,
            out=out,
            study_name=study_name,
            progress=not no_progress,
            heartbeat_interval=heartbeat,
            grace_period=grace,
            evaluate_test=not no_test,
        )
    except HarnessError as exc:
        raise click.ClickException(str(exc)) from None
    for note in result.notes:
        console.print(f"note: {note}")
    console.print(
        f"study {result.study_name}: {result.complete_trials} finished trial(s) of a budget of "
        f"{result.budget} (stopped: {result.stopped})"
    )
    best = result.best or {}
    if best.get("kind") == "single":
        if best.get("best") is None:
            console.print(f"no best trial: {best.get('reason')}")
        else:
            console.print(
                f"best trial {best['trial']}: {best['metric_name']} {best['value']:.4f} on the "
                f"training split; parameters {json.dumps(best['params'])}"
            )
    elif best.get("kind") == "multi":
        console.print(f"Pareto front: {len(best['pareto'])} trial(s) (see best.json)")
    if result.comparison is not None:
        console.print(f"[bold]{result.comparison['verdict']}[/]")
        for entry in result.comparison.get("pareto", []):
            console.print(f"  {entry['summary']}")
    console.print(f"wrote {result.run_dir}")


@dataclass(frozen=True)
class DashboardPlan:
    """How ``harness dashboard`` opens a run's study: the storage and the equivalent command."""

    storage: str
    kind: str
    study_name: str | None
    argv: list[str]


def dashboard_plan(
    run_dir: Path, *, storage: str | None = None, host: str = "127.0.0.1", port: int = 8080
) -> DashboardPlan:
    """The storage of ``run_dir`` (its journal file, or the database URL) and the command line.

    Raises
    ------
    HarnessError
        ``run_dir`` is not a sweep run folder, or its study is in a database
        and no URL is known.
    """
    study_file = run_dir / "study.json"
    if not study_file.is_file():
        raise HarnessError(f"{run_dir}: not a sweep run folder (no study.json)")
    try:
        document: dict[str, Any] = json.loads(study_file.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise HarnessError(f"{study_file}: not valid JSON: {exc}") from None
    described = document.get("storage") or {}
    if storage:
        target, kind = storage, "rdb" if "://" in storage else "journal"
    elif described.get("kind") == "rdb":
        target, kind = str(described.get("url")), "rdb"
    else:
        journal = run_dir / "journal.log"
        if not journal.is_file():
            raise HarnessError(f"{run_dir}: no journal.log (the study is elsewhere: --storage URL)")
        target, kind = str(journal), "journal"
    argv = ["optuna-dashboard", "--host", host, "--port", str(port), target]
    return DashboardPlan(target, kind, document.get("study_name"), argv)


@click.command("dashboard")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--storage",
    metavar="URL",
    help="The database URL, for a study stored in a database (its password is not recorded).",
)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8080, show_default=True, type=click.IntRange(1, 65535))
@click.option("--print-command", is_flag=True, help="Print the optuna-dashboard command; exit.")
def dashboard_command(
    run_dir: Path, storage: str | None, host: str, port: int, print_command: bool
) -> None:
    """Open optuna-dashboard on the study of a sweep run folder.

    \b
    Example:
      harness dashboard runs/sweeps/guard
    """
    try:
        plan = dashboard_plan(run_dir, storage=storage, host=host, port=port)
    except HarnessError as exc:
        raise click.ClickException(str(exc)) from None
    if print_command:
        click.echo(" ".join(plan.argv))
        return
    try:
        from optuna_dashboard import run_server
    except ModuleNotFoundError:
        hint = "" if shutil.which("optuna-dashboard") is None else " (found on PATH: run it)"
        raise click.ClickException(
            "optuna-dashboard is not installed: pip install optuna-dashboard"
            f"{hint}\nthen: {' '.join(plan.argv)}"
        ) from None
    if plan.kind == "journal":
        from optuna.storages.journal import JournalFileBackend, JournalStorage

        target: Any = JournalStorage(JournalFileBackend(plan.storage))
    else:
        target = plan.storage
    click.echo(f"optuna-dashboard on http://{host}:{port}/ (study {plan.study_name}); Ctrl-C stops")
    run_server(target, host=host, port=port)
