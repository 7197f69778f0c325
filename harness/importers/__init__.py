"""Importers of real public traces into labelled corpora (format v1).

Each importer reads one raw dataset, maps its messages faithfully, labels what a
stated rule or judge decides, and writes the corpus atomically and
deterministically (same input, same bytes). See ``docs/real-corpora.md``.

Examples
--------
>>> from harness.importers import import_tau_bench
>>> import_tau_bench("raw/gpt-4o-airline.json", "out.jsonl").as_dict()  # doctest: +SKIP
{'dataset': 'tau-bench-airline', ...}
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ._common import ImportSummary, split_of, write_provenance
from .tau_bench import import_tau_bench
from .thoughtology import import_thoughtology
from .who_and_when import import_who_and_when

__all__ = [
    "DATASETS",
    "ImportSummary",
    "Importer",
    "import_tau_bench",
    "import_thoughtology",
    "import_who_and_when",
    "split_of",
    "write_provenance",
]

# Dataset name -> (importer, default corpus path relative to the repository root).
Importer = Callable[[str | os.PathLike[str], str | os.PathLike[str]], ImportSummary]
DATASETS: dict[str, tuple[Importer, str]] = {
    "who-and-when": (import_who_and_when, "corpora/real/who-and-when/who-and-when.jsonl.gz"),
    "tau-bench": (import_tau_bench, "corpora/real/tau-bench/tau-bench-airline.jsonl"),
    "thoughtology": (import_thoughtology, "corpora/real/thoughtology/thoughtology-r1-aime.jsonl"),
}
