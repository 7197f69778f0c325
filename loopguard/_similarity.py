"""Normalisation and similarity of texts and values, for the near-duplicate detectors.

Real loops repeat themselves with small differences: a counter or a timestamp
in the arguments, an id, a page whose OCR text differs by a few characters,
the same instruction in new words. These helpers turn any value into a masked
text (:func:`normalize_text`) and compare two texts by the Jaccard index of
their word sets or of their character shingles. ``docs/neardup.md`` describes
every rule and why.

Examples
--------
>>> normalize_text("Retry #3 at 2024-05-13T10:00:02Z, id 3f2c9a10b7")
'retry #0 at 0-0-0t0:0:0z, id 0x'
>>> round(text_similarity("Error: flight HAT030 not available on 2024-05-13",
...                       "Error: flight HAT223 not available on 2024-05-14"), 2)
1.0
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ._alm import canonical_json
from ._errors import OptionError

__all__ = [
    "SIMILARITY_METHODS",
    "jaccard",
    "normalize_text",
    "normalize_value",
    "shingle_set",
    "text_similarity",
    "token_set",
    "value_text",
]

#: The stdlib similarity methods: word-set Jaccard, character-shingle Jaccard.
SIMILARITY_METHODS = ("jaccard", "shingles")

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# A hex run of 8+ characters with a digit and a letter (a hash, a request id, a cvid);
# all-digit runs are numbers and all-letter runs are words, masked (or not) below.
_HEX = re.compile(r"(?<![0-9a-z])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{8,}(?![0-9a-z])")
_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
_LETTER = re.compile(r"[^\W\d_]")
# Values nested deeper than this are compared as their JSON text (no recursion limit).
_MAX_DEPTH = 64


def value_text(value: object) -> str:
    """The text a value is compared by: a string as is, anything else as canonical JSON.

    Never raises: values without a JSON text get a fixed marker (see
    :func:`loopguard.canonical_json`).

    Examples
    --------
    >>> value_text({"b": 1, "a": [True, None]})
    '{"a":[true,null],"b":1}'
    >>> value_text("as is")
    'as is'
    """
    if isinstance(value, str):
        return value
    return canonical_json(value)


def normalize_text(text: str, max_chars: int | None = None) -> str:
    """Case-fold ``text`` and mask what changes between two tries of the same thing.

    In order: the text is cut to its first ``max_chars`` characters (when
    given) and case-folded; UUIDs and hex runs of 8 or more characters holding
    a digit and a letter become ``0x``; when the text has a letter (outside
    those), every run of digits becomes ``0``, so counters, timestamps,
    amounts and the digits inside ids like ``HAT030`` stop mattering while ids
    like ``K1NW8N`` keep their letters; runs of whitespace become one space and
    the ends are stripped. A text without letters (``329.0``, ``158 + 141``,
    ``2024-05-13``) keeps its digits: there the number is the content.

    Examples
    --------
    >>> normalize_text("  Page 2  of 17\\n(req 9B2F4A61-77C0-4E5B-8D36-0A1B2C3D4E5F) ")
    'page 0 of 0 (req 0x)'
    >>> normalize_text("Reservation K1NW8N")
    'reservation k0nw0n'
    >>> normalize_text("(158 + 141) * 3")
    '(158 + 141) * 3'
    """
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars]
    text = text.casefold()
    if "-" in text:
        text = _UUID.sub("0x", text)
    text = _HEX.sub("0x", text)
    if _LETTER.search(text.replace("0x", "")):
        text = _DIGITS.sub("0", text)
    return _SPACE.sub(" ", text).strip()


def _walk(value: object, out: list[str], depth: int) -> None:
    if depth > _MAX_DEPTH:
        out.append(normalize_text(value_text(value)))
    elif isinstance(value, str):
        out.append(normalize_text(value))
    elif isinstance(value, Mapping):
        out.append("{")
        for key in sorted(value, key=str):
            out.append(normalize_text(str(key)) + ":")
            _walk(value[key], out, depth + 1)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for item in value:
            _walk(item, out, depth + 1)
        out.append("]")
    elif depth > 0 and isinstance(value, int | float) and not isinstance(value, bool):
        # A number inside a structure is a counter, an amount or a time: masked.
        out.append("0")
    else:
        out.append(normalize_text(value_text(value)))


def normalize_value(value: object, max_chars: int | None = None) -> str:
    """:func:`normalize_text` applied to each leaf of a value, keys and structure kept.

    A string holding a JSON object or array (as tool results often are) is
    parsed first. Inside a structure, every number becomes ``0`` (a counter,
    an amount, an epoch time) and every string is normalised on its own, so a
    field that is only a number or an expression (``"158 + 141"``) keeps its
    digits while digits inside words and sentences are masked. A value that is
    a number by itself keeps it (it is the whole content). Anything else is
    normalised as its :func:`value_text`. The result is cut to ``max_chars``
    characters (when given). Never raises.

    Examples
    --------
    >>> normalize_value('{"status": "pending since 10:02", "attempt": 3}')
    '{ attempt: 0 status: pending since 0:0 }'
    >>> normalize_value({"expression": "158 + 141"})
    '{ expression: 158 + 141 }'
    >>> normalize_value(329.0)
    '329.0'
    """
    if isinstance(value, str):
        text = value
        stripped = text.lstrip()
        if stripped[:1] not in ("{", "["):
            return normalize_text(text, max_chars)
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):
            return normalize_text(text, max_chars)
    out: list[str] = []
    try:
        _walk(value, out, 0)
    except RecursionError:  # pragma: no cover - only for pathological nesting
        out = [normalize_text(value_text(value))]
    text = " ".join(piece for piece in out if piece)
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars]
    return text


def token_set(normalized: str) -> frozenset[str]:
    """The set of words (``\\w+`` runs) of an already normalised text.

    Examples
    --------
    >>> sorted(token_set(normalize_text("Not found: user 42, user 43")))
    ['0', 'found', 'not', 'user']
    """
    return frozenset(_WORD.findall(normalized))


def shingle_set(normalized: str, size: int) -> frozenset[str]:
    """The set of ``size``-character substrings of an already normalised text.

    A text shorter than ``size`` (but not empty) is its own single shingle.

    Raises
    ------
    OptionError
        When ``size`` is not an integer >= 1.

    Examples
    --------
    >>> sorted(shingle_set("abcab", 3))
    ['abc', 'bca', 'cab']
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise OptionError(f"shingle_size must be an integer >= 1; got {size!r}")
    if not normalized:
        return frozenset()
    if len(normalized) <= size:
        return frozenset((normalized,))
    return frozenset(normalized[i : i + size] for i in range(len(normalized) - size + 1))


def jaccard(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> float:
    """``|a & b| / |a | b|``; two empty sets are identical (1.0).

    Examples
    --------
    >>> jaccard(frozenset("abc"), frozenset("bcd"))
    0.5
    >>> jaccard(frozenset(), frozenset())
    1.0
    """
    if not a and not b:
        return 1.0
    if len(a) > len(b):
        a, b = b, a
    common = sum(1 for item in a if item in b)
    return common / (len(a) + len(b) - common)


def features(normalized: str, method: str, shingle_size: int) -> frozenset[str]:
    """The set a method compares: words for ``jaccard``, shingles for ``shingles``."""
    if method == "jaccard":
        return token_set(normalized)
    return shingle_set(normalized, shingle_size)


def check_method(method: object) -> str:
    """``method`` if it is one of :data:`SIMILARITY_METHODS`, else :class:`OptionError`."""
    if not isinstance(method, str) or method not in SIMILARITY_METHODS:
        allowed = ", ".join(repr(m) for m in SIMILARITY_METHODS)
        raise OptionError(f"method must be one of {allowed}; got {method!r}")
    return method


def text_similarity(
    a: object,
    b: object,
    *,
    method: str = "jaccard",
    shingle_size: int = 4,
    max_chars: int | None = None,
) -> float:
    """Similarity in [0, 1] of two values after :func:`normalize_value`.

    Parameters
    ----------
    a, b : object
        Strings, or any JSON-like values (compared by their canonical JSON).
    method : {"jaccard", "shingles"}
        Word-set Jaccard (robust to reordering and paraphrase that keeps the
        words), or Jaccard of character shingles (robust to OCR noise and to
        words glued or split).
    shingle_size : int
        Characters per shingle (``shingles`` only).
    max_chars : int, optional
        Compare only the first ``max_chars`` characters of each text.

    Examples
    --------
    >>> text_similarity({"q": "x", "when": "at 10:01"}, {"when": "at 10:02", "q": "x"})
    1.0
    >>> text_similarity({"q": "x", "page": 1}, {"page": 2, "q": "x"})
    1.0
    >>> round(text_similarity("329.0", "299.0"), 2)
    0.33
    >>> round(text_similarity("the cat sat", "the cat sat down"), 2)
    0.75
    >>> round(text_similarity("colour", "color", method="shingles", shingle_size=2), 2)
    0.5
    """
    chosen = check_method(method)
    left = features(normalize_value(a, max_chars), chosen, shingle_size)
    right = features(normalize_value(b, max_chars), chosen, shingle_size)
    return jaccard(left, right)


def field(mapping: object, key: str) -> Any:
    """``mapping[key]`` when ``mapping`` is a mapping holding ``key``, else None."""
    if isinstance(mapping, Mapping):
        return mapping.get(key)
    return None


def iter_messages(messages: object) -> Iterable[Any]:
    """Messages of a thread given as any iterable; nothing for None, strings or mappings."""
    if messages is None or isinstance(messages, str | bytes | Mapping):
        return ()
    try:
        return iter(messages)  # type: ignore[call-overload, no-any-return]
    except TypeError:
        return ()
