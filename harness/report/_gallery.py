"""Galleries of false and true positives and negatives: each case's text around the fire.

The text comes from the corpus file recorded in the run's manifest (the run
itself keeps no case text); a missing or changed corpus file is said so in the
gallery, never hidden. The phrase that tripped the detector, taken from its
reason (``text``/``phrase`` of the guard, ``window``/``pattern`` of the peers,
the tool of a tool-call check), is highlighted: ``<mark>`` in HTML, bold in
Markdown.
"""

from __future__ import annotations

import html
import itertools
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .._errors import HarnessError
from .._manifest import file_sha256
from ._load import EvalRun

__all__ = [
    "CaseContext",
    "case_context",
    "case_contexts",
    "gallery_rows",
    "reason_phrases",
]

#: Characters of context shown around a fire.
CONTEXT_CHARS = 300
# Of those, the share shown before the fire (what led to it matters most).
_BEFORE_SHARE = 0.75
# An activity message has no text: its call or result is shown, cut to this length.
_ACTIVITY_CHARS = 160
_REASON_CHARS = 400
_ALM_TOOL = re.compile(r'tool "([^"]+)"')
_MARKER = "\u25b2"  # where the detector fired


def reason_phrases(reason: Any) -> list[str]:
    """Candidate phrases of a detector's reason, most specific first.

    Examples
    --------
    >>> reason_phrases({"phrase": "i need to verify", "count": 4, "text": "I need to verify."})
    ['I need to verify.', 'i need to verify']
    >>> reason_phrases({"check": "repetition_detected", "pattern": ["a", "b"]})
    ['a b']
    >>> reason_phrases("repeated_suffix")
    []
    """
    if not isinstance(reason, Mapping):
        return []
    found: list[str] = []
    for key in ("text", "phrase", "window"):
        value = reason.get(key)
        if isinstance(value, str) and value.strip():
            found.append(value)
    pattern = reason.get("pattern")
    if isinstance(pattern, list) and pattern and all(isinstance(p, str) for p in pattern):
        spaced = any(not p.strip() for p in pattern)
        found.append(("" if spaced else " ").join(pattern))
    for key in ("tool", "tools"):
        value = reason.get(key)
        if isinstance(value, str) and value:
            found.append(value)
        elif isinstance(value, list):
            found.extend(str(v) for v in value if isinstance(v, str) and v)
    text = reason.get("reason")
    if isinstance(text, str):
        found.extend(_ALM_TOOL.findall(text))
    return list(dict.fromkeys(found))


def _phrase_regex(phrase: str) -> re.Pattern[str] | None:
    """A forgiving pattern: case and punctuation between words ignored (``im`` finds ``I'm``)."""
    words = re.findall(r"\w+", phrase)
    if not words:
        stripped = phrase.strip()
        return re.compile(re.escape(stripped)) if stripped else None
    parts = [r"[\W_]?".join(re.escape(ch) for ch in word) for word in words]
    return re.compile(r"[\W_]+".join(parts), re.IGNORECASE)


def _reason_text(reason: Any) -> str:
    if reason is None:
        return ""
    text = reason if isinstance(reason, str) else json.dumps(reason, ensure_ascii=False)
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "\u2026"


def _message_text(message: Mapping[str, Any]) -> str:
    text = str(message.get("text") or "")
    if text:
        return text
    activity = (message.get("meta") or {}).get("activity")
    if isinstance(activity, Mapping):
        function = activity.get("function") or {}
        name = function.get("name", "?") if isinstance(function, Mapping) else "?"
        parts = {
            k: function.get(k)
            for k in ("arguments", "result")
            if isinstance(function, Mapping) and k in function
        }
        shown = json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
        if len(shown) > _ACTIVITY_CHARS:
            shown = shown[: _ACTIVITY_CHARS - 1] + "\u2026"
        return f"{activity.get('type', 'activity')} {name} {shown}"
    return ""


@dataclass
class _Transcript:
    text: str
    starts: list[int]  # where each message's own text starts
    ends: list[int]


def _transcript(messages: Sequence[Mapping[str, Any]]) -> _Transcript:
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    length = 0
    for index, message in enumerate(messages):
        header = f"[#{index} {message.get('type', '?')}] "
        body = _message_text(message)
        starts.append(length + len(header))
        pieces.append(header + body + "\n")
        ends.append(length + len(header) + len(body))
        length += len(header) + len(body) + 1
    return _Transcript("".join(pieces), starts, ends)


def _position(transcript: _Transcript, where: Mapping[str, Any] | None, end: bool) -> int | None:
    if not isinstance(where, Mapping) or where.get("message") is None:
        return None
    index = int(where["message"])
    if not 0 <= index < len(transcript.starts):
        return None
    char = where.get("char")
    if char is None:
        return transcript.ends[index] if end else transcript.starts[index]
    return min(transcript.starts[index] + int(char), transcript.ends[index])


@dataclass
class CaseContext:
    """The text of one case around where a detector fired (or the onset, for a miss).

    ``text`` is the window shown; ``highlights`` are ``(start, end)`` spans of
    the tripping phrase in it; ``marker`` is where the fire is (or None);
    ``note`` says what could not be shown and why.
    """

    corpus: str
    case: str
    detector: str
    outcome: str | None
    label: bool | None
    kind: str | None = None
    source: str | None = None
    tags: tuple[str, ...] = ()
    fired_at: Mapping[str, Any] | None = None
    onset: Mapping[str, Any] | None = None
    reason: Any = None
    phrase: str | None = None
    text: str = ""
    highlights: list[tuple[int, int]] = field(default_factory=list)
    marker: int | None = None
    clipped_left: bool = False
    clipped_right: bool = False
    note: str | None = None

    @property
    def reason_text(self) -> str:
        """The reason as one short line (JSON for structured reasons)."""
        return _reason_text(self.reason)

    def where(self) -> str:
        """``fired at message 4, char 120`` / ``onset at message 2`` / ``did not fire``."""

        def fmt(p: Mapping[str, Any] | None) -> str:
            if not isinstance(p, Mapping):
                return "?"
            char = p.get("char")
            return f"message {p.get('message')}" + ("" if char is None else f", char {char}")

        if self.fired_at:
            return f"fired at {fmt(self.fired_at)}"
        if self.onset:
            return f"did not fire; onset at {fmt(self.onset)}"
        return "did not fire"

    def _segments(self) -> list[tuple[str, str]]:
        """``(kind, text)`` pieces of the window: ``plain``, ``mark`` or ``fire``."""
        cuts = {0, len(self.text)}
        for start, end in self.highlights:
            cuts.update((start, end))
        if self.marker is not None:
            cuts.add(self.marker)
        points = sorted(c for c in cuts if 0 <= c <= len(self.text))
        out: list[tuple[str, str]] = []
        for start, end in itertools.pairwise(points):
            piece = self.text[start:end]
            if self.marker == start:
                out.append(("fire", _MARKER))
            kind = "mark" if any(s <= start and end <= e for s, e in self.highlights) else "plain"
            out.append((kind, piece))
        if self.marker is not None and self.marker == len(self.text):
            out.append(("fire", _MARKER))
        return out

    def html(self) -> str:
        """An HTML ``<div>`` (everything escaped; phrase in ``<mark>``, fire as a red marker)."""

        def esc(value: str) -> str:
            return html.escape(value, quote=False)

        body: list[str] = ["\u2026" if self.clipped_left else ""]
        for kind, piece in self._segments():
            if kind == "fire":
                body.append(
                    '<span class="fire" title="the detector fired here">' + piece + "</span>"
                )
            elif kind == "mark":
                body.append(f"<mark>{esc(piece)}</mark>")
            else:
                body.append(esc(piece))
        body.append("\u2026" if self.clipped_right else "")
        facts = [f"<code>{esc(self.case)}</code>", esc(self.corpus), esc(self.where())]
        if self.kind:
            facts.append(f"kind {esc(self.kind)}")
        if self.source:
            facts.append(f"labels: {esc(self.source)}")
        if self.tags:
            facts.append("tags " + esc(", ".join(self.tags)))
        parts = [
            f'<div class="case {html.escape(self.outcome or "")}">',
            f'<div class="facts"><b>{esc((self.outcome or "?").upper())}</b> '
            + " \u00b7 ".join(facts)
            + "</div>",
        ]
        if self.reason is not None:
            parts.append(f'<div class="reason">reason: <code>{esc(self.reason_text)}</code></div>')
        if self.note:
            parts.append(f'<div class="note">{esc(self.note)}</div>')
        if self.text:
            parts.append(f'<pre class="context">{"".join(body)}</pre>')
        parts.append("</div>")
        return "\n".join(parts)

    def _repr_html_(self) -> str:
        return self.html()

    def markdown(self) -> str:
        """Markdown (special characters escaped; phrase in bold, fire as \u25b2)."""
        lines = [
            f"**{(self.outcome or '?').upper()}** {_code(self.case)} · {_md(self.corpus)} · "
            f"{_md(self.where())}"
            + (f" · kind {_md(self.kind)}" if self.kind else "")
            + (f" · labels: {_md(self.source)}" if self.source else "")
        ]
        if self.tags:
            lines.append(f"tags: {_md(', '.join(self.tags))}")
        if self.reason is not None:
            lines.append(f"reason: {_md(self.reason_text)}")
        if self.note:
            lines.append(f"*{_md(self.note)}*")
        if self.text:
            pieces: list[str] = ["\u2026" if self.clipped_left else ""]
            for kind, piece in self._segments():
                if kind == "fire":
                    pieces.append(piece)
                elif kind == "mark":
                    pieces.append(_md_bold(piece))
                else:
                    pieces.append(_md(piece))
            pieces.append("\u2026" if self.clipped_right else "")
            quoted = "".join(pieces).split("\n")
            lines.append(
                "\n".join("> " + (line if line.strip() else "&nbsp;") + "  " for line in quoted)
            )
        return "\n\n".join(lines)

    def __str__(self) -> str:
        return f"{self.outcome} {self.case} ({self.where()}): {self.text}"


_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
# At the start of a line these would open a heading, list, quote or numbered item.
_MD_LINE_START = re.compile(r"^(\s*)(?:([#+>-])|(\d+)([.)]))", re.MULTILINE)


def _md(text: str) -> str:
    """Escape Markdown (and the HTML a Markdown renderer would pass through)."""
    escaped = _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))
    return _MD_LINE_START.sub(_escape_line_start, escaped)


def _escape_line_start(match: re.Match[str]) -> str:
    if match.group(2):
        return f"{match.group(1)}\\{match.group(2)}"
    # "12." opens a numbered list; only the punctuation can be escaped.
    return f"{match.group(1)}{match.group(3)}\\{match.group(4)}"


def _code(text: str) -> str:
    """An inline code span that survives backticks in ``text``."""
    fence = "``" if "`" in text else "`"
    return f"{fence} {text} {fence}" if fence == "``" else f"`{text}`"


def _md_bold(text: str) -> str:
    # Bold markers must touch non-space characters to render.
    core = text.strip()
    if not core:
        return _md(text)
    lead = text[: len(text) - len(text.lstrip())]
    tail = text[len(text.rstrip()) :]
    return f"{_md(lead)}**{_md(core)}**{_md(tail)}"


def _window(
    transcript: _Transcript, center: int, width: int, before_share: float
) -> tuple[int, int]:
    before = int(width * before_share)
    start = max(0, center - before)
    end = min(len(transcript.text), start + width)
    start = max(0, min(start, end - width))
    return start, end


def _highlights(text: str, phrases: Sequence[str]) -> tuple[str | None, list[tuple[int, int]]]:
    for phrase in phrases:
        pattern = _phrase_regex(phrase)
        if pattern is None:
            continue
        spans = [(m.start(), m.end()) for m in pattern.finditer(text) if m.end() > m.start()]
        if spans:
            return phrase, spans
    return (phrases[0] if phrases else None), []


def _value(row: Mapping[str, Any], key: str) -> Any:
    value = row.get(key)
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _context_of(
    row: Mapping[str, Any],
    messages: Sequence[Mapping[str, Any]] | None,
    note: str | None,
    width: int,
) -> CaseContext:
    tags = _value(row, "tags")
    context = CaseContext(
        corpus=str(row.get("corpus")),
        case=str(row.get("case")),
        detector=str(row.get("detector")),
        outcome=_value(row, "outcome"),
        label=_value(row, "label"),
        kind=_value(row, "kind"),
        source=_value(row, "source"),
        tags=tuple(tags) if isinstance(tags, list | tuple) else (),
        fired_at=_value(row, "fired_at"),
        onset=_value(row, "onset"),
        reason=_value(row, "reason"),
        note=note,
    )
    if messages is None:
        return context
    transcript = _transcript(messages)
    fire = _position(transcript, context.fired_at, end=True)
    if fire is not None:
        center, share = fire, _BEFORE_SHARE
    else:
        onset = _position(transcript, context.onset, end=False)
        # A miss: show what follows the onset (or the end of the case without one).
        center = onset if onset is not None else len(transcript.text)
        share = 0.2 if onset is not None else 1.0
    start, end = _window(transcript, center, width, share)
    text = transcript.text[start:end]
    phrases = reason_phrases(context.reason)
    phrase, spans = _highlights(text, phrases)
    context.text = text
    context.highlights = spans
    context.phrase = phrase
    context.marker = None if fire is None else fire - start
    context.clipped_left = start > 0
    context.clipped_right = end < len(transcript.text)
    if phrases and not spans:
        extra = f"the phrase {phrase!r} from the reason is not in the text shown"
        context.note = f"{note}; {extra}" if note else extra
    return context


@dataclass
class _CorpusSource:
    path: Path | None
    note: str | None


def _corpus_sources(run: EvalRun, check_sha: bool = True) -> dict[str, _CorpusSource]:
    out: dict[str, _CorpusSource] = {}
    for entry in run.corpora:
        name = str(entry.get("name"))
        given = entry.get("path")
        path = Path(str(given)) if given else None
        if path is not None and not path.is_absolute() and not path.exists():
            path = run.path / path
        if path is None or not path.is_file():
            out[name] = _CorpusSource(
                None, f"corpus file {given} (from the run's manifest) is missing: no text shown"
            )
            continue
        note = None
        expected = entry.get("sha256")
        if check_sha and expected and file_sha256(path) != expected:
            note = (
                f"corpus file {path} changed since the run (sha256 differs from the "
                "manifest's): the text shown may not be what the detector read"
            )
        out[name] = _CorpusSource(path, note)
    return out


def _read_cases(path: Path, wanted: set[str]) -> tuple[dict[str, list[dict[str, Any]]], str | None]:
    from ..corpus import iter_cases

    found: dict[str, list[dict[str, Any]]] = {}
    try:
        for case in iter_cases(path, skip_invalid=True):
            if case.id in wanted:
                found[case.id] = case.messages
                if len(found) == len(wanted):
                    break
    except HarnessError as exc:
        return found, f"cannot read {path}: {str(exc).splitlines()[0]}"
    return found, None


def case_contexts(
    run: EvalRun, rows: pd.DataFrame | Iterable[Mapping[str, Any]], width: int = CONTEXT_CHARS
) -> list[CaseContext]:
    """The :class:`CaseContext` of each verdict row (read from the corpora in the manifest).

    Each corpus file is read once, however many rows name it.
    """
    records = rows.to_dict("records") if isinstance(rows, pd.DataFrame) else [dict(r) for r in rows]
    if not records:
        return []
    sources = _corpus_sources(run)
    wanted: dict[str, set[str]] = {}
    for record in records:
        wanted.setdefault(str(record.get("corpus")), set()).add(str(record.get("case")))
    texts: dict[str, dict[str, list[dict[str, Any]]]] = {}
    notes: dict[str, str | None] = {}
    for corpus, ids in wanted.items():
        source = sources.get(corpus)
        if source is None:
            texts[corpus], notes[corpus] = {}, f"corpus {corpus} is not in the run's manifest"
            continue
        if source.path is None:
            texts[corpus], notes[corpus] = {}, source.note
            continue
        found, problem = _read_cases(source.path, ids)
        texts[corpus] = found
        notes[corpus] = "; ".join(n for n in (source.note, problem) if n) or None
    out: list[CaseContext] = []
    for record in records:
        corpus, case = str(record.get("corpus")), str(record.get("case"))
        messages = texts.get(corpus, {}).get(case)
        note = notes.get(corpus)
        if messages is None and note is None:
            note = f"case {case} is not in {sources[corpus].path}"
        out.append(_context_of(record, messages, note, width))
    return out


def case_context(
    run: EvalRun,
    case: str | Mapping[str, Any],
    detector: str | None = None,
    width: int = CONTEXT_CHARS,
) -> CaseContext:
    """The text of one case around the fire of ``detector`` in ``run``.

    ``case`` is a case id (with ``detector``) or a verdict row (a dict or a
    DataFrame row). In a notebook the result displays as highlighted HTML.

    Examples
    --------
    >>> run = load_run("runs/baseline")  # doctest: +SKIP
    >>> case_context(run, "synthetic/text-run/s0-00000/full", "repetition_guard")  # doctest: +SKIP
    """
    if isinstance(case, str):
        verdicts = run.verdicts
        if detector is None:
            raise HarnessError("case_context: give the detector with a case id")
        mine = verdicts[(verdicts["case"] == case) & (verdicts["detector"] == detector)]
        if mine.empty:
            raise HarnessError(f"no verdict of {detector!r} on case {case!r} in {run.path}")
        row: Mapping[str, Any] = mine.iloc[0].to_dict()
    elif isinstance(case, pd.Series):
        row = case.to_dict()
    else:
        row = case
    return case_contexts(run, [row], width)[0]


def gallery_rows(
    run: EvalRun, detector: str, outcome: str, limit: int, by: str = "kind"
) -> pd.DataFrame:
    """Up to ``limit`` verdicts of ``detector`` with ``outcome``, spread over ``by`` values.

    Rows are taken round-robin over the values of ``by`` (kind), in verdict
    order within each, so that a gallery shows different kinds of cases; the
    choice is deterministic.
    """
    verdicts = run.verdicts
    if verdicts.empty or "outcome" not in verdicts:
        return verdicts.head(0)
    mine = verdicts[(verdicts["detector"] == detector) & (verdicts["outcome"] == outcome)]
    if mine.empty or limit <= 0:
        return mine.head(0)
    keys = mine[by].map(lambda v: "" if v is None or v != v else str(v)) if by in mine else None
    if keys is None:
        return mine.head(limit)
    queues = [list(idx) for _, idx in sorted(mine.groupby(keys).indices.items())]
    chosen: list[int] = []
    depth = 0
    while len(chosen) < limit and any(depth < len(q) for q in queues):
        for queue in queues:
            if depth < len(queue) and len(chosen) < limit:
                chosen.append(queue[depth])
        depth += 1
    return mine.iloc[sorted(chosen)]
