"""Import tau-bench historical trajectories into rule-labelled cases.

One case per run (the whole trajectory). Two stated rules decide the label;
a run neither rule decides gives no case and is counted as unlabelled. See
``docs/real-corpora.md``.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from .._errors import CorpusError
from ._common import ImportSummary, activity_message, load_json, write_cases

__all__ = [
    "ERROR_RETRY_MIN",
    "NEGATIVE_RULE",
    "POSITIVE_RULE",
    "import_tau_bench",
    "label_run",
    "map_trajectory",
]

_LICENSE = "MIT (Copyright (c) 2024 Sierra)"

# Three identical failures is where the agent stops exploring and starts retrying:
# OpenHands' StuckDetector uses the same count for identical erroring actions.
ERROR_RETRY_MIN = 3

POSITIVE_RULE = (
    f"error-retry: one tool returned the same error text (a result starting with 'Error') "
    f"{ERROR_RETRY_MIN} or more times in the run, whatever the arguments and whatever the "
    f"reward; onset = the response message where that error's count reaches {ERROR_RETRY_MIN}"
)
NEGATIVE_RULE = (
    "rewarded, no repetition: reward 1.0, no tool called twice with equal arguments, "
    "no tool error text returned twice, and no assistant text said twice verbatim"
)


def _arguments(raw: object) -> object:
    """Parse a JSON-string ``arguments``; keep the string when it is not JSON."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def map_trajectory(traj: list[Any], where: str) -> list[dict[str, Any]]:
    """Map an OpenAI-format trajectory to corpus messages.

    ``system`` -> ``system``, ``user`` -> ``user``, assistant text -> ``bot``, each
    ``tool_calls`` entry -> an ``activity`` request, and the ``tool`` message that
    answers it -> an ``activity`` response whose ``result`` is the tool content
    string exactly as logged. The ``tool_call_id`` is kept as a message field, not
    in ``meta``: ids are reused across calls, and in ``meta`` it would make every
    call look different to a fingerprint.

    Examples
    --------
    >>> msgs = map_trajectory([{"role": "user", "content": "hi"}], "x")
    >>> msgs[0]
    {'type': 'user', 'text': 'hi'}
    """
    messages: list[dict[str, Any]] = []
    pending: list[
        tuple[str, str, object]
    ] = []  # (call id, name, arguments) awaiting a tool message
    for index, turn in enumerate(traj):
        if not isinstance(turn, dict) or not isinstance(turn.get("role"), str):
            raise CorpusError(f"{where}: traj[{index}] has no string 'role'")
        role = turn["role"]
        content = turn.get("content")
        if role == "tool":
            if not pending:
                raise CorpusError(f"{where}: traj[{index}] is a tool message with no open call")
            call_id, name, arguments = pending.pop(0)
            if turn.get("tool_call_id") != call_id or turn.get("name") != name:
                raise CorpusError(
                    f"{where}: traj[{index}] answers {turn.get('tool_call_id')!r} "
                    f"({turn.get('name')!r}) but the open call is {call_id!r} ({name!r})"
                )
            if not isinstance(content, str):
                raise CorpusError(f"{where}: traj[{index}].content is not a string")
            response = activity_message("response", name, arguments, result=content, settled=True)
            response["tool_call_id"] = call_id
            messages.append(response)
            continue
        if pending:
            raise CorpusError(
                f"{where}: traj[{index}] comes before the tool answer to {pending[0][0]!r}"
            )
        if content is not None and not isinstance(content, str):
            raise CorpusError(f"{where}: traj[{index}].content is neither a string nor null")
        if role in ("system", "user"):
            messages.append({"type": role, "text": content or ""})
        elif role == "assistant":
            calls = turn.get("tool_calls") or []
            if content or not calls:
                messages.append({"type": "bot", "text": content or ""})
            for call in calls:
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                    raise CorpusError(f"{where}: traj[{index}] has a tool call without a name")
                name = function["name"]
                arguments = _arguments(function.get("arguments"))
                request = activity_message("request", name, arguments)
                request["tool_call_id"] = call.get("id")
                messages.append(request)
                pending.append((call.get("id"), name, arguments))
        else:
            raise CorpusError(f"{where}: traj[{index}] has the unknown role {role!r}")
    if pending:
        raise CorpusError(
            f"{where}: the trajectory ends before the tool answer to {pending[0][0]!r}"
        )
    return messages


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def label_run(messages: list[dict[str, Any]], reward: float) -> dict[str, Any] | None:
    """Apply the two rules to one mapped run; None when neither decides.

    Examples
    --------
    >>> err = lambda: {"type": "activity", "text": "", "meta": {"activity": {"type": "response",
    ...     "function": {"name": "book", "arguments": {}, "result": "Error: no seats"}}}}
    >>> label_run([err(), err(), err()], 0.0)["onset"]
    {'message': 2, 'char': None}
    """
    errors: Counter[tuple[str, str]] = Counter()
    calls: Counter[tuple[str, str]] = Counter()
    onset: int | None = None
    for index, message in enumerate(messages):
        activity = (
            message.get("meta", {}).get("activity") if message["type"] == "activity" else None
        )
        if activity is None or activity["type"] != "response":
            continue
        function = activity["function"]
        calls[(function["name"], _canonical(function["arguments"]))] += 1
        result = function["result"]
        if isinstance(result, str) and result.startswith("Error"):
            errors[(function["name"], result)] += 1
            if onset is None and errors[(function["name"], result)] == ERROR_RETRY_MIN:
                onset = index
    if onset is not None:
        return {
            "looping": True,
            "onset": {"message": onset, "char": None},
            "kind": "error-retry",
            "source": "rule",
            "note": POSITIVE_RULE,
        }
    texts = Counter(m["text"] for m in messages if m["type"] == "bot" and m["text"])
    repeated = (
        any(n > 1 for n in calls.values())
        or any(n > 1 for n in errors.values())
        or any(n > 1 for n in texts.values())
    )
    if reward == 1.0 and not repeated:
        return {
            "looping": False,
            "onset": None,
            "kind": "progress",
            "source": "rule",
            "note": NEGATIVE_RULE,
        }
    return None


def _unlabelled_reason(reward: float) -> str:
    if reward == 1.0:
        return "rewarded, but a call, an error or an assistant text repeats (no error-retry)"
    return "unrewarded, no error-retry"


def import_tau_bench(
    raw_file: str | os.PathLike[str], out_path: str | os.PathLike[str], *, domain: str = "airline"
) -> ImportSummary:
    """Convert a tau-bench historical-trajectory file into a rule-labelled corpus.

    Parameters
    ----------
    raw_file
        A JSON list of runs with ``task_id``, ``trial``, ``reward`` and ``traj``.
    out_path
        The corpus to write (``.jsonl`` or ``.jsonl.gz``), atomically.
    domain
        The tau-bench domain, used in ids and groups.

    Returns
    -------
    ImportSummary
        Cases, label balance, and the unlabelled runs by reason.

    Examples
    --------
    >>> import_tau_bench("gpt-4o-airline.json", "airline.jsonl").positives  # doctest: +SKIP
    9
    """
    path = Path(raw_file)
    runs = load_json(path)
    if not isinstance(runs, list):
        raise CorpusError(f"{path}: expected a JSON list of runs")
    dataset = f"tau-bench-{domain}"
    skipped: Counter[str] = Counter()
    cases: list[dict[str, Any]] = []
    for position, run in enumerate(runs):
        where = f"{path}[{position}]"
        if not isinstance(run, dict):
            raise CorpusError(f"{where}: a run must be an object")
        task, trial, reward = run.get("task_id"), run.get("trial"), run.get("reward")
        if not isinstance(task, int) or not isinstance(trial, int):
            raise CorpusError(f"{where}: task_id and trial must be integers")
        if isinstance(reward, bool) or not isinstance(reward, int | float):
            raise CorpusError(f"{where}: reward must be a number")
        if not isinstance(run.get("traj"), list):
            raise CorpusError(f"{where}: traj must be a list")
        messages = map_trajectory(run["traj"], where)
        label = label_run(messages, float(reward))
        if label is None:
            skipped[_unlabelled_reason(float(reward))] += 1
            continue
        # Trials of one task share the user's instruction: they go to the same split.
        group = f"tau-bench/{domain}/task-{task:02d}"
        cases.append(
            {
                "id": f"{group}/trial-{trial}",
                "messages": messages,
                "label": label,
                "group": group,
                "tags": ["tool-calling", "rewarded" if reward == 1.0 else "unrewarded"],
                "origin": {
                    "dataset": dataset,
                    "path": path.name,
                    "index": position,
                    "task_id": task,
                    "trial": trial,
                    "reward": reward,
                    "license": _LICENSE,
                    "annotator": "rule",
                },
            }
        )
    summary = ImportSummary(dataset, os.fspath(out_path), skipped=dict(skipped))
    summary.notes["runs"] = len(runs)
    return write_cases(out_path, cases, summary)
