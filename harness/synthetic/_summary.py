"""Counts of a synthetic corpus and the generated part of ``docs/synthetic.md``."""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = [
    "DOCS_BEGIN",
    "DOCS_END",
    "corpus_counts",
    "render_family_docs",
    "replace_generated_block",
]

DOCS_BEGIN = "<!-- BEGIN GENERATED: harness corpora generate --docs -->"
DOCS_END = "<!-- END GENERATED -->"


def corpus_counts(cases: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per-family counts: cases, positives, negatives, hard negatives, groups, splits, kinds.

    Examples
    --------
    >>> case = {"group": "g", "split": "train", "tags": ["x"], "origin": {"generator": "x"},
    ...         "label": {"looping": True, "kind": "suffix"}}
    >>> corpus_counts([case])["x"]["positives"]
    1
    """
    out: dict[str, dict[str, Any]] = {}
    groups: dict[str, set[str]] = {}
    for case in cases:
        family = case["origin"]["generator"]
        row = out.setdefault(
            family,
            {
                "cases": 0,
                "positives": 0,
                "negatives": 0,
                "hard_negatives": 0,
                "train": 0,
                "test": 0,
                "kinds": Counter(),
            },
        )
        row["cases"] += 1
        looping = bool(case["label"]["looping"])
        row["positives" if looping else "negatives"] += 1
        if "hard-negative" in case.get("tags", ()):
            row["hard_negatives"] += 1
        row[case["split"]] += 1
        row["kinds"][(looping, case["label"]["kind"])] += 1
        groups.setdefault(family, set()).add(case["group"])
    for family, row in out.items():
        row["groups"] = len(groups[family])
    return out


def _kinds(kinds: Counter[tuple[bool, str]]) -> str:
    items = sorted(kinds.items(), key=lambda kv: (not kv[0][0], kv[0][1]))
    return ", ".join(f"{'+' if looping else '-'}{kind} {n}" for (looping, kind), n in items)


def _table(counts: Mapping[str, Mapping[str, Any]], order: Iterable[str]) -> str:
    lines = [
        "| family | cases | positives | negatives | hard negatives | groups | train | test "
        "| kinds (+ loop, - no loop) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    total: Counter[str] = Counter()
    for family in order:
        row = counts[family]
        lines.append(
            f"| {family} | {row['cases']} | {row['positives']} | {row['negatives']} "
            f"| {row['hard_negatives']} | {row['groups']} | {row['train']} | {row['test']} "
            f"| {_kinds(row['kinds'])} |"
        )
        for key in ("cases", "positives", "negatives", "hard_negatives", "groups", "train", "test"):
            total[key] += row[key]
    share = 100.0 * total["positives"] / max(1, total["cases"])
    lines.append(
        f"| **all** | {total['cases']} | {total['positives']} ({share:.1f} %) "
        f"| {total['negatives']} | {total['hard_negatives']} | {total['groups']} "
        f"| {total['train']} | {total['test']} | |"
    )
    return "\n".join(lines)


def render_family_docs(
    families: Mapping[str, Callable[..., Any]],
    cases: Iterable[Mapping[str, Any]],
    *,
    sha256: str,
    size: int,
) -> str:
    """The generated block of ``docs/synthetic.md``: a counts table and one section per family.

    Each section is the generator's docstring (what it varies, why it is hard, which
    detector it targets, where the onset is) followed by its counts.
    """
    counts = corpus_counts(cases)
    order = [f for f in families if f in counts]
    parts = [
        DOCS_BEGIN,
        "",
        "## Counts in the default corpus",
        "",
        f"`corpora/synthetic/default.jsonl`: {size:,} bytes, sha256 `{sha256}`.",
        "",
        _table(counts, order),
        "",
        "## Families",
    ]
    for family in order:
        doc = inspect.getdoc(families[family]) or ""
        row = counts[family]
        parts += [
            "",
            f"### {family}",
            "",
            f"Generator: `harness.synthetic.FAMILIES[{family!r}]` (`{families[family].__name__}`).",
            "",
            doc,
            "",
            f"Default corpus: {row['cases']} cases in {row['groups']} groups; "
            f"{row['positives']} positive, {row['negatives']} negative "
            f"({row['hard_negatives']} tagged `hard-negative`); kinds: {_kinds(row['kinds'])}.",
        ]
    parts += ["", DOCS_END]
    return "\n".join(parts) + "\n"


def replace_generated_block(document: str, block: str) -> str:
    """Return ``document`` with the text between the markers replaced by ``block``.

    Raises
    ------
    ValueError
        If the document lacks either marker.
    """
    start = document.find(DOCS_BEGIN)
    end = document.find(DOCS_END)
    if start < 0 or end < start:
        raise ValueError(f"document: markers {DOCS_BEGIN!r} ... {DOCS_END!r} not found")
    return document[:start] + block.rstrip("\n") + document[end + len(DOCS_END) :]
