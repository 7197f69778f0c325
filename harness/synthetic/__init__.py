"""Seeded, deterministic generators of labelled synthetic corpora.

Each family is a function ``(seed, index) -> list[case]`` that builds one underlying
agent run (index ``index`` of the corpus seeded ``seed``) and cuts one or more labelled
cases from it: the full run, and sometimes the same run stopped earlier. Cases follow the
labelled-corpus format, version 1, plus a top-level ``split`` field. See
``docs/synthetic.md`` for what each family varies, why it is hard and how onsets are
defined.

Examples
--------
>>> from harness.synthetic import FAMILIES, generate_corpus
>>> cases = list(generate_corpus(["tool-repeat"], n_per_family=3))
>>> [c["id"].split("/")[1] for c in cases]
['tool-repeat', 'tool-repeat', 'tool-repeat']
>>> cases == list(generate_corpus(["tool-repeat"], n_per_family=3))
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from .._atomic import atomic_write_jsonl
from ._common import GENERATOR_VERSION, TRAIN_FRACTION, Case, derive_seed, split_for_group
from ._cycles import ab_cycle, drifting_args
from ._multilingual import multilingual
from ._overthinking import overthinking
from ._polling import polling
from ._requested import requested_repetition
from ._state import state_stall
from ._structured import enumeration, markdown_table, repetitive_code, structured_loop
from ._text_loops import chant, runaway_stream, text_run
from ._thread_negatives import batch, same_empty_result, user_repeat
from ._tool_repeat import error_retry, tool_repeat
from ._verbatim import verbatim_exchange

__all__ = [
    "DEFAULT_CASES",
    "DEFAULT_CORPUS_PATH",
    "DEFAULT_SEED",
    "FAMILIES",
    "GENERATOR_VERSION",
    "TRAIN_FRACTION",
    "Generator",
    "derive_seed",
    "generate_corpus",
    "split_for_group",
    "write_default_corpus",
]

#: A family generator: ``(corpus seed, run index) -> the cases cut from that run``.
Generator = Callable[[int, int], list[Case]]

#: Every family, in corpus order. The docstring of each generator says what it varies,
#: why it is hard, which detector it targets and where its onset is.
FAMILIES: dict[str, Generator] = {
    "verbatim-exchange": verbatim_exchange,
    "tool-repeat": tool_repeat,
    "error-retry": error_retry,
    "ab-cycle": ab_cycle,
    "drifting-args": drifting_args,
    "polling": polling,
    "same-empty-result": same_empty_result,
    "batch": batch,
    "user-repeat": user_repeat,
    "text-run": text_run,
    "runaway-stream": runaway_stream,
    "chant": chant,
    "structured-loop": structured_loop,
    "multilingual": multilingual,
    "overthinking": overthinking,
    "state-stall": state_stall,
    "enumeration": enumeration,
    "markdown-table": markdown_table,
    "repetitive-code": repetitive_code,
    "requested-repetition": requested_repetition,
}

#: Cases per family in the default corpus (5,000 in all).
DEFAULT_CASES: dict[str, int] = {
    "verbatim-exchange": 350,
    "tool-repeat": 300,
    "error-retry": 250,
    "ab-cycle": 225,
    "drifting-args": 225,
    "polling": 200,
    "same-empty-result": 150,
    "batch": 150,
    "user-repeat": 200,
    "text-run": 275,
    "runaway-stream": 175,
    "chant": 300,
    "structured-loop": 300,
    "multilingual": 325,
    "overthinking": 350,
    "state-stall": 225,
    "enumeration": 275,
    "markdown-table": 225,
    "repetitive-code": 175,
    "requested-repetition": 325,
}

#: The seed of the checked-in default corpus.
DEFAULT_SEED = 0

#: Where the default corpus lives in the repository.
DEFAULT_CORPUS_PATH = (
    Path(__file__).resolve().parents[2] / "corpora" / "synthetic" / "default.jsonl"
)


def _check_families(families: Iterable[str] | None) -> list[str]:
    if families is None:
        return list(FAMILIES)
    if isinstance(families, str):
        families = [families]
    names = list(families)
    unknown = [n for n in names if n not in FAMILIES]
    if unknown:
        raise ValueError(
            f"families: unknown family {unknown[0]!r}; choose from {', '.join(FAMILIES)}"
        )
    if not names:
        raise ValueError("families: give at least one family name (or None for all)")
    return list(dict.fromkeys(names))


def generate_corpus(
    families: Iterable[str] | None = None,
    n_per_family: int | None = None,
    seed: int = DEFAULT_SEED,
) -> Iterator[Case]:
    """Yield the cases of a synthetic corpus, family by family, deterministically.

    Parameters
    ----------
    families : iterable of str, optional
        Family names (keys of :data:`FAMILIES`); all of them by default, in that order.
    n_per_family : int, optional
        Cases per family, at least 1; by default :data:`DEFAULT_CASES`. Runs are
        generated in index order until the count is reached; the last run may give
        fewer of its cases than it made.
    seed : int
        The corpus seed, a non-negative integer. Every run derives its own seed from
        the family name, this seed and its index.

    Examples
    --------
    >>> first = next(generate_corpus(["chant"], n_per_family=1, seed=7))
    >>> first["id"], first["label"]["source"]
    ('synthetic/chant/s7-00000/full', 'synthetic')
    """
    names = _check_families(families)
    if n_per_family is not None and (
        isinstance(n_per_family, bool) or not isinstance(n_per_family, int) or n_per_family < 1
    ):
        raise ValueError(f"n_per_family: expected an integer >= 1 or None, got {n_per_family!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: expected an integer >= 0, got {seed!r}")
    for name in names:
        target = n_per_family if n_per_family is not None else DEFAULT_CASES[name]
        generator = FAMILIES[name]
        emitted = 0
        index = 0
        while emitted < target:
            for case in generator(seed, index)[: target - emitted]:
                emitted += 1
                yield case
            index += 1


def write_default_corpus(path: str | Path | None = None) -> Path:
    """Write the default synthetic corpus (seed 0, :data:`DEFAULT_CASES`) and return its path.

    The output is byte-for-byte reproducible: one compact JSON document per line
    (``ensure_ascii=False``), written atomically.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:  # doctest: +SKIP
    ...     out = write_default_corpus(pathlib.Path(tmp) / "default.jsonl")
    """
    target = Path(path) if path is not None else DEFAULT_CORPUS_PATH
    atomic_write_jsonl(target, generate_corpus())
    return target
