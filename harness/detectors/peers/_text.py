"""Text helpers of the streaming peers: UTF-16 units and whitespace-delimited tokens."""

from __future__ import annotations

import re

from loopguard._js import JS_WHITESPACE

__all__ = ["JS_WS", "TOKEN_MODES", "WordStream", "to_utf16_units", "utf16_head"]

#: A regex class of JavaScript's ``\s`` (not Python's: it differs on U+001C-1F, U+0085, U+FEFF).
JS_WS = "[" + re.escape(JS_WHITESPACE) + "]"

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _pair(match: re.Match[str]) -> str:
    code = ord(match.group(0)) - 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


def to_utf16_units(text: str) -> str:
    """``text`` with every astral character split into its two surrogates.

    Indices into the result are JavaScript string indices (UTF-16 code units).

    Examples
    --------
    >>> len("a😀"), len(to_utf16_units("a😀"))
    (2, 3)
    """
    return _ASTRAL.sub(_pair, text)


def utf16_head(text: str, units: int) -> str:
    """``text.substring(0, units)`` in JavaScript (may end in half a surrogate pair)."""
    if len(text) <= units // 2 or not _ASTRAL.search(text):
        return text[:units]
    return to_utf16_units(text)[:units]


#: How :class:`WordStream` cuts text into tokens.
TOKEN_MODES = ("words", "words_and_spaces")

_RUNS = re.compile(f"{JS_WS}+|[^{re.escape(JS_WHITESPACE)}]+")


class WordStream:
    """Cuts streamed text into whitespace-delimited tokens, emitting each once complete.

    ``"words"``: the tokens are the runs of non-whitespace; ``"words_and_spaces"``:
    the runs of whitespace are tokens too. A run is complete when the next run
    has started; the last run of the text so far is held back, as the next
    chunk may extend it (so the last token of a message is never emitted).

    Examples
    --------
    >>> words = WordStream("words")
    >>> words.push("the ca"), words.push("t sat "), words.push("down")
    (['the'], ['cat', 'sat'], [])
    >>> WordStream("words_and_spaces").push("a  b c")
    ['a', '  ', 'b', ' ']
    """

    __slots__ = ("_parts", "_parts_space", "_spaces")

    def __init__(self, mode: str) -> None:
        if mode not in TOKEN_MODES:
            raise ValueError(f"token mode must be one of {TOKEN_MODES}; got {mode!r}")
        self._spaces = mode == "words_and_spaces"
        # The held-back run, in pieces: joining once per run keeps long runs linear.
        self._parts: list[str] = []
        self._parts_space = False

    def push(self, chunk: str) -> list[str]:
        """Feed ``chunk``; return the tokens it completed, in order."""
        runs = _RUNS.findall(chunk)
        if not runs:
            return []
        if self._parts and self._parts_space == (runs[0][0] in JS_WHITESPACE):
            self._parts.append(runs.pop(0))
            if not runs:
                return []
        done = ["".join(self._parts), *runs[:-1]] if self._parts else runs[:-1]
        last = runs[-1]
        self._parts = [last]
        self._parts_space = last[0] in JS_WHITESPACE
        if self._spaces:
            return done
        return [run for run in done if run[0] not in JS_WHITESPACE]
