"""Scoring one configuration on the training cases: the objective of every trial.

A trial replays the chosen detectors with the trial's parameters over the
training cases (held in memory for the whole study), combines them as they
are deployed (an ensemble fires on a case if any of its detectors fires; its
fire position is the earliest), and computes the objective from the confusion
counts. Where ``harness.fastpath`` offers a vectorised evaluator for a
detector it is used (it returns the same outcomes as the replay, by
contract); otherwise the case is replayed with :class:`harness.replay.Replayer`.
The outcomes of each detector are memoised by parameters, so a sweep that
fixes one detector of an ensemble replays it once.

Rates that are 0/0 (precision with no fire) count as 0 in an objective, the
way scikit-learn's scorers count them. The median latency in tokens is the
``latency_tokens`` median of ``metrics.json`` (on-time true positives with
an onset); with none it is the model-token length of the longest training
case, a finite "never in time" value the samplers can rank.

Examples
--------
>>> scores = Scores(tp=8, fp=2, tn=85, fn=5)
>>> round(scores.fbeta(1.0), 3), round(scores.precision, 3), round(scores.fbeta(0.5), 3)
(0.696, 0.8, 0.755)
>>> Scores(tp=0, fp=0, tn=3, fn=1).precision
0.0
"""

from __future__ import annotations

import importlib
import json
import os
import socket
import statistics
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..detectors import ParameterError, get_detector
from ..replay import Outcome, Replayer, TokenIndex, verdict_record
from ._experiment import (
    Experiment,
    FBetaObjective,
    MultiObjective,
    RecallAtPrecisionObjective,
)
from ._space import SearchSpace
from ._split import SweepCase

__all__ = [
    "DetectorRunner",
    "Scores",
    "TrialEvaluator",
    "TrialResult",
    "fast_evaluator",
    "make_objective",
]

# Parameter sets whose outcomes each detector keeps (a few: enough for fixed
# detectors of an ensemble and for the repeated points of a grid or a TPE run).
_MEMO = 8


def _safe_div(num: float, den: float) -> float:
    return num / den if den > 0 else 0.0


@dataclass(frozen=True)
class Scores:
    """Confusion counts of some cases, and the rates and latency objectives read."""

    tp: int
    fp: int
    tn: int
    fn: int
    errors: int = 0
    latency_tokens: float | None = None

    @property
    def precision(self) -> float:
        """TP / (TP + FP); 0 when nothing fired."""
        return _safe_div(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float:
        """TP / (TP + FN); 0 without positives."""
        return _safe_div(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float:
        """F1; 0 when undefined."""
        return self.fbeta(1.0)

    def fbeta(self, beta: float) -> float:
        """F-beta, ``(1 + b^2) TP / ((1 + b^2) TP + b^2 FN + FP)``; 0 when undefined."""
        b2 = beta * beta
        return _safe_div((1 + b2) * self.tp, (1 + b2) * self.tp + b2 * self.fn + self.fp)

    def as_attrs(self) -> dict[str, Any]:
        """The user attributes of a trial (JSON)."""
        return {
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "tp": self.tp,
            "fp": self.fp,
            "tn": self.tn,
            "fn": self.fn,
            "errors": self.errors,
            "latency_tokens_median": self.latency_tokens,
        }


def fast_evaluator(detector: str, cases: Sequence[Any], *, chunking: str, seed: int) -> Any:
    """``harness.fastpath.get_fast_evaluator(...)`` when that module exists, else None."""
    if os.environ.get("LOOPGUARD_SWEEP_NO_FASTPATH"):
        return None
    try:
        module = importlib.import_module("harness.fastpath")
    except ModuleNotFoundError as exc:
        if exc.name not in ("harness.fastpath", "harness"):
            raise
        return None
    factory = getattr(module, "get_fast_evaluator", None)
    if factory is None:
        return None
    return factory(detector, list(cases), chunking=chunking, seed=seed)


class DetectorRunner:
    """Outcomes of one detector on fixed cases for any parameters (fast path or replay).

    Parameters
    ----------
    detector : str
        Registry name.
    cases : sequence of Case
        The cases, in the order of the returned outcomes.
    chunking, seed
        The replay's chunking policy and seed.
    fast : bool
        Use ``harness.fastpath`` when it has an evaluator for this detector.
    """

    def __init__(
        self,
        detector: str,
        cases: Sequence[Any],
        *,
        chunking: str = "provider",
        seed: int = 0,
        fast: bool = True,
    ) -> None:
        self.detector = get_detector(detector)
        self.cases = list(cases)
        self.chunking = chunking
        self.seed = int(seed)
        self._fast = (
            fast_evaluator(detector, self.cases, chunking=chunking, seed=seed) if fast else None
        )
        self._memo: OrderedDict[str, list[Outcome]] = OrderedDict()

    @property
    def mode(self) -> str:
        """``fast`` or ``replay``."""
        return "replay" if self._fast is None else "fast"

    def outcomes(self, params: Mapping[str, Any]) -> list[Outcome]:
        """One :class:`~harness.replay.Outcome` per case, for these (complete or partial) params.

        Raises
        ------
        ParameterError
            The parameters are out of bounds, or a combination the detector refuses.
        """
        resolved = self.detector.resolve(params)
        key = json.dumps(resolved, sort_keys=True)
        cached = self._memo.get(key)
        if cached is not None:
            self._memo.move_to_end(key)
            return cached
        if self._fast is not None:
            found = list(self._fast.outcomes(resolved))
        else:
            replayer = Replayer(
                [self.detector.name],
                {self.detector.name: resolved},
                chunking=self.chunking,
                seed=self.seed,
            )
            found = [replayer.replay(c.id, c.messages)[0] for c in self.cases]
        if len(found) != len(self.cases):
            raise RuntimeError(
                f"{self.detector.name}: the evaluator returned {len(found)} outcomes for "
                f"{len(self.cases)} cases"
            )
        self._memo[key] = found
        if len(self._memo) > _MEMO:
            self._memo.popitem(last=False)
        return found


@dataclass(frozen=True)
class TrialResult:
    """The verdicts of one configuration on the training cases."""

    fired: Any  # bool array, one per case (the ensemble's verdict)
    void: Any  # bool array: the verdict is void (a detector raised and none fired)
    positions: list[tuple[int, int] | None]
    scores: Scores
    folds: list[Scores]
    all_void: list[str]


class TrialEvaluator:
    """Evaluates complete parameters of the sweep's detectors on the training cases.

    Parameters
    ----------
    detectors : sequence of str
        The detectors (one: itself; several: the "fires if any fires" ensemble).
    cases : sequence of SweepCase
        The training cases.
    folds : list of index arrays, optional
        Held-out positions of a k-fold cross-validation inside ``cases``.
    """

    def __init__(
        self,
        detectors: Sequence[str],
        cases: Sequence[SweepCase],
        *,
        chunking: str = "provider",
        seed: int = 0,
        folds: Sequence[Any] | None = None,
        fast: bool = True,
    ) -> None:
        self.detectors = list(detectors)
        self.cases = list(cases)
        raw_cases = [c.case for c in self.cases]
        self.runners = {
            name: DetectorRunner(name, raw_cases, chunking=chunking, seed=seed, fast=fast)
            for name in self.detectors
        }
        self.labels = np.array([c.looping for c in self.cases], dtype=bool)
        self.folds = [np.asarray(f, dtype=int) for f in folds or ()]
        self._tokens: dict[int, TokenIndex] = {}
        self._latency_cap: float | None = None

    @property
    def modes(self) -> dict[str, str]:
        """``{detector: "fast" or "replay"}``."""
        return {name: runner.mode for name, runner in self.runners.items()}

    def tokens(self, index: int) -> TokenIndex:
        """The token index of case ``index`` (built once)."""
        found = self._tokens.get(index)
        if found is None:
            found = self._tokens[index] = TokenIndex(self.cases[index].case.messages)
        return found

    @property
    def latency_cap(self) -> float:
        """The latency objective's value when no true positive has a latency."""
        if self._latency_cap is None:
            self._latency_cap = float(
                max((self.tokens(i).total for i in range(len(self.cases))), default=0)
            )
        return self._latency_cap

    def evaluate(self, params: Mapping[str, Mapping[str, Any]]) -> TrialResult:
        """Replay every detector with ``params[detector]``; score the ensemble.

        Raises
        ------
        ParameterError
            A detector refuses its parameters (for every case: the verdicts are all void).
        """
        n = len(self.cases)
        fired = np.zeros(n, dtype=bool)
        errored = np.zeros(n, dtype=bool)
        positions: list[tuple[int, int] | None] = [None] * n
        all_void: list[str] = []
        for name in self.detectors:
            outcomes = self.runners[name].outcomes(params.get(name, {}))
            if n and all(o.error is not None for o in outcomes):
                all_void.append(f"{name}: {outcomes[0].error}")
                continue
            for i, outcome in enumerate(outcomes):
                if outcome.error is not None:
                    errored[i] = True
                    continue
                if outcome.fired_at is None:
                    continue
                fired[i] = True
                message, char = outcome.fired_at
                offset = self.tokens(i).offset((message, char), end=True)
                current = positions[i]
                if current is None or (message, offset) < current:
                    positions[i] = (message, offset)
        if all_void:
            raise ParameterError(
                "every verdict is void (the detector raised on every case): " + "; ".join(all_void)
            )
        void = errored & ~fired
        latencies = np.full(n, np.nan)
        for i in np.flatnonzero(fired & self.labels).tolist():
            latencies[i] = self._latency(i, positions[i])
        scores = self._score(np.arange(n), fired, void, latencies)
        folds = [self._score(f, fired, void, latencies) for f in self.folds]
        return TrialResult(fired, void, positions, scores, folds, all_void)

    def _latency(self, index: int, position: tuple[int, int] | None) -> float:
        if position is None:
            return float("nan")
        case = self.cases[index].case
        tokens = self.tokens(index)
        # The offset is already resolved, so a char position reproduces it exactly.
        outcome = Outcome("ensemble", (position[0], position[1]))
        record = verdict_record(case, outcome, corpus="", tokens=tokens)
        if record["early"] is True or record["latency_tokens"] is None:
            return float("nan")
        return float(record["latency_tokens"])

    def _score(self, where: Any, fired: Any, void: Any, latencies: Any) -> Scores:
        where = np.asarray(where, dtype=int)
        ok = where[~void[where]]
        label = self.labels[ok]
        hit = fired[ok]
        values = latencies[ok][label & hit]
        values = values[~np.isnan(values)]
        return Scores(
            tp=int(np.sum(label & hit)),
            fp=int(np.sum(~label & hit)),
            tn=int(np.sum(~label & ~hit)),
            fn=int(np.sum(label & ~hit)),
            errors=int(np.sum(void[where])),
            latency_tokens=float(statistics.median(values.tolist())) if values.size else None,
        )


def _metric(scores: Scores, name: str, cap: float) -> float:
    if name == "latency_tokens":
        return cap if scores.latency_tokens is None else scores.latency_tokens
    value: float = getattr(scores, name)
    return value


def objective_values(
    experiment: Experiment, result: TrialResult, latency_cap: float
) -> tuple[list[float], float | None]:
    """The objective value(s) of a result, and the precision its constraint reads (or None).

    With cross-validation each value is the mean of the folds' values.
    """
    objective = experiment.objective
    parts = result.folds or [result.scores]

    def mean(fn: Callable[[Scores], float]) -> float:
        return float(np.mean([fn(s) for s in parts]))

    if isinstance(objective, FBetaObjective):
        return [mean(lambda s: s.fbeta(objective.beta))], None
    if isinstance(objective, RecallAtPrecisionObjective):
        return [mean(lambda s: s.recall)], mean(lambda s: s.precision)
    assert isinstance(objective, MultiObjective)
    values = [
        float(np.mean([_metric(s, m, latency_cap) for s in parts])) for m in objective.metrics
    ]
    return values, None


def worker_id() -> str:
    """``host:pid`` of this process (recorded on each trial)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def make_objective(
    experiment: Experiment, space: SearchSpace, evaluator: TrialEvaluator
) -> Callable[[Any], float | list[float]]:
    """The Optuna objective of a sweep.

    Each trial records user attributes: ``params`` (JSON of the complete
    parameters per detector), ``baseline``, ``precision``, ``recall``, ``f1``,
    ``tp``/``fp``/``tn``/``fn``, ``errors``, ``latency_tokens_median``,
    ``seconds``, ``worker`` and, with cross-validation, ``cv_values`` and
    ``cv_std``. ``recall_at_precision`` sets the constraint
    ``min_precision - precision <= 0`` with :meth:`optuna.trial.Trial.set_constraint`.
    A parameter combination a detector refuses prunes the trial (``invalid``
    says why).
    """
    import optuna

    def objective(trial: Any) -> float | list[float]:
        started = time.perf_counter()
        trial.set_user_attr("worker", worker_id())
        baseline = bool(trial.user_attrs.get("baseline"))
        params = space.params_for(trial, baseline=baseline)
        trial.set_user_attr("params", json.dumps(params, sort_keys=True))
        try:
            result = evaluator.evaluate(params)
        except ParameterError as exc:
            trial.set_user_attr("invalid", str(exc))
            raise optuna.TrialPruned(str(exc)) from None
        values, precision = objective_values(experiment, result, evaluator.latency_cap)
        for key, value in result.scores.as_attrs().items():
            trial.set_user_attr(key, value)
        if result.folds:
            per_fold = [
                objective_values(
                    experiment,
                    TrialResult(
                        result.fired, result.void, result.positions, s, [], result.all_void
                    ),
                    evaluator.latency_cap,
                )[0]
                for s in result.folds
            ]
            trial.set_user_attr("cv_values", per_fold)
            trial.set_user_attr(
                "cv_std", [float(np.std([v[k] for v in per_fold])) for k in range(len(values))]
            )
        if precision is not None:
            objective_config = experiment.objective
            assert isinstance(objective_config, RecallAtPrecisionObjective)
            trial.set_constraint("min_precision", objective_config.min_precision - precision)
        trial.set_user_attr("seconds", round(time.perf_counter() - started, 4))
        return values[0] if len(values) == 1 else values

    return objective
