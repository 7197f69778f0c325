"""Scoring configurations on the test split and comparing them with the defaults.

Each configuration (the production defaults, the tuned best trial, or each
Pareto trial) is evaluated on the test split with :func:`harness.evaluate.run_evaluation`,
so its folder holds exactly what ``harness eval`` writes. With several
detectors the ensemble ("fires if any fires"; its fire is the earliest of its
members') is scored from those verdicts and written beside them as
``ensemble.json`` (the shape of ``metrics.json``) and ``ensemble_verdicts.jsonl``.

The comparison is paired: the bootstrap resamples the test groups once per
draw and scores both configurations on that same draw, so the interval of the
difference accounts for their correlation. The draws are those of
``metrics.json`` (same seed, same key ``(detector, "all")``, groups in order of
first appearance), so without detector errors the intervals of each
configuration equal the ones in its ``metrics.json``.

Verdict rule: "better" only when the interval of the difference lies above 0
(and, for ``recall_at_precision``, the tuned configuration meets the precision
constraint on the test split); a higher point estimate whose interval includes
0 is "not clearly better"; otherwise "not better".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._atomic import atomic_write_json, atomic_write_jsonl
from ..evaluate import CorpusInput, EvaluationResult, run_evaluation
from ..metrics import _BLOCK_CELLS, _seed_words, rates, summarize
from ..replay import Outcome, TokenIndex, verdict_record
from ._experiment import (
    Experiment,
    FBetaObjective,
    MultiObjective,
    RecallAtPrecisionObjective,
)
from ._split import SweepCase

__all__ = [
    "ENSEMBLE",
    "ScoredConfig",
    "compare_multi",
    "compare_single",
    "paired_bootstrap",
    "score_on_test",
]

#: The detector name of the ensemble in ``ensemble.json`` and its verdicts.
ENSEMBLE = "ensemble"


class ScoredConfig:
    """One configuration scored on the test split: per-case rows and its metrics block."""

    def __init__(
        self,
        label: str,
        params: Mapping[str, Mapping[str, Any]],
        rows: pd.DataFrame,
        block: Mapping[str, Any],
        out: Path,
        name: str,
    ) -> None:
        self.label = label
        self.params = {k: dict(v) for k, v in params.items()}
        self.rows = rows
        self.block = dict(block)
        self.out = out
        self.name = name

    @property
    def latency_median(self) -> float | None:
        """Median latency in tokens of on-time true positives (None without any)."""
        value = (self.block.get("latency_tokens") or {}).get("median")
        return None if value is None else float(value)


def _ensemble_records(
    result: EvaluationResult, cases: Mapping[tuple[str, str], SweepCase], detectors: Sequence[str]
) -> list[dict[str, Any]]:
    table = result.verdicts
    records: list[dict[str, Any]] = []
    by_case: dict[tuple[str, str], list[dict[str, Any]]] = {}
    order: list[tuple[str, str]] = []
    for row in table.to_dict("records"):
        key = (str(row["corpus"]), str(row["case"]))
        if key not in by_case:
            by_case[key] = []
            order.append(key)
        by_case[key].append(row)
    for key in order:
        item = cases[key]
        tokens = TokenIndex(item.case.messages)
        best: tuple[int, int] | None = None
        members: list[str] = []
        errors: list[str] = []
        for row in by_case[key]:
            error = row.get("error")
            if isinstance(error, str):
                errors.append(f"{row['detector']}: {error}")
                continue
            if not row["fired"]:
                continue
            members.append(str(row["detector"]))
            at = row["fired_at"]
            position = (
                int(at["message"]),
                tokens.offset((int(at["message"]), at["char"]), end=True),
            )
            if best is None or position < best:
                best = position
        void = best is None and bool(errors)
        outcome = Outcome(
            ENSEMBLE,
            None if best is None else best,
            {"fired": members} if members else None,
            None,
            "; ".join(errors) if void else None,
        )
        records.append(verdict_record(item.case, outcome, corpus=key[0], tokens=tokens))
    assert list(detectors)
    return records


def score_on_test(
    label: str,
    params: Mapping[str, Mapping[str, Any]],
    *,
    experiment: Experiment,
    inputs: Sequence[CorpusInput],
    cases: Mapping[tuple[str, str], SweepCase],
    out: Path,
) -> ScoredConfig:
    """Evaluate ``params`` on the test split files into ``out`` (as ``harness eval`` would)."""
    detectors = list(experiment.detectors)
    result = run_evaluation(
        list(inputs),
        detectors,
        params,
        chunking=experiment.chunking,
        seed=experiment.seed,
        bootstrap=experiment.bootstrap,
        confidence=experiment.confidence,
        out=out,
        keep_verdicts=True,
    )
    if len(detectors) == 1:
        name = detectors[0]
        rows = result.verdicts[result.verdicts["detector"] == name]
        block = result.metrics_json["detectors"][name]
    else:
        name = ENSEMBLE
        records = _ensemble_records(result, cases, detectors)
        rows = pd.DataFrame(records)
        document = summarize(
            rows,
            detectors=[ENSEMBLE],
            resamples=experiment.bootstrap,
            seed=experiment.seed,
            confidence=experiment.confidence,
        )
        document["members"] = detectors
        document["rule"] = "fires if any member fires; the fire position is the earliest"
        document["errors"] = int(rows["error"].notna().sum())
        atomic_write_json(out / "ensemble.json", document)
        atomic_write_jsonl(out / "ensemble_verdicts.jsonl", records)
        block = document["detectors"][ENSEMBLE]
    cols = ["corpus", "case", "group", "label", "fired", "error"]
    return ScoredConfig(label, params, rows[cols].reset_index(drop=True), block, out, name)


def _group_counts(rows: pd.DataFrame, codes: Any, groups: int) -> Any:
    valid = rows["error"].isna().to_numpy()
    label = rows["label"].to_numpy(dtype=bool)
    fired = rows["fired"].to_numpy(dtype=bool)
    flags = np.stack([label & fired, ~label & fired, ~label & ~fired, label & ~fired], axis=1)
    flags = flags & valid[:, None]
    counts = np.zeros((groups, 4), dtype=np.int64)
    np.add.at(counts, codes, flags.astype(np.int64))
    return counts


def _metric(name: str, sums: Any, beta: float | None = None) -> Any:
    tp, fp, tn, fn = (np.asarray(sums[..., i], dtype=float) for i in range(4))
    if name == "fbeta":
        assert beta is not None
        b2 = beta * beta
        num, den = (1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return rates(tp, fp, tn, fn)[name]


def paired_bootstrap(
    a: pd.DataFrame,
    b: pd.DataFrame,
    metric: str,
    *,
    beta: float | None = None,
    resamples: int = 1000,
    seed: int = 0,
    key: Sequence[str] = (),
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Point values and percentile intervals of ``metric`` for ``a``, ``b`` and ``a - b``.

    ``a`` and ``b`` are per-case rows of the same cases in the same order
    (columns ``corpus``, ``group``, ``label``, ``fired``, ``error``). Groups are
    resampled with replacement, the same draw for both.
    """
    if list(a["case"]) != list(b["case"]) or list(a["corpus"]) != list(b["corpus"]):
        raise ValueError("paired_bootstrap needs the same cases in the same order")
    keys = a["corpus"].astype(str) + "\x1f" + a["group"].astype(str)
    codes, uniques = pd.factorize(keys)
    groups = len(uniques)
    counts_a = _group_counts(a, codes, groups)
    counts_b = _group_counts(b, codes, groups)
    point_a = _metric(metric, counts_a.sum(axis=0), beta)
    point_b = _metric(metric, counts_b.sum(axis=0), beta)
    out: dict[str, Any] = {
        "metric": metric if metric != "fbeta" else f"f{beta:g}",
        "a": _clean(point_a),
        "b": _clean(point_b),
        "difference": _clean(point_a - point_b),
        "a_ci": [None, None],
        "b_ci": [None, None],
        "difference_ci": [None, None],
        "groups": groups,
        "resamples": resamples,
        "confidence": confidence,
    }
    if groups == 0 or resamples <= 0:
        return out
    rng = np.random.default_rng(np.random.SeedSequence(_seed_words(seed, key)))
    block = max(1, _BLOCK_CELLS // groups)
    sums_a = np.empty((resamples, 4), dtype=np.int64)
    sums_b = np.empty((resamples, 4), dtype=np.int64)
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        rows = stop - start
        index = rng.integers(0, groups, size=(rows, groups))
        index += np.arange(rows)[:, None] * groups
        weights = np.bincount(index.ravel(), minlength=rows * groups).reshape(rows, groups)
        sums_a[start:stop] = weights @ counts_a
        sums_b[start:stop] = weights @ counts_b
    draws_a = _metric(metric, sums_a, beta)
    draws_b = _metric(metric, sums_b, beta)
    tail = (1.0 - confidence) / 2 * 100
    for name, draws in (("a_ci", draws_a), ("b_ci", draws_b), ("difference_ci", draws_a - draws_b)):
        values = draws[~np.isnan(draws)]
        if values.size:
            low, high = np.percentile(values, [tail, 100 - tail])
            out[name] = [float(low), float(high)]
    return out


def _clean(value: Any) -> float | None:
    number = float(value)
    return None if math.isnan(number) else number


def _fmt(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.2f}"


def _fmt_ci(ci: Sequence[float | None]) -> str:
    low, high = ci
    return "" if low is None or high is None else f" [{low:.2f}, {high:.2f}]"


def _signed(value: float | None) -> str:
    return "undefined" if value is None else f"{value:+.2f}"


def _primary(experiment: Experiment) -> tuple[str, str, float | None]:
    """(metric for paired_bootstrap, display name, beta)."""
    objective = experiment.objective
    if isinstance(objective, FBetaObjective):
        if objective.beta == 1.0:
            return "f1", "F1", None
        return "fbeta", f"F{objective.beta:g}", objective.beta
    return "recall", "recall", None


def compare_single(
    experiment: Experiment,
    tuned: ScoredConfig | None,
    defaults: ScoredConfig,
    *,
    best: Mapping[str, Any] | None,
    same_as_defaults: bool,
) -> dict[str, Any]:
    """The ``comparison.json`` document of a single-objective study."""
    metric, display, beta = _primary(experiment)
    doc: dict[str, Any] = {
        "objective": experiment.objective.model_dump(mode="json"),
        "primary_metric": display,
        "split": "test",
        "bootstrap": {
            "resamples": experiment.bootstrap,
            "confidence": experiment.confidence,
            "unit": "group",
            "paired": True,
        },
        "defaults": {"params": defaults.params, "dir": defaults.out.name},
    }
    if tuned is None:
        doc["tuned"] = None
        doc["better"] = False
        reason = (best or {}).get("reason") or "no trial met the constraint on the training split"
        doc["verdict"] = f"no tuned configuration: {reason} (the defaults stay)"
        return doc
    assert best is not None
    key = (defaults.name, "all")
    result = paired_bootstrap(
        tuned.rows,
        defaults.rows,
        metric,
        beta=beta,
        resamples=experiment.bootstrap,
        seed=experiment.seed,
        key=key,
        confidence=experiment.confidence,
    )
    doc["tuned"] = {"trial": best.get("trial"), "params": tuned.params, "dir": tuned.out.name}
    doc["tuned"]["value"] = result["a"]
    doc["tuned"]["ci"] = result["a_ci"]
    doc["defaults"]["value"] = result["b"]
    doc["defaults"]["ci"] = result["b_ci"]
    doc["difference"] = {"value": result["difference"], "ci": result["difference_ci"]}
    for side, scored in (("tuned", tuned), ("defaults", defaults)):
        for rate in ("precision", "recall", "f1"):
            doc[side][rate] = scored.block.get(rate)
            doc[side][f"{rate}_ci"] = scored.block.get(f"{rate}_ci")
        doc[side]["latency_tokens_median"] = scored.latency_median
    summary = (
        f"{display} {_fmt(result['a'])}{_fmt_ci(result['a_ci'])} vs "
        f"{_fmt(result['b'])}{_fmt_ci(result['b_ci'])} (difference "
        f"{_signed(result['difference'])}{_fmt_ci(result['difference_ci'])})"
    )
    constraint_note = ""
    constraint_ok = True
    objective = experiment.objective
    if isinstance(objective, RecallAtPrecisionObjective):
        floor = objective.min_precision
        tuned_p, default_p = tuned.block.get("precision"), defaults.block.get("precision")
        constraint_ok = tuned_p is not None and tuned_p >= floor
        doc["constraint"] = {
            "min_precision": floor,
            "tuned_precision": tuned_p,
            "defaults_precision": default_p,
            "tuned_meets": constraint_ok,
            "defaults_meet": default_p is not None and default_p >= floor,
        }
        constraint_note = (
            f"; precision {_fmt(tuned_p)} vs {_fmt(default_p)} "
            f"({'meets' if constraint_ok else 'misses'} the constraint >= {floor:g})"
        )
    low = result["difference_ci"][0]
    diff = result["difference"]
    if same_as_defaults:
        doc["better"] = False
        doc["verdict"] = (
            "not better: the best training trial is the defaults themselves "
            f"(trial {best.get('trial')}); on the test split {summary}{constraint_note}"
        )
    elif low is not None and low > 0 and constraint_ok:
        doc["better"] = True
        doc["verdict"] = (
            f"tuned is better than the defaults on the test split: {summary}{constraint_note}"
        )
    elif diff is not None and diff > 0:
        doc["better"] = False
        why = (
            "the interval of the difference includes 0"
            if constraint_ok
            else ("it misses the precision constraint")
        )
        doc["verdict"] = (
            f"tuned is not clearly better than the defaults on the test split ({why}): "
            f"{summary}{constraint_note}"
        )
    else:
        doc["better"] = False
        doc["verdict"] = (
            f"tuned is not better than the defaults on the test split: {summary}{constraint_note}"
        )
    return doc


def compare_multi(
    experiment: Experiment,
    pareto: Sequence[tuple[Mapping[str, Any], ScoredConfig]],
    defaults: ScoredConfig,
    *,
    truncated: int = 0,
) -> dict[str, Any]:
    """The ``comparison.json`` document of a multi-objective study (one entry per Pareto trial)."""
    objective = experiment.objective
    assert isinstance(objective, MultiObjective)
    metrics = list(objective.metrics)
    entries: list[dict[str, Any]] = []
    dominating = 0
    for trial, scored in pareto:
        baseline = bool(trial.get("baseline")) or scored.params == defaults.params
        entry: dict[str, Any] = {
            "trial": trial.get("trial"),
            "baseline": baseline,
            "params": scored.params,
            "dir": scored.out.name,
            "metrics": {},
        }
        better_all, strictly = True, False
        parts: list[str] = []
        for metric in metrics:
            if metric == "latency_tokens":
                a, b = scored.latency_median, defaults.latency_median
                entry["metrics"][metric] = {"tuned": a, "defaults": b, "lower_is_better": True}
                worse = a is None or (b is not None and a > b)
                better = a is not None and (b is None or a < b)
                parts.append(f"median latency {_tokens(a)} vs {_tokens(b)} tokens")
            else:
                result = paired_bootstrap(
                    scored.rows,
                    defaults.rows,
                    metric,
                    resamples=experiment.bootstrap,
                    seed=experiment.seed,
                    key=(defaults.name, "all"),
                    confidence=experiment.confidence,
                )
                entry["metrics"][metric] = {
                    "tuned": result["a"],
                    "tuned_ci": result["a_ci"],
                    "defaults": result["b"],
                    "defaults_ci": result["b_ci"],
                    "difference": result["difference"],
                    "difference_ci": result["difference_ci"],
                    "lower_is_better": False,
                }
                a, b = result["a"], result["b"]
                worse = a is None or (b is not None and a < b)
                better = a is not None and (b is None or a > b)
                tuned_text = f"{_fmt(a)}{_fmt_ci(result['a_ci'])}"
                parts.append(f"{metric} {tuned_text} vs {_fmt(b)}{_fmt_ci(result['b_ci'])}")
            better_all = better_all and not worse
            strictly = strictly or better
        entry["dominates_defaults"] = better_all and strictly
        dominating += entry["dominates_defaults"]
        entry["summary"] = (
            f"trial {trial.get('trial')}{' (the defaults)' if baseline else ''}: "
            + ", ".join(parts)
            + (
                ": dominates the defaults on the test split (point estimates)"
                if entry["dominates_defaults"]
                else ": does not dominate the defaults on the test split"
            )
        )
        entries.append(entry)
    if dominating:
        verdict = (
            f"{dominating} of {len(entries)} Pareto trial(s) dominate the defaults on the test "
            "split (point estimates; see each metric's paired interval)"
        )
    else:
        verdict = (
            f"no Pareto trial is better than the defaults on every objective on the test split "
            f"({len(entries)} compared): not better"
        )
    if truncated:
        verdict += f"; {truncated} more Pareto trial(s) were not scored on the test split"
    return {
        "objective": objective.model_dump(mode="json"),
        "metrics": metrics,
        "split": "test",
        "bootstrap": {
            "resamples": experiment.bootstrap,
            "confidence": experiment.confidence,
            "unit": "group",
            "paired": True,
        },
        "defaults": {
            "params": defaults.params,
            "dir": defaults.out.name,
            "precision": defaults.block.get("precision"),
            "recall": defaults.block.get("recall"),
            "f1": defaults.block.get("f1"),
            "latency_tokens_median": defaults.latency_median,
        },
        "pareto": entries,
        "better": dominating > 0,
        "verdict": verdict,
    }


def _tokens(value: float | None) -> str:
    return "none" if value is None else f"{value:g}"
