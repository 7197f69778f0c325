"""Roo Code's ``ToolRepetitionDetector``: ``roo_code``.

Source: ``RooCodeInc/Roo-Code``, ``src/core/tools/ToolRepetitionDetector.ts``.
Each tool call is serialised as ``JSON.stringify({name, parameters})`` with the
parameters' top-level keys sorted (nested objects keep their order). The count
of identical consecutive calls starts at 0 for a new call and the call is
blocked when it reaches ``limit``: with the default 3, the 4th identical call
in a row is blocked. ``browser_action`` scroll calls are exempt (neither
counted nor resetting). The detector fires on the blocked call's request.

Examples
--------
>>> from harness.detectors.peers import roo_code
>>> call = {"type": "activity", "text": "", "meta": {"activity": {"type": "request",
...     "function": {"name": "read_file", "arguments": {"path": "a.py"}}}}}
>>> adapter = roo_code.DETECTOR.make({})()
>>> [adapter.append(call) is not None for _ in range(4)]
[False, False, False, True]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._base import Fire, Param, register
from ._data import constants, peer_detector
from ._tools import MISSING, CallReader, js_sorted_keys, stringify

__all__ = ["DETECTOR", "RooAdapter", "serialize_tool_use"]

_EXEMPT: dict[str, list[str]] = constants("roo_code")["exempt"]


def serialize_tool_use(name: str, arguments: Any) -> str:
    """``serializeToolUse``: ``JSON.stringify({name, parameters})``, top-level keys sorted.

    Examples
    --------
    >>> serialize_tool_use("ls", {"b": 1, "a": {"y": 1, "x": 2}})
    '{"name":"ls","parameters":{"a":{"y":1,"x":2},"b":1}}'
    """
    if isinstance(arguments, Mapping):
        parameters: Any = {k: arguments[k] for k in js_sorted_keys(arguments)}
    elif arguments is MISSING or arguments is None:
        parameters = {}
    else:
        parameters = arguments
    return stringify({"name": name, "parameters": parameters})


def _exempt(name: str, arguments: Any) -> bool:
    actions = _EXEMPT.get(name, [])
    return isinstance(arguments, Mapping) and arguments.get("action") in actions


class RooAdapter:
    """Per-case state of ``roo_code``."""

    follow_after_fire = False

    def __init__(self, params: Mapping[str, Any]) -> None:
        self._limit: int = params["limit"]
        self._previous: str | None = None
        self._count = 0
        self._reader = CallReader()

    def append(self, message: Mapping[str, Any]) -> Fire | None:
        for event in self._reader.read(message):
            if event.kind != "call" or _exempt(event.name, event.arguments):
                continue
            current = serialize_tool_use(event.name, event.arguments)
            if current == self._previous:
                self._count += 1
            else:
                self._count = 0
                self._previous = current
            if self._count >= self._limit:
                blocked = self._count + 1
                self._count = 0
                self._previous = None
                return Fire(
                    {
                        "check": "consecutive_identical_tool_calls",
                        "tool": event.name,
                        "limit": self._limit,
                        "blocked_call": blocked,
                    }
                )
        return None

    def finish(self) -> None:
        return None


def _build(params: Mapping[str, Any]) -> Callable[[], RooAdapter]:
    options = dict(params)
    return lambda: RooAdapter(options)


DETECTOR = register(
    peer_detector(
        name="roo_code",
        kind="thread",
        description="Roo Code: blocks the 4th identical consecutive tool call (limit 3)",
        params=(
            Param(
                "limit",
                "int",
                low=1,
                high=10,
                description="identical repeats allowed; the next identical call is blocked",
            ),
        ),
        build=_build,
    )
)
