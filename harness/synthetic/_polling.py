"""Family ``polling``: status polling that progresses, and polling of a hung job."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._common import Case, Message, Run
from ._loops import activity_onset, opening
from ._tools import healthy_steps
from ._words import WORDS, hex_id, prose_sentence

__all__ = ["polling"]

_POLLERS: tuple[tuple[str, Callable[[Run], dict[str, Any]]], ...] = (
    ("get_job_status", lambda run: {"job_id": f"job-{hex_id(run, 10)}"}),
    ("get_build", lambda run: {"build_id": run.randint(1000, 99999), "project": run.choice(WORDS)}),
    ("get_export_status", lambda run: {"export_id": hex_id(run, 12)}),
    (
        "get_deployment",
        lambda run: {
            "name": f"{run.choice(WORDS)}-api",
            "environment": run.choice(("staging", "production")),
        },
    ),
    (
        "get_training_run",
        lambda run: {"run": f"runs/{hex_id(run, 8)}", "fields": ["status", "step", "loss"]},
    ),
)

_WAITS = (
    ("sleep", {"seconds": 30}, {"slept": 30}),
    ("wait", {"seconds": 10}, None),
    ("sleep", {"seconds": 60}, {"slept": 60}),
)


def _status(run: Run, name: str, stage: str, progress: int, tick: int) -> Any:
    """A poll result; the fields differ by tool so no single shape dominates."""
    if stage == "queued":
        return {"status": "queued", "position": max(1, 12 - tick)}
    if name == "get_training_run":
        loss = round(2.5 * (1 - progress / 120), 4)
        return {"status": stage, "step": progress * 50, "loss": loss}
    out: dict[str, Any] = {"status": stage, "progress": progress}
    if name == "get_build":
        out["log_lines"] = 40 + progress * 7
    if stage == "running" and name != "get_export_status":
        out["eta_s"] = max(5, (100 - progress) * 4)
    return out


def polling(seed: int, index: int) -> list[Case]:
    """Status polling: progressing polls (negatives) versus a hung job (positives).

    Varies: the poller (jobs, builds, exports, deployments, training runs, each with its
    own result shape), the queue phase, the progress step per poll, identical wait calls
    between polls (50%), reasoning between polls (40%), an occasional plateau where two
    consecutive polls return the same result, and whether the job finishes. Positives:
    after some progress the status freezes and 4-8 more polls return the identical result.

    Why hard: progressing polls repeat the exact request over and over and the
    interleaved ``sleep`` calls repeat request *and* result; a plateau repeats a result
    twice. Hung jobs look like normal polling until the result stops changing.

    Targets ``repeated_result_run`` (positives), and the progressing-request exemption of
    ``repeated_activity_tail`` (negatives). Onset: the first message of the first
    occurrence of the frozen unit (the poll, or the wait call just before it).
    """
    run = Run("polling", seed, index)
    name, make_args = run.choice(_POLLERS)
    args = make_args(run)
    domain, msgs = opening(run)
    if run.chance(0.7):
        msgs[-1] = run.user(run.choice(_TASKS).format(what=_NOUNS[name]))
    used: set[str] = set()
    msgs += healthy_steps(run, domain, run.randint(0, 3), used)
    wait = run.choice(_WAITS) if run.chance(0.5) else None
    think = run.chance(0.4)
    hung = run.chance(0.55)
    plateau_at = run.randint(2, 6) if (not hung and run.chance(0.3)) else -1

    def poll(stage: str, progress: int, tick: int) -> list[Message]:
        out: list[Message] = []
        if think:
            out.append(run.reasoning(f"{_THOUGHTS[tick % len(_THOUGHTS)]} ({stage}, {progress}%)"))
        if wait is not None and tick > 0:
            w_name, w_args, w_result = wait
            out += run.call(w_name, w_args, w_result)
        out += run.call(name, args, _status(run, name, stage, progress, tick))
        return out

    tick = 0
    for _ in range(run.randint(0, 3)):
        msgs += poll("queued", 0, tick)
        tick += 1
    steps = run.randint(2, 7)
    # Distinct, increasing values: progress never saturates into accidental repeats.
    values = sorted(run.sample(range(1, 95), steps))
    for s, progress in enumerate(values):
        msgs += poll("running", progress, tick)
        tick += 1
        if s == plateau_at:
            msgs += poll("running", progress, tick)
            tick += 1
    if not hung:
        finished = run.chance(0.6)
        if finished:
            msgs += poll("succeeded", 100, tick)
            msgs.append(run.bot(f"The {_NOUNS[name]} finished. {prose_sentence(run)}"))
        tags = (
            ["polling"] + (["plateau"] if plateau_at >= 0 else []) + (["with-wait"] if wait else [])
        )
        tags += ["interleaved-reasoning"] if think else []
        tags.append("finished" if finished else "still-running")
        run.add_case(
            "full",
            msgs,
            looping=False,
            kind="polling",
            note="every poll shows progress (at most two equal polls in a row)",
            tags=tags,
            hard_negative=True,
        )
        return run.cases
    reps = run.randint(4, 8)
    stuck_at = progress + run.randint(1, 4)  # one last step, then nothing moves
    frozen = [poll("running", stuck_at, tick + i) for i in range(reps)]
    full = msgs + [m for u in frozen for m in u]
    first = next(i for i in range(len(msgs), len(full)) if full[i]["type"] == "activity")
    per_unit = 4 if wait is not None else 2
    onset = activity_onset(full, first, per_unit)
    tags = (
        ["polling", "hung-job"]
        + (["with-wait"] if wait else [])
        + (["interleaved-reasoning"] if think else [])
    )
    run.add_case(
        "full",
        full,
        looping=True,
        onset=onset,
        kind="result-run",
        note=f"the job stops progressing; {reps} more polls return the identical result",
        tags=tags,
    )
    if run.chance(0.4):
        end = onset + per_unit  # the first frozen poll only: not yet a loop
        run.add_case(
            "cut",
            full[:end],
            looping=False,
            kind="polling",
            note="the same run before the result repeats",
            tags=[*tags, "truncated-before-loop"],
            hard_negative=True,
        )
    return run.cases


_NOUNS = {
    "get_job_status": "nightly job",
    "get_build": "CI build",
    "get_export_status": "data export",
    "get_deployment": "deployment",
    "get_training_run": "training run",
}
_TASKS = (
    "Start the {what} and tell me when it is done.",
    "Keep an eye on the {what} and report back once it finishes.",
    "Wait for the {what} to complete, then summarise the result.",
)
_THOUGHTS = (
    "Still in progress, I will check again shortly",
    "Not done yet, polling again",
    "Waiting for the job to move on",
    "Let me give it a bit more time",
    "Checking the status once more",
    "Progress is slow; polling again",
    "Let me see whether it advanced",
)
