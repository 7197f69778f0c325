"""Streaming reader and validator of labelled corpora (JSON Lines, optionally gzip)."""

from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from ._atomic import atomic_write_jsonl
from ._corpus_check import check_record
from ._corpus_issue import RULES, CorpusIssue
from ._errors import CorpusError, CorpusNotFoundError

__all__ = [
    "CORPUS_SUFFIXES",
    "Case",
    "CorpusReader",
    "Onset",
    "ValidationReport",
    "check_case",
    "check_cases",
    "iter_cases",
    "load_cases",
    "validate_corpus",
    "write_corpus",
]

CORPUS_SUFFIXES: tuple[str, ...] = (".jsonl", ".jsonl.gz")

# How many issue lines a CorpusError message shows; .issues always holds all of them.
_MESSAGE_ISSUE_LINES = 50
_BOM = b"\xef\xbb\xbf"
# JSON insignificant whitespace (RFC 8259): a line of only these is blank.
_JSON_WHITESPACE = b" \t\r\n"


class Onset(NamedTuple):
    """Where a loop begins: a message index and, for a loop inside one text, a character."""

    message: int
    char: int | None


@dataclass(frozen=True, slots=True)
class Case:
    """One valid case of a corpus: the JSON object as read, with where it came from.

    Every field of the line is kept in ``raw``, unknown ones included; the
    properties below read the fields the format defines.

    Examples
    --------
    >>> case = Case({"id": "a", "messages": [{"type": "user", "text": "hi"}],
    ...              "label": {"looping": False, "source": "human"}}, "c.jsonl", 1)
    >>> case.id, case.group, case.looping, case.tags
    ('a', 'a', False, ())
    """

    raw: dict[str, Any]
    path: str
    line: int

    @property
    def id(self) -> str:
        """The case id, unique within its file."""
        value: str = self.raw["id"]
        return value

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation, oldest first (the message dicts as read; do not mutate)."""
        value: list[dict[str, Any]] = self.raw["messages"]
        return value

    @property
    def label(self) -> dict[str, Any]:
        """The ground-truth label object as read."""
        value: dict[str, Any] = self.raw["label"]
        return value

    @property
    def looping(self) -> bool:
        """``label.looping``: whether the run is stuck by the end of ``messages``."""
        return bool(self.label["looping"])

    @property
    def onset(self) -> Onset | None:
        """``label.onset``, or None when it is null, absent or the case is not looping."""
        onset = self.label.get("onset")
        if onset is None:
            return None
        char = onset.get("char")
        return Onset(int(onset["message"]), None if char is None else int(char))

    @property
    def kind(self) -> str | None:
        """``label.kind``, or None."""
        value: str | None = self.label.get("kind")
        return value

    @property
    def source(self) -> str:
        """``label.source``: human, llm-judge, rule or synthetic."""
        value: str = self.label["source"]
        return value

    @property
    def note(self) -> str | None:
        """``label.note``, or None."""
        value: str | None = self.label.get("note")
        return value

    @property
    def group(self) -> str:
        """The split group; defaults to the id."""
        value: str = self.raw.get("group", self.raw["id"])
        return value

    @property
    def tags(self) -> tuple[str, ...]:
        """The tags, in file order (empty when absent)."""
        return tuple(self.raw.get("tags", ()))

    @property
    def origin(self) -> dict[str, Any] | None:
        """The provenance object, or None."""
        value: dict[str, Any] | None = self.raw.get("origin")
        return value


@dataclass
class ValidationReport:
    """What reading one corpus file found.

    Attributes
    ----------
    file : str
        The file, as the caller named it.
    lines : int
        Physical lines read.
    blank_lines : int
        Lines that were blank (ignored).
    cases : int
        Non-blank lines, each one case, valid or not.
    valid : int
        Cases that break no rule.
    issues : list of CorpusIssue
        Every problem found, in file order.
    complete : bool
        False when a ``read-error`` stopped the read before the end of the file.
    """

    file: str
    lines: int = 0
    blank_lines: int = 0
    cases: int = 0
    valid: int = 0
    issues: list[CorpusIssue] = field(default_factory=list)
    complete: bool = True

    @property
    def invalid(self) -> int:
        """Cases that break at least one rule (skipped when invalid cases are skipped)."""
        return self.cases - self.valid

    @property
    def ok(self) -> bool:
        """Whether the whole file was read and no rule is broken."""
        return not self.issues

    def issues_by_rule(self) -> dict[str, int]:
        """Count the issues per rule id (rules in :data:`RULES` order, zero counts left out)."""
        counts = dict.fromkeys(RULES, 0)
        for issue in self.issues:
            counts[issue.rule] = counts.get(issue.rule, 0) + 1
        return {rule: n for rule, n in counts.items() if n}

    def invalid_cases_by_rule(self) -> dict[str, int]:
        """Count the invalid cases breaking each rule (a case counts once per rule)."""
        seen = {(issue.line, issue.rule) for issue in self.issues if issue.rule != "read-error"}
        counts = dict.fromkeys(RULES, 0)
        for _, rule in seen:
            counts[rule] += 1
        return {rule: n for rule, n in counts.items() if n}

    def summary(self, *, skipped: bool = False) -> str:
        """One line for humans, e.g. ``c.jsonl: 12 cases, 2 invalid (duplicate-id: 2), 2 errors``.

        With ``skipped=True`` the invalid cases are worded as skipped.
        """
        text = f"{self.file}: {self.cases} case{'' if self.cases == 1 else 's'}"
        if self.invalid == 0:
            text += ", all valid" if self.cases else ""
        else:
            why = ", ".join(f"{rule}: {n}" for rule, n in self.invalid_cases_by_rule().items())
            if skipped:
                text += f", {self.valid} loaded, {self.invalid} skipped ({why})"
            else:
                errors = len(self.issues)
                text += (
                    f", {self.invalid} invalid ({why}), {errors} error{'' if errors == 1 else 's'}"
                )
        if not self.complete:
            stop = next(i for i in self.issues if i.rule == "read-error")
            text += f"; reading stopped at line {stop.line} (read-error)"
        return text

    def to_dict(self) -> dict[str, Any]:
        """Return the report as a JSON-ready dict."""
        return {
            "file": self.file,
            "lines": self.lines,
            "blank_lines": self.blank_lines,
            "cases": self.cases,
            "valid": self.valid,
            "invalid": self.invalid,
            "complete": self.complete,
            "issues_by_rule": self.issues_by_rule(),
            "invalid_cases_by_rule": self.invalid_cases_by_rule(),
            "issues": [issue.to_dict() for issue in self.issues],
        }


def _refuse_nan(token: str) -> float:
    raise ValueError(f"{token} is not valid JSON")


def _case_id(record: object) -> str | None:
    if isinstance(record, dict):
        value = record.get("id")
        if isinstance(value, str):
            return value
    return None


def _open_corpus(path: Path) -> io.BufferedReader | gzip.GzipFile:
    name = path.name
    if not name.endswith(CORPUS_SUFFIXES):
        raise CorpusError(
            f"{path}: a corpus file name must end in .jsonl or .jsonl.gz (corpus format v1)"
        )
    try:
        raw = path.open("rb")
    except FileNotFoundError:
        raise CorpusNotFoundError(f"{path}: no such corpus file") from None
    except IsADirectoryError:
        raise CorpusError(f"{path}: is a directory, not a corpus file") from None
    except OSError as exc:
        raise CorpusError(f"{path}: cannot open: {exc.strerror or exc}") from None
    if name.endswith(".gz"):
        return gzip.GzipFile(fileobj=raw, mode="rb")  # closing it does not close raw
    return raw


class CorpusReader:
    """Read one corpus file lazily, validating every case; ``report`` fills in as it goes.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.jsonl`` or ``.jsonl.gz`` file.
    skip_invalid : bool, default False
        False: an invalid corpus is refused - when the first invalid case is met,
        the rest of the file is still scanned (so that every error is listed) and a
        :class:`CorpusError` is raised; cases before it have already been yielded.
        True: invalid cases are left out and counted in ``report``. A ``read-error``
        (corrupt or truncated file) raises in both modes.

    Examples
    --------
    >>> reader = CorpusReader("corpora/synthetic/default.jsonl", skip_invalid=True)
    >>> positives = sum(case.looping for case in reader)  # doctest: +SKIP
    >>> reader.report.invalid  # doctest: +SKIP
    0
    """

    def __init__(self, path: str | os.PathLike[str], *, skip_invalid: bool = False) -> None:
        if not isinstance(skip_invalid, bool):
            raise TypeError(f"skip_invalid must be a bool, got {type(skip_invalid).__name__}")
        self.path = Path(path)
        self.skip_invalid = skip_invalid
        self.report = ValidationReport(os.fspath(path))

    def __iter__(self) -> Iterator[Case]:
        """Start a fresh read (the report starts over too)."""
        return self._cases()

    def _cases(self) -> Iterator[Case]:
        self.report = report = ValidationReport(self.report.file)
        refused = False
        for line, record in _scan(self.path, report):
            if record is None:
                refused = refused or not self.skip_invalid
            elif not refused:
                yield Case(record, report.file, line)
        # report.issues also catches a byte-order mark before a blank first line.
        if refused or not report.complete or (report.issues and not self.skip_invalid):
            raise _corpus_error(report, skipped=self.skip_invalid)


def _corpus_error(report: ValidationReport, *, skipped: bool) -> CorpusError:
    if not report.complete and (skipped or report.invalid == 0):
        head = f"{report.file}: the corpus cannot be read to the end"
    else:
        head = (
            f"{report.file}: refusing to load an invalid corpus "
            f"(pass skip_invalid=True to leave invalid cases out)"
        )
    shown = [str(issue) for issue in report.issues[:_MESSAGE_ISSUE_LINES]]
    hidden = len(report.issues) - len(shown)
    if hidden:
        shown.append(f"... and {hidden} more (run `harness corpora validate` for all)")
    return CorpusError("\n".join([head, report.summary(skipped=skipped), *shown]), report.issues)


def _read_failure(exc: BaseException) -> str:
    # Own wording: the library's messages vary between Python versions.
    if isinstance(exc, EOFError):
        return "the compressed data ends early (truncated gzip file)"
    if isinstance(exc, gzip.BadGzipFile):
        return "not a gzip file, although the name ends in .gz"
    if isinstance(exc, zlib.error):
        return f"corrupt compressed data ({exc})"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _scan(path: Path, report: ValidationReport) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """Yield ``(line, record)`` for each case, record None when invalid; fill ``report``."""
    file = report.file
    first_line: dict[str, int] = {}  # id -> line of its first use, for duplicate-id
    with _open_corpus(path) as handle:
        while True:
            try:
                raw = handle.readline()
            except (OSError, EOFError, zlib.error) as exc:
                report.complete = False
                detail = _read_failure(exc)
                where = report.lines + 1
                report.issues.append(
                    CorpusIssue(
                        file, where, None, "read-error", f"cannot read line {where}: {detail}"
                    )
                )
                return
            if not raw:
                return
            report.lines += 1
            line = report.lines
            issues: list[CorpusIssue] = []
            if line == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM) :]
                issues.append(
                    CorpusIssue(
                        file,
                        line,
                        None,
                        "encoding",
                        "the file starts with a UTF-8 byte-order "
                        "mark; JSON Lines files must not have one",
                    )
                )
            stripped = raw.strip(_JSON_WHITESPACE)
            if not stripped:
                report.blank_lines += 1
                report.issues.extend(issues)  # a BOM before a blank first line
                continue
            report.cases += 1
            record = _parse(stripped, file, line, issues, first_line)
            case_id = _case_id(record)
            if case_id is not None:
                # The byte-order-mark issue was found before the id was known.
                issues = [i if i.case_id else replace(i, case_id=case_id) for i in issues]
            report.issues.extend(issues)
            if issues:
                yield line, None
            else:
                report.valid += 1
                yield line, record


def _parse(
    stripped: bytes,
    file: str,
    line: int,
    issues: list[CorpusIssue],
    first_line: dict[str, int],
) -> dict[str, Any] | None:
    try:
        text = stripped.decode("utf-8")
    except UnicodeDecodeError as exc:
        issues.append(
            CorpusIssue(
                file,
                line,
                None,
                "encoding",
                f"not valid UTF-8: byte 0x{stripped[exc.start]:02x} at byte offset {exc.start}",
            )
        )
        return None
    try:
        record = json.loads(text, parse_constant=_refuse_nan)
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            detail = f"{exc.msg} (column {exc.colno})"
        else:
            detail = str(exc)
        issues.append(
            CorpusIssue(file, line, None, "json-syntax", f"not a JSON document: {detail}")
        )
        return None
    case_id = _case_id(record)
    issues.extend(CorpusIssue(file, line, case_id, r, m) for r, m in check_record(record))
    _note_duplicate(record, file, line, issues, first_line)
    return record if isinstance(record, dict) else None


def iter_cases(path: str | os.PathLike[str], *, skip_invalid: bool = False) -> Iterator[Case]:
    """Yield the cases of a corpus file one at a time, never reading it whole.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.jsonl`` or ``.jsonl.gz`` file (blank lines are ignored).
    skip_invalid : bool, default False
        See :class:`CorpusReader`; use a :class:`CorpusReader` directly to get the report.

    Raises
    ------
    CorpusError
        The corpus is invalid (listing every error) or cannot be read.
    CorpusNotFoundError
        The file does not exist.

    Examples
    --------
    >>> for case in iter_cases("corpora/synthetic/default.jsonl.gz"):  # doctest: +SKIP
    ...     print(case.id, case.looping)
    """
    return iter(CorpusReader(path, skip_invalid=skip_invalid))


def load_cases(path: str | os.PathLike[str], *, skip_invalid: bool = False) -> list[Case]:
    """Read a whole corpus into a list (small corpora only); see :func:`iter_cases`."""
    return list(iter_cases(path, skip_invalid=skip_invalid))


def validate_corpus(path: str | os.PathLike[str]) -> ValidationReport:
    """Check every line of a corpus file against every rule; never raises for bad content.

    Examples
    --------
    >>> report = validate_corpus("corpora/synthetic/default.jsonl")  # doctest: +SKIP
    >>> for issue in report.issues:  # doctest: +SKIP
    ...     print(issue)  # FILE:LINE: [case ID] RULE: message

    Raises
    ------
    CorpusError
        The path cannot be opened or does not have a corpus file name.
    """
    report = ValidationReport(os.fspath(path))
    for _ in _scan(Path(path), report):
        pass
    return report


def check_case(record: object, *, file: str = "<case>", line: int = 0) -> list[CorpusIssue]:
    """Return the rules one in-memory case breaks (every rule except ``duplicate-id``).

    Examples
    --------
    >>> [i.rule for i in check_case({"id": "a", "messages": [], "label": {}})]
    ['empty-value', 'required-field', 'required-field']
    """
    case_id = _case_id(record)
    return [CorpusIssue(file, line, case_id, r, m) for r, m in check_record(record)]


def check_cases(records: Iterable[object], *, file: str = "<cases>") -> list[CorpusIssue]:
    """Check in-memory cases as if they were the lines of one file (line = position + 1)."""
    report = ValidationReport(file)
    first_line: dict[str, int] = {}
    for line, record in enumerate(records, start=1):
        if isinstance(record, Case):
            record = record.raw
        issues = check_case(record, file=file, line=line)
        _note_duplicate(record, file, line, issues, first_line)
        report.issues.extend(issues)
    return report.issues


def _note_duplicate(
    record: object, file: str, line: int, issues: list[CorpusIssue], first_line: dict[str, int]
) -> None:
    case_id = _case_id(record)
    if case_id is None:
        return
    first = first_line.setdefault(case_id, line)
    if first != line:
        issues.append(
            CorpusIssue(file, line, case_id, "duplicate-id", f"id already used on line {first}")
        )


def write_corpus(path: str | os.PathLike[str], cases: Iterable[dict[str, Any] | Case]) -> int:
    """Validate cases while writing them atomically as a corpus file; return the count.

    Nothing is written (an existing file is left as it was) when any case breaks a
    rule: a :class:`CorpusError` then lists every problem. A name ending in
    ``.jsonl.gz`` is gzip-compressed, reproducibly.

    Examples
    --------
    >>> write_corpus("out.jsonl", [{"id": "a", "label": {"looping": False, "source": "rule"},
    ...     "messages": [{"type": "user", "text": "hi"}]}])  # doctest: +SKIP
    1
    """
    target = os.fspath(path)
    if not target.endswith(CORPUS_SUFFIXES):
        raise CorpusError(f"{target}: a corpus file name must end in .jsonl or .jsonl.gz")
    issues: list[CorpusIssue] = []
    first_line: dict[str, int] = {}

    def checked() -> Iterator[dict[str, Any]]:
        for line, case in enumerate(cases, start=1):
            record = case.raw if isinstance(case, Case) else case
            found = check_case(record, file=target, line=line)
            _note_duplicate(record, target, line, found, first_line)
            issues.extend(found)
            yield record
        # Raising inside the atomic write aborts it before the rename.
        if issues:
            shown = [str(i) for i in issues[:_MESSAGE_ISSUE_LINES]]
            if len(issues) > len(shown):
                shown.append(f"... and {len(issues) - len(shown)} more")
            raise CorpusError(
                f"{target}: not written, {len(issues)} problem(s):\n" + "\n".join(shown), issues
            )

    return atomic_write_jsonl(target, checked())
