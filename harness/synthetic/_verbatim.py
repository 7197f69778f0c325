"""Family ``verbatim-exchange``: a block of 1-5 messages repeated verbatim at the end."""

from __future__ import annotations

from ._common import Case, Message, Run, fingerprint, periodic_start
from ._loops import emit_loop, opening
from ._tools import Domain, fresh_args, healthy_steps, intent, pick_tool
from ._words import prose_sentence, stuck_sentence, unique

__all__ = ["verbatim_exchange"]

FAMILY = "verbatim-exchange"

# Layouts of one block; "req" stands for a request and its response (two messages).
_LAYOUTS: dict[int, tuple[tuple[str, ...], ...]] = {
    1: (("bot",), ("bot",), ("reasoning",)),
    2: (("req",), ("user", "bot"), ("reasoning", "bot")),
    3: (("reasoning", "req"), ("bot", "req"), ("req", "bot"), ("user", "reasoning", "bot")),
    4: (("reasoning", "req", "bot"), ("req", "req"), ("user", "reasoning", "req")),
    5: (
        ("reasoning", "req", "req"),
        ("user", "reasoning", "req", "bot"),
        ("req", "reasoning", "req"),
    ),
}

_USER_NUDGES = (
    "continue",
    "Try again.",
    "It still doesn't work.",
    "Did it work?",
    "Please fix it.",
    "go on",
    "Any update?",
    "That's the same error as before.",
)


def _block(run: Run, domain: Domain, layout: tuple[str, ...], used: set[str]) -> list[Message]:
    out: list[Message] = []
    bots = unique(run, lambda: " ".join(stuck_sentence(run) for _ in range(run.randint(1, 3))), 2)
    last = ""
    for part in layout:
        if part == "bot":
            out.append(run.bot(bots.pop()))
        elif part == "user":
            out.append(run.user(run.choice(_USER_NUDGES)))
        elif part == "reasoning":
            tool = pick_tool(run, domain)
            text = intent(run, tool, tool.args(run)) if run.chance(0.5) else stuck_sentence(run)
            out.append(run.reasoning(f"{text} {prose_sentence(run)}" if run.chance(0.5) else text))
        else:
            tool = pick_tool(run, domain, (last,))
            last = tool.name
            args = fresh_args(run, tool, used)
            roll = run.rng.random()
            if roll < 0.4:
                result = tool.error(run, args)
            elif roll < 0.6 and tool.empty is not None:
                result = tool.empty
            else:
                result = tool.ok(run, args)
            out.extend(run.call(tool.name, args, result))
    return out


def verbatim_exchange(seed: int, index: int) -> list[Case]:
    """Verbatim exchanges of period 1-5 repeated at the end of the thread.

    Varies: the period (1-5 messages), the block layout (answers, reasoning, user
    nudges, tool calls with ok, error or empty results), the number of occurrences (3-8
    for period 1, 2-5 otherwise), a cut-off partial block at the end, the length of the
    healthy prefix (0-7 tool steps) and the domain. Each block message is re-chunked on
    every repeat, so only type, text and meta repeat.

    Why hard: the partial tail rotates the pattern; period 1 is below the default
    minimum pattern length of the suffix check; the prefix-only cuts (``progress``) are the
    same run a few messages earlier, and the ``min`` cuts hold just two occurrences.

    Targets ``repeated_suffix`` (and the activity checks when the block is tool calls).
    Onset: the first message of the first occurrence of the block.
    """
    run = Run(FAMILY, seed, index)
    domain, msgs = opening(run)
    used: set[str] = set()
    msgs += healthy_steps(run, domain, run.randint(0, 5), used)
    period = run.randint(1, 5)
    layout = run.choice(_LAYOUTS[period])
    block = _block(run, domain, layout, used)
    # A block whose own messages repeat would have a shorter period; the layouts avoid it.
    assert len({fingerprint(m) for m in block}) == period, layout
    occurrences = run.randint(3, 8) if period == 1 else run.randint(2, 5)
    units = [[run.again(m) for m in block] for _ in range(occurrences)]
    tail = (
        [run.again(m) for m in block[: run.randint(1, period - 1)]]
        if period > 1 and run.chance(0.3)
        else []
    )
    full = msgs + [m for u in units for m in u] + tail
    onset = periodic_start([fingerprint(m) for m in full], len(msgs), period)
    tags = [f"period-{period}"]
    if "user" in layout:
        tags.append("user-in-loop")
    if layout == ("reasoning",):
        tags.append("in-reasoning")
    if "req" in layout:
        tags.append("tool-calls")
    if tail:
        tags.append("partial-tail")
    emit_loop(
        run,
        msgs,
        units,
        onset=onset,
        first_len=period,
        min_units=3 if period == 1 else 2,
        kind="suffix",
        note=f"a block of {period} message(s) repeats verbatim {{n}} times at the end",
        tags=tags,
        tail=tail,
    )
    return run.cases
