"""The main job (``make demo``): the whole harness, end to end, in a few minutes.

1. each detector of ``loopguard`` on a small worked example;
2. validate every bundled corpus;
3. evaluate the production defaults on the synthetic and the real corpora;
4. a small sweep of the guard and one of the overthinking detector, each scored
   on its test split next to the defaults;
5. export the tuned values to a copy of the defaults (never the library's file);
6. build the report from the saved runs, and say where it is.

Everything is written under ``runs/demo/`` (``--out`` to change it).
"""

from __future__ import annotations

import argparse
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import loopguard as lg

REPO = Path(__file__).resolve().parent.parent
PRODUCTION_DETECTORS = ["thread_cycle", "repetition_guard", "text_run", "overthinking", "alm"]


def call(kind: str, name: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    function = {"name": name, "arguments": arguments, **extra}
    return {
        "type": "activity",
        "text": "",
        "meta": {"activity": {"type": kind, "function": function}},
    }


def section(title: str) -> None:
    print(f"\n== {title}")


def demo_thread_heuristics(out: Callable[[str], None] = print) -> None:
    section("Thread heuristics (is_thread_cyclic / describe_thread_cycle)")
    exchange = [{"type": "user", "text": "Is it done?"}, {"type": "bot", "text": "Working on it."}]
    stuck_search = [{"type": "user", "text": "Find me a modern sofa."}]
    for attempt in range(3):
        stuck_search += [
            {"type": "reasoning", "text": f"Attempt {attempt + 1}: search again."},
            call("request", "search", {"q": "modern sofa"}),
            call("response", "search", {"q": "modern sofa"}, result={"records": []}),
        ]
    polling = [{"type": "user", "text": "Wait for the deploy."}]
    for status in ("queued", "building", "testing", "live"):
        polling += [
            call("request", "deploy_status", {"id": 7}),
            call("response", "deploy_status", {"id": 7}, result={"status": status}),
        ]
    cases = {
        "verbatim exchange x2": exchange * 2,
        "same search, reasoning in between": stuck_search,
        "polling that progresses": polling,
        "runaway answer": [{"type": "bot", "text": "I will fix it now. " * 10}],
    }
    for label, thread in cases.items():
        out(f"  {label:<36} -> {lg.describe_thread_cycle(thread)}")


def demo_guard(out: Callable[[str], None] = print) -> None:
    section("Streaming repetition guard (RepetitionGuard), 3-character chunks")
    text = "Let me call lint(). I need to verify. " * 6
    guard = lg.RepetitionGuard()
    chunks = [text[i : i + 3] for i in range(0, len(text), 3)]
    tripped_at = next((i for i, chunk in enumerate(chunks) if guard.push(chunk)), None)
    out(f"  tripped at push {tripped_at} of {len(chunks)}: {guard.reason()}")
    listing = "".join(f"- step {i}: run the migration for table t{i}\n" for i in range(12))
    spared = lg.RepetitionGuard()
    out(f"  a progressing numbered list trips? {spared.push(listing)}")


def demo_text_run(out: Callable[[str], None] = print) -> None:
    section("Sentence-run backstop (has_repeated_text_run)")
    text = "Repeat me. " * 4
    out(f"  'Repeat me.' x4              -> {lg.has_repeated_text_run(text)}")
    out(f"  'Repeat me.' x4, min_units=4 -> {lg.has_repeated_text_run(text, min_units=4)}")


def demo_alm(out: Callable[[str], None] = print) -> None:
    section("Anti-Looping Monitor: the mitigation ladder")
    trace: list[dict[str, Any]] = [{"type": "user", "text": "Make the tests pass."}]
    for _ in range(20):
        trace += [
            {"type": "reasoning", "text": "Run them again."},
            call("request", "run_tests", {"path": "tests"}),
            call("response", "run_tests", {"path": "tests"}, result="ImportError: parse"),
        ]
    for index, action in lg.AntiLoopingMonitor().observe_all(trace):
        detail = action.as_dict().get("text") or action.as_dict().get("reason")
        out(f"  message {index:2}  step {action.step}  {action.kind}: {detail}")


def demo_examples() -> None:
    print(f"loopguard {lg.__version__}: defaults from {lg.defaults_path()}")
    demo_thread_heuristics()
    demo_guard()
    demo_text_run()
    demo_alm()


class Steps:
    """Numbered, timed steps on the console."""

    def __init__(self) -> None:
        self.number = 1  # step 1 is the worked examples
        self.started = time.perf_counter()

    def __call__(self, title: str) -> None:
        self.number += 1
        elapsed = time.perf_counter() - self.started
        print(f"\n[{self.number}] {title}  (t = {elapsed:.0f} s)", flush=True)


def run_pipeline(out: Path) -> Path:
    """Run steps 2-6 into ``out``; return the report's ``index.html``."""
    from harness import list_corpora, validate_corpus
    from harness.evaluate import resolve_corpora, run_evaluation
    from harness.export import ExportRefused, plan_export, write_export
    from harness.report import build_report
    from harness.sweep import run_sweep

    step = Steps()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)

    step("Validate the bundled corpora")
    for corpus in list_corpora():
        report = validate_corpus(corpus.path)
        status = "valid" if report.ok else f"{len(report.issues)} problems"
        print(f"  {corpus.name:<42} {report.cases:>6} cases  {status}")
        if not report.ok:
            raise SystemExit(f"corpus {corpus.name} is invalid: run `harness corpora validate`")

    step("Evaluate the production defaults (one run per label source)")
    runs = []
    for label, names in (
        ("synthetic", ["synthetic/default"]),
        ("tau-bench (rule labels)", ["real/tau-bench/tau-bench-airline"]),
        ("who-and-when (llm-judge labels)", ["real/who-and-when/who-and-when"]),
    ):
        target = out / "eval" / label.split(" ")[0]
        result = run_evaluation(
            resolve_corpora(names),
            PRODUCTION_DETECTORS,
            None,
            out=target,
            jobs=2,
            bootstrap=200,
            progress=False,
        )
        runs.append(target)
        print(f"  {label}: {len(result.verdicts)} verdicts -> {target}")
        for name, block in result.metrics_json["detectors"].items():
            print(
                f"    {name:<18} precision {_fmt(block.get('precision'))}  "
                f"recall {_fmt(block.get('recall'))}  F1 {_fmt(block.get('f1'))}"
            )

    sweeps = []
    for experiment in ("smoke.toml", "demo-overthinking.toml"):
        step(f"Sweep experiments/{experiment} on the training split, score on the test split")
        target = out / "sweeps" / experiment.removesuffix(".toml")
        result = run_sweep(REPO / "experiments" / experiment, out=target, progress=False)
        sweeps.append(target)
        print(f"  {result.comparison.get('verdict')}")

    step("Export the tuned values to a copy of the defaults (not the library's file)")
    copy = out / "defaults.json"
    shutil.copy(lg.defaults_path(), copy)
    for run in sweeps:
        plan = plan_export(run, defaults_path=copy)
        print("  " + plan.summary().replace("\n", "\n  "))
        try:
            write_export(plan, defaults_path=copy)
            print(f"  exported to {copy}")
        except ExportRefused as exc:
            print(f"  not exported: {exc}")
    print(f"  try them with: LOOPGUARD_DEFAULTS={copy} harness eval ...")

    step("Build the report from the saved runs (no detector is re-run)")
    index = Path(build_report([*runs, *sweeps], out / "report"))
    return index


def _fmt(value: Any) -> str:
    return "  n/a" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The harness end to end, in a few minutes.")
    parser.add_argument("--out", type=Path, default=REPO / "runs" / "demo")
    parser.add_argument("--examples-only", action="store_true", help="Only step 1.")
    args = parser.parse_args(argv)
    print("[1] Each detector on a worked example")
    demo_examples()
    if args.examples_only:
        return
    index = run_pipeline(args.out)
    print(f"\nDone. The report is {index}")
    print(
        f"(also {index.parent / 'report.md'}; runs, sweeps and the exported defaults are in "
        f"{args.out})"
    )


if __name__ == "__main__":
    main()
