"""Trials per second of a parameter sweep: the fast evaluation path against the replay.

For each detector (``repetition_guard`` and ``text_run`` by default), random
parameter sets are drawn within the registry's bounds (seeded), then in one run:

* the fast path is prepared once on the corpus (timed: the one-time cost), and
  all the trials are evaluated with ``FastEvaluator.outcomes`` twice: the first
  pass includes the lazily built per-``ngram`` caches, the second is the
  steady state of a long sweep;
* the first ``--replay-trials`` of them are replayed with
  :class:`harness.replay.Replayer` on every case (the replay is slow: fewer
  trials, per-trial time reported);
* the outcomes of the trials both ran are compared case by case, and any
  difference is reported (exit code 1).

Prints a table and, with ``--json FILE``, writes the figures.

    python benchmarks/sweep_fastpath.py [--corpus synthetic/default] [--detector NAME ...]
        [--trials 20] [--replay-trials 3] [--seed 0] [--chunking provider] [--json FILE]
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness._atomic import atomic_write_json
from harness.corpus import load_cases, resolve_corpus
from harness.detectors import get_detector
from harness.fastpath import FAST_PATHS, get_fast_evaluator
from harness.replay import Replayer


def draw_params(name: str, count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` parameter sets drawn uniformly within the bounds of the tuned parameters."""
    rng = random.Random(f"{seed}:{name}")
    detector = get_detector(name)
    sets = []
    for _ in range(count):
        params: dict[str, Any] = {}
        for param in detector.params:
            if not param.tune or param.type not in ("int", "float"):
                continue
            low, high = param.low, param.high
            assert low is not None and high is not None
            if param.type == "int":
                params[param.name] = rng.randint(int(low), int(high))
            else:
                params[param.name] = rng.uniform(low, high)
        sets.append(params)
    return sets


def bench(
    name: str, cases: list[Any], trials: int, replay_trials: int, seed: int, chunking: str
) -> dict[str, Any]:
    sets = draw_params(name, trials, seed)
    start = time.perf_counter()
    fast = get_fast_evaluator(name, cases, chunking=chunking, seed=seed)
    prepare = time.perf_counter() - start
    assert fast is not None

    start = time.perf_counter()
    results = [fast.outcomes(params) for params in sets]
    cold = (time.perf_counter() - start) / trials
    start = time.perf_counter()
    for params in sets:
        fast.outcomes(params)
    warm = (time.perf_counter() - start) / trials
    start = time.perf_counter()
    for params in sets:
        fast.fired(params)
    fired_only = (time.perf_counter() - start) / trials

    replay_seconds = 0.0
    differing = 0
    compared = 0
    for params, outcomes in zip(sets[:replay_trials], results, strict=False):
        replayer = Replayer([name], {name: params}, chunking=chunking, seed=seed)
        start = time.perf_counter()
        slow = [replayer.replay(case.id, case.messages)[0] for case in cases]
        replay_seconds += time.perf_counter() - start
        compared += len(slow)
        differing += sum(a != b for a, b in zip(outcomes, slow, strict=True))
    replay = replay_seconds / max(1, min(replay_trials, trials))
    fired_rate = sum(o.fired for o in results[0]) / max(1, len(cases)) if results else 0.0
    return {
        "detector": name,
        "cases": len(cases),
        "trials": trials,
        "replay_trials": min(replay_trials, trials),
        "prepare_seconds": prepare,
        "fast_seconds_per_trial_first_pass": cold,
        "fast_seconds_per_trial_steady": warm,
        "fast_fired_only_seconds_per_trial": fired_only,
        "replay_seconds_per_trial": replay,
        "speedup_first_pass": replay / cold,
        "speedup_steady": replay / warm,
        "speedup_including_prepare": replay * trials / (prepare + cold * trials),
        # A long sweep: the first trials build the caches, the others run steady.
        "speedup_1000_trials_including_prepare": replay
        * 1000
        / (prepare + cold * trials + warm * max(0, 1000 - trials)),
        "outcomes_compared": compared,
        "outcomes_differing": differing,
        "first_trial_fire_rate": fired_rate,
    }


def report(row: dict[str, Any]) -> None:
    print(f"\n== {row['detector']}: {row['cases']} cases, {row['trials']} random trials")
    print(f"  prepare (once per study)      {row['prepare_seconds']:8.2f} s")
    for label, key, speed in (
        ("fast, first pass (+caches)", "fast_seconds_per_trial_first_pass", "speedup_first_pass"),
        ("fast, steady", "fast_seconds_per_trial_steady", "speedup_steady"),
    ):
        seconds = row[key]
        print(
            f"  {label:29s} {seconds * 1000:8.1f} ms/trial {1 / seconds:8.1f} trials/s"
            f"   {row[speed]:6.0f}x faster"
        )
    print(
        f"  {'fast, fired() only':29s} {row['fast_fired_only_seconds_per_trial'] * 1000:8.1f} "
        "ms/trial"
    )
    replay = row["replay_seconds_per_trial"]
    print(
        f"  {'replay':29s} {replay * 1000:8.1f} ms/trial {1 / replay:8.2f} trials/s"
        f"   ({row['replay_trials']} trials)"
    )
    print(
        f"  whole sweep incl. prepare: {row['speedup_including_prepare']:.0f}x faster "
        f"({row['trials']} trials), {row['speedup_1000_trials_including_prepare']:.0f}x "
        "(1000 trials, projected)"
    )
    same = row["outcomes_compared"] - row["outcomes_differing"]
    print(f"  identical outcomes: {same}/{row['outcomes_compared']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="synthetic/default", help="corpus name or path")
    parser.add_argument(
        "--detector", action="append", choices=sorted(FAST_PATHS), help="default: all"
    )
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--replay-trials", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chunking", default="provider")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args()
    if args.trials < 1 or args.replay_trials < 1:
        parser.error("--trials and --replay-trials must be at least 1")
    print(f"python {platform.python_version()} on {platform.machine()}")
    path = resolve_corpus(args.corpus)
    cases = load_cases(path)
    rows = [
        bench(name, cases, args.trials, args.replay_trials, args.seed, args.chunking)
        for name in (args.detector or list(FAST_PATHS))
    ]
    for row in rows:
        report(row)
    if args.json is not None:
        atomic_write_json(args.json, {"corpus": str(path), "results": rows})
    if any(row["outcomes_differing"] for row in rows):
        print("\nFAIL: the fast path and the replay differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
