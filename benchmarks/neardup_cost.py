"""Cost per message of the near-duplicate detectors on the real corpora, and a first look.

Cost: every message of every case is appended to a fresh monitor per case (no
early stop at a fire, so the figure is the steady cost of following a thread),
and the wall time is divided by the number of messages appended. The monitors
are the library's (``loopguard``), plus the harness-only ``tfidf`` method of
``paraphrase_loop`` and, with ``--semantic``, the embedding detector (when its
optional packages are installed). Parameters are the ``defaults.json`` values.

First look (``--first-look``): the online rule of the harness - the detector is
evaluated after each appended message and the case counts as flagged when any
prefix fires - on tau-bench and Who&When, with the confusion counts, the
Who&When view by trace (a trace counts as looping when any of its ledgers says
so; it is flagged when the detector fires before its last ledger), and the ids
of the cases it gets wrong.

    python benchmarks/neardup_cost.py [--repeat K] [--semantic] [--first-look]

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.corpus import iter_cases  # noqa: E402
from loopguard import detector_defaults  # noqa: E402
from loopguard._neardup import ErrorRetry, NearDuplicateResultRun, ParaphraseLoop  # noqa: E402
from loopguard._stall import StallDetector  # noqa: E402

CORPORA = {
    "tau-bench": ROOT / "corpora/real/tau-bench/tau-bench-airline.jsonl",
    "who-and-when": ROOT / "corpora/real/who-and-when/who-and-when.jsonl.gz",
    "thoughtology": ROOT / "corpora/real/thoughtology/thoughtology-r1-aime.jsonl",
}


def _library(cls: type[Any], block: str) -> Callable[[], Any]:
    options = detector_defaults(block)
    return lambda: cls(**options)


def _harness(module: str, block: str, **override: Any) -> Callable[[], Any]:
    import importlib

    options = {**detector_defaults(block), **override}
    factory = importlib.import_module(f"harness.detectors.{module}").build(options)

    class _Bool:
        def __init__(self) -> None:
            self._adapter = factory()
            self.last_match: Any = None

        def append(self, message: Any) -> bool:
            fire = self._adapter.append(message)
            if fire is not None:
                self.last_match = fire.reason
            return fire is not None

    return _Bool


def monitors(semantic: bool) -> dict[str, Callable[[], Any]]:
    found = {
        "near_duplicate_result_run": _library(NearDuplicateResultRun, "near_duplicate_result_run"),
        "error_retry": _library(ErrorRetry, "error_retry"),
        "paraphrase_loop": _library(ParaphraseLoop, "paraphrase_loop"),
        "paraphrase_loop (shingles)": lambda: ParaphraseLoop(
            **{**detector_defaults("paraphrase_loop"), "method": "shingles"}
        ),
        "paraphrase_loop (tfidf, harness)": _harness(
            "paraphrase_loop", "paraphrase_loop", method="tfidf"
        ),
        "stall": _library(StallDetector, "stall"),
    }
    if semantic:
        from harness.detectors import semantic_variant

        if semantic_variant.UNAVAILABLE is not None:
            print(f"# {semantic_variant.UNAVAILABLE}")
        else:
            found["semantic_variant (messages)"] = _harness("semantic_variant", "semantic_variant")
            found["semantic_variant (results)"] = _harness(
                "semantic_variant", "semantic_variant", target="results"
            )
    return found


def cost(cases: dict[str, list[Any]], found: dict[str, Callable[[], Any]], repeat: int) -> None:
    print("\n## cost: microseconds per appended message (best of", repeat, "runs)\n")
    print("| detector | " + " | ".join(cases) + " |")
    print("|---|" + "---:|" * len(cases))
    for name, make in found.items():
        cells = []
        for corpus_cases in cases.values():
            messages = sum(len(c.messages) for c in corpus_cases)
            best = float("inf")
            for _ in range(repeat if "semantic" not in name else 1):
                start = time.perf_counter()
                for case in corpus_cases:
                    monitor = make()
                    for message in case.messages:
                        monitor.append(message)
                best = min(best, time.perf_counter() - start)
            cells.append(f"{1e6 * best / messages:.1f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    sizes = ", ".join(
        f"{k}: {len(v)} cases, {sum(len(c.messages) for c in v)} messages" for k, v in cases.items()
    )
    print(f"\n{sizes}; Python {platform.python_version()} on {platform.machine()}")


def _first_fire(make: Callable[[], Any], messages: Sequence[Any]) -> tuple[int | None, Any]:
    monitor = make()
    for index, message in enumerate(messages):
        if monitor.append(message):
            return index, monitor.last_match
    return None, None


def first_look(cases: dict[str, list[Any]], found: dict[str, Callable[[], Any]]) -> None:
    print("\n## first look: online rule, any prefix fires\n")
    for name, make in found.items():
        print(f"### {name}")
        for corpus in ("tau-bench", "who-and-when"):
            counts = {"tp": 0, "fp": 0, "tn": 0, "fn": 0}
            wrong: list[str] = []
            by_trace: dict[str, list[tuple[bool, int | None]]] = defaultdict(list)
            for case in cases[corpus]:
                fired, _ = _first_fire(make, case.messages)
                key = (
                    ("tp" if fired is not None else "fn")
                    if case.looping
                    else ("fp" if fired is not None else "tn")
                )
                counts[key] += 1
                if key in ("fp", "fn"):
                    wrong.append(f"{key} {case.id}" + ("" if fired is None else f" @{fired}"))
                by_trace[case.group].append((case.looping, fired))
            print(f"- {corpus}: {counts}")
            if corpus == "tau-bench":
                for line in wrong[:12]:
                    print(f"    {line}")
            else:
                looping = [t for t in by_trace.values() if any(lab for lab, _ in t)]
                calm = [t for t in by_trace.values() if not any(lab for lab, _ in t)]
                flagged_looping = sum(any(f is not None for _, f in t) for t in looping)
                flagged_calm = sum(any(f is not None for _, f in t) for t in calm)
                print(
                    f"    traces: flagged {flagged_looping} of {len(looping)} with a looping "
                    f"ledger, {flagged_calm} of {len(calm)} without"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per figure (best kept)")
    parser.add_argument("--semantic", action="store_true", help="include the embedding detector")
    parser.add_argument("--first-look", action="store_true", help="print the first-look counts")
    args = parser.parse_args()
    cases = {name: list(iter_cases(path)) for name, path in CORPORA.items()}
    found = monitors(args.semantic)
    cost(cases, found, max(1, args.repeat))
    if args.first_look:
        first_look(cases, found)


if __name__ == "__main__":
    main()
