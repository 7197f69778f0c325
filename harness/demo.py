"""The main job, for now: each detector of ``loopguard`` on a small worked example.

Run with ``make demo`` (or ``python -m harness.demo``). Later stages of the
harness (validation, evaluation, sweeps, export, reports) are added here as
they land.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import loopguard as lg


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


def main() -> None:
    print(f"loopguard {lg.__version__}: defaults from {lg.defaults_path()}")
    demo_thread_heuristics()
    demo_guard()
    demo_text_run()
    demo_alm()


if __name__ == "__main__":
    main()
