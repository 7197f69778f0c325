"""Metrics of detectors over verdicts: confusion counts, rates, bootstrap intervals, breakdowns.

Every rate is computed from the confusion counts (vectorised numpy, so that the
bootstrap is fast); the tests check them against scikit-learn's
``precision_score``, ``recall_score``, ``fbeta_score`` and ``matthews_corrcoef``.
A rate that is 0/0 (precision with no fire, MCC with an empty row or column of
the confusion matrix, ...) is NaN here and ``null`` in JSON; scikit-learn
would report 0 with a warning instead.

Intervals are percentile bootstrap intervals that resample **groups** (the
``group`` of each case: cases of one underlying run), not cases, with
replacement: ``resamples`` draws from a numpy Generator seeded by the run seed
and the slice's name, so the same seed gives the same intervals whatever the
order of the slices. Resamples where a rate is undefined are left out of that
rate's percentiles.

Examples
--------
>>> r = rates(8, 2, 85, 5)
>>> round(float(r["precision"]), 3), round(float(r["recall"]), 3), round(float(r["f1"]), 3)
(0.8, 0.615, 0.696)
"""

from __future__ import annotations

import math
import warnings
import zlib
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "BREAKDOWNS",
    "COUNT_NAMES",
    "NO_VALUE",
    "RATE_NAMES",
    "bootstrap_intervals",
    "metrics_frame",
    "rates",
    "summarize",
    "summarize_block",
]

#: The confusion counts, in the order of the arrays this module passes around.
COUNT_NAMES = ("tp", "fp", "tn", "fn")
#: The rates, each reported with a bootstrap interval ``NAME_ci``.
RATE_NAMES = ("precision", "recall", "f1", "f0_5", "mcc", "specificity", "accuracy")
#: The dimensions of the breakdown, and the verdict column each reads.
BREAKDOWNS = {"kind": "kind", "tag": "tags", "source": "source", "corpus": "corpus"}
#: The slice name of cases without a kind, or without tags.
NO_VALUE = "(none)"

# Rows of the (resamples x groups) index matrix drawn at once: bounds memory to
# about 8 * _BLOCK_CELLS * 4 bytes whatever the corpus size.
_BLOCK_CELLS = 1_000_000


def _div(num: Any, den: Any) -> Any:
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def rates(tp: Any, fp: Any, tn: Any, fn: Any) -> dict[str, Any]:
    """Precision, recall, F1, F0.5, MCC, specificity and accuracy of confusion counts.

    The counts may be numbers or numpy arrays of one shape (the rates then
    have that shape). Undefined rates (0/0) are NaN.

    Examples
    --------
    >>> {k: float(v) for k, v in rates(0, 0, 3, 1).items()}["precision"]
    nan
    """
    tp, fp, tn, fn = (np.asarray(x, dtype=float) for x in (tp, fp, tn, fn))
    beta2 = 0.25  # F0.5: beta = 0.5
    mcc_den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return {
        "precision": _div(tp, tp + fp),
        "recall": _div(tp, tp + fn),
        "f1": _div(2 * tp, 2 * tp + fp + fn),
        "f0_5": _div((1 + beta2) * tp, (1 + beta2) * tp + beta2 * fn + fp),
        "mcc": _div(tp * tn - fp * fn, mcc_den),
        "specificity": _div(tn, tn + fp),
        "accuracy": _div(tp + tn, tp + fp + tn + fn),
    }


def _seed_words(seed: int, key: Iterable[str]) -> list[int]:
    # crc32 is stable across processes and Python versions, unlike hash().
    return [int(seed) & 0xFFFFFFFF, *(zlib.crc32(part.encode("utf-8")) for part in key)]


def bootstrap_intervals(
    group_counts: Any,
    *,
    resamples: int = 1000,
    seed: int = 0,
    key: Iterable[str] = (),
    confidence: float = 0.95,
) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap intervals of every rate, resampling groups.

    Parameters
    ----------
    group_counts : array of shape (groups, 4)
        ``tp, fp, tn, fn`` of each group.
    resamples : int
        Bootstrap draws (0 gives NaN intervals).
    seed : int
        Run seed; with ``key`` (the slice's name) it seeds the generator.
    confidence : float
        Interval coverage (0.95: the 2.5th and 97.5th percentiles).

    Examples
    --------
    >>> counts = [[1, 0, 0, 0], [0, 0, 1, 0], [1, 1, 0, 0], [0, 0, 2, 1]]
    >>> a = bootstrap_intervals(counts, resamples=200, seed=3)
    >>> a == bootstrap_intervals(counts, resamples=200, seed=3)
    True
    """
    counts = np.asarray(group_counts, dtype=np.int64).reshape(-1, 4)
    groups = counts.shape[0]
    nan = (math.nan, math.nan)
    if groups == 0 or resamples <= 0:
        return dict.fromkeys(RATE_NAMES, nan)
    rng = np.random.default_rng(np.random.SeedSequence(_seed_words(seed, key)))
    block = max(1, _BLOCK_CELLS // groups)
    sums = np.empty((resamples, 4), dtype=np.int64)
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        rows = stop - start
        # How often each group is drawn in each resample, then one matrix product.
        index = rng.integers(0, groups, size=(rows, groups))
        index += np.arange(rows)[:, None] * groups
        weights = np.bincount(index.ravel(), minlength=rows * groups).reshape(rows, groups)
        sums[start:stop] = weights @ counts
    draws = rates(sums[:, 0], sums[:, 1], sums[:, 2], sums[:, 3])
    tail = (1.0 - confidence) / 2 * 100
    out: dict[str, tuple[float, float]] = {}
    for name in RATE_NAMES:
        values = draws[name][~np.isnan(draws[name])]
        if values.size == 0:
            out[name] = nan
            continue
        low, high = np.percentile(values, [tail, 100 - tail])
        out[name] = (float(low), float(high))
    return out


def _clean(value: Any) -> Any:
    """Plain Python numbers for JSON: NaN becomes None."""
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        number = float(value)
        return None if math.isnan(number) else number
    return value


def _distribution(values: pd.Series) -> dict[str, Any]:
    data = values.dropna().to_numpy(dtype=float)
    if data.size == 0:
        return {"n": 0, "median": None, "p90": None, "mean": None}
    return {
        "n": int(data.size),
        "median": float(np.median(data)),
        "p90": float(np.percentile(data, 90)),
        "mean": float(data.mean()),
    }


def _tokens(values: pd.Series) -> dict[str, Any]:
    data = values.dropna().to_numpy(dtype=float)
    if data.size == 0:
        return {"n": 0, "total": 0, "mean": None, "median": None}
    return {
        "n": int(data.size),
        "total": int(data.sum()),
        "mean": float(data.mean()),
        "median": float(np.median(data)),
    }


def _group_codes(rows: pd.DataFrame) -> Any:
    """An integer per bootstrap group (corpus and group), from ``_group`` when precomputed."""
    if "_group" in rows:
        return rows["_group"].to_numpy()
    keys = rows["corpus"].astype(str) + "\x1f" + rows["group"].astype(str)
    return pd.factorize(keys)[0]


def summarize_block(
    rows: pd.DataFrame,
    *,
    resamples: int = 1000,
    seed: int = 0,
    key: Iterable[str] = (),
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Counts, rates with intervals, early fires, latency and tokens of some verdict rows.

    ``rows`` has the verdict columns ``label``, ``fired``, ``error``, ``group``
    (and ``corpus``), ``early``, ``latency_messages``, ``latency_tokens``,
    ``tokens_saved`` and ``tokens_lost``. Rows with an error count in
    ``errors`` only.
    """
    errors = rows["error"].notna() if "error" in rows else pd.Series(False, index=rows.index)
    valid = rows[~errors.to_numpy(dtype=bool)]
    label = valid["label"].to_numpy(dtype=bool)
    fired = valid["fired"].to_numpy(dtype=bool)
    flags = np.stack([label & fired, ~label & fired, ~label & ~fired, label & ~fired], axis=1)
    tp, fp, tn, fn = (int(x) for x in flags.sum(axis=0)) if len(valid) else (0, 0, 0, 0)
    out: dict[str, Any] = {
        "cases": len(valid),
        "positives": tp + fn,
        "negatives": fp + tn,
        "errors": int(errors.sum()),
        "groups": 0,
        "tp": tp,
        "fp": fp,
        "tn": tn,
        "fn": fn,
    }
    point = rates(tp, fp, tn, fn)
    if len(valid):
        codes = _group_codes(valid)
        _, inverse = np.unique(codes, return_inverse=True)
        per_group = np.zeros((int(inverse.max()) + 1, 4), dtype=np.int64)
        np.add.at(per_group, inverse, flags.astype(np.int64))
        out["groups"] = int(per_group.shape[0])
    else:
        per_group = np.zeros((0, 4), dtype=np.int64)
    intervals = bootstrap_intervals(
        per_group, resamples=resamples, seed=seed, key=key, confidence=confidence
    )
    for name in RATE_NAMES:
        out[name] = _clean(float(point[name]))
        out[f"{name}_ci"] = [_clean(intervals[name][0]), _clean(intervals[name][1])]
    tp_rows = valid[label & fired]
    early = tp_rows["early"].map(lambda v: v is True or v is np.True_).astype(bool)
    out["early_fires"] = int(early.sum())
    on_time = tp_rows[~early.to_numpy(dtype=bool)]
    out["latency_messages"] = _distribution(on_time["latency_messages"])
    out["latency_tokens"] = _distribution(on_time["latency_tokens"])
    out["tokens_saved"] = _tokens(tp_rows["tokens_saved"])
    out["tokens_lost"] = _tokens(valid[~label & fired]["tokens_lost"])
    return out


def _slices(rows: pd.DataFrame, dimension: str) -> Iterable[tuple[str, pd.DataFrame]]:
    column = BREAKDOWNS[dimension]
    if dimension == "tag":
        listed = [
            list(dict.fromkeys(t)) if isinstance(t, list | tuple) and t else [NO_VALUE]
            for t in rows["tags"]
        ]
        tags = pd.Series(listed, index=np.arange(len(rows)), dtype=object).explode().astype(str)
        for value, where in sorted(tags.groupby(tags).groups.items()):
            yield str(value), rows.iloc[np.asarray(where)]
        return
    values = rows[column].map(lambda v: NO_VALUE if v is None or v != v else str(v))
    for value, where in sorted(values.groupby(values).indices.items()):
        yield str(value), rows.iloc[where]


def summarize(
    verdicts: pd.DataFrame,
    *,
    detectors: Iterable[str] | None = None,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    breakdowns: Iterable[str] = tuple(BREAKDOWNS),
) -> dict[str, Any]:
    """The ``metrics.json`` document of a table of verdicts.

    Parameters
    ----------
    verdicts : DataFrame
        One row per case and detector (the fields of ``verdicts.jsonl``).
    detectors : iterable of str, optional
        Order of the detectors (default: order of first appearance).

    Returns
    -------
    dict
        ``{"detectors": {NAME: {tp, fp, tn, fn, precision, precision_ci, ...,
        "breakdown": {"kind": {...}, "tag": {...}, "source": {...},
        "corpus": {...}}}}, "label_sources": [...], "bootstrap": {...}}``.
    """
    names = list(detectors) if detectors is not None else list(dict.fromkeys(verdicts["detector"]))
    unknown = sorted(set(breakdowns) - set(BREAKDOWNS))
    if unknown:
        raise ValueError(f"unknown breakdown {unknown}; allowed: {', '.join(BREAKDOWNS)}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)
        result: dict[str, Any] = {}
        if len(verdicts):
            verdicts = verdicts.assign(_group=_group_codes(verdicts))
        for name in names:
            rows = verdicts[verdicts["detector"] == name]
            block = summarize_block(
                rows, resamples=resamples, seed=seed, key=(name, "all"), confidence=confidence
            )
            breakdown: dict[str, dict[str, Any]] = {}
            for dimension in breakdowns:
                breakdown[dimension] = {
                    value: summarize_block(
                        part,
                        resamples=resamples,
                        seed=seed,
                        key=(name, dimension, value),
                        confidence=confidence,
                    )
                    for value, part in _slices(rows, dimension)
                }
            block["breakdown"] = breakdown
            ladder = _ladder(rows)
            if ladder is not None:
                block["ladder"] = ladder
            result[name] = block
    sources = sorted(verdicts["source"].dropna().astype(str).unique()) if len(verdicts) else []
    return {
        "detectors": result,
        "label_sources": sources,
        "mixed_label_sources": len(sources) > 1,
        "bootstrap": {
            "resamples": resamples,
            "confidence": confidence,
            "unit": "group",
            "seed": seed,
            "method": "percentile",
        },
        "undefined": "null: the rate is 0/0 on these cases",
    }


def _ladder(rows: pd.DataFrame) -> dict[str, Any] | None:
    """Cases reaching each step of an action ladder (detectors whose verdicts list one)."""
    if "extra" not in rows:
        return None
    reached: dict[str, int] = {}
    seen = False
    for extra in rows["extra"]:
        if not isinstance(extra, Mapping) or "ladder" not in extra:
            continue
        seen = True
        for step in {int(s["step"]) for s in extra["ladder"]}:
            reached[str(step)] = reached.get(str(step), 0) + 1
    if not seen:
        return None
    return {"cases_reaching_step": dict(sorted(reached.items()))}


def metrics_frame(document: Mapping[str, Any]) -> pd.DataFrame:
    """A long table of a ``metrics.json`` document: one row per detector and slice.

    Columns: ``detector``, ``by`` (``all``, ``kind``, ``tag``, ``source``,
    ``corpus``), ``slice``, the counts, each rate with ``NAME_lo`` and
    ``NAME_hi``, ``early_fires``, latency medians and p90s, tokens saved and lost.
    """
    records: list[dict[str, Any]] = []
    for name, block in document.get("detectors", {}).items():
        records.append(_flat(name, "all", "all", block))
        for dimension, slices in block.get("breakdown", {}).items():
            for value, part in slices.items():
                records.append(_flat(name, dimension, value, part))
    columns = ["detector", "by", "slice", "cases", "positives", "negatives", "errors", "groups"]
    columns += list(COUNT_NAMES)
    for rate in RATE_NAMES:
        columns += [rate, f"{rate}_lo", f"{rate}_hi"]
    columns += [
        "early_fires",
        "latency_messages_median",
        "latency_messages_p90",
        "latency_tokens_median",
        "latency_tokens_p90",
        "tokens_saved_total",
        "tokens_lost_total",
    ]
    return pd.DataFrame.from_records(records, columns=columns)


def _flat(name: str, dimension: str, value: str, block: Mapping[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"detector": name, "by": dimension, "slice": value}
    for key in ("cases", "positives", "negatives", "errors", "groups", *COUNT_NAMES):
        row[key] = block.get(key)
    for rate in RATE_NAMES:
        low, high = block.get(f"{rate}_ci") or (None, None)
        value_ = block.get(rate)
        row[rate] = math.nan if value_ is None else value_
        row[f"{rate}_lo"] = math.nan if low is None else low
        row[f"{rate}_hi"] = math.nan if high is None else high
    row["early_fires"] = block.get("early_fires")
    for what in ("latency_messages", "latency_tokens"):
        dist = block.get(what) or {}
        for stat in ("median", "p90"):
            got = dist.get(stat)
            row[f"{what}_{stat}"] = math.nan if got is None else got
    row["tokens_saved_total"] = (block.get("tokens_saved") or {}).get("total")
    row["tokens_lost_total"] = (block.get("tokens_lost") or {}).get("total")
    return row
