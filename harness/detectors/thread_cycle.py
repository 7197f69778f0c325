"""``thread_cycle``: ``is_thread_cyclic``, all four heuristics, on every prefix.

The reason is the first heuristic that holds, in the library's order
(``describe_thread_cycle``). The suffix, result-run and message-text heuristics
are evaluated incrementally (see their modules); the result on each prefix is
the same as ``describe_thread_cycle(prefix, **params)``, which the tests check.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from loopguard import has_repeated_activity_tail

from . import repeated_activity_tail, repeated_message_text_run, repeated_result_run
from . import repeated_suffix as _suffix
from ._base import Detector, Fire, register
from ._incremental import ResultRunCheck, SuffixCheck

__all__: list[str] = []

_PARAMS = (
    _suffix.PARAMS
    + repeated_activity_tail.PARAMS
    + repeated_result_run.PARAMS
    + repeated_message_text_run.PARAMS
)


class _Adapter:
    follow_after_fire = False

    def __init__(self, params: Mapping[str, Any]) -> None:
        self._options = dict(params)
        self._messages: list[Mapping[str, Any]] = []
        self._suffix = SuffixCheck(params)
        self._results = ResultRunCheck(params)
        self._text = repeated_message_text_run.MessageTextRunCheck(params)

    def append(self, message: Mapping[str, Any]) -> Fire | None:
        self._messages.append(message)
        # Every incremental check sees every message, so that its state stays aligned.
        suffix_hit = self._suffix.add(message)
        result_hit = self._results.add(message)
        text_hit = self._text.add(message)
        if suffix_hit:
            return Fire("repeated_suffix")
        if has_repeated_activity_tail(self._messages, **self._options):
            return Fire("repeated_activity_tail")
        if result_hit:
            return Fire("repeated_result_run")
        if text_hit:
            return Fire("repeated_message_text_run")
        return None

    def finish(self) -> None:
        return None


def _build(params: Mapping[str, Any]) -> Callable[[], _Adapter]:
    options = dict(params)
    return lambda: _Adapter(options)


register(
    Detector(
        name="thread_cycle",
        kind="thread",
        description="is_thread_cyclic (four heuristics) on every prefix; reason names the first",
        defaults_key="repeated_suffix",
        params=_PARAMS,
        build=_build,
        presets={},
    )
)
