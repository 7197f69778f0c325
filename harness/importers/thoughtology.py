"""Import Thoughtology's annotated DeepSeek-R1 chains into overthinking-labelled cases.

The annotation tags are stripped from the chain; their positions in the stripped
text are kept in the reasoning message's ``meta.annotations``. The label comes
from the annotated reconsideration cycles by the rule below (``source:
llm-judge``: the cycles are an LLM annotator's reading). See
``docs/real-corpora.md``.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from .._errors import CorpusError
from ._common import ImportSummary, load_json, write_cases

__all__ = [
    "LOOPING_MIN_CYCLES",
    "LOOPING_MIN_CYCLE_CHARS",
    "NEGATIVE_MAX_CYCLES",
    "UNSEGMENTED_STAGE_CHARS",
    "import_thoughtology",
    "label_chain",
    "strip_annotations",
]

_LICENSE = "MIT (Copyright (c) 2025 McGill NLP)"
STAGES = ("DEFINE", "BLOOM", "CYCLE", "FINAL")
INLINE = ("r", "v")
_TAG = re.compile(r"<(/?)(DEFINE|BLOOM|CYCLE|FINAL|r|v)>")
_FENCE_OPEN = re.compile(r"\A\s*```[A-Za-z]*\s*\Z")
_FENCE_CLOSE = re.compile(r"\A\s*```\s*\Z")

# The annotation scheme makes the bloom end with a first answer, so every CYCLE
# re-opens an answered problem. 20 such re-openings is rumination, not checking:
# the median chain here has 5, and no chain has 12..36.
LOOPING_MIN_CYCLES = 20
# Annotators segment at very different grains (one chain's plain step-by-step
# arithmetic is cut into 37 short cycles), so a count alone cannot tell rumination
# from fine segmentation: the cycles must also cost a lot of text. 20,000
# characters (about 5,000 tokens) is more than the whole of the median chain.
LOOPING_MIN_CYCLE_CHARS = 20_000
# A clear negative needs at most half the positive cycle count; between the two
# thresholds no rule decides and the chain gives no case.
NEGATIVE_MAX_CYCLES = 10
# A single stage this long means the annotator did not segment the chain, so its
# cycle count says nothing (segmented chains' stages stay under 14,000 characters).
UNSEGMENTED_STAGE_CHARS = 15_000

RULE = (
    f"overthinking if the annotator marked >= {LOOPING_MIN_CYCLES} reconsideration cycles "
    f"(<CYCLE>) spanning >= {LOOPING_MIN_CYCLE_CHARS} characters in all, onset at the start "
    f"of cycle {LOOPING_MIN_CYCLES}; not looping if the annotation is complete (think closed; "
    f"one DEFINE, BLOOM and FINAL; every tag closed), has <= {NEGATIVE_MAX_CYCLES} cycles and "
    f"no stage longer than {UNSEGMENTED_STAGE_CHARS} characters; otherwise no case"
)


def strip_annotations(chain: str) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """Remove the annotation tags from an annotated chain, keeping their positions.

    Return ``(text, annotations, facts)``: ``text`` is the chain between
    ``<think>`` and ``</think>`` (to the end when the closing tag is missing)
    with every ``<DEFINE>``, ``<BLOOM>``, ``<CYCLE>``, ``<FINAL>``, ``<r>`` and
    ``<v>`` tag removed and nothing else changed; each annotation is
    ``{"tag", "start", "end"}`` in offsets of ``text`` (``end`` None when the tag
    is never closed); ``facts`` records what the parse found (think tags,
    stray closing tags, text outside the think block).

    Examples
    --------
    >>> text, spans, _ = strip_annotations("<think><BLOOM>a <r>b</r></BLOOM></think>")
    >>> text, spans
    ('a b', [{'tag': 'BLOOM', 'start': 0, 'end': 3}, {'tag': 'r', 'start': 2, 'end': 3}])
    """
    start = chain.find("<think>")
    body_start = 0 if start < 0 else start + len("<think>")
    end = chain.find("</think>", body_start)
    body_end = len(chain) if end < 0 else end
    before = chain[: max(start, 0)]
    after = "" if end < 0 else chain[end + len("</think>") :]
    facts: dict[str, Any] = {
        "think_open": start >= 0,
        "think_closed": end >= 0,
        "stray_closing_tags": 0,
    }
    # Annotators sometimes wrap their whole output in a markdown fence.
    if _FENCE_OPEN.match(before) and _FENCE_CLOSE.match(after):
        facts["dropped_wrapper"] = [before, after]
        before, after = "", ""
    facts["before"], facts["after"] = before, after

    pieces: list[str] = []
    length = 0
    spans: list[dict[str, Any]] = []
    open_span: dict[str, dict[str, Any]] = {}
    cursor = body_start
    for match in _TAG.finditer(chain, body_start, body_end):
        piece = chain[cursor : match.start()]
        pieces.append(piece)
        length += len(piece)
        cursor = match.end()
        closing, tag = match.group(1) == "/", match.group(2)
        if closing:
            span = open_span.pop(tag, None)
            if span is None:
                facts["stray_closing_tags"] += 1
            else:
                span["end"] = length
            continue
        if tag in STAGES:
            # A new stage ends any stage left open (the annotator forgot to close it).
            for other in STAGES:
                open_span.pop(other, None)
        elif tag in open_span:
            open_span.pop(tag)
        span = {"tag": tag, "start": length, "end": None}
        spans.append(span)
        open_span[tag] = span
    pieces.append(chain[cursor:body_end])
    return "".join(pieces), spans, facts


def _stage_lengths(spans: list[dict[str, Any]], text_length: int) -> list[tuple[str, int]]:
    """Each stage's tag and length; an unclosed stage runs to the next stage or the end."""
    stages = [s for s in spans if s["tag"] in STAGES]
    lengths = []
    for index, span in enumerate(stages):
        if span["end"] is not None:
            stop = span["end"]
        elif index + 1 < len(stages):
            stop = stages[index + 1]["start"]
        else:
            stop = text_length
        lengths.append((span["tag"], stop - span["start"]))
    return lengths


def label_chain(
    text: str, spans: list[dict[str, Any]], facts: dict[str, Any]
) -> tuple[dict[str, Any] | None, str]:
    """Apply the rule to one stripped chain; return ``(label or None, reason)``.

    The reason names why no rule decided when the label is None.

    Examples
    --------
    >>> spans = [{"tag": "CYCLE", "start": i * 1000, "end": (i + 1) * 1000} for i in range(20)]
    >>> label_chain("x" * 20_000, spans, {})[0]["onset"]
    {'message': 1, 'char': 19000}
    """
    cycles = [s for s in spans if s["tag"] == "CYCLE"]
    counts = Counter(s["tag"] for s in spans)
    stages = _stage_lengths(spans, len(text))
    cycle_chars = sum(length for tag, length in stages if tag == "CYCLE")
    facts_note = f"{len(cycles)} reconsideration cycles annotated, {cycle_chars} characters"
    if len(cycles) >= LOOPING_MIN_CYCLES and cycle_chars >= LOOPING_MIN_CYCLE_CHARS:
        onset = cycles[LOOPING_MIN_CYCLES - 1]["start"]
        note = f"{facts_note}. Rule: {RULE}"
        label = {
            "looping": True,
            "onset": {"message": 1, "char": onset},
            "kind": "overthinking",
            "source": "llm-judge",
            "note": note,
        }
        return label, "looping"
    complete = (
        facts.get("think_open") is True
        and facts.get("think_closed") is True
        and facts.get("stray_closing_tags") == 0
        and all(counts[stage] == 1 for stage in ("DEFINE", "BLOOM", "FINAL"))
        and all(s["end"] is not None for s in spans)
    )
    if len(cycles) >= LOOPING_MIN_CYCLES:
        return None, (
            f">= {LOOPING_MIN_CYCLES} cycles spanning < {LOOPING_MIN_CYCLE_CHARS} characters "
            "(fine segmentation)"
        )
    if not complete:
        return None, "annotation incomplete (missing stage, unclosed tag or unclosed think)"
    if max((length for _, length in stages), default=0) > UNSEGMENTED_STAGE_CHARS:
        return None, f"a stage longer than {UNSEGMENTED_STAGE_CHARS} characters (not segmented)"
    if len(cycles) > NEGATIVE_MAX_CYCLES:
        return None, (
            f"{NEGATIVE_MAX_CYCLES + 1}..{LOOPING_MIN_CYCLES - 1} cycles (between the thresholds)"
        )
    label = {
        "looping": False,
        "onset": None,
        "kind": "progress",
        "source": "llm-judge",
        "note": f"{facts_note}. Rule: {RULE}",
    }
    return label, "not looping"


def import_thoughtology(
    raw_file: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    *,
    name: str = "r1-aime",
) -> ImportSummary:
    """Convert a Thoughtology annotated-chain file into an overthinking corpus.

    Parameters
    ----------
    raw_file
        A JSON list of ``{"id", "question", "answer", "time"}`` records, ``answer``
        being the annotated chain.
    out_path
        The corpus to write (``.jsonl`` or ``.jsonl.gz``), atomically.
    name
        The chain set's name, used in ids and groups.

    Returns
    -------
    ImportSummary
        Cases, label balance, and the chains no rule decides, by reason.

    Examples
    --------
    >>> import_thoughtology("r1-aime.json", "thoughtology-r1-aime.jsonl").cases  # doctest: +SKIP
    25
    """
    path = Path(raw_file)
    records = load_json(path)
    if not isinstance(records, list):
        raise CorpusError(f"{path}: expected a JSON list of chains")
    skipped: Counter[str] = Counter()
    cases: list[dict[str, Any]] = []
    for position, record in enumerate(records):
        where = f"{path}[{position}]"
        if not isinstance(record, dict):
            raise CorpusError(f"{where}: a chain record must be an object")
        question, chain, rec_id = record.get("question"), record.get("answer"), record.get("id")
        if not isinstance(question, str) or not isinstance(chain, str):
            raise CorpusError(f"{where}: 'question' and 'answer' must be strings")
        if isinstance(rec_id, bool) or not isinstance(rec_id, int):
            raise CorpusError(f"{where}: 'id' must be an integer")
        text, spans, facts = strip_annotations(chain)
        label, reason = label_chain(text, spans, facts)
        if label is None:
            skipped[reason] += 1
            continue
        meta: dict[str, Any] = {"annotations": spans}
        if facts.get("dropped_wrapper"):
            meta["dropped_wrapper"] = facts["dropped_wrapper"]
        messages: list[dict[str, Any]] = [
            {"type": "user", "text": question},
            {"type": "reasoning", "text": text, "meta": meta},
        ]
        if facts["after"].strip():
            messages.append({"type": "bot", "text": facts["after"].strip()})
        case_id = f"thoughtology/{name}/{rec_id:02d}"
        origin: dict[str, Any] = {
            "dataset": f"thoughtology-{name}",
            "path": path.name,
            "index": position,
            "record_id": rec_id,
            "model": "DeepSeek-R1",
            "license": _LICENSE,
            "annotator": "LLM annotator of the Thoughtology authors (stage tags); label by rule",
        }
        if isinstance(record.get("time"), int | float):
            # Seconds the annotation call took, not R1's thinking time.
            origin["annotation_seconds"] = record["time"]
        tags = ["reasoning", "math"]
        if not facts["think_closed"]:
            tags.append("truncated")
        cases.append(
            {
                "id": case_id,
                "messages": messages,
                "label": label,
                "group": case_id,
                "tags": tags,
                "origin": origin,
            }
        )
    summary = ImportSummary(f"thoughtology-{name}", os.fspath(out_path), skipped=dict(skipped))
    summary.notes["chains"] = len(records)
    return write_cases(out_path, cases, summary)
