"""Reports of saved runs: HTML and Markdown with figures, galleries, and notebook helpers.

``harness report RUN_DIR... --out DIR`` calls :func:`build_report`; the other
names load runs and studies, draw the report's figures one at a time, and show
a case's text around a fire, for the notebooks under ``notebooks/``. Nothing
here runs a detector: everything is read from the files runs wrote.
matplotlib and optuna are imported only when a figure or a study needs them.

Examples
--------
>>> import harness
>>> run = harness.load_run("runs/baseline")  # doctest: +SKIP
>>> board = harness.leaderboard([run])  # doctest: +SKIP
>>> harness.plot_precision_recall([run], "repetition_guard")  # doctest: +SKIP
>>> harness.build_report(["runs/baseline"], "reports/baseline")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ._build import DEFAULT_GALLERY_SIZE, build_report
from ._gallery import CONTEXT_CHARS, CaseContext, case_context, case_contexts, gallery_rows
from ._load import Config, EvalRun, StudyRun, configs_of, load_any, load_run, load_study
from ._tables import breakdown_frame
from ._tables import leaderboard as _leaderboard

__all__ = [
    "CONTEXT_CHARS",
    "DEFAULT_GALLERY_SIZE",
    "CaseContext",
    "Config",
    "EvalRun",
    "StudyRun",
    "breakdown_frame",
    "build_report",
    "case_context",
    "case_contexts",
    "configs_of",
    "gallery_rows",
    "leaderboard",
    "load_any",
    "load_run",
    "load_study",
    "param_importances",
    "plot_breakdown",
    "plot_confusion",
    "plot_history",
    "plot_importances",
    "plot_latency",
    "plot_pareto",
    "plot_precision_recall",
    "plot_slices",
    "plot_tokens",
    "save_figure",
]

Runs = EvalRun | StudyRun | Config | str | Path


def _configs(runs: Runs | Sequence[Runs]) -> list[Config]:
    items: Sequence[Runs] = (
        [runs] if isinstance(runs, EvalRun | StudyRun | Config | str | Path) else runs
    )
    loaded: list[Config] = []
    for item in items:
        if isinstance(item, Config):
            loaded.append(item)
        elif isinstance(item, EvalRun | StudyRun):
            loaded.extend(configs_of([item]))
        else:
            loaded.extend(configs_of([load_any(item)]))
    return loaded


def _study(study: StudyRun | str | Path) -> StudyRun:
    return study if isinstance(study, StudyRun) else load_study(study)


def leaderboard(runs: Runs | Sequence[Runs]) -> pd.DataFrame:
    """Every detector on every corpus and label source of some runs (see the report's table).

    ``runs``: run folders, :class:`EvalRun`/:class:`StudyRun` objects or :class:`Config`.
    """
    return _leaderboard(_configs(runs))


def _colors(configs: Sequence[Config]) -> dict[str, str]:
    from ._figures import config_colors

    return config_colors(configs)


def plot_precision_recall(runs: Runs | Sequence[Runs], detector: str) -> Any:
    """Precision, recall and F1 with intervals of ``detector`` in each run (a Figure)."""
    from ._figures import precision_recall_figure

    configs = _configs(runs)
    return precision_recall_figure(_leaderboard(configs), detector, _colors(configs))


def plot_confusion(runs: Runs | Sequence[Runs], detector: str) -> Any:
    """Confusion matrices of ``detector``, per run, corpus and label source (a Figure)."""
    from ._figures import confusion_figure

    return confusion_figure(_leaderboard(_configs(runs)), detector)


def plot_latency(runs: Runs | Sequence[Runs], detector: str) -> Any:
    """Latency of ``detector``'s true positives in messages and tokens (a Figure)."""
    from ._figures import latency_figure

    configs = _configs(runs)
    return latency_figure(configs, detector, _colors(configs))


def plot_tokens(runs: Runs | Sequence[Runs], detector: str) -> Any:
    """Model tokens saved (true positives) and lost (false positives) by ``detector``."""
    from ._figures import tokens_figure

    return tokens_figure(_leaderboard(_configs(runs)), detector)


def plot_breakdown(
    runs: Runs | Sequence[Runs], detector: str, dimension: str = "kind", max_slices: int = 30
) -> Any:
    """Recall and false-positive rate of ``detector`` by kind, tag, label source or corpus."""
    from ._figures import breakdown_figure

    configs = _configs(runs)
    return breakdown_figure(configs, detector, dimension, _colors(configs), max_slices)


def plot_history(study: StudyRun | str | Path) -> Any:
    """Optimisation history of a study (objective per trial, best so far)."""
    from ._figures import history_figure

    return history_figure(_study(study))


def plot_pareto(study: StudyRun | str | Path) -> Any:
    """Pareto front of a multi-objective study (first two objectives)."""
    from ._figures import pareto_figure

    return pareto_figure(_study(study))


def param_importances(study: StudyRun | str | Path) -> pd.DataFrame:
    """fANOVA importances (seeded) per objective and parameter; empty with ``.attrs['note']``."""
    from ._study import param_importances as compute

    frame, note = compute(_study(study))
    frame.attrs["note"] = note
    return frame


def plot_importances(study: StudyRun | str | Path) -> Any:
    """Parameter importances of a study, per objective (a Figure)."""
    from ._figures import importance_figure

    loaded = _study(study)
    return importance_figure(param_importances(loaded), loaded.label)


def plot_slices(study: StudyRun | str | Path, params: Sequence[str] | None = None) -> Any:
    """Objective against each parameter's value, trials coloured by number (a Figure)."""
    from ._figures import slice_figure

    return slice_figure(_study(study), params)


def save_figure(figure: Any, stem: str | Path) -> list[Path]:
    """Save a figure as ``stem.png`` and ``stem.svg`` the way the report does."""
    from ._figures import save_figure as save

    return save(figure, stem)
