"""``RepetitionGuard``: the incremental, streaming runaway-repetition detector."""

from __future__ import annotations

import re
import unicodedata
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import repeat

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
_NO_NEWLINES = repeat(0)
_PENDING_SPILL = 1024

# Unicode letter/number decisions for non-ASCII characters, memoised because
# unicodedata lookups dominate the cost of non-English streams.
_KEEP_CHAR: dict[str, bool] = {}


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

    __slots__ = (
        "_carry_newlines",
        "_max_repeats",
        "_max_unique_ratio",
        "_min_chars",
        "_ngram",
        "_pending",
        "_pending_spill",
        "_reason",
        "_recent",
        "_sizes",
        "_store",
        "_total_chars",
        "_tripped",
        "_window",
        "_window_newlines",
    )

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
        self._ngram = floored_at_least(ngram, defaults["ngram"], 2)
        self._window = floored_at_least(window, defaults["window"], self._ngram)
        self._max_repeats = floored_at_least(max_repeats, defaults["max_repeats"], 2)
        self._max_unique_ratio = clamped_float(
            max_unique_ratio, defaults["max_unique_ratio"], 0.0, 1.0
        )
        self._min_chars = floored_at_least(min_chars, defaults["min_chars"], 0)
        # The window of words is held by its n-grams: _grams[i] starts at the window's word i
        # (so it is the gram to evict with that word), and _recent holds the newest n words.
        grams: deque[tuple[str, ...]] = deque()
        counts: dict[tuple[str, ...], int] = {}
        word_counts: dict[str, int] = {}
        # Only the newest n raw tokens are ever reported, so only they are kept.
        originals: deque[str] = deque(maxlen=self._ngram)
        # (absolute word index, newlines before it, word) for the window's words after a newline.
        marks: deque[tuple[int, int, str]] = deque()
        self._store = (grams, counts, word_counts, originals, marks)
        self._recent: tuple[str, ...] = ()
        self._sizes = (0, 0)  # (words in the window, words ever added)
        self._window_newlines = 0
        self._pending = ""
        self._pending_spill: list[str] = []
        self._carry_newlines = 0
        self._total_chars = 0
        self._tripped = False
        self._reason: GuardReason | None = None

    @property
    def options(self) -> dict[str, float]:
        """The normalised options in effect."""
        return {
            "ngram": self._ngram,
            "window": self._window,
            "max_repeats": self._max_repeats,
            "max_unique_ratio": self._max_unique_ratio,
            "min_chars": self._min_chars,
        }

    @property
    def tripped(self) -> bool:
        """Whether the guard has tripped (it never un-trips)."""
        return self._tripped

    @property
    def window_words(self) -> int:
        """How many words the rolling window holds now (at most ``window``)."""
        return self._sizes[0]

    @property
    def tracked_phrases(self) -> int:
        """How many distinct n-grams the window counts now (memory is bounded by ``window``)."""
        return len(self._store[1])

    def reason(self) -> GuardReason | None:
        """Why the guard tripped, or ``None`` while it has not."""
        return self._reason

    def push(self, text: object) -> bool:
        """Feed the next streamed chunk; return whether a runaway has been detected.

        Non-string and empty chunks are ignored (``False``, or ``True`` once tripped).
        """
        if self._tripped:
            return True
        if not isinstance(text, str) or not text:
            return False
        self._total_chars += len(text) if text.isascii() else utf16_len(text)
        if text.isprintable():
            # Printable text holds no whitespace but U+0020, the one space on which
            # str.split() and JavaScript's \s agree, and no newline to count: a fast cut.
            if " " not in text:
                self._extend_pending(text)
                return False
            tokens = text.split()
            if text[0] != " ":
                if self._pending_spill:
                    tokens[0] = self._take_pending() + tokens[0]
                elif self._pending:
                    tokens[0] = self._pending + tokens[0]
            elif self._pending or self._pending_spill:
                tokens.insert(0, self._take_pending())
            self._pending = tokens.pop() if text[-1] != " " else ""
            newlines: Iterable[int] = _NO_NEWLINES
            trailing = 0
        else:
            if _HAS_WS(text) is None:
                self._extend_pending(text)
                return False
            parts = _SPLIT_WS(self._take_pending() + text)
            self._pending = parts.pop()
            tokens = parts[0::2]
            counted = [0]
            counted.extend(sep.count("\n") for sep in parts[1::2])
            trailing = counted.pop()
            newlines = counted
        carry = self._carry_newlines
        # The hot path of every stream: the per-word work is inlined and bound to locals
        # on purpose (benchmarks/guard_throughput.py measures it).
        grams, counts, word_counts, originals, marks = self._store
        size, added = self._sizes
        ngram = self._ngram
        window = self._window
        max_repeats = self._max_repeats
        gate_open = self._total_chars >= self._min_chars
        recent = self._recent
        for raw, newlines_before in zip(tokens, newlines, strict=False):
            carry += newlines_before
            if not raw:
                continue
            low = raw.lower()
            if low.isascii():
                word = low if low.isalnum() else _ASCII_NON_ALNUM("", low)
            else:
                word = "".join(ch for ch in low if _keep(ch))
            if not word:
                continue
            originals.append(raw)
            if carry:
                marks.append((added, carry, word))
                self._window_newlines += carry
                carry = 0
            added += 1
            size += 1
            word_counts[word] = word_counts.get(word, 0) + 1
            # Tuples of words key the n-gram counts: cheaper to build and hash than joined text.
            if size >= ngram:
                recent = recent[1:] + (word,) if len(recent) == ngram else (*recent, word)
                grams.append(recent)
                repeats = counts.get(recent, 0) + 1
                counts[recent] = repeats
                if repeats >= max_repeats and gate_open:
                    self._sizes = (size, added)
                    if self._trip(recent, repeats):
                        self._carry_newlines = 0
                        self._recent = recent
                        return True
            else:
                recent = (*recent, word)
            if size > window:
                leaving = grams.popleft()
                left = counts[leaving] - 1
                if left:
                    counts[leaving] = left
                else:
                    del counts[leaving]
                first = leaving[0]
                left = word_counts[first] - 1
                if left:
                    word_counts[first] = left
                else:
                    del word_counts[first]
                if marks and marks[0][0] == added - size:
                    self._window_newlines -= marks.popleft()[1]
                size -= 1
        self._sizes = (size, added)
        self._carry_newlines = carry + trailing
        self._recent = recent
        return False

    def _extend_pending(self, text: str) -> None:
        # A whitespace-free stream would otherwise re-copy its pending token on every push.
        pending = self._pending + text
        if len(pending) > _PENDING_SPILL:
            self._pending_spill.append(pending)
            self._pending = ""
        else:
            self._pending = pending

    def _take_pending(self) -> str:
        pending = self._pending
        if self._pending_spill:
            pending = "".join(self._pending_spill) + pending
            self._pending_spill.clear()
        self._pending = ""
        return pending

    def _trip(self, gram: tuple[str, ...], repeats: int) -> bool:
        """Apply the diversity gate and the enumeration exemption; latch on a trip."""
        word_counts = self._store[2]
        size = self._sizes[0]
        unique_ratio = len(word_counts) / size
        if unique_ratio > self._max_unique_ratio or self._enumerated():
            return False
        self._tripped = True
        phrase = " ".join(gram)
        self._reason = GuardReason(
            phrase=phrase,
            count=repeats,
            text=" ".join(self._store[3]) or phrase,
            unique_ratio=unique_ratio,
            hapax_ratio=self._hapax_ratio(),
        )
        return True

    def _hapax_ratio(self) -> float:
        hapax = sum(1 for count in self._store[2].values() if count == 1)
        return hapax / self._sizes[0]

    def _enumerated(self) -> bool:
        if self._max_unique_ratio >= STRUCTURE_AGGRESSIVE_GATE:
            return False
        if self._window_newlines < MIN_STRUCTURE_NEWLINES:
            return False
        if self._hapax_ratio() >= STRUCTURE_HAPAX_FLOOR:
            return True
        leads = {word for _, _, word in self._store[4]}
        return len(leads) >= MIN_DISTINCT_LINE_LEADS
