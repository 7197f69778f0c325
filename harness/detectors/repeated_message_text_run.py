"""``repeated_message_text_run``: a sentence loop inside one of the last messages' text.

The library's adapter checks each of the last ``last_messages`` messages on its
own, so the result for a prefix is the OR of per-message results. The adapter
computes each message's result once (with the library function on that message
alone) and reuses it for every later prefix: the same verdicts as calling
``has_repeated_message_text_run`` on each prefix, without re-reading the texts.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from loopguard import has_repeated_message_text_run

from ._base import Detector, Fire, Param, register

__all__ = ["PARAMS", "MessageTextRunCheck"]

_BLOCK = "repeated_message_text_run"

PARAMS = (
    Param("last_messages", "int", low=1, high=10, block=_BLOCK, description="trailing messages"),
    Param("text_min_units", "int", low=2, high=32, block=_BLOCK, description="units needed"),
    Param("text_window", "int", low=8, high=256, block=_BLOCK, description="units inspected"),
    Param(
        "text_max_unique_ratio",
        "float",
        low=0.1,
        high=1.0,
        block=_BLOCK,
        description="distinct units / units at or below which it fires",
    ),
)


class MessageTextRunCheck:
    """Incremental ``has_repeated_message_text_run``: ``add(message)`` gives the prefix verdict."""

    __slots__ = ("_options", "_recent")

    def __init__(self, params: Mapping[str, Any]) -> None:
        self._options = {name: params[name] for name in ("text_min_units", "text_window")}
        self._options["text_max_unique_ratio"] = params["text_max_unique_ratio"]
        self._recent: deque[bool] = deque(maxlen=int(params["last_messages"]))

    def add(self, message: Mapping[str, Any]) -> bool:
        hit = has_repeated_message_text_run([message], last_messages=1, **self._options)
        self._recent.append(hit)
        return any(self._recent)


class _Adapter:
    follow_after_fire = False

    def __init__(self, params: Mapping[str, Any]) -> None:
        self._check = MessageTextRunCheck(params)

    def append(self, message: Mapping[str, Any]) -> Fire | None:
        return Fire("repeated_message_text_run") if self._check.add(message) else None

    def finish(self) -> None:
        return None


def _build(params: Mapping[str, Any]) -> Callable[[], _Adapter]:
    options = dict(params)
    return lambda: _Adapter(options)


register(
    Detector(
        name="repeated_message_text_run",
        kind="thread",
        description="has_repeated_message_text_run on every prefix (each message's text once)",
        defaults_key=_BLOCK,
        params=PARAMS,
        build=_build,
    )
)
