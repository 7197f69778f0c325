"""Helpers shared by the importers: summaries, splits, raw reading, writing, provenance."""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._atomic import atomic_write_jsonl, atomic_write_text
from .._errors import CorpusError, CorpusNotFoundError

__all__ = [
    "TRAIN_SHARE_PERCENT",
    "ImportSummary",
    "activity_message",
    "load_json",
    "split_of",
    "write_cases",
    "write_provenance",
]

# Share of groups that land in "train"; the rest is "test". Tuning must never see "test".
TRAIN_SHARE_PERCENT = 70


@dataclass(slots=True)
class ImportSummary:
    """What one import produced.

    ``skipped`` counts the units of raw data that gave no case, by reason (a
    trace without a ledger, a run no rule decides, ...). ``splits`` counts the
    emitted cases per split; ``notes`` counts other facts of the conversion
    (log lines removed, ...).

    Examples
    --------
    >>> s = ImportSummary("demo", "out.jsonl", cases=3, positives=1, negatives=2)
    >>> s.as_dict()["negatives"]
    2
    """

    dataset: str
    out_path: str
    cases: int = 0
    positives: int = 0
    negatives: int = 0
    groups: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    splits: dict[str, int] = field(default_factory=dict)
    notes: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """Return the summary as a JSON-ready dict (keys in a fixed order)."""
        return {
            "dataset": self.dataset,
            "out_path": self.out_path,
            "cases": self.cases,
            "positives": self.positives,
            "negatives": self.negatives,
            "groups": self.groups,
            "skipped": dict(sorted(self.skipped.items())),
            "splits": dict(sorted(self.splits.items())),
            "notes": dict(sorted(self.notes.items())),
        }


def split_of(group: str) -> str:
    """Return ``"train"`` or ``"test"`` for a group, from a stable hash of its name.

    The first 8 bytes of sha256(group) taken modulo 100 decide: below
    :data:`TRAIN_SHARE_PERCENT` is train. Every case of a group lands in the same
    split, and the assignment never changes between runs or machines.

    Examples
    --------
    >>> split_of("tau-bench/airline/task-00") in ("train", "test")
    True
    """
    digest = hashlib.sha256(group.encode("utf-8")).digest()
    return "train" if int.from_bytes(digest[:8], "big") % 100 < TRAIN_SHARE_PERCENT else "test"


def load_json(path: Path) -> Any:
    """Parse a raw JSON file; a missing or malformed file is a :class:`CorpusError`."""
    if not path.is_file():
        raise CorpusNotFoundError(f"{path}: raw file not found")
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorpusError(f"{path}: cannot read raw JSON: {exc}") from exc


def activity_message(
    kind: str,
    name: str,
    arguments: object,
    *,
    result: object = None,
    settled: bool = False,
    extra_meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build an ``activity`` message (a tool request, or a response when ``settled``).

    Examples
    --------
    >>> activity_message("request", "search", {"q": "x"})["meta"]["activity"]["type"]
    'request'
    """
    function: dict[str, Any] = {"name": name, "arguments": arguments}
    if settled:
        function["result"] = result
    meta: dict[str, Any] = {"activity": {"type": kind, "function": function}}
    if extra_meta:
        meta.update(extra_meta)
    return {"type": "activity", "text": "", "meta": meta}


def write_cases(
    out_path: str | os.PathLike[str], cases: Iterable[dict[str, Any]], summary: ImportSummary
) -> ImportSummary:
    """Write ``cases`` atomically (same cases -> same bytes) and fill in ``summary``.

    Each case gets its ``split`` from its group here, so no importer can forget it.
    """
    target = os.fspath(out_path)
    if not target.endswith((".jsonl", ".jsonl.gz")):
        raise CorpusError(f"{target}: a corpus file name must end in .jsonl or .jsonl.gz")
    materialised = list(cases)
    seen: set[str] = set()
    splits: Counter[str] = Counter()
    groups: set[str] = set()
    for case in materialised:
        if case["id"] in seen:
            # A duplicate id is an importer bug, never a property of the raw data.
            raise CorpusError(f"{target}: importer produced the id {case['id']!r} twice")
        seen.add(case["id"])
        group = case.get("group", case["id"])
        groups.add(group)
        case["split"] = split_of(group)
        splits[case["split"]] += 1
    atomic_write_jsonl(target, materialised)
    summary.out_path = target
    summary.cases = len(materialised)
    summary.positives = sum(1 for c in materialised if c["label"]["looping"] is True)
    summary.negatives = summary.cases - summary.positives
    summary.groups = len(groups)
    summary.splits = dict(splits)
    return summary


def write_provenance(
    raw_dir: str | os.PathLike[str], out_path: str | os.PathLike[str]
) -> list[str]:
    """Copy ``SOURCE.md`` and ``LICENSE`` from ``raw_dir`` next to the corpus ``out_path``.

    The copies are byte-for-byte (text read and written as UTF-8). Return the
    paths written; a missing file in ``raw_dir`` is a :class:`CorpusNotFoundError`,
    because a converted corpus must never ship without its license.
    """
    source = Path(raw_dir)
    target_dir = Path(out_path).parent
    written: list[str] = []
    for name in ("SOURCE.md", "LICENSE"):
        origin = source / name
        if not origin.is_file():
            raise CorpusNotFoundError(f"{origin}: missing; a converted corpus needs its {name}")
        destination = target_dir / name
        if destination.resolve() != origin.resolve():
            atomic_write_text(destination, origin.read_text(encoding="utf-8"))
        written.append(os.fspath(destination))
    return written
