"""The one exception hierarchy of :mod:`harness`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._corpus_issue import CorpusIssue

__all__ = [
    "ChunkingError",
    "CorpusError",
    "CorpusNotFoundError",
    "DetectorError",
    "ExportError",
    "ExportRefused",
    "HarnessError",
    "ParameterError",
    "PostgresUnavailable",
    "SweepError",
    "UnknownDetectorError",
]


class HarnessError(Exception):
    """Base class of every error raised by :mod:`harness`."""


class CorpusError(HarnessError, ValueError):
    """A corpus is invalid, unreadable, or cannot be written.

    ``issues`` holds every problem found (all of them, not only the first), each a
    :class:`harness.corpus.CorpusIssue`; it is empty when the error is not about
    the content of a file (for example a bad file name).
    """

    def __init__(self, message: str, issues: Sequence[CorpusIssue] = ()) -> None:
        super().__init__(message)
        self.issues: tuple[CorpusIssue, ...] = tuple(issues)


class CorpusNotFoundError(CorpusError, LookupError):
    """A corpus name or path does not designate a corpus file."""


class DetectorError(HarnessError, ValueError):
    """A detector definition is inconsistent (raised when it is registered or built)."""


class UnknownDetectorError(DetectorError, LookupError):
    """A detector name is not in the registry (the message lists the known ones)."""


class ParameterError(HarnessError, ValueError):
    """A parameter is unknown, of the wrong type or out of bounds (named in the message)."""


class ChunkingError(HarnessError, ValueError):
    """A chunking policy name is not valid (the message lists the allowed ones)."""


class SweepError(HarnessError, ValueError):
    """A sweep cannot run as asked: a bad experiment, split, storage or run folder."""


class ExportError(HarnessError, ValueError):
    """A run folder cannot be exported (not a sweep, no such trial, no tuned configuration)."""


class ExportRefused(HarnessError, RuntimeError):
    """The tuned configuration is worse than the current defaults on the test split."""


class PostgresUnavailable(HarnessError, RuntimeError):
    """The PostgreSQL server binaries are not installed (the message says how to get them)."""
