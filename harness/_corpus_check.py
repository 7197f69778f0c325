"""The per-case rules of the corpus format: everything that one parsed line can break."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["LABEL_SOURCES", "Problem", "check_record", "is_json_integer", "json_type_name"]

# Who may decide a label (corpus format v1, "Label").
LABEL_SOURCES: tuple[str, ...] = ("human", "llm-judge", "rule", "synthetic")

Problem = tuple[str, str]
"""A broken rule of one case: ``(rule id, message)``."""


def json_type_name(value: object) -> str:
    """Name the JSON type of a parsed value, the way the error messages do."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def is_json_integer(value: object) -> bool:
    """Return whether ``value`` is an integer in the JSON Schema sense.

    JSON has one number type, so ``2.0`` is the integer 2 (as for JSON Schema's
    ``"integer"``); booleans are not numbers.
    """
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()


_TYPE_TESTS: dict[str, Callable[[object], bool]] = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "integer": is_json_integer,
}


def _got(value: object) -> str:
    if value is None:
        return "got null (omit the field instead)"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"got number {_num(value)}"
    return f"got {json_type_name(value)}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class _Checker:
    """Collect the problems of one record; each check reports and never stops the others."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, rule: str, message: str) -> None:
        self.problems.append((rule, message))

    def required(self, obj: dict[str, Any], key: str, where: str) -> bool:
        if key in obj:
            return True
        self.add("required-field", f"missing required field {where}")
        return False

    def typed(self, value: object, where: str, expected: str) -> bool:
        ok = _TYPE_TESTS[expected](value)
        if not ok:
            article = "an" if expected[0] in "aeiou" else "a"
            self.add("field-type", f"{where} must be {article} {expected}, {_got(value)}")
        return ok

    def string_list(self, value: object, where: str) -> bool:
        if not self.typed(value, where, "array"):
            return False
        assert isinstance(value, list)
        ok = True
        for index, item in enumerate(value):
            ok = self.typed(item, f"{where}[{index}]", "string") and ok
        return ok


def check_record(record: object) -> list[Problem]:
    """Return every per-case rule that ``record`` (one parsed JSON line) breaks.

    Uniqueness of ids spans lines and is checked by the reader, not here.
    """
    check = _Checker()
    if not isinstance(record, dict):
        check.add("not-object", f"a case must be a JSON object, got {json_type_name(record)}")
        return check.problems

    has_id = check.required(record, "id", "id") and check.typed(record["id"], "id", "string")
    if has_id and record["id"] == "":
        check.add("empty-value", "id must not be empty")

    messages = _check_messages(check, record)

    if check.required(record, "label", "label") and check.typed(record["label"], "label", "object"):
        _check_label(check, record["label"], messages)

    has_group = "group" in record and check.typed(record["group"], "group", "string")
    if has_group and record["group"] == "":
        check.add("empty-value", "group must not be empty (omit it to default to the id)")
    if "tags" in record:
        check.string_list(record["tags"], "tags")
    if "origin" in record:
        check.typed(record["origin"], "origin", "object")
    return check.problems


def _check_messages(check: _Checker, record: dict[str, Any]) -> list[Any] | None:
    """Check ``messages``; return it when it is a list (for the onset range check)."""
    if not check.required(record, "messages", "messages"):
        return None
    messages = record["messages"]
    if not check.typed(messages, "messages", "array"):
        return None
    assert isinstance(messages, list)
    if not messages:
        check.add("empty-value", "messages must not be an empty array")
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not check.typed(message, where, "object"):
            continue
        if check.required(message, "type", f"{where}.type"):
            check.typed(message["type"], f"{where}.type", "string")
        text_ok = check.required(message, "text", f"{where}.text") and check.typed(
            message["text"], f"{where}.text", "string"
        )
        if "meta" in message:
            check.typed(message["meta"], f"{where}.meta", "object")
        if "state" in message:
            check.typed(message["state"], f"{where}.state", "object")
        if "chunks" in message:
            chunks_ok = check.string_list(message["chunks"], f"{where}.chunks")
            if chunks_ok and text_ok:
                _check_chunks(check, message["chunks"], message["text"], where)
    return messages


def _check_chunks(check: _Checker, chunks: list[str], text: str, where: str) -> None:
    joined = "".join(chunks)
    if joined == text:
        return
    # Name the first differing character: on a long text that is what a human needs.
    first = next(
        (i for i, (a, b) in enumerate(zip(joined, text, strict=False)) if a != b),
        min(len(joined), len(text)),
    )
    check.add(
        "chunks-mismatch",
        f"{where}.chunks do not concatenate to {where}.text: first difference at character "
        f"{first} (the chunks give {_count(len(joined), 'character')}, "
        f"the text has {len(text)})",
    )


def _check_label(check: _Checker, label: dict[str, Any], messages: list[Any] | None) -> None:
    looping: object = None
    if check.required(label, "looping", "label.looping") and check.typed(
        label["looping"], "label.looping", "boolean"
    ):
        looping = label["looping"]
    has_source = check.required(label, "source", "label.source") and check.typed(
        label["source"], "label.source", "string"
    )
    if has_source and label["source"] not in LABEL_SOURCES:
        check.add(
            "unknown-source",
            f"label.source is {json.dumps(label['source'], ensure_ascii=False)}; "
            f"expected one of {', '.join(LABEL_SOURCES)}",
        )
    if "kind" in label:
        check.typed(label["kind"], "label.kind", "string")
    if "note" in label:
        check.typed(label["note"], "label.note", "string")

    onset = label.get("onset")
    if onset is None:
        return
    if looping is False:
        check.add(
            "onset-not-looping", "label.onset must be null or absent when label.looping is false"
        )
    if not check.typed(onset, "label.onset", "object"):
        return
    index: object = None
    if check.required(onset, "message", "label.onset.message") and check.typed(
        onset["message"], "label.onset.message", "integer"
    ):
        index = onset["message"]
    char = onset.get("char")
    if char is not None and not check.typed(char, "label.onset.char", "integer"):
        char = None
    _check_onset_range(check, index, char, messages)


def _check_onset_range(
    check: _Checker, index: object, char: object, messages: list[Any] | None
) -> None:
    text: str | None = None
    if isinstance(index, int | float):
        if index < 0:
            check.add("onset-range", f"label.onset.message is {_num(index)}; it must be >= 0")
        elif messages is not None and index >= len(messages):
            valid = f"0..{len(messages) - 1}" if messages else "none"
            check.add(
                "onset-range",
                f"label.onset.message is {_num(index)} but the case has "
                f"{_count(len(messages), 'message')} (valid indexes: {valid})",
            )
        elif messages is not None:
            target = messages[int(index)]
            if isinstance(target, dict) and isinstance(target.get("text"), str):
                text = target["text"]
    if not isinstance(char, int | float):
        return
    if char < 0:
        check.add("onset-range", f"label.onset.char is {_num(char)}; it must be >= 0")
    elif text is not None and char > len(text):
        check.add(
            "onset-range",
            f"label.onset.char is {_num(char)} but message {_num(index)} has "
            f"{_count(len(text), 'character')} (valid offsets: 0..{len(text)})",
        )


def _num(value: object) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return str(value)
