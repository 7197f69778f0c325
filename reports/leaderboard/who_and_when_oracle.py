"""Best recall any online detector can reach on Who&When at a precision floor.

Who&When gives one case per ledger: the messages of a trace before that ledger. A
detector replayed online that fires at message m of a trace fires on every later
ledger's case too (they share the prefix), while the orchestrator's ``is_in_loop``
flips back and forth. So per trace a detector can only choose where it starts
firing (or never fire); this script tries every choice with the labels known (an
oracle) and reports the highest recall whose precision is at least the floor.
It reads the corpus and a sweep's ``split.json`` (for the test side), nothing else.

Usage (from the repository root)::

    python reports/leaderboard/who_and_when_oracle.py \
        runs/lb/sweeps/neardup-who-and-when-ensemble/split.json
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import defaultdict
from pathlib import Path

CORPUS = Path("corpora/real/who-and-when/who-and-when.jsonl.gz")


def load_traces(path: Path) -> dict[str, list[bool]]:
    """Labels of each trace's ledgers, in ledger order."""
    steps: dict[str, list[tuple[int, bool]]] = defaultdict(list)
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            case = json.loads(line)
            step = int(case["id"].rsplit("step-", 1)[1])
            steps[case["group"]].append((step, bool(case["label"]["looping"])))
    return {group: [y for _, y in sorted(items)] for group, items in steps.items()}


def fewest_false_positives(traces: list[list[bool]]) -> tuple[dict[int, int], int]:
    """For each reachable total of true positives, the fewest false positives; and positives.

    A dynamic programme over traces: a trace contributes its tail from the chosen
    start (or nothing).
    """
    fewest_fp = {0: 0}
    positives = 0
    for labels in traces:
        positives += sum(labels)
        options = [(0, 0)] + [
            (sum(labels[i:]), len(labels) - i - sum(labels[i:])) for i in range(len(labels))
        ]
        merged: dict[int, int] = {}
        for tp, fp in fewest_fp.items():
            for add_tp, add_fp in options:
                key = tp + add_tp
                if merged.get(key, 1 << 30) > fp + add_fp:
                    merged[key] = fp + add_fp
        fewest_fp = merged
    return fewest_fp, positives


def best_recall(traces: list[list[bool]], floor: float) -> tuple[int, int, int]:
    """(true positives, false positives, positives) of the best start per trace."""
    fewest_fp, positives = fewest_false_positives(traces)
    feasible = [tp for tp, fp in fewest_fp.items() if tp and tp / (tp + fp) >= floor]
    tp = max(feasible, default=0)
    return tp, fewest_fp.get(tp, 0), positives


def main(split_json: str) -> None:
    traces = load_traces(CORPUS)
    split = json.loads(Path(split_json).read_text(encoding="utf-8"))
    test = {"/".join(case_id.split("/")[:3]) for _, case_id in split["test"]["ids"]}
    sides = {
        "all": list(traces),
        "train": [g for g in traces if g not in test],
        "test": [g for g in traces if g in test],
    }
    for side, groups in sides.items():
        fewest_fp, positives = fewest_false_positives([traces[g] for g in groups])
        fp = fewest_fp[positives]
        print(
            f"{side:5s} recall 1.0: TP {positives} FP {fp},"
            f" best precision {positives / (positives + fp):.3f}"
        )
        for floor in (0.8, 0.6, 0.5):
            tp, fp, positives = best_recall([traces[g] for g in groups], floor)
            print(
                f"{side:5s} precision >= {floor}: TP {tp} FP {fp} of {positives} positives,"
                f" recall {tp / positives:.3f}"
            )


if __name__ == "__main__":
    main(sys.argv[1])
