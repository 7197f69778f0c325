"""Tool calls as the peers see them, read from corpus messages.

A corpus records a tool call as an ``activity`` request and, once settled, an
``activity`` response with the same name and arguments and a ``result``
(``docs/corpus-format.md``). The peers key on the call (request) and, some of
them, on its result. :class:`CallReader` turns messages into :class:`ToolEvent`
values: a ``call`` for a request, a ``result`` for a response. A response whose
request was never seen (a corpus that records settled calls only) yields its
``call`` first. Activities whose function name starts with ``_`` are notices
injected by a monitor, not the agent's calls: they yield nothing.

The JSON texts the keys are made of reproduce JavaScript's ``JSON.stringify``
(``loopguard._js``): every peer is TypeScript except OpenHands.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from loopguard._js import UNDEFINED, js_stringify, safe_stringify

__all__ = [
    "MISSING",
    "CallReader",
    "ToolEvent",
    "activity_of",
    "canonical",
    "is_error_result",
    "js_key_order",
    "js_sorted_keys",
    "stringify",
    "stringify_sorted",
    "stringify_with_key_list",
]

#: Stands for absent ``arguments`` or ``result`` (``undefined`` in JavaScript).
MISSING: Any = UNDEFINED


@dataclass(frozen=True, slots=True)
class ToolEvent:
    """One tool call (``kind="call"``) or its settled result (``kind="result"``).

    ``arguments`` and ``result`` are the corpus values, :data:`MISSING` when absent.
    """

    kind: Literal["call", "result"]
    name: str
    arguments: Any
    result: Any = MISSING


def activity_of(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``meta.activity`` of an ``activity`` message, or None."""
    if message.get("type") != "activity":
        return None
    meta = message.get("meta")
    activity = meta.get("activity") if isinstance(meta, Mapping) else None
    return activity if isinstance(activity, Mapping) else None


def canonical(value: Any) -> str:
    """A text that is equal for equal JSON values (sorted keys); never raises.

    Used to pair requests with responses and to compare results, not as a
    peer's own key.
    """
    if value is MISSING:
        return "undefined"
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


class CallReader:
    """Reads messages in order and yields the tool events each one carries.

    Examples
    --------
    >>> reader = CallReader()
    >>> req = {"type": "activity", "text": "", "meta": {"activity": {"type": "request",
    ...     "function": {"name": "ls", "arguments": {"path": "."}}}}}
    >>> res = {"type": "activity", "text": "", "meta": {"activity": {"type": "response",
    ...     "function": {"name": "ls", "arguments": {"path": "."}, "result": []}}}}
    >>> [e.kind for e in reader.read(req)], [e.kind for e in reader.read(res)]
    (['call'], ['result'])
    >>> [e.kind for e in CallReader().read(res)]
    ['call', 'result']
    """

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending: list[tuple[str, str]] = []

    def read(self, message: Mapping[str, Any]) -> list[ToolEvent]:
        """The events of ``message``: none, a call, a result, or a call then its result."""
        activity = activity_of(message)
        if activity is None:
            return []
        function = activity.get("function")
        if not isinstance(function, Mapping):
            return []
        raw = function.get("name")
        name = raw if isinstance(raw, str) else ("" if raw is None else str(raw))
        if name.startswith("_"):
            return []
        arguments = function.get("arguments", MISSING)
        pair = (name, canonical(arguments))
        kind = activity.get("type")
        if kind == "request":
            self._pending.append(pair)
            return [ToolEvent("call", name, arguments)]
        if kind != "response":
            return []
        result = ToolEvent("result", name, arguments, function.get("result", MISSING))
        if pair in self._pending:
            self._pending.remove(pair)
            return [result]
        return [ToolEvent("call", name, arguments), result]

    def reset(self) -> None:
        """Forget the pending requests."""
        self._pending.clear()


def stringify(value: Any) -> str:
    """``String(JSON.stringify(value))``: ``"undefined"`` where JavaScript gets undefined.

    Template literals and ``+`` turn an undefined ``JSON.stringify`` result
    into the text ``undefined``; a value JavaScript could not serialise becomes
    ``"[unserializable]"``.
    """
    text = safe_stringify(value)
    return "undefined" if text is None else text


def js_key_order(key: str) -> bytes:
    """Sort key of ``Array.prototype.sort()`` on strings: UTF-16 code units."""
    return key.encode("utf-16-be", "surrogatepass")


def js_sorted_keys(obj: Mapping[Any, Any]) -> list[str]:
    """``Object.keys(obj).sort()``."""
    return sorted((k if isinstance(k, str) else str(k) for k in obj), key=js_key_order)


def _sorted_deep(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _sorted_deep(value[k]) for k in js_sorted_keys(value)}
    if isinstance(value, list | tuple):
        return [_sorted_deep(v) for v in value]
    return value


def stringify_sorted(value: Any, *, deep: bool) -> str:
    """``JSON.stringify`` of ``value`` rebuilt with sorted keys (top level, or every level).

    JavaScript still puts integer-like keys first in any object it builds,
    which ``js_stringify`` reproduces.
    """
    if deep:
        return stringify(_sorted_deep(value))
    if isinstance(value, Mapping):
        return stringify({k: value[k] for k in js_sorted_keys(value)})
    return stringify(value)


def _with_key_list(value: Any, keys: list[str], stack: list[int]) -> str | None:
    if isinstance(value, Mapping | list | tuple):
        if id(value) in stack:
            raise ValueError("Converting circular structure to JSON")
        stack.append(id(value))
        try:
            if isinstance(value, Mapping):
                parts = []
                for key in keys:
                    if key in value:
                        text = _with_key_list(value[key], keys, stack)
                        if text is not None:
                            parts.append(f"{js_stringify(key)}:{text}")
                return "{" + ",".join(parts) + "}"
            items = (_with_key_list(v, keys, stack) for v in value)
            return "[" + ",".join("null" if t is None else t for t in items) + "]"
        finally:
            stack.pop()
    return js_stringify(value)


def stringify_with_key_list(value: Any, keys: list[str]) -> str:
    """``JSON.stringify(value, keys)``: an array replacer is a property allow-list.

    The list applies to every object at every depth, in the list's order (not
    the object's), so nested objects keep only keys that are also in the list.

    Examples
    --------
    >>> stringify_with_key_list({"b": 1, "a": {"x": 1, "a": 2}}, ["a", "b"])
    '{"a":{"a":2},"b":1}'
    """
    try:
        text = _with_key_list(value, keys, [])
    except (ValueError, TypeError, RecursionError):
        return '"[unserializable]"'
    return "undefined" if text is None else text


# Keys whose truthy value marks a result as an error, and the text prefixes of
# error strings (tau-bench's "Error: ...", a Python traceback).
_ERROR_FLAGS = ("is_error", "isError")
_ERROR_KEYS = ("error", "errors")
_ERROR_PREFIXES = ("error", "traceback (most recent call last)")


def is_error_result(result: Any) -> bool:
    """Whether a tool result reads as an error (our stand-in for a typed error observation).

    A mapping with ``is_error``/``isError`` true or a non-empty ``error``/``errors``
    value; a string starting with ``Error`` (any case) or a Python traceback.

    Examples
    --------
    >>> [is_error_result(r) for r in ({"error": "ENOENT"}, {"error": None}, "Error: no seats",
    ...  {"ok": True}, "fine")]
    [True, False, True, False, False]
    """
    if isinstance(result, Mapping):
        if any(result.get(flag) is True for flag in _ERROR_FLAGS):
            return True
        return any(result.get(key) not in (None, False, "", [], {}) for key in _ERROR_KEYS)
    if isinstance(result, str):
        return result.lstrip().lower().startswith(_ERROR_PREFIXES)
    return False
