"""Families ``tool-repeat`` and ``error-retry``: one identical call, one identical result."""

from __future__ import annotations

from typing import Any

from ._common import Case, Message, Run
from ._loops import activity_onset, emit_loop, opening, varied_thoughts
from ._tools import Tool, fresh_args, healthy_steps, intent, pick_tool
from ._words import prose_sentence, unique

__all__ = ["error_retry", "tool_repeat"]

_NARRATIONS = (
    "Still checking{dots}",
    "Let me look at that once more (attempt {i}).",
    "Retrying {name}, attempt {i}.",
    "I'll double-check the result{dots}",
    "Verifying again, pass {i}.",
    "Hmm, checking {name} again (#{i}).",
)


def _narrations(run: Run, name: str, k: int) -> list[str]:
    template = run.choice(_NARRATIONS)
    return [template.format(name=name, i=i + 2, dots="." * (i + 1)) for i in range(k)]


def _interleaved_units(
    run: Run,
    mode: str,
    tool: Tool,
    args: dict[str, Any],
    result: Any,
    reps: int,
    extra: tuple[str, ...] = (),
) -> list[list[Message]]:
    """``reps`` occurrences of the same call, each preceded by changing model text."""
    if mode == "contiguous":
        return [run.call(tool.name, args, result) for _ in range(reps)]
    thoughts = varied_thoughts(run, tool.name, reps, extra, failing=bool(extra))
    thoughts[0] = intent(run, tool, args)
    narr = _narrations(run, tool.name, reps)
    units = []
    for i in range(reps):
        lead: list[Message] = []
        if mode in ("reasoning", "mixed"):
            lead.append(run.reasoning(thoughts[i]))
        if mode == "bot" or (mode == "mixed" and i > 0 and run.chance(0.5)):
            lead.append(run.bot(narr[i]))
        units.append([*lead, *run.call(tool.name, args, result)])
    return units


def _mode(run: Run) -> str:
    roll = run.rng.random()
    return (
        "contiguous"
        if roll < 0.35
        else "reasoning"
        if roll < 0.75
        else "bot"
        if roll < 0.9
        else "mixed"
    )


def _mode_tags(mode: str) -> list[str]:
    return {
        "contiguous": ["contiguous"],
        "reasoning": ["interleaved-reasoning"],
        "bot": ["interleaved-bot"],
        "mixed": ["interleaved-reasoning", "interleaved-bot"],
    }[mode]


def _emit_repeat(
    run: Run,
    prefix: list[Message],
    units: list[list[Message]],
    min_units: int,
    kind: str,
    note: str,
    tags: list[str],
) -> None:
    full = prefix + [m for u in units for m in u]
    first_request = len(prefix) + len(units[0]) - 2
    onset = activity_onset(full, first_request, 2)
    emit_loop(
        run,
        prefix,
        units,
        onset=onset,
        first_len=len(prefix) + len(units[0]) - onset,
        min_units=min_units,
        kind=kind,
        note=note,
        tags=tags,
    )


def tool_repeat(seed: int, index: int) -> list[Case]:
    """The same tool call with the same arguments and the same result, 3-7 times.

    Varies: contiguous calls or calls interleaved with reasoning or narration that
    changes every time; the tool, argument shape and result (data or an empty result);
    the number of repeats; the healthy prefix (0-8 steps) and the domain.

    Why hard: interleaved model text breaks any whole-message comparison; contiguous
    runs of 3 are shorter than the activity-tail minimum of 8 entries; the prefix-only cuts
    are the same run before its second identical call.

    Targets ``repeated_result_run`` (interleaved, kind ``result-run``) and
    ``repeated_activity_tail`` / ``repeated_suffix`` (contiguous, kind ``activity-tail``).
    Onset: the request of the first of the identical calls.
    """
    run = Run("tool-repeat", seed, index)
    domain, msgs = opening(run)
    used: set[str] = set()
    msgs += healthy_steps(run, domain, run.randint(0, 5), used)
    tool = pick_tool(run, domain)
    args = fresh_args(run, tool, used)
    empty = tool.empty is not None and run.chance(0.35)
    result = tool.empty if empty else tool.ok(run, args)
    mode = _mode(run)
    reps = run.randint(3, 7)
    units = _interleaved_units(run, mode, tool, args, result, reps)
    tags = _mode_tags(mode) + (["empty-result"] if empty else [])
    kind = "activity-tail" if mode == "contiguous" else "result-run"
    _emit_repeat(
        run,
        msgs,
        units,
        3,
        kind,
        f"{tool.name} is called {{n}} times with the same arguments and result",
        tags,
    )
    return run.cases


_ERROR_LEADS = (
    "The call failed.",
    "That errored out.",
    "Got an error back.",
    "It failed again.",
    "Same failure.",
)


def error_retry(seed: int, index: int) -> list[Case]:
    """Error-retry loops: the same failing call retried with the same error, 3-7 times.

    Varies: the tool and its error (exit codes, HTTP errors, SQL errors, patch
    failures), retries back to back or after changing reasoning or narration ("attempt
    3"), the healthy prefix; negatives where the agent recovers: it fixes the arguments
    after one error (``recovered-error``) or the same call fails twice and then succeeds
    (``transient-error``).

    Why hard: transient errors repeat the exact failing call too, but only twice and then
    clear; retry narration carries an attempt counter, so the model text never repeats.

    Targets ``repeated_result_run`` and ``repeated_activity_tail``; the OpenHands-style
    "3 identical erroring actions" rule. Onset: the request of the first failing call of
    the run of identical failures.
    """
    run = Run("error-retry", seed, index)
    domain, msgs = opening(run)
    used: set[str] = set()
    msgs += healthy_steps(run, domain, run.randint(0, 5), used, error_p=0.0)
    tool = pick_tool(run, domain)
    args = fresh_args(run, tool, used)
    error = tool.error(run, args)
    if run.chance(0.7):
        mode = _mode(run)
        reps = run.randint(3, 7)
        units = _interleaved_units(run, mode, tool, args, error, reps, _ERROR_LEADS)
        _emit_repeat(
            run,
            msgs,
            units,
            3,
            "error-retry",
            f"{tool.name} fails {{n}} times with the same arguments and error",
            _mode_tags(mode),
        )
        return run.cases
    # Negatives: the agent gets past the error.
    msgs.append(run.reasoning(intent(run, tool, args)))
    msgs += run.call(tool.name, args, error)
    if run.chance(0.5):
        tags = ["recovered-error"]
        fixed = fresh_args(run, tool, used)
        msgs.append(run.reasoning(f"{run.choice(_ERROR_LEADS)} {_fix_thought(run)}"))
        msgs += run.call(tool.name, fixed, tool.ok(run, fixed))
        note = "one failing call, then the agent changes the arguments and succeeds"
    else:
        tags = ["transient-error"]
        msgs.append(
            run.reasoning(
                unique(
                    run, lambda: f"{run.choice(_ERROR_LEADS)} It may be transient; retrying.", 1
                )[0]
            )
        )
        msgs += run.call(tool.name, args, error)
        msgs.append(run.reasoning("Failed twice. One more try, then I will change the approach."))
        msgs += run.call(tool.name, args, tool.ok(run, args))
        note = "the same call fails twice, then succeeds: a transient error, not a loop"
    msgs += healthy_steps(run, domain, run.randint(1, 4), used, error_p=0.0)
    if run.chance(0.5):
        msgs.append(run.bot(f"Done. {prose_sentence(run)}"))
    run.add_case(
        "full", msgs, looping=False, kind="progress", note=note, tags=tags, hard_negative=True
    )
    return run.cases


def _fix_thought(run: Run) -> str:
    return run.choice(
        (
            "The arguments were wrong; let me fix them.",
            "I passed the wrong identifier. Correcting it.",
            "The path is different in this repository. Trying the right one.",
            "The query syntax was off. Rewriting it.",
            "Wrong environment. Switching.",
        )
    )
