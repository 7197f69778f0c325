"""Cline's repeated tool call detection: ``cline``.

Source: ``cline/cline``, ``src/core/task/loop-detection.ts`` (PR #9933).
A call's signature is its name and ``JSON.stringify(params, keys)`` with
``keys`` the sorted top-level parameter names minus ``task_progress``. The
count of identical consecutive calls starts at 1; at exactly
``soft_threshold`` (3) Cline injects a warning (the *nudge*), at exactly
``hard_threshold`` (5) it sets the mistake count to its limit (the *give-up*:
ask the user, or fail the task in YOLO mode). Both are evaluated on the call's
request.

``fire_on`` chooses which one is the detector's fire; the verdict's ``extra``
always lists ``nudges`` (message indices) and ``give_up`` (the message index of
the first give-up, or null).

JavaScript's array replacer is an allow-list applied at every depth, so nested
objects keep only keys that are also top-level parameter names. Cline's own
parameters are flat strings, where that never matters; corpus arguments may
nest, so ``fix_nested_params`` offers a full deep-sorted encoding instead.

Examples
--------
>>> from harness.detectors.peers import cline
>>> call = {"type": "activity", "text": "", "meta": {"activity": {"type": "request",
...     "function": {"name": "read_file", "arguments": {"path": "a.py"}}}}}
>>> adapter = cline.DETECTOR.make({})()
>>> [adapter.append(call) is not None for _ in range(3)]
[False, False, True]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._base import Fire, Param, ParameterError, register
from ._data import constants, peer_detector
from ._tools import MISSING, CallReader, js_sorted_keys, stringify, stringify_sorted
from ._tools import stringify_with_key_list as _with_keys

__all__ = ["DETECTOR", "ClineAdapter", "tool_call_signature"]

_IGNORED = frozenset(constants("cline")["ignored_params"])


def tool_call_signature(arguments: Any, *, fix_nested: bool = False) -> str:
    """``toolCallSignature``: ``JSON.stringify(params, sortedKeys)`` without ignored params.

    Examples
    --------
    >>> tool_call_signature({"path": "a", "task_progress": "- [x] one", "opt": {"x": 1}})
    '{"opt":{},"path":"a"}'
    >>> tool_call_signature({"path": "a", "opt": {"x": 1}}, fix_nested=True)
    '{"opt":{"x":1},"path":"a"}'
    """
    if arguments is MISSING or arguments is None:
        return "{}"
    if not isinstance(arguments, Mapping):
        return stringify(arguments)
    keys = [k for k in js_sorted_keys(arguments) if k not in _IGNORED]
    if fix_nested:
        return stringify_sorted({k: arguments[k] for k in keys}, deep=True)
    return _with_keys(arguments, keys)


class ClineAdapter:
    """Per-case state of ``cline``; follows the case after the fire to report the give-up."""

    follow_after_fire = True

    def __init__(self, params: Mapping[str, Any]) -> None:
        self._soft: int = params["soft_threshold"]
        self._hard: int = params["hard_threshold"]
        self._fire_on: str = params["fire_on"]
        self._fix_nested: bool = params["fix_nested_params"]
        self._last: tuple[str, str] | None = None
        self._count = 0
        self._index = -1
        self._fired = False
        self._nudges: list[int] = []
        self._give_up: int | None = None
        self._reader = CallReader()

    def append(self, message: Mapping[str, Any]) -> Fire | None:
        self._index += 1
        fire: Fire | None = None
        for event in self._reader.read(message):
            if event.kind != "call":
                continue
            call = (event.name, tool_call_signature(event.arguments, fix_nested=self._fix_nested))
            self._count = self._count + 1 if call == self._last else 1
            self._last = call
            levels = []
            if self._count == self._soft:
                self._nudges.append(self._index)
                levels.append("nudge")
            if self._count == self._hard and self._give_up is None:
                self._give_up = self._index
                levels.append("give_up")
            if self._fire_on in levels and not self._fired:
                self._fired = True
                fire = Fire(
                    {
                        "check": "repeated_tool_call",
                        "level": self._fire_on,
                        "tool": event.name,
                        "count": self._count,
                    },
                    self._extra(),
                )
        return fire

    def _extra(self) -> dict[str, Any]:
        return {"nudges": list(self._nudges), "give_up": self._give_up}

    def finish(self) -> dict[str, Any]:
        return self._extra()


def _build(params: Mapping[str, Any]) -> Callable[[], ClineAdapter]:
    options = dict(params)
    if options["soft_threshold"] > options["hard_threshold"]:
        raise ParameterError(
            "cline: soft_threshold must be at most hard_threshold; got "
            f"{options['soft_threshold']} > {options['hard_threshold']}"
        )
    return lambda: ClineAdapter(options)


DETECTOR = register(
    peer_detector(
        name="cline",
        kind="thread",
        description="Cline: nudges at 3 identical calls in a row, gives up at 5",
        params=(
            Param("soft_threshold", "int", low=2, high=10, description="calls for the nudge"),
            Param("hard_threshold", "int", low=2, high=20, description="calls for the give-up"),
            Param(
                "fire_on",
                "categorical",
                choices=("nudge", "give_up"),
                description="which level is the detector's fire",
            ),
            Param(
                "fix_nested_params",
                "bool",
                description="encode nested arguments fully (source: top-level allow-list)",
            ),
        ),
        build=_build,
    )
)
