"""``paraphrase_loop``: a model message says again what its author said recently.

The same instruction in new words: each message of the chosen types is
compared with its author's last few (``docs/neardup.md``). ``method`` picks
the similarity: ``jaccard`` and ``shingles`` are the library's (standard
library only); ``tfidf`` is a harness-only option, the cosine of scikit-learn
``TfidfVectorizer`` vectors whose IDF is fitted, after each message read, on
the messages read so far in the case (so it runs online, without looking
ahead).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from loopguard import MESSAGE_TYPE_SETS, ParaphraseLoop, normalize_text

from ._base import Detector, Param, ParameterError, register
from ._monitor import MonitorAdapter, monitor_build

__all__ = ["METHODS", "PARAMS", "TfidfScorer", "build"]

_BLOCK = "paraphrase_loop"

#: ``jaccard`` and ``shingles`` run in the library; ``tfidf`` needs scikit-learn.
METHODS = ("jaccard", "shingles", "tfidf")

PARAMS = (
    Param(
        "min_occurrences",
        "int",
        low=2,
        high=8,
        description="times the same thing is said, the latest included",
    ),
    Param("history", "int", low=1, high=32, description="earlier messages of the author compared"),
    Param(
        "similarity_threshold",
        "float",
        low=0.2,
        high=1.0,
        description="minimum similarity to an earlier message",
    ),
    Param("method", "categorical", choices=METHODS, description="similarity measure"),
    Param("shingle_size", "int", low=2, high=8, description="characters per shingle (shingles)"),
    Param(
        "types",
        "categorical",
        choices=tuple(MESSAGE_TYPE_SETS),
        description="messages read: bot, reasoning, both (model), any but activity",
    ),
    Param("min_tokens", "int", low=0, high=64, description="shorter messages are ignored"),
)


class TfidfScorer:
    """TF-IDF cosine of a message and earlier ones, the IDF fitted on the messages read so far.

    One instance per case: every call adds ``text`` to the case's corpus
    (``ParaphraseLoop`` calls its scorer for every message it reads), refits
    the vectorizer on it and returns the cosines of ``text`` with ``earlier``.
    Cost: the refit reads every message read so far, O(characters so far)
    per message.

    Examples
    --------
    >>> scorer = TfidfScorer()
    >>> scorer("open the settings page", [])
    []
    >>> [round(s, 2) for s in scorer("open the settings page now", ["open the settings page"])]
    [0.82]
    """

    def __init__(self) -> None:
        self._docs: list[str] = []

    def __call__(self, text: str, earlier: Sequence[str]) -> list[float]:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self._docs.append(text)
        if not earlier:
            return []
        vectorizer = TfidfVectorizer(preprocessor=normalize_text, token_pattern=r"(?u)\b\w+\b")
        try:
            vectorizer.fit(self._docs)
        except ValueError:  # no word at all in the corpus
            return [0.0] * len(earlier)
        rows = vectorizer.transform([text, *earlier])  # each row L2-normalised
        return [float(v) for v in (rows[1:] @ rows[0].T).toarray().ravel()]


def _make(options: Mapping[str, Any]) -> ParaphraseLoop:
    settings = dict(options)
    if settings.get("method") == "tfidf":
        # The library compares with the scorer; its own method is then unused.
        settings["method"] = "jaccard"
        settings["scorer"] = TfidfScorer()
    return ParaphraseLoop(**settings)


_build = monitor_build(_BLOCK, _make)


def build(params: Mapping[str, Any]) -> Callable[[], MonitorAdapter]:
    """The adapter factory for complete parameters (``Detector.build``)."""
    if params.get("method") not in (None, *METHODS):
        raise ParameterError(
            f"{_BLOCK}: method must be one of {', '.join(map(repr, METHODS))}; "
            f"got {params.get('method')!r}"
        )
    return _build(params)


register(
    Detector(
        name=_BLOCK,
        kind="thread",
        description="ParaphraseLoop: a message repeats its author's recent ones in other words",
        defaults_key=_BLOCK,
        params=PARAMS,
        build=build,
    )
)
