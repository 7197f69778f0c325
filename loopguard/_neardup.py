"""Loops that do not repeat verbatim: near-duplicate results, error retries, paraphrases.

The production heuristics compare exact fingerprints, and real agents rarely
repeat themselves byte for byte: arguments drift between retries (a counter, a
timestamp, a dropped field), pages come back with slightly different OCR text,
an orchestrator gives the same instruction in new words, and the repeats are
interleaved with other calls and thoughts. The three monitors here compare
values after :func:`loopguard.normalize_text` with a similarity threshold, and
skip what comes in between. ``docs/neardup.md`` defines each one.

Each monitor takes the thread one message at a time (``append(message)``
returns whether the thread so far is judged looping) and has a pure-function
twin over a whole thread (``has_...``). Every default lives in ``defaults.json``.
"""

from __future__ import annotations

import json
import math
import re
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._errors import OptionError
from ._options import UNSET, OptionResolver
from ._similarity import (
    SIMILARITY_METHODS,
    features,
    field,
    iter_messages,
    jaccard,
    normalize_text,
    normalize_value,
    token_set,
    value_text,
)

__all__ = [
    "ERROR_MARKERS",
    "MESSAGE_TYPE_SETS",
    "ErrorRetry",
    "NearDuplicateResultRun",
    "ParaphraseLoop",
    "Scorer",
    "has_error_retry",
    "has_near_duplicate_result_run",
    "has_paraphrase_loop",
    "is_error_result",
    "settled_result",
]

#: A similarity plug-in: ``scorer(text, earlier_texts)`` returns one similarity in
#: [0, 1] per earlier text (a TF-IDF or embedding cosine, say).
Scorer = Callable[[str, Sequence[str]], Sequence[float]]

#: Which message types ``ParaphraseLoop(types=...)`` reads.
MESSAGE_TYPE_SETS: dict[str, frozenset[str]] = {
    "bot": frozenset({"bot"}),
    "reasoning": frozenset({"reasoning"}),
    "model": frozenset({"bot", "reasoning"}),
    "any": frozenset(),  # every type but activity and "_" notices
}

#: The words and patterns that make a tool result an error (searched, case-folded,
#: in the first ``head_chars`` characters of its text). Kept narrow on purpose:
#: "cannot" or "not available" also describe ordinary answers.
ERROR_MARKERS = re.compile(
    r"\b(?:errors?|exceptions?|traceback|failed|failure|fatal|not found|no such"
    r"|unauthori[sz]ed|forbidden|permission denied|access denied|invalid|timed out"
    r"|timeout|exit(?:ed with)? code\W{0,3}[1-9]\d*"
    r"|(?:http|status|code)\W{0,3}[45]\d\d)\b"
)
# JSON fields of an error object: {"error": ...}, {"status": "failed"}, {"ok": false}.
_ERROR_KEYS = ("error", "errors", "exception", "traceback")
_STATUS_KEYS = ("status", "state", "result")
_STATUS_ERRORS = frozenset({"error", "failed", "failure", "fail", "fatal"})
_FLAG_KEYS = ("ok", "success", "succeeded")
_CODE_KEYS = ("status_code", "statusCode", "code", "http_status")

# Nesting read for string values of a JSON result (deeper values are not read).
_MAX_LEAF_DEPTH = 32

_UNSET: Any = UNSET


class _Options(OptionResolver):
    """The shared resolver, plus the shingle size that only the shingle method reads."""

    def shingle_size(self, value: object, method: str) -> int:
        """``shingle_size``: checked when given, read from the defaults only when used."""
        if value is None and method != "shingles":
            return 0  # unused by the word-set method (and never read from the defaults)
        return self.integer("shingle_size", value, 1)


def _check_scorer(scorer: object) -> Scorer | None:
    if scorer is None or callable(scorer):
        return scorer
    raise OptionError(f"scorer must be a callable or None; got {type(scorer).__name__}")


def _scores(scorer: Scorer, text: str, earlier: Sequence[str]) -> list[float]:
    """Call a plug-in scorer and clamp what it returns to [0, 1] (NaN counts as 0)."""
    raw = list(scorer(text, earlier))
    if len(raw) != len(earlier):
        raise OptionError(
            f"scorer returned {len(raw)} similarities for {len(earlier)} earlier texts"
        )
    out = []
    for value in raw:
        number = float(value)
        out.append(0.0 if math.isnan(number) else min(1.0, max(0.0, number)))
    return out


def settled_result(message: object) -> tuple[str, object, object] | None:
    """``(name, arguments, result)`` of a settled tool response, else None.

    A settled response is an ``activity`` message whose ``meta.activity`` has
    type ``response`` and whose function has a string name not starting with
    ``_`` (monitor notices) and a ``result`` field, as in
    :func:`loopguard.has_repeated_result_run`. ``arguments`` is None when absent.

    Examples
    --------
    >>> settled_result({"type": "activity", "meta": {"activity": {"type": "response",
    ...     "function": {"name": "ls", "arguments": {}, "result": "a b"}}}})
    ('ls', {}, 'a b')
    >>> settled_result({"type": "bot", "text": "hi"}) is None
    True
    """
    if field(message, "type") != "activity":
        return None
    activity = field(field(message, "meta"), "activity")
    function = field(activity, "function")
    if field(activity, "type") != "response" or not isinstance(function, Mapping):
        return None
    name = function.get("name")
    if not isinstance(name, str) or name.startswith("_") or "result" not in function:
        return None
    return name, function.get("arguments"), function["result"]


def _parsed(result: object) -> object:
    """A result that is JSON text, parsed; anything else unchanged."""
    if isinstance(result, str):
        stripped = result.lstrip()
        if stripped[:1] in ("{", "["):
            try:
                return json.loads(stripped)
            except (ValueError, RecursionError):
                return result
    return result


def _json_error(value: object) -> bool:
    if not isinstance(value, Mapping):
        return False
    for key in _ERROR_KEYS:
        if value.get(key) not in (None, False, "", [], {}):
            return True
    for key in _STATUS_KEYS:
        status = value.get(key)
        if isinstance(status, str) and status.casefold() in _STATUS_ERRORS:
            return True
    for key in _FLAG_KEYS:
        if value.get(key) is False:
            return True
    for key in _CODE_KEYS:
        code = value.get(key)
        if isinstance(code, int) and not isinstance(code, bool) and 400 <= code <= 599:
            return True
    return False


def is_error_result(result: object, head_chars: int = 200) -> bool:
    """Whether a tool result reads as an error.

    A result is an error when it is (or is JSON text for) an object with a
    non-empty ``error`` / ``errors`` / ``exception`` / ``traceback`` field, a
    ``status`` / ``state`` / ``result`` of ``error`` or ``failed``, ``ok`` or
    ``success`` false, or an HTTP-like ``status_code`` / ``code`` in 400-599;
    or when the first ``head_chars`` characters of its text (of a JSON value:
    of its string values, keys left out) contain one of
    :data:`ERROR_MARKERS` (``Error:``, ``exception``, ``Traceback``, ``failed``,
    ``not found``, ``permission denied``, ``timed out``, ``exit code 1``,
    ``HTTP 404``...). Only the head is read because long page texts mention
    errors in passing.

    Examples
    --------
    >>> is_error_result("Error: gift card balance is not enough")
    True
    >>> is_error_result('{"status": "failed", "detail": "quota"}')
    True
    >>> is_error_result({"records": [], "ok": True})
    False
    >>> is_error_result("Here is the page. " * 20 + "404 error")
    False
    """
    parsed = _parsed(result)
    if _json_error(parsed):
        return True
    if isinstance(parsed, Mapping | list):
        # JSON keys ("error": null, "errors": []) are not messages: read the string values.
        leaves: list[str] = []
        _string_leaves(parsed, leaves, head_chars, 0)
        head = " ".join(leaves)[:head_chars].casefold()
    else:
        head = value_text(result)[:head_chars].casefold()
    return ERROR_MARKERS.search(head) is not None


def _string_leaves(value: object, out: list[str], budget: int, depth: int) -> int:
    """Collect string values (not keys) until ``budget`` characters; return what is left."""
    if budget <= 0 or depth > _MAX_LEAF_DEPTH:
        return budget
    if isinstance(value, str):
        out.append(value)
        return budget - len(value) - 1
    items = (
        value.values() if isinstance(value, Mapping) else value if isinstance(value, list) else ()
    )
    for item in items:
        budget = _string_leaves(item, out, budget, depth + 1)
        if budget <= 0:
            break
    return budget


class NearDuplicateResultRun:
    """The last settled results of one tool are near-identical calls with near-identical results.

    After each settled tool response (see :func:`settled_result`), take the
    tool of that latest result and the last ``min_result_repetitions`` results
    of the same tool among the last ``window`` settled results (other tools'
    results in between are skipped, like reasoning and text); the thread loops
    when there are that many and each one's result (and, with
    ``compare_arguments``, its arguments) has a similarity of at least
    ``similarity_threshold`` to the latest one's. Values are compared after
    :func:`loopguard.normalize_text` (digits, hex ids, UUIDs and whitespace
    masked), by word-set or character-shingle Jaccard.

    The verdict of :meth:`append` holds until the next settled result.

    Parameters
    ----------
    min_result_repetitions : int, optional
        Near-identical results needed, the latest included (integer >= 2).
    window : int, optional
        Settled results looked back over, the latest included (integer >= 1; a
        window smaller than ``min_result_repetitions`` is taken as that).
    similarity_threshold : float, optional
        Minimum similarity in [0, 1] of each result to the latest.
    method : {"jaccard", "shingles"}, optional
        Word-set Jaccard or character-shingle Jaccard.
    shingle_size : int, optional
        Characters per shingle (integer >= 1; ``shingles`` only: with ``jaccard`` an
        omitted value is not read from the defaults and shows as 0).
    compare_arguments : bool, optional
        Require near-identical arguments too.
    max_chars : int or None, optional
        Compare only the first ``max_chars`` characters of each value (integer
        >= 1); ``None`` compares everything. Omitted: the default.
    scorer : callable, optional
        ``scorer(result_text, earlier_result_texts)`` replaces the Jaccard of
        results (arguments still use ``method``), e.g. an embedding cosine.

    Omitted options (and ``None``, except for ``max_chars``) take their
    default from ``defaults.json`` (block ``near_duplicate_result_run``).

    Raises
    ------
    OptionError
        An option outside its range (named in the message).

    Examples
    --------
    >>> def resp(page, result):
    ...     fn = {"name": "search", "arguments": {"q": "flights", "page": page}, "result": result}
    ...     return {"type": "activity", "text": "",
    ...             "meta": {"activity": {"type": "response", "function": fn}}}
    >>> run = NearDuplicateResultRun(min_result_repetitions=3, window=8,
    ...     similarity_threshold=0.9, method="jaccard", shingle_size=4,
    ...     compare_arguments=True, max_chars=None)
    >>> thread = [resp(1, "No flights at 10:01"), {"type": "reasoning", "text": "retry"},
    ...           resp(2, "No flights at 10:02"), resp(3, "No flights at 10:03")]
    >>> [run.append(m) for m in thread]
    [False, False, False, True]
    >>> run.last_match["messages"]
    [0, 2, 3]
    """

    def __init__(
        self,
        *,
        min_result_repetitions: object = None,
        window: object = None,
        similarity_threshold: object = None,
        method: object = None,
        shingle_size: object = None,
        compare_arguments: object = None,
        max_chars: object = _UNSET,
        scorer: object = None,
    ) -> None:
        opts = _Options("near_duplicate_result_run")
        self._need = opts.integer("min_result_repetitions", min_result_repetitions, 2)
        self._window = max(self._need, opts.integer("window", window, 1))
        self._threshold = opts.number("similarity_threshold", similarity_threshold, 0.0, 1.0)
        self._method = opts.choice("method", method, SIMILARITY_METHODS)
        self._shingle = opts.shingle_size(shingle_size, self._method)
        self._compare_arguments = opts.flag("compare_arguments", compare_arguments)
        self._max_chars = opts.optional_integer("max_chars", max_chars, 1)
        self._scorer = _check_scorer(scorer)
        self.reset()

    def reset(self) -> None:
        """Forget the thread."""
        self._index = -1
        # (message index, tool, argument features, result features, result text)
        self._results: deque[tuple[int, str, frozenset[str], frozenset[str], str]] = deque(
            maxlen=self._window
        )
        self._verdict = False
        self.last_match: dict[str, Any] | None = None

    @property
    def options(self) -> dict[str, object]:
        """The resolved options."""
        return {
            "min_result_repetitions": self._need,
            "window": self._window,
            "similarity_threshold": self._threshold,
            "method": self._method,
            "shingle_size": self._shingle,
            "compare_arguments": self._compare_arguments,
            "max_chars": self._max_chars,
        }

    def _features(self, value: object) -> frozenset[str]:
        return features(normalize_value(value, self._max_chars), self._method, self._shingle)

    def append(self, message: object) -> bool:
        """Take the next message; return whether the thread so far ends in a near-duplicate run."""
        self._index += 1
        settled = settled_result(message)
        if settled is None:
            return self._verdict
        name, arguments, result = settled
        argument_features = self._features(arguments) if self._compare_arguments else frozenset()
        result_features = self._features(result)
        result_text = ""
        if self._scorer is not None:
            result_text = value_text(result)
            if self._max_chars is not None:
                result_text = result_text[: self._max_chars]
        self._results.append((self._index, name, argument_features, result_features, result_text))
        same = [entry for entry in reversed(self._results) if entry[1] == name][: self._need]
        self._verdict = False
        if len(same) < self._need:
            return False
        latest, earlier = same[0], same[1:]
        if self._scorer is not None:
            result_scores = _scores(self._scorer, latest[4], [e[4] for e in earlier])
        else:
            result_scores = [jaccard(latest[3], e[3]) for e in earlier]
        worst = min(result_scores)
        if self._compare_arguments:
            worst = min(worst, *(jaccard(latest[2], e[2]) for e in earlier))
        if worst < self._threshold:
            return False
        self._verdict = True
        self.last_match = {
            "detector": "near_duplicate_result_run",
            "tool": name,
            "messages": sorted(e[0] for e in same),
            "min_similarity": round(worst, 4),
        }
        return True


def has_near_duplicate_result_run(messages: object, **options: object) -> bool:
    """Whether a whole thread ends in a near-duplicate result run.

    Feeds every message to a :class:`NearDuplicateResultRun` built with
    ``options`` and returns its last verdict.

    Examples
    --------
    >>> resp = {"type": "activity", "text": "", "meta": {"activity": {"type": "response",
    ...     "function": {"name": "ocr", "arguments": {}, "result": "Page 1 of 3: Welcome"}}}}
    >>> has_near_duplicate_result_run([resp] * 3, min_result_repetitions=3, window=8,
    ...     similarity_threshold=0.9, method="jaccard", shingle_size=4,
    ...     compare_arguments=True, max_chars=None)
    True
    """
    monitor = NearDuplicateResultRun(**options)
    verdict = False
    for message in iter_messages(messages):
        verdict = monitor.append(message)
    return verdict


class ErrorRetry:
    """The same error came back ``min_errors`` times within the last ``window`` tool results.

    Every settled tool response is classified with :func:`is_error_result`;
    an error's signature is the word set of its normalised first
    ``head_chars`` characters (so ``flight HAT030 not available on 2024-05-13``
    and ``flight HAT223 not available on 2024-05-14`` are the same error).
    After an error, the errors among the last ``window`` settled results whose
    signature has a Jaccard similarity of at least ``similarity_threshold`` to
    it (and, with ``same_tool``, that come from the same tool) are counted, the
    latest included; the thread loops when there are ``min_errors``. The
    arguments do not matter: a retry with drifted arguments is still a retry.

    The verdict of :meth:`append` holds until the next settled result.

    Parameters
    ----------
    min_errors : int, optional
        Similar errors needed, the latest included (integer >= 2).
    window : int, optional
        Settled results looked back over, the latest included (integer >= 1; a
        window smaller than ``min_errors`` is taken as that).
    similarity_threshold : float, optional
        Minimum Jaccard similarity in [0, 1] of two error signatures.
    same_tool : bool, optional
        Count only errors of the latest error's tool.
    head_chars : int, optional
        Characters of a result read for markers and the signature (integer >= 1).

    Omitted options (and ``None``) take their default from ``defaults.json``
    (block ``error_retry``).

    Raises
    ------
    OptionError
        An option outside its range (named in the message).

    Examples
    --------
    >>> def resp(card, result):
    ...     fn = {"name": "pay", "arguments": {"card": card}, "result": result}
    ...     return {"type": "activity", "text": "",
    ...             "meta": {"activity": {"type": "response", "function": fn}}}
    >>> retry = ErrorRetry(min_errors=3, window=10, similarity_threshold=0.8,
    ...     same_tool=True, head_chars=200)
    >>> thread = [resp(1, "Error: balance 12 is not enough"), {"type": "user", "text": "try 2"},
    ...           resp(2, "Error: balance 7 is not enough"),
    ...           resp(3, "Error: balance 0 is not enough")]
    >>> [retry.append(m) for m in thread]
    [False, False, False, True]
    """

    def __init__(
        self,
        *,
        min_errors: object = None,
        window: object = None,
        similarity_threshold: object = None,
        same_tool: object = None,
        head_chars: object = None,
    ) -> None:
        opts = _Options("error_retry")
        self._need = opts.integer("min_errors", min_errors, 2)
        self._window = max(self._need, opts.integer("window", window, 1))
        self._threshold = opts.number("similarity_threshold", similarity_threshold, 0.0, 1.0)
        self._same_tool = opts.flag("same_tool", same_tool)
        self._head = opts.integer("head_chars", head_chars, 1)
        self.reset()

    def reset(self) -> None:
        """Forget the thread."""
        self._index = -1
        # (message index, tool, error signature or None for a success)
        self._results: deque[tuple[int, str, frozenset[str] | None]] = deque(maxlen=self._window)
        self._verdict = False
        self.last_match: dict[str, Any] | None = None

    @property
    def options(self) -> dict[str, object]:
        """The resolved options."""
        return {
            "min_errors": self._need,
            "window": self._window,
            "similarity_threshold": self._threshold,
            "same_tool": self._same_tool,
            "head_chars": self._head,
        }

    def append(self, message: object) -> bool:
        """Take the next message; return whether the latest result repeats a recent error."""
        self._index += 1
        settled = settled_result(message)
        if settled is None:
            return self._verdict
        name, _arguments, result = settled
        signature = None
        if is_error_result(result, self._head):
            signature = token_set(normalize_text(value_text(result), self._head))
        self._results.append((self._index, name, signature))
        self._verdict = False
        if signature is None:
            return False
        matches = [
            entry
            for entry in self._results
            if entry[2] is not None
            and (not self._same_tool or entry[1] == name)
            and jaccard(signature, entry[2]) >= self._threshold
        ]
        if len(matches) < self._need:
            return False
        self._verdict = True
        self.last_match = {
            "detector": "error_retry",
            "tool": name,
            "messages": [entry[0] for entry in matches],
            "error": value_text(result)[:120],
        }
        return True


def has_error_retry(messages: object, **options: object) -> bool:
    """Whether a whole thread ends on an error that repeats recent ones (see :class:`ErrorRetry`).

    Examples
    --------
    >>> fail = {"type": "activity", "text": "", "meta": {"activity": {"type": "response",
    ...     "function": {"name": "open", "arguments": {}, "result": "Traceback: KeyError"}}}}
    >>> has_error_retry([fail, fail], min_errors=2, window=10, similarity_threshold=0.8,
    ...     same_tool=True, head_chars=200)
    True
    """
    monitor = ErrorRetry(**options)
    verdict = False
    for message in iter_messages(messages):
        verdict = monitor.append(message)
    return verdict


def _author(message: object) -> tuple[str, str | None]:
    agent = field(field(message, "meta"), "agent")
    return str(field(message, "type")), agent if isinstance(agent, str) else None


class ParaphraseLoop:
    """A model message says again what its author said recently, in the same or other words.

    Messages of the chosen ``types`` with at least ``min_tokens`` words (after
    normalisation) are read; the author is the message type and its
    ``meta.agent`` (so an orchestrator's instructions are compared with its
    own, not with the agents'). A message is compared with its author's last
    ``history`` read messages; the thread loops when at least
    ``min_occurrences - 1`` of them have a similarity of at least
    ``similarity_threshold`` to it: the same thing said ``min_occurrences``
    times within the author's last ``history + 1`` messages.

    The verdict of :meth:`append` holds until the next message that is read.

    Parameters
    ----------
    min_occurrences : int, optional
        Times the same thing is said, the latest included (integer >= 2).
    history : int, optional
        Earlier messages of the same author compared (integer >= 1).
    similarity_threshold : float, optional
        Minimum similarity in [0, 1].
    method : {"jaccard", "shingles"}, optional
        Word-set or character-shingle Jaccard of the normalised texts.
    shingle_size : int, optional
        Characters per shingle (integer >= 1; ``shingles`` only: with ``jaccard`` an
        omitted value is not read from the defaults and shows as 0).
    types : {"bot", "reasoning", "model", "any"}, optional
        Messages read: ``bot`` text, ``reasoning``, both (``model``), or every
        type but ``activity`` and ``_`` notices (``any``, users included).
    min_tokens : int, optional
        Shorter messages ("Next speaker WebSurfer", "OK") are ignored (integer >= 0).
    scorer : callable, optional
        ``scorer(text, earlier_texts)`` replaces the Jaccard (raw texts are
        passed), e.g. a TF-IDF or embedding cosine.

    Omitted options (and ``None``) take their default from ``defaults.json``
    (block ``paraphrase_loop``).

    Raises
    ------
    OptionError
        An option outside its range (named in the message).

    Examples
    --------
    >>> loop = ParaphraseLoop(min_occurrences=3, history=6, similarity_threshold=0.6,
    ...     method="jaccard", shingle_size=4, types="bot", min_tokens=5)
    >>> says = ["Please search the IMDb page for the full list of series.",
    ...         "Please search the full list of series on the IMDb page again.",
    ...         "Search the IMDb page for the full list of his series, please."]
    >>> [loop.append({"type": "bot", "text": t}) for t in says]
    [False, False, True]
    """

    def __init__(
        self,
        *,
        min_occurrences: object = None,
        history: object = None,
        similarity_threshold: object = None,
        method: object = None,
        shingle_size: object = None,
        types: object = None,
        min_tokens: object = None,
        scorer: object = None,
    ) -> None:
        opts = _Options("paraphrase_loop")
        self._need = opts.integer("min_occurrences", min_occurrences, 2)
        self._history = opts.integer("history", history, 1)
        self._threshold = opts.number("similarity_threshold", similarity_threshold, 0.0, 1.0)
        self._method = opts.choice("method", method, SIMILARITY_METHODS)
        self._shingle = opts.shingle_size(shingle_size, self._method)
        self._types = opts.choice("types", types, tuple(MESSAGE_TYPE_SETS))
        self._min_tokens = opts.integer("min_tokens", min_tokens, 0)
        self._scorer = _check_scorer(scorer)
        self.reset()

    def reset(self) -> None:
        """Forget the thread."""
        self._index = -1
        # author -> last messages: (message index, features, raw text)
        self._by_author: dict[tuple[str, str | None], deque[tuple[int, frozenset[str], str]]] = {}
        self._verdict = False
        self.last_match: dict[str, Any] | None = None

    @property
    def options(self) -> dict[str, object]:
        """The resolved options."""
        return {
            "min_occurrences": self._need,
            "history": self._history,
            "similarity_threshold": self._threshold,
            "method": self._method,
            "shingle_size": self._shingle,
            "types": self._types,
            "min_tokens": self._min_tokens,
        }

    def reads(self, message: object) -> bool:
        """Whether ``message`` is one this monitor compares (type and text, before length)."""
        kind = field(message, "type")
        if not isinstance(kind, str) or not isinstance(field(message, "text"), str):
            return False
        wanted = MESSAGE_TYPE_SETS[self._types]
        if wanted:
            return kind in wanted
        return kind != "activity" and not kind.startswith("_")

    def append(self, message: object) -> bool:
        """Take the next message; return whether the author's latest message repeats itself."""
        self._index += 1
        if not self.reads(message):
            return self._verdict
        text: str = field(message, "text")
        normalized = normalize_text(text)
        words = token_set(normalized)
        if len(_WORDS.findall(normalized)) < self._min_tokens or not words:
            return self._verdict
        own = features(normalized, self._method, self._shingle) if self._scorer is None else words
        author = _author(message)
        earlier = self._by_author.setdefault(author, deque(maxlen=self._history))
        if self._scorer is not None:
            # Called for every message read, even the first: a scorer may keep a corpus.
            scores = _scores(self._scorer, text, [e[2] for e in earlier])
        else:
            scores = [jaccard(own, e[1]) for e in earlier]
        similar = [e[0] for e, s in zip(earlier, scores, strict=True) if s >= self._threshold]
        earlier.append((self._index, own, text))
        self._verdict = len(similar) + 1 >= self._need
        if self._verdict:
            self.last_match = {
                "detector": "paraphrase_loop",
                "author": list(author),
                "messages": [*similar, self._index],
                "max_similarity": round(max(scores), 4),
            }
        return self._verdict


_WORDS = re.compile(r"\w+")


def has_paraphrase_loop(messages: object, **options: object) -> bool:
    """Whether the last message read by a :class:`ParaphraseLoop` repeats its author.

    Examples
    --------
    >>> ask = {"type": "bot", "text": "Please scroll down the TV Guide page and list the series."}
    >>> has_paraphrase_loop([ask, ask, ask], min_occurrences=3, history=6,
    ...     similarity_threshold=0.6, method="jaccard", shingle_size=4, types="bot",
    ...     min_tokens=5)
    True
    """
    monitor = ParaphraseLoop(**options)
    verdict = False
    for message in iter_messages(messages):
        verdict = monitor.append(message)
    return verdict
