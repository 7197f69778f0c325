"""Labelled corpora (format version 1): streaming loader, validator, registry and stats.

A corpus is a JSON Lines file (``.jsonl`` or ``.jsonl.gz``), one case per line; the
format and every validation rule are described in ``docs/corpus-format.md``. The JSON
Schema of one case is ``harness/schemas/corpus-case.v1.json`` (see :func:`corpus_schema`);
the rules that span lines or compare values (unique ids, chunks concatenation, onset
range) are enforced by the loader only.

Examples
--------
>>> from harness.corpus import iter_cases, resolve_corpus
>>> for case in iter_cases(resolve_corpus("synthetic/default")):  # doctest: +SKIP
...     print(case.id, case.looping, case.onset)
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from ._corpus_check import LABEL_SOURCES
from ._corpus_issue import CROSS_LINE_RULES, RULES, SCHEMA_RULES, CorpusIssue
from ._corpus_reader import (
    CORPUS_SUFFIXES,
    Case,
    CorpusReader,
    Onset,
    ValidationReport,
    check_case,
    check_cases,
    iter_cases,
    load_cases,
    validate_corpus,
    write_corpus,
)
from ._corpus_registry import (
    CORPORA_DIR_ENV,
    NamedCorpus,
    corpora_dir,
    list_corpora,
    resolve_corpus,
)
from ._corpus_stats import corpus_stats
from ._errors import CorpusError, CorpusNotFoundError

__all__ = [
    "CORPORA_DIR_ENV",
    "CORPUS_FORMAT_VERSION",
    "CORPUS_SUFFIXES",
    "CROSS_LINE_RULES",
    "LABEL_SOURCES",
    "RULES",
    "SCHEMA_RULES",
    "Case",
    "CorpusError",
    "CorpusIssue",
    "CorpusNotFoundError",
    "CorpusReader",
    "NamedCorpus",
    "Onset",
    "ValidationReport",
    "check_case",
    "check_cases",
    "corpora_dir",
    "corpus_schema",
    "corpus_stats",
    "iter_cases",
    "list_corpora",
    "load_cases",
    "resolve_corpus",
    "validate_corpus",
    "write_corpus",
]

CORPUS_FORMAT_VERSION = 1
"""The version of the corpus format this module reads and writes."""


@cache
def _schema_text() -> str:
    return resources.files("harness").joinpath("schemas/corpus-case.v1.json").read_text("utf-8")


def corpus_schema() -> dict[str, Any]:
    """Return (a fresh copy of) the JSON Schema, draft 2020-12, of one case.

    Examples
    --------
    >>> corpus_schema()["$schema"]
    'https://json-schema.org/draft/2020-12/schema'
    """
    schema: dict[str, Any] = json.loads(_schema_text())
    return schema
