"""Descriptive statistics of labelled corpora, per file and in total."""

from __future__ import annotations

import os
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ._corpus_reader import Case, CorpusReader

__all__ = ["corpus_stats"]

NO_KIND = "(none)"
"""The ``by_kind`` key of cases without ``label.kind``."""


@dataclass
class _Tally:
    cases: int = 0
    positives: int = 0
    messages: int = 0
    chunked_messages: int = 0
    with_onset: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    by_source: Counter[str] = field(default_factory=Counter)
    by_tag: Counter[str] = field(default_factory=Counter)
    by_message_type: Counter[str] = field(default_factory=Counter)
    messages_per_case: list[int] = field(default_factory=list)
    chars_per_case: list[int] = field(default_factory=list)
    groups: set[str] = field(default_factory=set)
    skipped: int = 0
    skipped_by_rule: Counter[str] = field(default_factory=Counter)

    def add(self, case: Case) -> None:
        self.cases += 1
        self.positives += case.looping
        self.with_onset += case.onset is not None
        self.by_kind[case.kind if case.kind is not None else NO_KIND] += 1
        self.by_source[case.source] += 1
        # A tag listed twice in one case still tags that case once.
        self.by_tag.update(set(case.tags))
        self.groups.add(case.group)
        messages = case.messages
        self.messages += len(messages)
        self.messages_per_case.append(len(messages))
        chars = 0
        for message in messages:
            chars += len(message["text"])
            self.chunked_messages += "chunks" in message
            self.by_message_type[message["type"]] += 1
        self.chars_per_case.append(chars)

    def merge(self, other: _Tally) -> None:
        for name in ("cases", "positives", "messages", "chunked_messages", "with_onset", "skipped"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("by_kind", "by_source", "by_tag", "by_message_type", "skipped_by_rule"):
            getattr(self, name).update(getattr(other, name))
        self.messages_per_case.extend(other.messages_per_case)
        self.chars_per_case.extend(other.chars_per_case)
        self.groups |= other.groups

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "positives": self.positives,
            "negatives": self.cases - self.positives,
            "with_onset": self.with_onset,
            "groups": len(self.groups),
            "messages": self.messages,
            "chunked_messages": self.chunked_messages,
            "messages_per_case": _summary(self.messages_per_case),
            "text_chars_per_case": _summary(self.chars_per_case),
            "by_kind": _sorted(self.by_kind),
            "by_source": _sorted(self.by_source),
            "by_tag": _sorted(self.by_tag),
            "by_message_type": _sorted(self.by_message_type),
            "skipped": self.skipped,
            "skipped_by_rule": dict(self.skipped_by_rule),
        }


def _sorted(counter: Counter[str]) -> dict[str, int]:
    # Most frequent first, ties by name: stable output for diffs and tables.
    return dict(sorted(counter.items(), key=lambda item: (-item[1], item[0])))


def _summary(values: list[int]) -> dict[str, float | int | None]:
    if not values:
        return {"min": None, "median": None, "mean": None, "max": None}
    return {
        "min": min(values),
        "median": statistics.median(values),
        "mean": round(statistics.fmean(values), 3),
        "max": max(values),
    }


def corpus_stats(
    paths: Iterable[str | os.PathLike[str]], *, skip_invalid: bool = False
) -> dict[str, Any]:
    """Describe corpora: class balance, kinds, sources, tags, sizes; per file and in total.

    Parameters
    ----------
    paths : iterable of str or os.PathLike
        Corpus files (resolve names first with :func:`resolve_corpus`).
    skip_invalid : bool, default False
        Leave invalid cases out (counted in ``skipped`` and ``skipped_by_rule``)
        instead of raising :class:`CorpusError`.

    Returns
    -------
    dict
        ``{"files": [{"file": ..., **stats}, ...], "total": stats}`` where stats has
        ``cases``, ``positives``, ``negatives``, ``with_onset``, ``groups`` (distinct
        groups; in the total, across files), ``messages``, ``chunked_messages``,
        ``messages_per_case`` and ``text_chars_per_case`` (each ``min``, ``median``,
        ``mean``, ``max``; characters are code points of the messages' ``text``),
        ``by_kind`` (cases without a kind under ``"(none)"``), ``by_source``,
        ``by_tag`` (cases carrying each tag), ``by_message_type``, ``skipped`` and
        ``skipped_by_rule`` (invalid cases per broken rule).

    Examples
    --------
    >>> stats = corpus_stats(["corpora/synthetic/default.jsonl"])  # doctest: +SKIP
    >>> stats["total"]["positives"], stats["total"]["negatives"]  # doctest: +SKIP
    (500, 500)
    """
    if isinstance(paths, str | os.PathLike):
        raise TypeError("paths must be an iterable of paths, not a single path")
    total = _Tally()
    files: list[dict[str, Any]] = []
    for path in paths:
        tally = _Tally()
        reader = CorpusReader(path, skip_invalid=skip_invalid)
        for case in reader:
            tally.add(case)
        tally.skipped = reader.report.invalid
        tally.skipped_by_rule.update(reader.report.invalid_cases_by_rule())
        files.append({"file": reader.report.file, **tally.to_dict()})
        total.merge(tally)
    return {"files": files, "total": total.to_dict()}
