"""Families ``ab-cycle`` and ``drifting-args``."""

from __future__ import annotations

import copy
from typing import Any

from ._common import Case, Message, Run
from ._loops import activity_onset, emit_loop, opening, varied_thoughts
from ._tools import TOOLS, fresh_args, healthy_steps, intent, pick_tool
from ._words import hex_id, iso_time, prose_sentence

__all__ = ["ab_cycle", "drifting_args"]


def _result(run: Run, tool_name: str, args: dict[str, Any]) -> Any:
    tool = TOOLS[tool_name]
    roll = run.rng.random()
    if roll < 0.4:
        return tool.error(run, args)
    if roll < 0.55 and tool.empty is not None:
        return tool.empty
    return tool.ok(run, args)


def ab_cycle(seed: int, index: int) -> list[Case]:
    """Alternating call cycles: A-B-A-B (or A-B-C) with the same arguments and results.

    Varies: two or three different calls (different tools, or one tool with different
    arguments), 2-5 cycles, reasoning before each call that changes every time (40%),
    results that are errors, empties or data; negatives that alternate two tools over
    items that advance (read file 1, patch file 1, read file 2, ...).

    Why hard: no single call repeats back to back, so "N identical calls in a row" and a
    run of equal results both miss it unless they look at the period; the negatives have
    the same A-B rhythm but fresh arguments.

    Targets ``repeated_suffix`` (period 4 or 6 messages) and ``repeated_activity_tail``;
    the OpenHands A-B-A-B rule. Onset: the request of the first A of the first cycle.
    """
    run = Run("ab-cycle", seed, index)
    domain, msgs = opening(run)
    used: set[str] = set()
    msgs += healthy_steps(run, domain, run.randint(0, 5), used)
    width = 3 if run.chance(0.2) else 2
    interleave = run.chance(0.4)
    if run.chance(0.7):
        calls: list[tuple[str, dict[str, Any], Any]] = []
        last = ""
        for _ in range(width):
            tool = pick_tool(run, domain, (last,))
            last = tool.name
            args = fresh_args(run, tool, used)
            calls.append((tool.name, args, _result(run, tool.name, args)))
        cycles = run.randint(2, 5) if width == 2 else run.randint(2, 4)
        thoughts = varied_thoughts(run, calls[0][0], cycles * width) if interleave else []
        units: list[list[Message]] = []
        for c in range(cycles):
            unit: list[Message] = []
            for j, (name, args, result) in enumerate(calls):
                if interleave:
                    unit.append(run.reasoning(thoughts[c * width + j]))
                unit += run.call(name, args, result)
            units.append(unit)
        full = msgs + [m for u in units for m in u]
        first = len(msgs) + (1 if interleave else 0)
        onset = activity_onset(full, first, 2 * width)
        tags = ["abc-cycle" if width == 3 else "ab-cycle"] + (
            ["interleaved-reasoning"] if interleave else []
        )
        names = "-".join(n for n, _, _ in calls)
        emit_loop(
            run,
            msgs,
            units,
            onset=onset,
            first_len=len(msgs) + len(units[0]) - onset,
            min_units=2,
            kind="ab-cycle",
            note=f"the cycle {names} repeats {{n}} times with identical arguments and results",
            tags=tags,
        )
        return run.cases
    # Negative: the same rhythm over advancing items.
    tool_a = pick_tool(run, domain)
    tool_b = pick_tool(run, domain, (tool_a.name,))
    for _ in range(run.randint(3, 7)):
        for tool in (tool_a, tool_b):
            args = fresh_args(run, tool, used)
            if interleave:
                msgs.append(run.reasoning(f"{intent(run, tool, args)} {prose_sentence(run)}"))
            msgs += run.call(tool.name, args, tool.ok(run, args))
    if run.chance(0.5):
        msgs.append(run.bot(f"All items handled. {prose_sentence(run)}"))
    tags = ["alternating"] + (["interleaved-reasoning"] if interleave else [])
    run.add_case(
        "full",
        msgs,
        looping=False,
        kind="progress",
        note=f"{tool_a.name} and {tool_b.name} alternate over new items each time",
        tags=tags,
        hard_negative=True,
    )
    return run.cases


_DRIFTS = ("attempt", "timestamp", "request_id", "cache_buster", "retry_token")


def _drift(run: Run, kind: str, elapsed: int) -> tuple[str, Any]:
    """The drifting field of one call; ``elapsed`` grows with every call."""
    if kind == "attempt":
        return "attempt", elapsed
    if kind == "timestamp":
        return "timestamp", iso_time(elapsed)
    if kind == "request_id":
        return "request_id", f"{hex_id(run, 8)}-{hex_id(run, 4)}-{hex_id(run, 4)}"
    if kind == "cache_buster":
        return "_", 1704067200000 + elapsed * 1000 + run.randint(0, 999)
    return "retry_token", hex_id(run, 16)


def drifting_args(seed: int, index: int) -> list[Case]:
    """A real loop whose arguments carry a changing counter, timestamp or id (3-8 calls).

    Varies: the drifting field (attempt counter, ISO timestamp, request id, cache-busting
    epoch milliseconds, retry token), the tool, the result the call keeps returning (data,
    empty or error), reasoning between calls (50%), the prefix. Negatives: pagination,
    where the page or cursor advances and every page returns new records.

    Why hard: every request is unique, so exact heuristics (which hash the full
    arguments) never see a repeat: tagged ``exact-heuristics-miss``. Pagination
    negatives look the same to a detector that ignores numeric fields.

    Targets detectors that normalise arguments; ALM action hashing misses it too.
    Onset: the request of the first call of the run.
    """
    run = Run("drifting-args", seed, index)
    domain, msgs = opening(run)
    used: set[str] = set()
    msgs += healthy_steps(run, domain, run.randint(0, 5), used)
    tool = pick_tool(run, domain)
    args = fresh_args(run, tool, used)
    interleave = run.chance(0.5)
    if run.chance(0.7):
        drift = run.choice(_DRIFTS)
        result = _result(run, tool.name, args)
        reps = run.randint(3, 8)
        thoughts = varied_thoughts(run, tool.name, reps) if interleave else []
        units: list[list[Message]] = []
        elapsed = 1 if drift == "attempt" else run.randint(0, 360 * 86400)
        for i in range(reps):
            key, value = _drift(run, drift, elapsed)
            elapsed += 1 if drift == "attempt" else run.randint(2, 90)
            call_args = copy.deepcopy(args)
            call_args[key] = value
            unit: list[Message] = [run.reasoning(thoughts[i])] if interleave else []
            units.append(unit + run.call(tool.name, call_args, result))
        full = msgs + [m for u in units for m in u]
        first = len(msgs) + (1 if interleave else 0)
        onset = activity_onset(full, first, 2, key=lambda m: _without(m, key))
        tags = ["exact-heuristics-miss", f"drift-{drift}"] + (
            ["interleaved-reasoning"] if interleave else []
        )
        emit_loop(
            run,
            msgs,
            units,
            onset=onset,
            first_len=len(msgs) + len(units[0]) - onset,
            min_units=3,
            kind="drifting-args",
            note=f"{tool.name} is called {{n}} times; only the {drift} field changes, "
            "the result never does",
            tags=tags,
        )
        return run.cases
    # Negative: pagination over new records.
    pages = run.randint(3, 7)
    cursor = run.chance(0.4)
    for i in range(pages):
        page_args = copy.deepcopy(args)
        if cursor:
            page_args["cursor"] = None if i == 0 else hex_id(run, 12)
        else:
            page_args["page"] = i + 1
        if interleave:
            msgs.append(run.reasoning(f"Page {i + 1} next. {prose_sentence(run)}"))
        result = {
            "page": i + 1,
            "items": [f"{hex_id(run, 6)}" for _ in range(run.randint(2, 5))],
            "has_more": i < pages - 1,
        }
        msgs += run.call(tool.name, page_args, result)
    msgs.append(run.bot(f"I went through all {pages} pages. {prose_sentence(run)}"))
    tags = ["pagination", "cursor" if cursor else "page-counter"] + (
        ["interleaved-reasoning"] if interleave else []
    )
    run.add_case(
        "full",
        msgs,
        looping=False,
        kind="progress",
        note="a counter or cursor advances and each page returns new items",
        tags=tags,
        hard_negative=True,
    )
    return run.cases


def _without(message: Message, drift_key: str) -> Any:
    """A call's identity with the drifting field left out."""
    function = message["meta"]["activity"]["function"]
    args = {k: v for k, v in function["arguments"].items() if k != drift_key}
    return (
        message["meta"]["activity"]["type"],
        function["name"],
        repr(args),
        repr(function.get("result")),
    )
