"""Numbers of a study read from its trials: best-so-far, Pareto front, parameter importances."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ._load import StudyRun

__all__ = ["best_so_far", "param_importances", "param_name", "pareto_mask"]

# fANOVA's forest is seeded so that the same study always gives the same importances.
_IMPORTANCE_SEED = 0


def param_name(column: str) -> str:
    """``params_repetition_guard.ngram`` -> ``repetition_guard.ngram``."""
    return column[len("params_") :] if column.startswith("params_") else column


def best_so_far(values: pd.Series, direction: str) -> np.ndarray:
    """The best value seen up to each trial (running max or min)."""
    data = values.to_numpy(dtype=float)
    if direction == "minimize":
        return np.fmin.accumulate(data) if data.size else data
    return np.fmax.accumulate(data) if data.size else data


def pareto_mask(values: np.ndarray, directions: list[str]) -> np.ndarray:
    """Which rows of ``values`` (trials x objectives) no other row dominates.

    Examples
    --------
    >>> pareto_mask(np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [0.2, 0.2]]), ["maximize"] * 2)
    array([ True,  True,  True, False])
    """
    signs = np.array([1.0 if d == "maximize" else -1.0 for d in directions])
    scores = np.asarray(values, dtype=float) * signs
    keep = np.ones(len(scores), dtype=bool)
    for i, row in enumerate(scores):
        better_or_equal = np.all(scores >= row, axis=1)
        strictly = np.any(scores > row, axis=1)
        if np.any(better_or_equal & strictly):
            keep[i] = False
    return keep


def param_importances(run: StudyRun) -> tuple[pd.DataFrame, str | None]:
    """fANOVA importances (Optuna, seeded) of each parameter for each objective.

    Returns ``(frame, note)``: ``frame`` has ``objective``, ``param`` and
    ``importance`` (the importances of one objective sum to 1); ``note`` says
    why the frame is empty when it is (no journal, too few trials ...).
    """
    empty = pd.DataFrame(columns=["objective", "param", "importance"])
    study = run.study
    if study is None:
        return empty, f"parameter importances need the Optuna study: {run.study_error}"
    try:
        import optuna
        from optuna.importance import FanovaImportanceEvaluator, get_param_importances
    except ImportError as exc:  # pragma: no cover - optuna is present when a study loads
        return empty, f"optuna is not installed ({exc})"
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    if len(complete) < 2:
        return (
            empty,
            f"parameter importances need at least 2 complete trials; the study has {len(complete)}",
        )
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for index, objective in enumerate(run.objectives):
        target = None
        if run.multi_objective:

            def target(trial: Any, index: int = index) -> float:
                return float(trial.values[index])

        try:
            found = get_param_importances(
                study,
                evaluator=FanovaImportanceEvaluator(seed=_IMPORTANCE_SEED),
                target=target,
                normalize=True,
            )
        except (RuntimeError, ValueError) as exc:
            notes.append(f"{objective}: {exc}")
            continue
        for param, value in found.items():
            if not math.isnan(float(value)):
                rows.append({"objective": objective, "param": param, "importance": float(value)})
    frame = pd.DataFrame.from_records(rows, columns=["objective", "param", "importance"])
    note = "; ".join(notes) if notes else None
    if frame.empty and note is None:
        note = "no parameter varied across the complete trials"
    return frame, note
