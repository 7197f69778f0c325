"""The one exception hierarchy of :mod:`harness`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._corpus_issue import CorpusIssue

__all__ = ["CorpusError", "CorpusNotFoundError", "HarnessError"]


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
