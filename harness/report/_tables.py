"""The report's tables: the leaderboard, breakdown slices, latency and tokens of each config.

Every number comes from a run's ``metrics.json``, except the rows of a corpus
whose cases mix label sources: those are recomputed per source from the
run's ``verdicts.jsonl`` with :func:`harness.metrics.summarize_block` and the
run's own bootstrap settings (``basis`` says which), so sources are never
pooled silently.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..metrics import NO_VALUE, RATE_NAMES, summarize_block
from ._load import Config

__all__ = [
    "BASIS_METRICS",
    "BASIS_VERDICTS",
    "breakdown_frame",
    "corpus_label",
    "leaderboard",
    "true_positive_latencies",
]

BASIS_METRICS = "metrics.json"
BASIS_VERDICTS = "verdicts.jsonl, recomputed per label source"

_RATE_COLUMNS = [c for r in RATE_NAMES for c in (r, f"{r}_lo", f"{r}_hi")]
LEADERBOARD_COLUMNS = [
    "config",
    "role",
    "run",
    "corpus",
    "source",
    "detector",
    "cases",
    "positives",
    "negatives",
    "tp",
    "fp",
    "tn",
    "fn",
    *_RATE_COLUMNS,
    "early_fires",
    "latency_messages_median",
    "latency_tokens_median",
    "tokens_saved_total",
    "tokens_lost_total",
    "errors",
    "basis",
]


def corpus_label(name: str) -> str:
    """A corpus name for tables: registry names as they are, file paths by their file name."""
    if "/" in name and (name.endswith((".jsonl", ".jsonl.gz")) or name.startswith(("/", "."))):
        return Path(name).name
    return name


def _num(value: Any) -> float:
    return math.nan if value is None else float(value)


def _row(
    config: Config, corpus: str, source: str, detector: str, block: Mapping[str, Any]
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "config": config.label,
        "role": config.role,
        "run": str(config.run.path),
        "corpus": corpus,
        "source": source,
        "detector": detector,
    }
    for key in ("cases", "positives", "negatives", "tp", "fp", "tn", "fn", "errors"):
        row[key] = int(block.get(key) or 0)
    for rate in RATE_NAMES:
        low, high = block.get(f"{rate}_ci") or (None, None)
        row[rate] = _num(block.get(rate))
        row[f"{rate}_lo"] = _num(low)
        row[f"{rate}_hi"] = _num(high)
    row["early_fires"] = int(block.get("early_fires") or 0)
    row["latency_messages_median"] = _num((block.get("latency_messages") or {}).get("median"))
    row["latency_tokens_median"] = _num((block.get("latency_tokens") or {}).get("median"))
    row["tokens_saved_total"] = int((block.get("tokens_saved") or {}).get("total") or 0)
    row["tokens_lost_total"] = int((block.get("tokens_lost") or {}).get("total") or 0)
    return row


def _sources_by_corpus(config: Config) -> dict[str, list[str]]:
    verdicts = config.run.verdicts
    if verdicts.empty or "source" not in verdicts:
        return {}
    pairs = verdicts[["corpus", "source"]].drop_duplicates()
    out: dict[str, list[str]] = {}
    for corpus, source in zip(pairs["corpus"], pairs["source"], strict=True):
        out.setdefault(str(corpus), []).append(str(source))
    return {k: sorted(v) for k, v in out.items()}


def leaderboard(configs: Sequence[Config]) -> pd.DataFrame:
    """Every detector on every corpus (and label source) of every configuration.

    One row per configuration, corpus, label source and detector, with the
    confusion counts, each rate and its bootstrap interval (``NAME_lo``,
    ``NAME_hi``), early fires, median latencies and token totals. ``basis``
    says where the row comes from: ``metrics.json`` (the corpus has one label
    source) or the verdicts recomputed per source (it has several).

    Examples
    --------
    >>> board = leaderboard(configs_of([load_run("runs/baseline")]))  # doctest: +SKIP
    >>> board[["detector", "corpus", "source", "f1", "f1_lo", "f1_hi"]]  # doctest: +SKIP
    """
    rows: list[dict[str, Any]] = []
    for config in configs:
        metrics = config.run.metrics
        boot = metrics.get("bootstrap") or {}
        sources = _sources_by_corpus(config)
        corpora = [c.get("name") for c in config.run.corpora] or list(sources)
        for detector, block in metrics.get("detectors", {}).items():
            by_corpus = block.get("breakdown", {}).get("corpus", {})
            for corpus in corpora:
                corpus = str(corpus)
                listed = sources.get(corpus, [])
                if len(listed) <= 1:
                    # One corpus: the run's top-level figures (those `harness eval` prints).
                    part = block if len(corpora) == 1 else by_corpus.get(corpus)
                    if part is None:
                        continue
                    row = _row(config, corpus, listed[0] if listed else "", detector, part)
                    row["basis"] = BASIS_METRICS
                    rows.append(row)
                    continue
                verdicts = config.run.verdicts
                mine = verdicts[(verdicts["detector"] == detector) & (verdicts["corpus"] == corpus)]
                for source in listed:
                    part_rows = mine[mine["source"].astype(str) == source]
                    computed = summarize_block(
                        part_rows,
                        resamples=int(boot.get("resamples", 1000)),
                        seed=int(boot.get("seed", metrics.get("seed", 0)) or 0),
                        key=(detector, "corpus", corpus, "source", source),
                        confidence=float(boot.get("confidence", 0.95)),
                    )
                    row = _row(config, corpus, source, detector, computed)
                    row["basis"] = BASIS_VERDICTS
                    rows.append(row)
    return pd.DataFrame.from_records(rows, columns=LEADERBOARD_COLUMNS)


def breakdown_frame(configs: Iterable[Config], detector: str, dimension: str) -> pd.DataFrame:
    """The ``metrics.json`` breakdown of ``detector`` by ``dimension`` (kind, tag, source, corpus).

    One row per configuration and slice, with counts, recall (on the slice's
    looping cases) and false-positive rate (``1 - specificity``, on its other
    cases), each with its interval.
    """
    rows: list[dict[str, Any]] = []
    for config in configs:
        block = config.run.metrics.get("detectors", {}).get(detector)
        if block is None:
            continue
        for value, part in block.get("breakdown", {}).get(dimension, {}).items():
            spec = part.get("specificity")
            spec_lo, spec_hi = part.get("specificity_ci") or (None, None)
            rec_lo, rec_hi = part.get("recall_ci") or (None, None)
            rows.append(
                {
                    "config": config.label,
                    "role": config.role,
                    "slice": value,
                    "cases": int(part.get("cases") or 0),
                    "positives": int(part.get("positives") or 0),
                    "negatives": int(part.get("negatives") or 0),
                    "tp": int(part.get("tp") or 0),
                    "fp": int(part.get("fp") or 0),
                    "tn": int(part.get("tn") or 0),
                    "fn": int(part.get("fn") or 0),
                    "recall": _num(part.get("recall")),
                    "recall_lo": _num(rec_lo),
                    "recall_hi": _num(rec_hi),
                    "fpr": math.nan if spec is None else 1.0 - float(spec),
                    # 1 - x reverses the interval's ends.
                    "fpr_lo": math.nan if spec_hi is None else 1.0 - float(spec_hi),
                    "fpr_hi": math.nan if spec_lo is None else 1.0 - float(spec_lo),
                    "precision": _num(part.get("precision")),
                }
            )
    return pd.DataFrame.from_records(
        rows,
        columns=[
            "config",
            "role",
            "slice",
            "cases",
            "positives",
            "negatives",
            "tp",
            "fp",
            "tn",
            "fn",
            "recall",
            "recall_lo",
            "recall_hi",
            "fpr",
            "fpr_lo",
            "fpr_hi",
            "precision",
        ],
    )


def true_positive_latencies(config: Config, detector: str) -> pd.DataFrame:
    """The true positives of ``detector`` in a run with their latency and tokens saved.

    Columns: ``corpus``, ``source``, ``case``, ``early``, ``latency_messages``,
    ``latency_tokens``, ``tokens_saved``. Early fires keep their (negative) latency.
    """
    verdicts = config.run.verdicts
    columns = ["corpus", "source", "case", "early", "latency_messages", "latency_tokens"]
    columns.append("tokens_saved")
    if verdicts.empty or "outcome" not in verdicts:
        return pd.DataFrame(columns=columns)
    mine = verdicts[(verdicts["detector"] == detector) & (verdicts["outcome"] == "tp")]
    out = mine.reindex(columns=columns).copy()
    out["early"] = out["early"].map(lambda v: v is True)
    out["source"] = out["source"].map(lambda v: NO_VALUE if v is None else str(v))
    return out.reset_index(drop=True)
