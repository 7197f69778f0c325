"""The conformance corpus: 239 recorded calls of the production code, each its own test."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

import loopguard as lg

CORPUS = Path(__file__).resolve().parent.parent / "corpora" / "conformance" / "thread-corpus.json"
RECORDS: list[dict[str, Any]] = json.loads(CORPUS.read_text(encoding="utf-8"))["records"]


def snake(options: dict[str, Any]) -> dict[str, Any]:
    return {re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower(): value for key, value in options.items()}


def test_corpus_is_complete() -> None:
    assert len(RECORDS) == 239
    assert len({r["id"] for r in RECORDS}) == 239


def _replayed_callbacks(record: dict[str, Any]) -> tuple[Any, Any, list[dict[str, Any]]]:
    """Callables that replay the recorded callbacks in order and check their arguments."""
    queue = list(record.get("callbacks", []))

    def take(kind: str, args: list[Any]) -> Any:
        assert queue, f"unexpected extra {kind} call with {args!r}"
        entry = queue.pop(0)
        assert entry["kind"] == kind, f"expected a {entry['kind']} call, got {kind}"
        assert entry["args"] == args
        return entry["result"]

    def estimate(message: dict[str, Any]) -> Any:
        return take("tokenEstimation", [message])

    def inclusive(message: dict[str, Any], trim_to: float) -> Any:
        return take("inclusive", [message, trim_to])

    return estimate, inclusive, queue


def _run_build_thread(record: dict[str, Any]) -> None:
    args = dict(record["args"][0])
    estimate, inclusive_fn, queue = _replayed_callbacks(record)
    inclusive = args.get("inclusive")
    result = lg.build_thread(
        args["messages"],
        max_tokens=args["maxTokens"],
        estimate=estimate,
        min_messages=args.get("minMessages"),
        inclusive=inclusive_fn if inclusive == "@callback" else inclusive,
    )
    assert result.as_dict() == record["expected"]
    assert queue == [], "recorded callbacks were not all made"


def _run_guard(record: dict[str, Any]) -> None:
    guard = lg.RepetitionGuard(**snake(record["args"][0]))
    tripped_at = None
    for index, chunk in enumerate(record["pushes"]):
        if guard.push(chunk) and tripped_at is None:
            tripped_at = index
    assert tripped_at == record["trippedAt"]
    reason = guard.reason()
    expected = record["expected"]
    if expected is None:
        assert reason is None
        return
    assert reason is not None
    got = reason.as_dict()
    for key in ("phrase", "count", "text"):
        assert got[key] == expected[key], key
    for key in ("uniqueRatio", "hapaxRatio"):
        assert math.isclose(got[key], expected[key], rel_tol=0, abs_tol=1e-9), key


FUNCTIONS = {
    "hasRepeatedSuffix": lg.has_repeated_suffix,
    "hasRepeatedActivityTail": lg.has_repeated_activity_tail,
    "hasRepeatedResultRun": lg.has_repeated_result_run,
    "isThreadCyclic": lg.is_thread_cyclic,
    "describeThreadCycle": lg.describe_thread_cycle,
    "hasRepeatedTextRun": lg.has_repeated_text_run,
}


@pytest.mark.parametrize("record", RECORDS, ids=[r["id"] for r in RECORDS])
def test_record(record: dict[str, Any]) -> None:
    fn = record["fn"]
    if fn == "buildThread":
        _run_build_thread(record)
    elif fn == "createRepetitionGuard":
        _run_guard(record)
    else:
        args = record["args"]
        options = snake(args[1]) if len(args) > 1 and args[1] is not None else {}
        assert FUNCTIONS[fn](args[0], **options) == record["expected"]
