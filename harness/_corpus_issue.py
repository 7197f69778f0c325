"""Validation rules of the corpus format and the record of one broken rule."""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["CROSS_LINE_RULES", "RULES", "SCHEMA_RULES", "CorpusIssue"]

# Rule ids are part of the output format (scripts grep them): never rename one.
RULES: MappingProxyType[str, str] = MappingProxyType(
    {
        "read-error": "the file cannot be read to the end (corrupt or truncated gzip, I/O "
        "error); fatal, even when invalid cases are skipped",
        "encoding": "a line is not valid UTF-8, or the file starts with a byte-order mark",
        "json-syntax": "a non-blank line is not one JSON document (NaN and Infinity included)",
        "not-object": "the JSON document of a line is not an object",
        "required-field": "a required field is missing: id, messages, label, label.looping, "
        "label.source, a message's type and text, label.onset.message",
        "field-type": "a field has the wrong JSON type (null is only allowed for label.onset "
        "and label.onset.char)",
        "empty-value": "id or group is the empty string, or messages is an empty list",
        "unknown-source": "label.source is not human, llm-judge, rule or synthetic",
        "onset-not-looping": "label.onset is set although label.looping is false",
        "onset-range": "label.onset.message is not an index into messages, or label.onset.char "
        "is not within 0..len(text) of that message",
        "chunks-mismatch": "a message's chunks do not concatenate exactly to its text",
        "duplicate-id": "the id was already used by an earlier case of the same file",
    }
)

# Rules the JSON Schema of one case (schemas/corpus-case.v1.json) enforces as well.
# onset-range is only partly expressible (negative values), hence in neither set.
SCHEMA_RULES: frozenset[str] = frozenset(
    {
        "not-object",
        "required-field",
        "field-type",
        "empty-value",
        "unknown-source",
        "onset-not-looping",
    }
)

# Rules about the file rather than one parsed JSON value: a schema never sees them.
CROSS_LINE_RULES: frozenset[str] = frozenset({"read-error", "encoding", "json-syntax"})


@dataclass(frozen=True, slots=True)
class CorpusIssue:
    """One broken rule, located in a corpus file.

    Attributes
    ----------
    file : str
        The corpus file, as the caller named it.
    line : int
        The 1-based line number of the case (of the failed read for ``read-error``).
    case_id : str or None
        The case's id when it has a string one.
    rule : str
        A stable rule id, a key of :data:`RULES`.
    message : str
        What is wrong, naming the field.

    Examples
    --------
    >>> str(CorpusIssue("c.jsonl", 3, "a/1", "duplicate-id", "id 'a/1' already used on line 1"))
    "c.jsonl:3: [case a/1] duplicate-id: id 'a/1' already used on line 1"
    """

    file: str
    line: int
    case_id: str | None
    rule: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:"
        if self.case_id is None:
            return f"{where} {self.rule}: {self.message}"
        return f"{where} [case {_printable_id(self.case_id)}] {self.rule}: {self.message}"

    def to_dict(self) -> dict[str, str | int | None]:
        """Return the issue as a JSON-ready dict."""
        return {
            "file": self.file,
            "line": self.line,
            "case_id": self.case_id,
            "rule": self.rule,
            "message": self.message,
        }


def _printable_id(case_id: str) -> str:
    # An id with a control character or a bracket would break the one-line format.
    if case_id and case_id.isprintable() and "]" not in case_id:
        return case_id
    return json.dumps(case_id, ensure_ascii=False)
