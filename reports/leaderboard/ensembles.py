"""The ensemble rows the leaderboard lacks, from the sweeps' own ``ensemble.json`` files.

``harness report`` builds its leaderboard from each configuration's
``metrics.json``; for a sweep with several detectors that file holds the members,
one by one, and the ensemble ("fires if any member fires", scored by the sweep in
``test/NAME/ensemble.json``) is not shown. This script prints those rows, in the
leaderboard's columns, as CSV (``ensembles.csv`` next to it was written with it).
Nothing is recomputed: every figure is read from ``ensemble.json``.

Usage (from the repository root)::

    python reports/leaderboard/ensembles.py runs/lb/sweeps/*ensemble* \
        > reports/leaderboard/ensembles.csv
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

RATES = ("precision", "recall", "f1", "mcc")


def rows(sweep: Path) -> list[dict[str, object]]:
    """One row per test configuration of ``sweep`` that has an ``ensemble.json``."""
    out: list[dict[str, object]] = []
    test = sweep / "test"
    if not test.is_dir():
        return out
    manifest = json.loads((sweep / "manifest.json").read_text(encoding="utf-8"))
    sha = (manifest.get("code_version") or {}).get("git_sha")
    for folder in sorted(p for p in test.iterdir() if (p / "ensemble.json").is_file()):
        doc = json.loads((folder / "ensemble.json").read_text(encoding="utf-8"))
        block = doc["detectors"]["ensemble"]
        row: dict[str, object] = {
            "config": f"{sweep.name}: {folder.name}",
            "members": "+".join(doc.get("members") or []),
            "source": ",".join(doc.get("label_sources") or []),
            "cases": block.get("cases"),
        }
        for key in ("tp", "fp", "tn", "fn"):
            row[key] = block.get(key)
        for rate in RATES:
            low, high = block.get(f"{rate}_ci") or (None, None)
            row[rate], row[f"{rate}_lo"], row[f"{rate}_hi"] = block.get(rate), low, high
        row["git_sha"] = sha
        out.append(row)
    return out


def main(paths: list[str]) -> None:
    table = [row for path in paths for row in rows(Path(path))]
    if not table:
        raise SystemExit("no test/*/ensemble.json under the folders given")
    writer = csv.DictWriter(sys.stdout, fieldnames=list(table[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(table)


if __name__ == "__main__":
    main(sys.argv[1:])
