"""Import Who&When (Magentic-One runs) into ledger-labelled cases.

Each ``Updated Ledger`` the Magentic-One orchestrator writes gives one case: the
trace before that ledger, labelled with the ledger's own ``is_in_loop`` answer
(``source: llm-judge``). CaptainAgent traces (``algorithm-generated/``) carry no
loop judgement and give no case. See ``docs/real-corpora.md``.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from .._errors import CorpusError, CorpusNotFoundError
from ._common import ImportSummary, activity_message, load_json, write_cases

__all__ = ["import_who_and_when", "map_history", "strip_log_noise"]

DATASET = "who-and-when"
_LICENSE = "MIT (Copyright (c) 2025 Ming Yin)"
_LEDGER_PREFIX = "Updated Ledger:"

# stderr of the run harness is interleaved into the logged messages: a Python
# UserWarning line and, not always right after it, the source line it points at.
_WARNING_LINE = re.compile(r"^/\S*\.py:\d+: \w*Warning: ")
_WARNING_SOURCE = re.compile(
    r"^  (?:response|ledger_response|create_result) = await [\w.]*create\("
)

# The action descriptions Magentic-One's MultimodalWebSurfer writes before each
# observation (multimodal_web_surfer.py, _execute_tool): tool name and the
# arguments the description reveals. Order matters: specific forms first.
_WEB_ACTIONS: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...] = (
    (re.compile(r"I typed '(.*)' into the browser address bar\.", re.S), "visit_url", ("url",)),
    (re.compile(r"I typed '(.*)' into the browser search bar\.", re.S), "web_search", ("query",)),
    (
        re.compile(r"I typed '(.*)' into '(.*)'\.", re.S),
        "input_text",
        ("text_value", "input_field_name"),
    ),
    (re.compile(r"I input '(.*)'\.", re.S), "input_text", ("text_value",)),
    (re.compile(r"I clicked the browser back button\."), "history_back", ()),
    (re.compile(r"I clicked the control\."), "click", ()),
    (re.compile(r"I clicked '(.*)'\.", re.S), "click", ("target_name",)),
    (re.compile(r"I scrolled up one page in the browser\."), "page_up", ()),
    (re.compile(r"I scrolled down one page in the browser\."), "page_down", ()),
    (re.compile(r"I scrolled the control (up|down)\."), "scroll_element", ("direction",)),
    (
        re.compile(r"I scrolled '(.*)' (up|down)\.", re.S),
        "scroll_element",
        ("target_name", "direction"),
    ),
    (
        re.compile(r"I am waiting a short period of time before taking further action\."),
        "sleep",
        (),
    ),
)


def strip_log_noise(text: str) -> tuple[str, int]:
    """Remove the interleaved Python warning lines from a logged message.

    Return the cleaned text and how many lines were removed.

    Examples
    --------
    >>> strip_log_noise("Next speaker Assistant\\n/x/coder.py:55: UserWarning: m\\n"
    ...                 "  response = await self._model_client.create(")
    ('Next speaker Assistant', 2)
    """
    lines = text.split("\n")
    kept = [
        line for line in lines if not (_WARNING_LINE.match(line) or _WARNING_SOURCE.match(line))
    ]
    return "\n".join(kept), len(lines) - len(kept)


def _web_action(text: str) -> tuple[str, dict[str, str]] | None:
    """Recognise a WebSurfer action description (first paragraph); None if there is none."""
    first = text.split("\n\n", 1)[0]
    for pattern, name, fields in _WEB_ACTIONS:
        match = pattern.fullmatch(first)
        if match:
            return name, dict(zip(fields, match.groups(), strict=True))
    return None


def map_history(
    history: list[dict[str, Any]], where: str
) -> tuple[list[list[dict[str, Any]]], int]:
    """Map Magentic-One log steps to messages: one list of messages per step.

    Return the per-step message lists and the number of log-noise lines removed.
    A step becomes one message, except a tool observation (WebSurfer action,
    FileSurfer view, ComputerTerminal run), which becomes a request/response pair.
    """
    out: list[list[dict[str, Any]]] = []
    removed_total = 0
    for index, step in enumerate(history):
        if not isinstance(step, dict) or not isinstance(step.get("role"), str):
            raise CorpusError(f"{where}: history[{index}] has no string 'role'")
        content = step.get("content")
        if not isinstance(content, str):
            raise CorpusError(f"{where}: history[{index}].content is not a string")
        text, removed = strip_log_noise(content)
        removed_total += removed
        out.append(_map_step(step["role"], text))
    return out, removed_total


def _map_step(role: str, text: str) -> list[dict[str, Any]]:
    if role == "human":
        return [{"type": "user", "text": text}]
    if role.startswith("Orchestrator (") and role.endswith(")"):
        channel = role[len("Orchestrator (") : -1]
        if channel == "thought":
            return [{"type": "reasoning", "text": text, "meta": {"agent": "Orchestrator"}}]
        if channel.startswith("-> "):
            meta = {"agent": "Orchestrator", "to": channel[3:]}
            return [{"type": "bot", "text": text, "meta": meta}]
        return [{"type": "bot", "text": text, "meta": {"agent": "Orchestrator", "event": channel}}]
    tool: tuple[str, dict[str, str]] | None = None
    if role == "WebSurfer":
        tool = _web_action(text)
    elif role == "FileSurfer" and text.startswith("Address: "):
        # The file viewer's state; which file tool produced it is not logged.
        tool = ("FileSurfer", {})
    elif role == "ComputerTerminal":
        # It runs the code blocks of the previous message; the trace logs only the outcome.
        tool = ("ComputerTerminal", {})
    if tool is None:
        return [{"type": "bot", "text": text, "meta": {"agent": role}}]
    name, arguments = tool
    agent = {"agent": role}
    return [
        activity_message("request", name, arguments, extra_meta=agent),
        activity_message("response", name, arguments, result=text, settled=True, extra_meta=agent),
    ]


def _parse_ledger(text: str) -> dict[str, Any] | None:
    """Return the ledger object of an ``Updated Ledger`` thought, or None if unparseable."""
    body = text[len(_LEDGER_PREFIX) :]
    try:
        ledger = json.loads(body)
    except json.JSONDecodeError:
        return None
    return ledger if isinstance(ledger, dict) else None


def _judgement(ledger: dict[str, Any], key: str) -> dict[str, Any] | None:
    entry = ledger.get(key)
    if not isinstance(entry, dict) or not isinstance(entry.get("answer"), bool):
        return None
    reason = entry.get("reason")
    return {"answer": entry["answer"], "reason": reason if isinstance(reason, str) else ""}


def _numeric_stem(path: Path) -> tuple[int, str]:
    return (int(path.stem), path.name) if path.stem.isdigit() else (1 << 62, path.name)


def _trace_cases(
    path: Path, rel: str, skipped: Counter[str], noise: Counter[str]
) -> list[dict[str, Any]]:
    raw = load_json(path)
    if not isinstance(raw, dict) or not isinstance(raw.get("history"), list):
        raise CorpusError(f"{path}: expected an object with a 'history' list")
    history: list[dict[str, Any]] = raw["history"]
    steps, removed = map_history(history, os.fspath(path))
    noise["lines"] += removed
    trace = rel.removesuffix(".json")
    group = f"{DATASET}/{trace}"
    failure = {
        key: raw[key] for key in ("mistake_agent", "mistake_step", "mistake_reason") if key in raw
    }
    cases: list[dict[str, Any]] = []
    prefix: list[dict[str, Any]] = []
    for index, step in enumerate(history):
        text = steps[index][0]["text"] if steps[index][0]["type"] == "reasoning" else ""
        is_ledger = step["role"] == "Orchestrator (thought)" and text.startswith(_LEDGER_PREFIX)
        if is_ledger:
            ledger = _parse_ledger(text)
            in_loop = _judgement(ledger, "is_in_loop") if ledger is not None else None
            if ledger is None:
                skipped["ledger not parseable as JSON"] += 1
            elif in_loop is None:
                skipped["ledger without a boolean is_in_loop.answer"] += 1
            else:
                cases.append(_ledger_case(raw, rel, group, index, list(prefix), ledger, failure))
        prefix.extend(steps[index])
    return cases


def _ledger_case(
    raw: dict[str, Any],
    rel: str,
    group: str,
    step: int,
    messages: list[dict[str, Any]],
    ledger: dict[str, Any],
    failure: dict[str, Any],
) -> dict[str, Any]:
    in_loop = _judgement(ledger, "is_in_loop")
    assert in_loop is not None  # checked by the caller
    judge = {
        key: value
        for key in ("is_in_loop", "is_progress_being_made", "is_request_satisfied")
        if (value := _judgement(ledger, key)) is not None
    }
    progress = judge.get("is_progress_being_made")
    tags = ["magentic-one", "multi-agent"]
    if progress is not None and progress["answer"] is False:
        tags.append("judged-no-progress")
    origin: dict[str, Any] = {
        "dataset": DATASET,
        "system": "Magentic-One",
        "path": rel,
        "ledger_step": step,
        "license": _LICENSE,
        "annotator": "the run's own Magentic-One orchestrator (gpt-4o), ledger is_in_loop",
        "question_ID": raw.get("question_ID"),
    }
    if "level" in raw:
        origin["level"] = raw["level"]
    origin["failure_attribution"] = failure
    return {
        "id": f"{group}/step-{step:03d}",
        "messages": messages,
        "label": {
            "looping": in_loop["answer"],
            "onset": None,
            "source": "llm-judge",
            "note": in_loop["reason"],
            "judge": judge,
        },
        "group": group,
        "tags": tags,
        "origin": origin,
    }


def import_who_and_when(
    raw_dir: str | os.PathLike[str], out_path: str | os.PathLike[str]
) -> ImportSummary:
    """Convert a Who&When folder into a ledger-labelled corpus at ``out_path``.

    Parameters
    ----------
    raw_dir
        The folder holding ``hand-crafted/*.json`` (Magentic-One) and, optionally,
        ``algorithm-generated/*.json`` (CaptainAgent, counted but not converted).
    out_path
        The corpus to write (``.jsonl`` or ``.jsonl.gz``), atomically.

    Returns
    -------
    ImportSummary
        Cases, label balance, and what gave no case, by reason.

    Examples
    --------
    >>> import_who_and_when("raw/who-and-when", "who-and-when.jsonl").cases  # doctest: +SKIP
    756
    """
    root = Path(raw_dir)
    hand = root / "hand-crafted"
    if not hand.is_dir():
        raise CorpusNotFoundError(f"{root}: no 'hand-crafted' folder of Magentic-One traces")
    skipped: Counter[str] = Counter()
    noise: Counter[str] = Counter()
    cases: list[dict[str, Any]] = []
    files = sorted(hand.glob("*.json"), key=_numeric_stem)
    if not files:
        raise CorpusNotFoundError(f"{hand}: no *.json trace")
    for path in files:
        found = _trace_cases(path, f"hand-crafted/{path.name}", skipped, noise)
        if not found:
            skipped["Magentic-One trace without a usable ledger"] += 1
        cases.extend(found)
    captain = root / "algorithm-generated"
    if captain.is_dir():
        count = sum(1 for _ in captain.glob("*.json"))
        if count:
            skipped["CaptainAgent trace: no loop judgement in the log"] = count
    summary = ImportSummary(DATASET, os.fspath(out_path), skipped=dict(skipped))
    if noise["lines"]:
        summary.notes["warning lines removed from message texts"] = noise["lines"]
    return write_cases(out_path, cases, summary)
