"""Throughput of the evaluation replay: cases and words per second, and how a run scales.

Part 1, per detector: every named corpus under ``corpora/`` (or the files given
with ``--corpus``) is loaded once, then each registered detector alone is
replayed over all of its cases (word chunking by default); prints cases/s and
words/s (words of all message texts, split on whitespace).

Part 2, scaling: a corpus of N cases is written by cycling the cases of the
first corpus (ids made unique), and a whole ``run_evaluation`` (validation,
replay of the chosen detectors, metrics with bootstrap) runs on it in a fresh
process for each N; prints seconds, cases/s and the process's peak memory, so
that linear time and flat memory can be checked. Default sizes 1k and 10k
(about a minute); ``--sizes 1000,10000,100000`` for the full range.

    python benchmarks/eval_throughput.py [--corpus PATH ...] [--detectors a,b]
        [--sizes 1000,10000] [--scale-detectors a,b] [--bootstrap N] [--skip-detectors]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.corpus import list_corpora, load_cases, resolve_corpus
from harness.detectors import detector_names
from harness.replay import Replayer

_SCALE_DEFAULT = "thread_cycle,repetition_guard,text_run,overthinking,alm"


def _words(case: Any) -> int:
    return sum(len(m.get("text", "").split()) for m in case.messages)


def per_detector(paths: list[Path], names: list[str], chunking: str) -> None:
    cases = [case for path in paths for case in load_cases(path, skip_invalid=True)]
    words = sum(_words(c) for c in cases)
    print(f"\n== per detector: {len(cases)} cases, {words:,} words ({chunking} chunking)")
    print(f"{'detector':32s} {'seconds':>8s} {'cases/s':>10s} {'words/s':>12s} {'fired':>6s}")
    for name in names:
        replayer = Replayer([name], chunking=chunking)
        start = time.perf_counter()
        fired = 0
        for case in cases:
            fired += replayer.replay(case.id, case.messages)[0].fired
        seconds = time.perf_counter() - start
        print(
            f"{name:32s} {seconds:8.2f} {len(cases) / seconds:10,.0f} "
            f"{words / seconds:12,.0f} {fired:6d}"
        )


_CHILD = """
import json, resource, sys, time
from harness.evaluate import run_evaluation
path, names, bootstrap = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
start = time.perf_counter()
result = run_evaluation(path, names, bootstrap=bootstrap, keep_verdicts=False, chunking="word")
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_mb": peak, "verdicts": len(result.verdicts)}))
"""


def scaling(source: Path, sizes: list[int], names: list[str], bootstrap: int) -> None:
    pool = [case.raw for case in load_cases(source, skip_invalid=True)]
    print(f"\n== scaling: cases cycled from {source.name}; detectors {','.join(names)}")
    print(f"{'cases':>8s} {'seconds':>9s} {'cases/s':>9s} {'peak MB':>8s}")
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            path = Path(folder) / f"scale-{size}.jsonl"
            with path.open("w", encoding="utf-8") as handle:
                for i in range(size):
                    raw = dict(pool[i % len(pool)])
                    raw["id"] = f"{raw['id']}#{i}"
                    raw["group"] = f"{raw.get('group', raw['id'])}#{i // len(pool)}"
                    handle.write(json.dumps(raw, ensure_ascii=False) + "\n")
            done = subprocess.run(
                [sys.executable, "-c", _CHILD, str(path), ",".join(names), str(bootstrap)],
                cwd=root,
                capture_output=True,
                text=True,
                check=True,
            )
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            seconds = figures["seconds"]
            print(f"{size:8d} {seconds:9.2f} {size / seconds:9,.0f} {figures['peak_mb']:8.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", action="append", default=None, help="corpus name or path")
    parser.add_argument("--detectors", default=None, help="comma-separated (default: all)")
    parser.add_argument("--chunking", default="word")
    parser.add_argument("--sizes", default="1000,10000", help="case counts for the scaling run")
    parser.add_argument("--scale-detectors", default=_SCALE_DEFAULT)
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--skip-detectors", action="store_true", help="only the scaling run")
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}")
    if args.corpus:
        paths = [resolve_corpus(c) for c in args.corpus]
    else:
        # Small real corpora and the synthetic one; the big who-and-when corpus only on request.
        paths = [c.path for c in list_corpora() if "who-and-when" not in c.name]
    if not paths:
        raise SystemExit("no corpus found under corpora/; pass --corpus PATH")
    names = args.detectors.split(",") if args.detectors else detector_names()
    if not args.skip_detectors:
        per_detector(paths, names, args.chunking)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if sizes:
        scaling(paths[-1], sizes, args.scale_detectors.split(","), args.bootstrap)


if __name__ == "__main__":
    main()
