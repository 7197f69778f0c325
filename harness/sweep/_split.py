"""The cases of a sweep and their split into a training side and a test side.

A sweep holds its cases in memory for the whole study (they are replayed once
per trial): it is meant for corpora that fit, like every corpus under
``corpora/``. Cases are identified by ``(corpus name, case id)``.

Rules (``docs/tuning.md``, "Honest evaluation"):

* groups never cross sides: every case of a group (within its corpus) is on
  one side; a corpus whose own ``split`` field breaks this is refused;
* the computed split is stratified by label (scikit-learn
  ``StratifiedGroupKFold``, seeded);
* label sources are never mixed silently: more than one source needs
  ``allow_mixed_sources = true`` or a ``sources = [...]`` filter.

Examples
--------
>>> from harness.corpus import Case
>>> def case(i, group, looping):
...     raw = {"id": f"c{i}", "group": group, "messages": [{"type": "user", "text": "x"}],
...            "label": {"looping": looping, "source": "synthetic"}}
...     return SweepCase("demo", Case(raw, "demo.jsonl", i + 1))
>>> cases = [case(i, f"g{i // 2}", i % 4 < 2) for i in range(24)]
>>> split = make_split(cases, method="stratified-group", test_size=0.25, seed=0)
>>> len(split.train) + len(split.test), split.method, split.folds
(24, 'stratified-group', 4)
>>> train_groups = {cases[i].group_key for i in split.train}
>>> any(cases[i].group_key in train_groups for i in split.test)
False
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._corpus_reader import Case, iter_cases
from .._manifest import file_sha256
from ..evaluate import CorpusInput
from ._experiment import SweepError

__all__ = [
    "LoadedData",
    "Split",
    "SweepCase",
    "cv_folds",
    "load_cases",
    "make_split",
]


@dataclass(frozen=True, slots=True)
class SweepCase:
    """One case of a sweep: its corpus name and the :class:`~harness.corpus.Case`."""

    corpus: str
    case: Case

    @property
    def key(self) -> tuple[str, str]:
        """``(corpus, case id)``, unique within a sweep."""
        return (self.corpus, self.case.id)

    @property
    def group_key(self) -> tuple[str, str]:
        """``(corpus, group)``: the unit that never crosses sides and that the bootstrap draws."""
        return (self.corpus, self.case.group)

    @property
    def looping(self) -> bool:
        """The label."""
        return self.case.looping


@dataclass
class LoadedData:
    """The cases of a sweep, in corpus then file order, and facts about each corpus."""

    cases: list[SweepCase]
    corpora: list[dict[str, Any]]
    inputs: list[CorpusInput]
    sources: list[str]
    mixed_sources: bool
    notes: list[str] = field(default_factory=list)


def _kept(group_key: tuple[str, str], fraction: float, seed: int) -> bool:
    if fraction >= 1.0:
        return True
    text = f"{seed}\x1f{group_key[0]}\x1f{group_key[1]}".encode()
    return zlib.crc32(text) / 0xFFFFFFFF < fraction


def load_cases(
    inputs: Sequence[CorpusInput],
    *,
    sources: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
    allow_mixed_sources: bool = False,
    subsample: float = 1.0,
    seed: int = 0,
) -> LoadedData:
    """Read every case of ``inputs`` into memory, apply the source filter and the subsample.

    ``sources`` keeps the cases of those label sources, ``kinds`` those whose
    ``label.kind`` is listed (``"(none)"``: cases without a kind); ``subsample``
    keeps that fraction of the groups (by a seeded hash of the group, so a
    group is kept or dropped whole).

    Raises
    ------
    SweepError
        A corpus mixes label sources with another (or within itself) and
        neither ``allow_mixed_sources`` nor a ``sources`` filter is given, or
        the filter leaves no case.
    CorpusError
        A corpus is invalid (the loader's file:line messages).
    """
    cases: list[SweepCase] = []
    facts: list[dict[str, Any]] = []
    wanted = None if sources is None else set(sources)
    wanted_kinds = None if kinds is None else set(kinds)
    for corpus in inputs:
        read = kept = 0
        found: dict[str, int] = {}
        for case in iter_cases(corpus.path):
            read += 1
            found[case.source] = found.get(case.source, 0) + 1
            if wanted is not None and case.source not in wanted:
                continue
            if wanted_kinds is not None and (case.kind or "(none)") not in wanted_kinds:
                continue
            item = SweepCase(corpus.name, case)
            if not _kept(item.group_key, subsample, seed):
                continue
            cases.append(item)
            kept += 1
        facts.append(
            {
                "name": corpus.name,
                "path": str(corpus.path),
                "sha256": file_sha256(corpus.path),
                "cases_read": read,
                "cases_used": kept,
                "label_sources": dict(sorted(found.items())),
            }
        )
    used = sorted({c.case.source for c in cases})
    if not cases:
        raise SweepError(
            "no case left to tune on"
            + (f" after the sources filter {sorted(wanted)}" if wanted is not None else "")
            + (f" and the kinds filter {sorted(wanted_kinds)}" if wanted_kinds is not None else "")
            + (f" and the subsample {subsample}" if subsample < 1.0 else "")
        )
    notes: list[str] = []
    if len(used) > 1:
        if not allow_mixed_sources:
            per_corpus = "; ".join(f"{f['name']}: {', '.join(f['label_sources'])}" for f in facts)
            raise SweepError(
                f"the corpora mix label sources ({', '.join(used)}; {per_corpus}); a tuned "
                "value would be fitted to an unknown blend of labellers. Set "
                "allow_mixed_sources = true or filter with sources = [...] in the experiment"
            )
        notes.append(
            f"label sources are mixed on purpose (allow_mixed_sources): {', '.join(used)}; "
            "the objective pools them"
        )
    if wanted is not None:
        notes.append(f"cases filtered to label sources {sorted(wanted)}")
    if wanted_kinds is not None:
        notes.append(f"cases filtered to label kinds {sorted(wanted_kinds)}")
    if subsample < 1.0:
        notes.append(f"subsample: {subsample:g} of the groups (seed {seed})")
    return LoadedData(cases, facts, list(inputs), used, len(used) > 1, notes)


@dataclass(frozen=True)
class Split:
    """A training/test split of a sweep's cases (indices into its case list).

    Attributes
    ----------
    method : {"corpus", "stratified-group"}
        Where the sides come from.
    train, test : tuple of int
        Indices of the cases on each side, in case order.
    test_size, seed, folds
        The computed split's settings (None for ``corpus``).
    """

    method: str
    train: tuple[int, ...]
    test: tuple[int, ...]
    test_size: float | None = None
    seed: int | None = None
    folds: int | None = None

    def definition(self) -> dict[str, Any]:
        """How the split was made (JSON)."""
        out: dict[str, Any] = {"method": self.method}
        if self.method == "stratified-group":
            out.update(
                test_size=self.test_size,
                folds=self.folds,
                seed=self.seed,
                algorithm="sklearn.model_selection.StratifiedGroupKFold(shuffle=True), fold 0",
            )
        else:
            out["field"] = "split"
        return out

    def digest(self, cases: Sequence[SweepCase]) -> str:
        """SHA-256 of the sorted ``side, corpus, case id`` lines: equal hash, equal split."""
        lines = sorted(
            [f"train\x1f{cases[i].corpus}\x1f{cases[i].case.id}" for i in self.train]
            + [f"test\x1f{cases[i].corpus}\x1f{cases[i].case.id}" for i in self.test]
        )
        return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()

    def document(self, cases: Sequence[SweepCase]) -> dict[str, Any]:
        """The ``split.json`` document: definition, hash, counts and the case ids per side."""

        def side(indices: Iterable[int]) -> dict[str, Any]:
            chosen = [cases[i] for i in indices]
            return {
                "cases": len(chosen),
                "positives": sum(c.looping for c in chosen),
                "negatives": sum(not c.looping for c in chosen),
                "groups": len({c.group_key for c in chosen}),
                "ids": [[c.corpus, c.case.id] for c in chosen],
            }

        return {
            "definition": self.definition(),
            "sha256": self.digest(cases),
            "train": side(self.train),
            "test": side(self.test),
        }


def _check_groups(cases: Sequence[SweepCase], train: Sequence[int], test: Sequence[int]) -> None:
    train_groups = {cases[i].group_key for i in train}
    crossing = sorted({cases[i].group_key for i in test} & train_groups)
    if crossing:
        shown = ", ".join(f"{c}:{g}" for c, g in crossing[:5])
        raise SweepError(
            f"{len(crossing)} group(s) have cases on both sides of the corpus split "
            f'(e.g. {shown}); fix the corpus or use split = {{method = "stratified-group"}}'
        )


def make_split(
    cases: Sequence[SweepCase],
    *,
    method: str = "auto",
    test_size: float = 0.3,
    seed: int = 0,
) -> Split:
    """Split ``cases`` into training and test sides.

    Parameters
    ----------
    method : {"auto", "corpus", "stratified-group"}
        ``corpus``: each case's top-level ``split`` field (``train``/``test``);
        ``stratified-group``: ``StratifiedGroupKFold`` with ``round(1 / test_size)``
        folds (at least 2), shuffled with ``seed``, fold 0 as the test side;
        ``auto``: ``corpus`` when every case has the field, else ``stratified-group``.

    Raises
    ------
    SweepError
        ``corpus`` without the field on every case, a group on both sides, or
        a side with no case.
    """
    if method not in ("auto", "corpus", "stratified-group"):
        raise SweepError(f"split method must be auto, corpus or stratified-group; got {method!r}")
    marks = [c.case.raw.get("split") for c in cases]
    has_field = all(m in ("train", "test") for m in marks)
    if method == "corpus" or (method == "auto" and has_field):
        if not has_field:
            missing = sum(m not in ("train", "test") for m in marks)
            raise SweepError(
                f"split method 'corpus' needs a split field ('train' or 'test') on every case; "
                f'{missing} case(s) have none: use method = "stratified-group"'
            )
        train = tuple(i for i, m in enumerate(marks) if m == "train")
        test = tuple(i for i, m in enumerate(marks) if m == "test")
        _check_groups(cases, train, test)
        split = Split("corpus", train, test)
    else:
        from sklearn.model_selection import StratifiedGroupKFold

        folds = max(2, round(1.0 / test_size))
        groups = _group_codes(cases)
        if len(set(groups.tolist())) < folds:
            raise SweepError(
                f"a stratified group split with test_size {test_size} needs at least {folds} "
                f"groups; the cases have {len(set(groups.tolist()))}"
            )
        labels = np.array([c.looping for c in cases], dtype=int)
        splitter = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=seed)
        try:
            train_idx, test_idx = next(splitter.split(np.zeros(len(cases)), labels, groups))
        except ValueError as exc:
            raise SweepError(f"cannot make a stratified group split: {exc}") from None
        split = Split(
            "stratified-group",
            tuple(sorted(int(i) for i in train_idx)),
            tuple(sorted(int(i) for i in test_idx)),
            test_size=test_size,
            seed=seed,
            folds=folds,
        )
    if not split.train or not split.test:
        raise SweepError(
            f"the split leaves the {'training' if not split.train else 'test'} side empty "
            f"({len(split.train)} train, {len(split.test)} test cases)"
        )
    return split


def _group_codes(cases: Sequence[SweepCase]) -> Any:
    codes: dict[tuple[str, str], int] = {}
    return np.array([codes.setdefault(c.group_key, len(codes)) for c in cases], dtype=int)


def cv_folds(cases: Sequence[SweepCase], folds: int, seed: int) -> list[Any]:
    """Held-out index arrays (positions in ``cases``) of a stratified k-fold by group.

    Raises
    ------
    SweepError
        Fewer groups than folds.
    """
    from sklearn.model_selection import StratifiedGroupKFold

    groups = _group_codes(cases)
    if len(set(groups.tolist())) < folds:
        raise SweepError(
            f"cv.folds = {folds} needs at least {folds} groups in the training split; "
            f"it has {len(set(groups.tolist()))}"
        )
    labels = np.array([c.looping for c in cases], dtype=int)
    splitter = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    try:
        return [np.asarray(held, dtype=int) for _, held in splitter.split(labels, labels, groups)]
    except ValueError as exc:
        raise SweepError(f"cv.folds = {folds}: {exc}") from None
