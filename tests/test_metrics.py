"""Metrics: rates against hand computation and scikit-learn, group bootstrap, breakdowns."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import (
    accuracy_score,
    confusion_matrix,
    fbeta_score,
    matthews_corrcoef,
    precision_score,
    recall_score,
)

from harness.metrics import bootstrap_intervals, metrics_frame, rates, summarize


def test_rates_by_hand() -> None:
    got = {k: float(v) for k, v in rates(tp=6, fp=2, tn=10, fn=4).items()}
    assert got["precision"] == pytest.approx(6 / 8)
    assert got["recall"] == pytest.approx(6 / 10)
    assert got["f1"] == pytest.approx(2 * 6 / (2 * 6 + 2 + 4))
    # F0.5 = 1.25 * P * R / (0.25 * P + R)
    p, r = 6 / 8, 6 / 10
    assert got["f0_5"] == pytest.approx(1.25 * p * r / (0.25 * p + r))
    assert got["mcc"] == pytest.approx((6 * 10 - 2 * 4) / math.sqrt(8 * 10 * 12 * 14))
    assert got["specificity"] == pytest.approx(10 / 12)
    assert got["accuracy"] == pytest.approx(16 / 22)


def test_undefined_rates_are_nan() -> None:
    got = rates(tp=0, fp=0, tn=5, fn=0)
    assert math.isnan(float(got["precision"]))
    assert math.isnan(float(got["recall"]))
    assert math.isnan(float(got["mcc"]))
    assert float(got["specificity"]) == 1.0


@pytest.mark.parametrize("seed", range(8))
def test_rates_agree_with_scikit_learn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    y_true = rng.integers(0, 2, size=60)
    y_pred = np.where(rng.random(60) < 0.7, y_true, 1 - y_true)
    tn, fp, fn, tp = confusion_matrix(y_true, y_pred, labels=[0, 1]).ravel()
    got = rates(tp, fp, tn, fn)
    assert float(got["precision"]) == pytest.approx(precision_score(y_true, y_pred))
    assert float(got["recall"]) == pytest.approx(recall_score(y_true, y_pred))
    assert float(got["f1"]) == pytest.approx(fbeta_score(y_true, y_pred, beta=1.0))
    assert float(got["f0_5"]) == pytest.approx(fbeta_score(y_true, y_pred, beta=0.5))
    assert float(got["mcc"]) == pytest.approx(matthews_corrcoef(y_true, y_pred))
    assert float(got["specificity"]) == pytest.approx(recall_score(y_true, y_pred, pos_label=0))
    assert float(got["accuracy"]) == pytest.approx(accuracy_score(y_true, y_pred))


def test_rates_are_vectorised() -> None:
    got = rates(np.array([1, 0]), np.array([1, 0]), np.array([0, 3]), np.array([0, 1]))
    assert got["precision"].shape == (2,)
    assert got["precision"][0] == 0.5 and math.isnan(got["precision"][1])


def test_bootstrap_is_reproducible_with_a_seed() -> None:
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 3, size=(40, 4))
    a = bootstrap_intervals(counts, resamples=300, seed=5, key=("d",))
    assert a == bootstrap_intervals(counts, resamples=300, seed=5, key=("d",))
    assert a != bootstrap_intervals(counts, resamples=300, seed=6, key=("d",))
    assert a != bootstrap_intervals(counts, resamples=300, seed=5, key=("other",))
    low, high = a["f1"]
    point = float(rates(*counts.sum(axis=0))["f1"])
    assert low <= point <= high and low < high


def test_bootstrap_resamples_groups_not_cases() -> None:
    # One group holding every case: any resample of groups is the same data,
    # so the interval collapses to the point; resampling cases would not.
    one_group = np.array([[5, 2, 7, 3]])
    interval = bootstrap_intervals(one_group, resamples=200, seed=1)
    point = float(rates(5, 2, 7, 3)["precision"])
    assert interval["precision"] == pytest.approx((point, point))


def test_bootstrap_of_nothing_is_nan() -> None:
    got = bootstrap_intervals(np.zeros((0, 4)), resamples=10)
    assert all(math.isnan(low) and math.isnan(high) for low, high in got.values())


def _row(case: str, group: str, label: bool, fired: bool, **extra: Any) -> dict[str, Any]:
    base = {
        "corpus": extra.pop("corpus", "c1"),
        "case": case,
        "detector": extra.pop("detector", "d"),
        "label": label,
        "fired": fired,
        "error": None,
        "group": group,
        "kind": None,
        "source": "synthetic",
        "tags": [],
        "early": None,
        "latency_messages": None,
        "latency_tokens": None,
        "tokens_saved": None,
        "tokens_lost": None,
        "extra": None,
    }
    base.update(extra)
    return base


def _verdicts() -> pd.DataFrame:
    rows = [
        _row(
            "a",
            "g1",
            True,
            True,
            kind="suffix",
            tags=["x"],
            latency_messages=2,
            latency_tokens=10,
            early=False,
            tokens_saved=100,
        ),
        _row(
            "b",
            "g1",
            True,
            True,
            kind="suffix",
            tags=["x", "y"],
            latency_messages=4,
            latency_tokens=30,
            early=False,
            tokens_saved=50,
        ),
        _row(
            "c",
            "g2",
            True,
            True,
            kind="text-run",
            latency_messages=-1,
            latency_tokens=-5,
            early=True,
            tokens_saved=7,
        ),
        _row("d", "g2", True, False, kind="text-run", tags=["y"]),
        _row("e", "g3", False, True, kind="progress", tokens_lost=40, source="human", corpus="c2"),
        _row("f", "g3", False, False, kind="progress", source="human", corpus="c2"),
        _row("g", "g4", False, False, tags=["y"]),
        _row("h", "g4", False, False, error="RuntimeError: boom"),
    ]
    return pd.DataFrame(rows)


def test_summary_counts_latency_tokens_and_errors() -> None:
    document = summarize(_verdicts(), resamples=200, seed=0)
    block = document["detectors"]["d"]
    assert (block["tp"], block["fp"], block["tn"], block["fn"]) == (3, 1, 2, 1)
    assert block["errors"] == 1 and block["cases"] == 7 and block["groups"] == 4
    assert block["precision"] == pytest.approx(0.75)
    assert block["early_fires"] == 1
    # Latency over the on-time true positives only: 2 and 4 messages.
    assert block["latency_messages"]["median"] == pytest.approx(3.0)
    assert block["latency_messages"]["p90"] == pytest.approx(np.percentile([2, 4], 90))
    assert block["latency_tokens"]["median"] == pytest.approx(20.0)
    assert block["tokens_saved"]["total"] == 157 and block["tokens_lost"]["total"] == 40
    low, high = block["precision_ci"]
    assert low is not None and high is not None and low <= 0.75 <= high
    assert document["mixed_label_sources"] is True
    assert document["label_sources"] == ["human", "synthetic"]


def test_breakdowns_by_kind_tag_source_and_corpus() -> None:
    breakdown = summarize(_verdicts(), resamples=50)["detectors"]["d"]["breakdown"]
    assert set(breakdown) == {"kind", "tag", "source", "corpus"}
    suffix = breakdown["kind"]["suffix"]
    assert (suffix["tp"], suffix["fn"]) == (2, 0)
    assert breakdown["kind"]["(none)"]["cases"] == 1  # g; h is an error
    # A case with two tags counts in both slices; untagged cases are "(none)".
    assert breakdown["tag"]["x"]["cases"] == 2
    assert breakdown["tag"]["y"]["cases"] == 3
    assert breakdown["tag"]["(none)"]["cases"] == 3
    assert breakdown["source"]["human"]["fp"] == 1
    assert breakdown["corpus"]["c2"]["cases"] == 2


def test_metrics_frame_is_long_and_has_intervals() -> None:
    frame = metrics_frame(summarize(_verdicts(), resamples=50))
    overall = frame[(frame["by"] == "all")]
    assert len(overall) == 1 and overall.iloc[0]["tp"] == 3
    assert {"precision_lo", "precision_hi", "mcc", "f0_5"} <= set(frame.columns)
    assert set(frame["by"]) == {"all", "kind", "tag", "source", "corpus"}
