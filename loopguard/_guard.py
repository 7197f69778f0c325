"""``RepetitionGuard``: the incremental, streaming runaway-repetition detector."""

from __future__ import annotations

import re
import unicodedata
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from typing import Any

from ._defaults import detector_defaults
from ._js import JS_WHITESPACE, utf16_len
from ._options import clamped_float, floored_at_least

__all__ = ["GuardReason", "RepetitionGuard"]

# Fixed constants of the structural-enumeration exemption (not options in the original).
STRUCTURE_AGGRESSIVE_GATE = 0.5
MIN_STRUCTURE_NEWLINES = 2
STRUCTURE_HAPAX_FLOOR = 0.1
MIN_DISTINCT_LINE_LEADS = 3

_WS_CLASS = "[" + re.escape(JS_WHITESPACE) + "]"
_HAS_WS = re.compile(_WS_CLASS).search
_SPLIT_WS = re.compile("(" + _WS_CLASS + "+)").split
_ASCII_NON_ALNUM = re.compile(r"[^a-z0-9]+").sub
_PENDING_SPILL = 1024
# Gram counting pauses once the window's distinct words exceed the diversity ceiling by
# this share of the window: a margin, so a ratio hovering at the ceiling does not rebuild.
_DISARM_MARGIN = 0.15

# Unicode letter/number decisions for non-ASCII characters, memoised because
# unicodedata lookups dominate the cost of non-English streams.
_KEEP_CHAR: dict[str, bool] = {}

# Raw token -> normalised word. Natural text reuses a small vocabulary, so a lookup here
# replaces three string methods per word; cleared when full to keep memory bounded.
_WORD_OF: dict[str, str] = {}
_WORD_CACHE_LIMIT = 1 << 16


def _keep(ch: str) -> bool:
    kept = _KEEP_CHAR.get(ch)
    if kept is None:
        kept = unicodedata.category(ch)[0] in "LN"
        if len(_KEEP_CHAR) < 65536:
            _KEEP_CHAR[ch] = kept
    return kept


def normalize_word(raw: str) -> str:
    """``raw.toLowerCase().replace(/[^\\p{L}\\p{N}]+/gu, '')``.

    Examples
    --------
    >>> normalize_word("Lint().")
    'lint'
    >>> normalize_word("Ünïcode-2")
    'ünïcode2'
    """
    low = raw.lower()
    if low.isascii():
        return low if low.isalnum() else _ASCII_NON_ALNUM("", low)
    return "".join(ch for ch in low if _keep(ch))


@dataclass(frozen=True)
class GuardReason:
    """Why a :class:`RepetitionGuard` tripped.

    Attributes
    ----------
    phrase : str
        The normalised n-gram that recurred, stable for grouping.
    count : int
        How many times it occurred in the window at the trip.
    text : str
        The phrase as the model emitted it (raw tokens joined by spaces).
    unique_ratio, hapax_ratio : float
        The window's diversity and novelty at the trip.
    """

    phrase: str
    count: int
    text: str
    unique_ratio: float
    hapax_ratio: float

    def as_dict(self) -> dict[str, object]:
        """The JavaScript shape ``{phrase, count, text, uniqueRatio, hapaxRatio}``."""
        return {
            "phrase": self.phrase,
            "count": self.count,
            "text": self.text,
            "uniqueRatio": self.unique_ratio,
            "hapaxRatio": self.hapax_ratio,
        }


class RepetitionGuard:
    """Detect a recurring phrase in a low-diversity rolling window of streamed words.

    A port of ``createRepetitionGuard`` (``docs/spec/thread-algorithms.md`` §8),
    quirks included: a token counts only once whitespace follows it, the
    ``min_chars`` gate counts every pushed character before the words of that
    push are processed, and a progressing list or table is spared when
    ``max_unique_ratio < 0.5``. Once tripped the guard stays tripped.

    ``push(text) -> bool`` feeds the next streamed chunk and returns whether a
    runaway has been detected; non-string and empty chunks are ignored.

    Parameters
    ----------
    ngram : int, optional
        Words per tracked phrase (floored, at least 2; default 4).
    window : int, optional
        Words of history (floored, at least ``ngram``; default 48).
    max_repeats : int, optional
        Occurrences of a phrase that trip the guard (floored, at least 2; default 4).
    max_unique_ratio : float, optional
        Diversity ceiling, distinct words / words (clamped to [0, 1]; default 0.4).
    min_chars : int, optional
        UTF-16 units pushed before the guard may trip (floored, at least 0; default 0).

    Examples
    --------
    >>> guard = RepetitionGuard()
    >>> any(guard.push(chunk) for chunk in ["Let me call lint(). "] * 8)
    True
    >>> guard.reason().phrase
    'let me call lint'
    """

    #: Feed the next streamed chunk; return whether a runaway has been detected.
    push: Callable[[object], bool]

    __slots__ = ("_options", "_reason", "_window_state", "push")

    def __init__(
        self,
        *,
        ngram: object = None,
        window: object = None,
        max_repeats: object = None,
        max_unique_ratio: object = None,
        min_chars: object = None,
    ) -> None:
        defaults = detector_defaults("repetition_guard")
        size_ngram = floored_at_least(ngram, defaults["ngram"], 2)
        self._options: dict[str, float] = {
            "ngram": size_ngram,
            "window": floored_at_least(window, defaults["window"], size_ngram),
            "max_repeats": floored_at_least(max_repeats, defaults["max_repeats"], 2),
            "max_unique_ratio": clamped_float(
                max_unique_ratio, defaults["max_unique_ratio"], 0.0, 1.0
            ),
            "min_chars": floored_at_least(min_chars, defaults["min_chars"], 0),
        }
        self._reason: GuardReason | None = None
        self.push, self._window_state = _build_push(self)

    @property
    def options(self) -> dict[str, float]:
        """The normalised options in effect."""
        return dict(self._options)

    @property
    def tripped(self) -> bool:
        """Whether the guard has tripped (it never un-trips)."""
        return self._reason is not None

    @property
    def window_words(self) -> int:
        """How many words the rolling window holds now (at most ``window``)."""
        return self._window_state()[0]

    @property
    def tracked_phrases(self) -> int:
        """How many distinct n-grams the window counts now (memory is bounded by ``window``)."""
        return self._window_state()[1]

    def reason(self) -> GuardReason | None:
        """Why the guard tripped, or ``None`` while it has not."""
        return self._reason


def _build_push(
    guard: RepetitionGuard,
) -> tuple[Callable[[object], bool], Callable[[], tuple[int, int]]]:
    """Build the guard's ``push`` as a closure over its state.

    ``push`` runs on every streamed token, so its state lives in closure cells
    rather than attributes: a cell is read as fast as a local, and nothing has
    to be re-bound on each call (``benchmarks/guard_throughput.py`` measures it).
    """
    options = guard._options
    ngram = int(options["ngram"])
    window = int(options["window"])
    max_repeats = int(options["max_repeats"])
    max_unique_ratio = options["max_unique_ratio"]
    min_chars = options["min_chars"]
    exemption_possible = max_unique_ratio < STRUCTURE_AGGRESSIVE_GATE

    # The window of words is held by its n-grams: grams[i] starts at the window's word i
    # (so it is the gram to evict with that word), and recent holds the newest n words.
    grams: deque[tuple[str, ...]] = deque()
    counts: dict[tuple[str, ...], int] = {}
    word_counts: dict[str, int] = {}
    # Only the newest n raw tokens are ever reported, so only they are kept.
    originals: deque[str] = deque(maxlen=ngram)
    # (absolute word index, newlines before it, word) for the window's words after a newline.
    marks: deque[tuple[int, int, str]] = deque()
    recent: tuple[str, ...] = ()
    # The window's words, oldest first (the grams above are only kept while armed).
    words: deque[str] = deque()
    # Gram counts only matter where the diversity gate lets a trip through, so in a full
    # window they are kept only while "armed", and rebuilt exactly from `words` when the
    # gate opens again; prose whose window stays diverse skips the n-gram work entirely.
    armed = True
    arm_max_distinct = max(
        (d for d in range(window + 2) if d / (window + 1) <= max_unique_ratio), default=-1
    )
    disarm_distinct = int((max_unique_ratio + _DISARM_MARGIN) * window)
    size = 0  # words in the window
    added = 0  # words ever added
    window_newlines = 0
    pending = ""
    spill: list[str] = []  # a whitespace-free stream's pending token, in pieces
    carry = 0
    total_chars = 0
    tripped = False

    def hapax_ratio() -> float:
        return sum(1 for count in word_counts.values() if count == 1) / size

    def enumerated() -> bool:
        if not exemption_possible or window_newlines < MIN_STRUCTURE_NEWLINES:
            return False
        if hapax_ratio() >= STRUCTURE_HAPAX_FLOOR:
            return True
        return len({word for _, _, word in marks}) >= MIN_DISTINCT_LINE_LEADS

    def trip(gram: tuple[str, ...], repeats: int) -> bool:
        nonlocal tripped
        unique_ratio = len(word_counts) / size
        if unique_ratio > max_unique_ratio or enumerated():
            return False
        tripped = True
        phrase = " ".join(gram)
        guard._reason = GuardReason(
            phrase=phrase,
            count=repeats,
            text=" ".join(originals) or phrase,
            unique_ratio=unique_ratio,
            hapax_ratio=hapax_ratio(),
        )
        return True

    def take_pending() -> str:
        nonlocal pending
        taken = "".join(spill) + pending if spill else pending
        spill.clear()
        pending = ""
        return taken

    def extend_pending(text: str) -> None:
        # Without the spill, a whitespace-free stream would re-copy its token on every push.
        nonlocal pending
        pending += text
        if len(pending) > _PENDING_SPILL:
            spill.append(pending)
            pending = ""

    def push(text: object) -> bool:
        nonlocal pending, carry, total_chars, recent, size, added, window_newlines, armed
        if tripped:
            return True
        if not isinstance(text, str) or not text:
            return False
        total_chars += len(text) if text.isascii() else utf16_len(text)
        tokens: list[Any]
        if text.isprintable():
            # Printable text holds no whitespace but U+0020, the one space on which
            # str.split() and JavaScript's \s agree, and no newline to count: a fast cut.
            if " " not in text:
                if spill or len(pending) + len(text) > _PENDING_SPILL:
                    extend_pending(text)
                else:
                    pending += text
                return False
            tokens = text.split()
            if text[0] != " ":
                tokens[0] = (take_pending() if spill else pending) + tokens[0]
            elif pending or spill:
                tokens.insert(0, take_pending())
            pending = tokens.pop() if text[-1] != " " else ""
        else:
            if _HAS_WS(text) is None:
                extend_pending(text)
                return False
            parts = _SPLIT_WS(take_pending() + text)
            pending = parts.pop()
            # Separators become their newline counts, so one loop below serves both cuts.
            tokens = [
                part if index % 2 == 0 else part.count("\n") for index, part in enumerate(parts)
            ]
        gate_open = total_chars >= min_chars
        full = size == window
        for raw in tokens:
            if raw.__class__ is int:
                carry += raw
                continue
            word = _WORD_OF.get(raw)
            if word is None:
                word = normalize_word(raw)
                if len(_WORD_OF) >= _WORD_CACHE_LIMIT:
                    _WORD_OF.clear()
                _WORD_OF[raw] = word
            if not word:
                continue
            originals.append(raw)
            if carry:
                marks.append((added, carry, word))
                window_newlines += carry
                carry = 0
            added += 1
            word_counts[word] = word_counts.get(word, 0) + 1
            words.append(word)
            if full:
                # Steady state: the window is full, so this word's gram is counted and the
                # oldest word leaves; the trip check sees window + 1 words, as the original.
                if armed:
                    recent = recent[1:] + (word,)
                    grams.append(recent)
                    repeats = counts.get(recent, 0) + 1
                    counts[recent] = repeats
                elif gate_open and len(word_counts) <= arm_max_distinct:
                    armed = True
                    grams.extend(zip(*(islice(words, k, None) for k in range(ngram)), strict=False))
                    for gram in grams:
                        counts[gram] = counts.get(gram, 0) + 1
                    recent = grams[-1]
                    repeats = counts[recent]
                if armed:
                    if repeats >= max_repeats and gate_open:
                        size = window + 1
                        if trip(recent, repeats):
                            return True
                        size = window
                    leaving = grams.popleft()
                    left = counts[leaving] - 1
                    if left:
                        counts[leaving] = left
                    else:
                        del counts[leaving]
                first = words.popleft()
                left = word_counts[first] - 1
                if left:
                    word_counts[first] = left
                else:
                    del word_counts[first]
                if marks and marks[0][0] == added - window - 1:
                    window_newlines -= marks.popleft()[1]
                if armed and len(word_counts) > disarm_distinct:
                    armed = False
                    grams.clear()
                    counts.clear()
                continue
            size += 1
            recent += (word,)
            if size >= ngram:
                if len(recent) > ngram:
                    recent = recent[1:]
                grams.append(recent)
                repeats = counts.get(recent, 0) + 1
                counts[recent] = repeats
                if repeats >= max_repeats and gate_open and trip(recent, repeats):
                    return True
            full = size == window
        return False

    def window_state() -> tuple[int, int]:
        return size, len(counts)

    return push, window_state
