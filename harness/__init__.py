"""The research harness: corpora, replay, metrics, sweeps, export and reports.

Everything the ``harness`` command does is importable from here, for notebooks.
"""

from __future__ import annotations

from ._errors import CorpusError, CorpusNotFoundError, HarnessError
from .corpus import (
    Case,
    CorpusIssue,
    CorpusReader,
    NamedCorpus,
    Onset,
    ValidationReport,
    check_case,
    check_cases,
    corpora_dir,
    corpus_schema,
    corpus_stats,
    iter_cases,
    list_corpora,
    load_cases,
    resolve_corpus,
    validate_corpus,
    write_corpus,
)
from .detectors import detector_names, get_detector, register
from .evaluate import EvaluationResult, evaluate

__all__ = [
    "Case",
    "CorpusError",
    "CorpusIssue",
    "CorpusNotFoundError",
    "CorpusReader",
    "EvaluationResult",
    "HarnessError",
    "NamedCorpus",
    "Onset",
    "ValidationReport",
    "check_case",
    "check_cases",
    "corpora_dir",
    "corpus_schema",
    "corpus_stats",
    "detector_names",
    "evaluate",
    "get_detector",
    "iter_cases",
    "list_corpora",
    "load_cases",
    "register",
    "resolve_corpus",
    "validate_corpus",
    "write_corpus",
]
