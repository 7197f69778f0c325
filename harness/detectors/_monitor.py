"""Thread adapters around the library's stateful monitors.

The near-duplicate, error-retry, paraphrase and stall detectors of
``loopguard`` are classes with ``append(message) -> bool`` and a JSON-able
``last_match``; :func:`monitor_build` turns such a class into a registry
``build`` that checks the options once, before any case runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from loopguard import OptionError

from ._base import Fire, ParameterError

__all__ = ["MonitorAdapter", "checked_build", "monitor_build"]

A = TypeVar("A")


class Monitor(Protocol):
    last_match: Any

    def append(self, message: Mapping[str, Any]) -> bool: ...


class MonitorAdapter:
    """A thread adapter: feeds each message to a monitor; fires with its ``last_match``."""

    __slots__ = ("_monitor",)

    def __init__(self, monitor: Monitor) -> None:
        self._monitor = monitor

    def append(self, message: Mapping[str, Any]) -> Fire | None:
        if not self._monitor.append(message):
            return None
        return Fire(dict(self._monitor.last_match or {}))

    def finish(self) -> Mapping[str, Any] | None:
        return None


def checked_build(
    name: str,
    check: Callable[[Mapping[str, Any]], object],
    adapter: Callable[[dict[str, Any]], A],
) -> Callable[[Mapping[str, Any]], Callable[[], A]]:
    """A ``Detector.build`` that runs ``check(options)`` once, then makes ``adapter(options)``.

    ``check`` constructs the library object, so bad option values are refused
    as a :class:`ParameterError` naming the detector when it is built, rather
    than on the first case.
    """

    def build(params: Mapping[str, Any]) -> Callable[[], A]:
        options = dict(params)
        try:
            check(options)
        except OptionError as exc:
            raise ParameterError(f"{name}: {exc}") from None
        return lambda: adapter(options)

    return build


def monitor_build(
    name: str, make: Callable[[Mapping[str, Any]], Monitor]
) -> Callable[[Mapping[str, Any]], Callable[[], MonitorAdapter]]:
    """A ``Detector.build`` for monitors made by ``make(options)``."""
    return checked_build(name, make, lambda options: MonitorAdapter(make(options)))
