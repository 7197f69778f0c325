"""Helpers shared by the loop families: onsets, loop variants, retry thoughts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._common import Message, Run, cut_message, fingerprint, periodic_start
from ._tools import DOMAINS, Domain, task_text
from ._words import prose_sentence, unique

__all__ = ["activity_onset", "emit_loop", "emit_text_loop", "opening", "varied_thoughts"]


def opening(run: Run, domain: Domain | None = None) -> tuple[Domain, list[Message]]:
    """The start of a run: sometimes a system prompt, then the user's task."""
    dom = domain or run.choice(DOMAINS)
    out: list[Message] = []
    if run.chance(0.2):
        out.append(run.system(run.choice(_SYSTEM_PROMPTS)))
    out.append(run.user(task_text(run, dom)))
    return dom, out


_SYSTEM_PROMPTS = (
    "You are a careful software agent. Use the tools to complete the task.",
    "You are an assistant with tool access. Think step by step and verify your work.",
    "You are an operations agent. Prefer read-only tools until you know the cause.",
    "You help the user with their business data. Never invent numbers.",
)


def activity_onset(
    messages: Sequence[Message],
    first: int,
    period: int,
    key: Callable[[Message], Any] = fingerprint,
) -> int:
    """The exact onset of a tool loop that starts no later than message ``first``.

    Only activity messages count (interleaved reasoning or narration may change every
    time); ``period`` is the number of activity messages in one occurrence of the
    repeated unit. The onset moves back while the activity sequence stays periodic.
    """
    positions = [i for i, m in enumerate(messages) if m.get("type") == "activity"]
    keys = [key(messages[i]) for i in positions]
    at = positions.index(first)
    return positions[periodic_start(keys, at, period)]


def emit_loop(
    run: Run,
    prefix: list[Message],
    units: list[list[Message]],
    *,
    onset: int,
    first_len: int,
    min_units: int,
    kind: str,
    note: str,
    tags: Sequence[str] = (),
    tail: Sequence[Message] = (),
    min_p: float = 0.3,
    cut_p: float = 0.4,
) -> None:
    """Add the cases of a thread-level loop run.

    * ``full``: the whole run (positive).
    * ``min``: the run stopped after ``min_units`` occurrences (positive), sometimes.
    * ``cut``: the run stopped before the loop is established, that is, at most at the
      end of the unit's first occurrence, which ends at ``onset + first_len`` (negative,
      ``progress``), sometimes.

    ``note`` may use ``{n}`` for the number of occurrences in the case.
    """
    body = [m for unit in units for m in unit]
    full = prefix + body + list(tail)
    run.add_case(
        "full",
        full,
        looping=True,
        onset=onset,
        kind=kind,
        note=note.format(n=len(units)),
        tags=tags,
    )
    if len(units) > min_units and run.chance(min_p):
        short = prefix + [m for unit in units[:min_units] for m in unit]
        run.add_case(
            "min",
            short,
            looping=True,
            onset=onset,
            kind=kind,
            note=note.format(n=min_units),
            tags=[*tags, "minimal"],
        )
    if onset >= 3 and run.chance(cut_p):
        end = run.randint(max(2, onset - 3), onset + first_len)
        run.add_case(
            "cut",
            full[:end],
            looping=False,
            kind="progress",
            note="the same run stopped before the loop is established "
            "(at most one occurrence of the unit)",
            tags=[*tags, "truncated-before-loop"],
            hard_negative=True,
        )


def emit_text_loop(
    run: Run,
    context: list[Message],
    type_: str,
    prefix: str,
    unit: str | Callable[[int], str],
    reps: int,
    *,
    min_reps: int,
    kind: str,
    note: str,
    tags: Sequence[str] = (),
    partial: bool = True,
    min_p: float = 0.25,
    cut_p: float = 0.4,
) -> None:
    """Add the cases of a run whose last message loops inside its text.

    The message is ``prefix`` followed by ``reps`` occurrences of ``unit`` (a string, or
    a function of the occurrence number for units carrying a counter) and, when
    ``partial``, a cut-off part of one more occurrence. The onset is at ``len(prefix)``.
    """
    units = [unit(i) if callable(unit) else unit for i in range(reps + 1)]
    text_body = "".join(units[:reps])
    extra = (
        units[reps][: run.randint(1, max(1, len(units[reps]) - 1))]
        if partial and run.chance(0.6)
        else ""
    )
    text = prefix + text_body + extra
    char = len(prefix)
    onset = len(context)
    message = run.message(type_, text)
    run.add_case(
        "full",
        [*context, message],
        looping=True,
        onset=onset,
        char=char,
        kind=kind,
        note=note.format(n=reps),
        tags=tags,
    )
    if reps > min_reps and run.chance(min_p):
        short = prefix + "".join(units[:min_reps])
        run.add_case(
            "min",
            [*context, run.message(type_, short)],
            looping=True,
            onset=onset,
            char=char,
            kind=kind,
            note=note.format(n=min_reps),
            tags=[*tags, "minimal"],
        )
    if char >= 40 and run.chance(cut_p):
        end = run.randint(max(20, char - 200), char + len(units[0]))
        run.add_case(
            "cut",
            [*context, cut_message(message, end)],
            looping=False,
            kind="progress",
            note="the same stream stopped before the loop is established "
            "(at most one occurrence of the unit)",
            tags=[*tags, "truncated-before-loop"],
            hard_negative=True,
        )


_RETRY_OPENERS = (
    "Hmm, ",
    "Okay, ",
    "",
    "Right, ",
    "Interesting, ",
    "Strange, ",
    "Still, ",
    "So ",
)
_RETRY_BODIES = (
    "that did not give me what I expected from {name}",
    "the {name} output looks the same as before",
    "maybe {name} needed more time",
    "I am not sure the {name} call went through",
    "the data may not have been refreshed yet",
    "I might have misread the {name} result",
    "the cache could be stale",
    "perhaps the previous call hit a replica that lags behind",
    "the {name} result should have changed by now",
    "I want to be certain about the {name} result",
)
_ERROR_BODIES = (
    "maybe that was a transient glitch in {name}",
    "the service might be back by now",
    "the timeout could have been temporary",
    "perhaps the lock is released by now",
    "it might go through this time",
    "the {name} error could have been a fluke",
    "I don't see what else to change, so {name} again",
    "the backend may have recovered",
    "the same error again, but it could be flaky",
    "the {name} failure might depend on timing",
)
_RETRY_ENDS = (
    "Let me call it again.",
    "I'll try once more.",
    "Checking again.",
    "Let me retry the same call.",
    "One more attempt should settle it.",
    "I will run {name} again to confirm.",
    "Let me verify by repeating the call.",
    "Trying it again now.",
)


def varied_thoughts(
    run: Run, name: str, k: int, extra: Sequence[str] = (), *, failing: bool = False
) -> list[str]:
    """``k`` distinct short thoughts of an agent about to repeat a call of ``name``.

    They differ every time, so a detector comparing whole messages sees no repetition.
    ``failing`` picks reasons for retrying a call that returned an error.
    """
    bodies = _ERROR_BODIES if failing else _RETRY_BODIES

    def make() -> str:
        body = run.choice(bodies).format(name=name)
        text = f"{run.choice(_RETRY_OPENERS)}{body}. {run.choice(_RETRY_ENDS).format(name=name)}"
        text = text[:1].upper() + text[1:]
        if extra and run.chance(0.3):
            text = f"{run.choice(extra)} {text}"
        if run.chance(0.25):
            text += " " + prose_sentence(run)
        return text

    return unique(run, make, k)
