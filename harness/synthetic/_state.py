"""Family ``state-stall``: tool calls with ``state`` snapshots, for the Anti-Looping Monitor."""

from __future__ import annotations

import copy
import json
from typing import Any

from ._common import Case, Message, Run
from ._loops import varied_thoughts
from ._words import WORDS, hex_id, iso_time, prose_sentence

__all__ = ["STATE_FILE", "TIMESTAMP_KEY", "state_stall"]

#: The key of the snapshot in every ``state`` object.
STATE_FILE = "state.json"
#: The only field a ``timestamp-only`` stall still changes.
TIMESTAMP_KEY = "updated_at"

_TASKS = (
    "Import the {w} customer files from the inbox into the CRM and report the totals.",
    "Load every pending {w} export in inbox/ into the warehouse, one file at a time.",
    "Process the pending {w} CSV files and keep state.json up to date.",
    "Ingest the {w} files waiting in the inbox; tell me when all rows are in.",
)


def _snapshot(state: dict[str, Any]) -> dict[str, str]:
    return {STATE_FILE: json.dumps(state, ensure_ascii=False, separators=(", ", ": "))}


class _World:
    """The agent's world: a state object and the calls that change it."""

    def __init__(self, run: Run, tiny: bool) -> None:
        self.run = run
        names = run.sample(WORDS, 12)
        self.state: dict[str, Any] = {
            "task": f"{run.choice(WORDS)}-import",
            "step": 0,
            "next": None,
            "pending": len(names),
            "done": [],
            "rows_imported": 0,
        }
        if tiny:
            # A large, constant part: the per-step change becomes a tiny share of the file.
            self.state["schema"] = {
                f"{w}_{i}": {
                    "type": run.choice(("text", "int", "date", "numeric")),
                    "nullable": run.chance(0.5),
                }
                for i, w in enumerate(run.sample(WORDS, 14))
            }
        self.queue = [f"{n}_{run.randint(1, 99):02d}.csv" for n in names]
        self.state["next"] = self.queue[0]
        self.clock = run.randint(0, 300 * 86400)
        self.state[TIMESTAMP_KEY] = iso_time(self.clock)

    def tick(self) -> None:
        self.clock += self.run.randint(5, 120)
        self.state[TIMESTAMP_KEY] = iso_time(self.clock)

    def progress_step(self, same_call: bool) -> tuple[str, dict[str, Any], Any]:
        """Process the next file: the state changes a little."""
        run = self.run
        item = self.queue.pop(0)
        rows = run.randint(10, 5000)
        self.state["done"].append(item)
        self.state["next"] = self.queue[0]
        self.state["pending"] = len(self.queue)
        self.state["rows_imported"] += rows
        self.state["step"] += 1
        self.tick()
        if same_call:
            return (
                "import_next",
                {"batch": 1},
                {"imported": item, "rows": rows, "remaining": len(self.queue)},
            )
        return (
            "import_file",
            {"path": f"inbox/{item}", "mode": "append"},
            {"ok": True, "rows": rows},
        )

    def read_step(self, i: int) -> tuple[str, dict[str, Any], Any]:
        """A read-only look around: distinct calls, state unchanged."""
        run = self.run
        item = self.queue[min(i, len(self.queue) - 1)]
        options: tuple[tuple[str, dict[str, Any], Any], ...] = (
            (
                "read_file",
                {"path": f"inbox/{item}", "head": 5 + i},
                {"lines": [f"{hex_id(run, 6)},{run.randint(1, 99)}" for _ in range(3)]},
            ),
            (
                "get_logs",
                {"service": "importer", "tail": 20 + i},
                {"lines": [prose_sentence(run)]},
            ),
            (
                "describe_table",
                {"table": f"{item.split('_')[0]}_{i}"},
                {"columns": run.randint(3, 20)},
            ),
        )
        return run.choice(options)


def _stall_calls(
    run: Run, world: _World, mode: str, steps: int
) -> list[tuple[str, dict[str, Any], Any]]:
    item = world.queue[0]
    error = run.choice(
        (
            {"ok": False, "error": "lock timeout on table customers"},
            {"ok": False, "error": f"row 1 of {item}: invalid date '31/02/2024'"},
            {"ok": False, "error": "connection reset by peer"},
        )
    )
    if mode in ("same-call", "timestamp-only"):
        return [("import_file", {"path": f"inbox/{item}", "mode": "append"}, error)] * steps
    if mode == "drift":
        return [
            ("import_file", {"path": f"inbox/{item}", "mode": "append", "attempt": i + 1}, error)
            for i in range(steps)
        ]
    if mode == "rewrite":
        content = f"id,{item.split('_')[0]}\n"
        return [
            (
                "write_file",
                {"path": f"config/{item}.map", "content": content},
                {"ok": True, "bytes": len(content)},
            )
        ] * steps
    cycle: list[tuple[str, dict[str, Any], Any]] = [
        (
            "patch_file",
            {
                "path": f"importer/{item.split('_')[0]}.py",
                "patch": "-    parse(d)\n+    parse(d, dayfirst=True)",
            },
            {"applied": False, "error": "patch does not apply"},
        ),
        ("import_file", {"path": f"inbox/{item}", "mode": "dry-run"}, error),
    ]
    if run.chance(0.3):
        cycle.append(
            (
                "read_file",
                {"path": f"inbox/{item}", "head": 3},
                {"lines": ["id,date", "1,31/02/2024", "2,01/03/2024"]},
            )
        )
    return [cycle[i % len(cycle)] for i in range(steps)]


def state_stall(seed: int, index: int) -> list[Case]:
    """Tool calls with ``state`` snapshots that stop changing, versus slow real progress.

    Varies: the stall mode (the same failing call; a cycle of two or three failing calls;
    rewriting a file with identical content, which "succeeds"; a drifting ``attempt``
    argument; a stall where only the ``updated_at`` timestamp still changes), 5-9 stalled
    steps after 1-6 progress steps, changing reasoning between calls (50%). Negatives:
    slow progress where every step moves one file (sometimes through an identical
    ``import_next`` call), a large constant schema that makes each change tiny, and a
    read-only phase of 2-4 calls between progress; plus cuts before the stall.

    Why hard: drift and rewrite stalls defeat action hashing or result comparison; the
    timestamp-only stall changes the file on every step; tiny-change negatives move
    well under 0.05 % of the file per step; identical ``import_next`` calls with
    progress repeat the exact action.

    Targets the ALM (action hashing and state drift). Onset: the request of the first
    call after the last real change of the state.
    """
    run = Run("state-stall", seed, index)
    tiny = run.chance(0.25)
    world = _World(run, tiny)
    msgs: list[Message] = [
        run.user(run.choice(_TASKS).format(w=run.choice(WORDS)), state=_snapshot(world.state))
    ]
    think = run.chance(0.5)

    def step(name: str, args: dict[str, Any], result: Any, thought: str | None) -> None:
        if thought is not None:
            msgs.append(run.reasoning(thought))
        msgs.append(run.request(name, args))
        msgs.append(run.response(name, args, result, state=_snapshot(world.state)))

    same_call = run.chance(0.4)

    def progress(n: int) -> None:
        for _ in range(n):
            name, args, result = world.progress_step(same_call)
            step(name, args, result, f"Next file. {prose_sentence(run)}" if think else None)

    progress(run.randint(1, 6))
    if run.chance(0.55):
        mode = run.choice(("same-call", "same-call", "cycle", "rewrite", "drift", "timestamp-only"))
        steps = run.randint(5, 9)
        calls = _stall_calls(run, world, mode, steps)
        thoughts: list[str | None] = [None] * steps
        if think:
            thoughts = list(varied_thoughts(run, calls[0][0], steps, failing=mode != "rewrite"))
            thoughts[0] = f"Now {world.queue[0]}. {prose_sentence(run)}"
        onset = len(msgs) + (1 if think else 0)
        stable = copy.deepcopy(world.state)
        for (name, args, result), thought in zip(calls, thoughts, strict=True):
            if mode == "timestamp-only":
                world.tick()
            step(name, args, result, thought)
        tags = (
            [f"stall-{mode}"]
            + (["interleaved-reasoning"] if think else [])
            + (["tiny-change"] if tiny else [])
        )
        if mode == "drift":
            tags += ["drifting-args", "exact-heuristics-miss"]
        run.add_case(
            "full",
            msgs,
            looping=True,
            onset=onset,
            kind="state-stall",
            note=f"after real progress, {steps} calls ({mode}) leave {STATE_FILE} unchanged"
            + (f" except {TIMESTAMP_KEY}" if mode == "timestamp-only" else ""),
            tags=tags,
        )
        if run.chance(0.35):
            end = onset + 2  # the first stalled call only
            run.add_case(
                "cut",
                msgs[:end],
                looping=False,
                kind="progress",
                note="the same run before the state stops changing",
                tags=[*tags, "truncated-before-loop"],
                hard_negative=True,
            )
        assert world.state == stable or mode == "timestamp-only"
        return run.cases
    tags = (
        ["slow-progress"]
        + (["same-call-progress"] if same_call else [])
        + (["tiny-change"] if tiny else [])
    )
    if run.chance(0.4):
        for i in range(run.randint(2, 4)):
            step(
                *world.read_step(i),
                f"Let me look before the next file. {prose_sentence(run)}" if think else None,
            )
        tags.append("read-only-phase")
    progress(run.randint(1, 5))
    if run.chance(0.5):
        msgs.append(
            run.bot(
                f"{world.state['step']} files imported, {world.state['rows_imported']} rows so far."
            )
        )
    tags += ["interleaved-reasoning"] if think else []
    run.add_case(
        "full",
        msgs,
        looping=False,
        kind="progress",
        note=f"every step changes {STATE_FILE} a little: real, slow progress",
        tags=tags,
        hard_negative=True,
    )
    return run.cases
