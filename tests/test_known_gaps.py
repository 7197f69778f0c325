"""The six known gaps of the production code, kept visible as strict expected failures.

Each test asserts what a user would want. The faithful port reproduces the
original's miss, so each fails; ``strict=True`` makes a silent behaviour change
(a "fix" in the default path) break the suite.
"""

from __future__ import annotations

import json

import pytest

import loopguard as lg

GAP = pytest.mark.xfail(strict=True, reason="known gap of the production code, reproduced")


def stream(text: str, size: int = 7, **options: object) -> lg.GuardReason | None:
    guard = lg.RepetitionGuard(**options)
    for start in range(0, len(text), size):
        if guard.push(text[start : start + size]):
            return guard.reason()
    return None


@GAP
def test_loop_without_whitespace_trips() -> None:
    assert stream("lint" * 50 + " ") is not None


@GAP
def test_cjk_loop_without_spaces_trips() -> None:
    assert stream("我们需要再检查一下这个问题。" * 40 + " ") is not None


LIST = "".join(f"- apple pie recipe step {i} is ready\n" for i in range(1, 30))


def test_list_with_real_newlines_is_spared() -> None:
    # The control for the next gap: the same list, unescaped, is exempt.
    assert stream(LIST) is None


@GAP
def test_list_with_escaped_newlines_in_json_is_spared() -> None:
    assert stream(json.dumps({"items": LIST}) + " ") is None


@GAP
def test_two_lead_near_duplicate_table_is_spared() -> None:
    rows = "| primary | healthy | eu west |\n| replica | healthy | eu west |\n" * 10
    assert stream("| Server | Status | Region |\n|---|---|---|\n" + rows) is None


@GAP
def test_run_on_loop_without_terminators_is_a_text_run() -> None:
    assert lg.has_repeated_text_run("the same words again and again " * 100)


THREAD = [
    {"type": "user", "text": "Check the build."},
    {"type": "bot", "text": "Step one. Let me check. Let me check. Let me check."},
    {"type": "bot", "text": "Let me check. Let me check. Let me check. Let me check."},
]


def test_loop_in_one_message_is_cyclic() -> None:
    # The control for the next gap: the same units in one message are caught.
    joined = " ".join(m["text"] for m in THREAD[1:])
    assert lg.is_thread_cyclic([THREAD[0], {"type": "bot", "text": joined}])


@GAP
def test_loop_split_across_two_messages_is_cyclic() -> None:
    assert lg.is_thread_cyclic(THREAD)
