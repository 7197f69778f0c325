"""The one exception hierarchy of :mod:`loopguard`."""

from __future__ import annotations

__all__ = ["DefaultsError", "LoopguardError", "OptionError", "StreamError"]


class LoopguardError(Exception):
    """Base class of every error raised by :mod:`loopguard`."""


class OptionError(LoopguardError, ValueError):
    """An option has a value the detector cannot use (named in the message)."""


class DefaultsError(LoopguardError):
    """``defaults.json`` is missing, malformed, or lacks a detector's block."""


class StreamError(LoopguardError):
    """A provider stream could not be opened or read (HTTP status, transport)."""
