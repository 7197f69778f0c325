"""Tuning detectors with Optuna: experiments, search spaces, sweeps and honest test scoring.

``harness sweep EXPERIMENT.toml`` (``harness/_cli_sweep.py``) runs :func:`run_sweep`.
See ``docs/tuning.md`` for the experiment file reference, the objectives, the
split rules, storage and resume, and the run folder layout.

Examples
--------
>>> from harness.sweep import load_experiment, run_sweep
>>> result = run_sweep("experiments/smoke.toml", trials=5)  # doctest: +SKIP
>>> result.comparison["verdict"]  # doctest: +SKIP
'tuned is not better than the defaults on the test split: F1 ...'
"""

from __future__ import annotations

from ._estimator import SCORE_PARAMS, DetectorClassifier, corpus_arrays
from ._experiment import Experiment, SweepError, experiment_hash, load_experiment, parse_experiment
from ._objective import DetectorRunner, Scores, TrialEvaluator
from ._runner import DEFAULT_RUNS_DIR, SweepResult, run_sweep
from ._space import SearchSpace, build_space
from ._split import Split, SweepCase, load_cases, make_split

__all__ = [
    "DEFAULT_RUNS_DIR",
    "SCORE_PARAMS",
    "DetectorClassifier",
    "DetectorRunner",
    "Experiment",
    "Scores",
    "SearchSpace",
    "Split",
    "SweepCase",
    "SweepError",
    "SweepResult",
    "TrialEvaluator",
    "build_space",
    "corpus_arrays",
    "experiment_hash",
    "load_cases",
    "load_experiment",
    "make_split",
    "parse_experiment",
    "run_sweep",
]
