"""``OverthinkingDetector``: real-time overthinking checks on a reasoning stream.

A port of the ``OverthinkingDetector`` of the overthinking-detector design. With
its defaults it reproduces the design exactly, JavaScript string semantics
included: a hard cap on thinking tokens, a count of doubt markers, and a
word-window repetition score. Options (all off by default) switch to other
doubt-marker lexicons, to counting every marker occurrence across chunk
boundaries, and to a doubt-marker *density* rule.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Any

from ._defaults import detector_defaults
from ._errors import DefaultsError, LoopguardError, OptionError
from ._js import JS_WHITESPACE, utf16_len
from ._lexicons import LEXICONS, lexicon_patterns

__all__ = ["COUNTING_MODES", "OverthinkingDetector", "OverthinkingResult"]

#: Values of the ``counting`` option.
COUNTING_MODES: tuple[str, ...] = ("per_chunk", "occurrences")

# The seed's fixed result scores: they are part of its output format, not options.
_HARD_CAP_SCORE = 1.0
_DOUBT_SCORE = 0.8
# Scores need at least this many words (the seed's calculateRepetitionScore).
_MIN_SCORED_WORDS = 10
_PER_MILLE = 1000

# Occurrence counting keeps this much text: a match starting more than _TAIL_CHARS
# before the end of the stream so far can no longer change, and _CONTEXT_CHARS before
# the resume point stay visible to \b and look-behinds. Buffer sizes, not options.
_TAIL_CHARS = 256
_CONTEXT_CHARS = 32

# `chunk.toLowerCase().replace(/[^\w\s]/g, "").split(/\s+/)`: JS \w is ASCII-only.
_STRIP = re.compile("[^A-Za-z0-9_" + re.escape(JS_WHITESPACE) + "]+")
_SPLIT = re.compile("[" + re.escape(JS_WHITESPACE) + "]+")


@dataclass(frozen=True, slots=True)
class OverthinkingResult:
    """The verdict on one chunk (the seed's ``GuardAnalysisResult``).

    Attributes
    ----------
    is_loop_detected : bool
        Whether a rule fired on this chunk.
    reason : str or None
        The seed's message for the rule that fired; ``None`` when none did.
    doubt_count : int
        Doubt markers counted so far in the stream.
    repetition_score : float
        ``1 - unique/len`` over the rolling word window (0 under 10 words);
        the seed's fixed ``1.0`` on a hard-cap trip and ``0.8`` on a doubt trip.
    """

    is_loop_detected: bool
    reason: str | None
    doubt_count: int
    repetition_score: float


def js_to_fixed(value: float, digits: int) -> str:
    """``Number.prototype.toFixed(digits)`` for ``|value| < 1e21``.

    JavaScript rounds the exact binary value half *up* (away from zero after
    taking the sign off), where Python's ``format`` rounds half to even.

    Examples
    --------
    >>> js_to_fixed(0.625, 2), format(0.625, ".2f")
    ('0.63', '0.62')
    >>> js_to_fixed(1.005, 2)
    '1.00'
    """
    if value == 0:
        value = 0.0  # (-0).toFixed(2) is "0.00"
    with localcontext() as ctx:
        ctx.prec = 60
        fixed = Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return format(fixed, "f")


def js_words(text: str) -> list[str]:
    """The seed's word split: lower-case, drop ``[^\\w\\s]`` (ASCII ``\\w``), split on ``\\s+``.

    Examples
    --------
    >>> js_words("Wait, niño: let's re-check_it!")
    ['wait', 'nio', 'lets', 'recheck_it']
    """
    return [word for word in _SPLIT.split(_STRIP.sub("", text.lower())) if word]


def _repetition_score(words: list[str]) -> float:
    if len(words) < _MIN_SCORED_WORDS:
        return 0.0
    return max(0.0, min(1.0, 1 - len(set(words)) / len(words)))


def _pick(name: str, value: object, defaults: dict[str, Any]) -> tuple[object, bool]:
    """The given value, or the default when ``value`` is ``None`` or a non-finite number."""
    number = _real(value)
    if value is None or (number is not None and not math.isfinite(number)):
        if name not in defaults:
            raise DefaultsError(f"defaults.json has no overthinking option {name!r}")
        return defaults[name], True
    return value, False


def _fail(name: str, expected: str, value: object, from_defaults: bool) -> LoopguardError:
    if from_defaults:
        return DefaultsError(f"defaults.json overthinking.{name} must be {expected}; got {value!r}")
    return OptionError(f"{name} must be {expected}; got {value!r}")


def _real(value: object) -> float | None:
    """``value`` as a float when it is a real number (numpy scalars too, not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        return float(value)
    except (OverflowError, TypeError, ValueError):
        return None


def _int_option(name: str, value: object, defaults: dict[str, Any], minimum: int) -> int:
    chosen, from_defaults = _pick(name, value, defaults)
    number = _real(chosen)
    if number is None or not number.is_integer() or number < minimum:
        raise _fail(name, f"an integer >= {minimum}", chosen, from_defaults)
    return int(number)


def _unit_option(name: str, value: object, defaults: dict[str, Any]) -> float:
    chosen, from_defaults = _pick(name, value, defaults)
    number = _real(chosen)
    if number is None or not 0 <= number <= 1:
        raise _fail(name, "a number in [0, 1]", chosen, from_defaults)
    return number


def _density_option(name: str, value: object, defaults: dict[str, Any]) -> float | None:
    chosen, from_defaults = _pick(name, value, defaults)
    if chosen is None:
        return None
    number = _real(chosen)
    if number is None or not math.isfinite(number) or number <= 0:
        raise _fail(name, "a number > 0 (or None to disable)", chosen, from_defaults)
    return number


def _choice(name: str, value: object, defaults: dict[str, Any], allowed: Iterable[str]) -> str:
    chosen, from_defaults = _pick(name, value, defaults)
    allowed = tuple(allowed)
    if not isinstance(chosen, str) or chosen not in allowed:
        raise _fail(name, "one of " + ", ".join(allowed), chosen, from_defaults)
    return chosen


def _custom_patterns(patterns: object) -> tuple[re.Pattern[str], ...]:
    if isinstance(patterns, str | bytes) or not isinstance(patterns, Iterable):
        raise OptionError(
            "doubt_patterns must be a list of regex strings or compiled str patterns; "
            f"got {type(patterns).__name__}"
        )
    compiled: list[re.Pattern[str]] = []
    for index, item in enumerate(patterns):
        if isinstance(item, str):
            try:
                compiled.append(re.compile(item, re.IGNORECASE))
            except re.error as exc:
                raise OptionError(
                    f"doubt_patterns[{index}] is not a valid regular expression: {exc}"
                ) from None
        elif isinstance(item, re.Pattern) and isinstance(item.pattern, str):
            compiled.append(item)
        else:
            raise OptionError(
                f"doubt_patterns[{index}] must be a regex string or a compiled str pattern; "
                f"got {type(item).__name__}"
            )
    return tuple(compiled)


class OverthinkingDetector:
    """Real-time overthinking detector fed one chunk of reasoning text at a time.

    Every option left as ``None`` (or given as a non-finite float) takes its
    value from ``defaults.json`` (block ``overthinking``), which holds the
    design's values.

    Parameters
    ----------
    max_doubt_markers : int, optional
        Fire when the doubt count reaches this (>= 1). Unused when
        ``density_threshold`` is set.
    window_size_words : int, optional
        Words the repetition and density rules need before they may fire
        (>= 1); the rolling window keeps twice as many.
    repetition_threshold : float, optional
        Fire when the repetition score reaches this (in [0, 1]).
    max_thinking_tokens_hard_cap : int, optional
        Fire once ``ceil(len/4)`` summed over chunks (UTF-16 length) reaches
        this (>= 1).
    lexicon : str, optional
        Doubt markers: a key of :data:`loopguard._lexicons.LEXICONS`
        (``seed``, ``nowait``, ``self_braking``, ``dynasor``, ``r1``, ``union``).
    counting : str, optional
        ``"per_chunk"`` (the seed: each pattern counts at most once per chunk)
        or ``"occurrences"`` (every match in the stream, across chunk
        boundaries, independent of how the stream is chunked).
    density_threshold : float, optional
        When set (> 0), fire on doubt markers per 1,000 words of the rolling
        window reaching this, *instead of* on ``max_doubt_markers``.
    doubt_patterns : list of str or re.Pattern, optional
        Own doubt patterns instead of a lexicon (strings are compiled with
        ``re.IGNORECASE``); cannot be combined with ``lexicon``.

    Raises
    ------
    OptionError
        When an option is out of range or of the wrong type (the message
        names it and its allowed values).

    Examples
    --------
    >>> detector = OverthinkingDetector()
    >>> detector.analyze_chunk("Wait, but what if the lock is wrong?").doubt_count
    1
    >>> for _ in range(3):
    ...     result = detector.analyze_chunk("Let me reconsider. On second thought...")
    >>> result.is_loop_detected, result.reason
    (True, 'Excessive doubt markers threshold exceeded (7 occurrences)')
    """

    def __init__(
        self,
        *,
        max_doubt_markers: int | None = None,
        window_size_words: int | None = None,
        repetition_threshold: float | None = None,
        max_thinking_tokens_hard_cap: int | None = None,
        lexicon: str | None = None,
        counting: str | None = None,
        density_threshold: float | None = None,
        doubt_patterns: Iterable[str | re.Pattern[str]] | None = None,
    ) -> None:
        defaults = detector_defaults("overthinking")
        self._max_doubt_markers = _int_option("max_doubt_markers", max_doubt_markers, defaults, 1)
        self._window = _int_option("window_size_words", window_size_words, defaults, 1)
        self._repetition_threshold = _unit_option(
            "repetition_threshold", repetition_threshold, defaults
        )
        self._hard_cap = _int_option(
            "max_thinking_tokens_hard_cap", max_thinking_tokens_hard_cap, defaults, 1
        )
        self._counting = _choice("counting", counting, defaults, COUNTING_MODES)
        self._density_threshold = _density_option("density_threshold", density_threshold, defaults)
        if doubt_patterns is not None:
            if lexicon is not None:
                raise OptionError("pass either lexicon or doubt_patterns, not both")
            self._lexicon: str | None = None
            self._patterns = _custom_patterns(doubt_patterns)
        else:
            self._lexicon = _choice("lexicon", lexicon, defaults, LEXICONS)
            self._patterns = lexicon_patterns(self._lexicon)
        self.reset()

    def reset(self) -> None:
        """Forget the stream: tokens, doubt markers and the word window."""
        self._tokens_seen = 0
        self._doubt_count = 0
        self._rolling: list[str] = []
        # Doubt count before the chunk that contributed each window word (density rule).
        self._count_before: list[int] = []
        self._tail = ""
        self._resume = [0] * len(self._patterns)
        self._committed = 0

    @property
    def options(self) -> dict[str, object]:
        """The resolved options (``doubt_patterns`` as pattern sources, or ``None``)."""
        return {
            "max_doubt_markers": self._max_doubt_markers,
            "window_size_words": self._window,
            "repetition_threshold": self._repetition_threshold,
            "max_thinking_tokens_hard_cap": self._hard_cap,
            "lexicon": self._lexicon,
            "counting": self._counting,
            "density_threshold": self._density_threshold,
            "doubt_patterns": (
                None if self._lexicon is not None else tuple(p.pattern for p in self._patterns)
            ),
        }

    @property
    def tokens_seen(self) -> int:
        """Estimated thinking tokens so far: the sum of ``ceil(utf16_len/4)``."""
        return self._tokens_seen

    @property
    def doubt_count(self) -> int:
        """Doubt markers counted so far."""
        return self._doubt_count

    @property
    def doubt_density(self) -> float | None:
        """Doubt markers per 1,000 words of the rolling window; ``None`` when it is empty."""
        if not self._rolling:
            return None
        markers = max(0, self._doubt_count - self._count_before[0])
        return markers * _PER_MILLE / len(self._rolling)

    def analyze_chunk(self, text: str) -> OverthinkingResult:
        """Analyse the next chunk of reasoning text.

        Rules run in the seed's order and the first that fires decides the
        result: hard cap, doubt markers (count, or density when
        ``density_threshold`` is set), repetition. Nothing latches: each call
        re-evaluates. A non-``str`` ``text`` is treated as ``""`` (it never
        raises).

        Examples
        --------
        >>> detector = OverthinkingDetector(max_thinking_tokens_hard_cap=2)
        >>> detector.analyze_chunk("12345678").reason
        'Hard cap of 2 thinking tokens reached'
        """
        chunk = text if isinstance(text, str) else ""
        self._tokens_seen += -(-utf16_len(chunk) // 4)

        if self._tokens_seen >= self._hard_cap:
            return OverthinkingResult(
                True,
                f"Hard cap of {self._hard_cap} thinking tokens reached",
                self._doubt_count,
                _HARD_CAP_SCORE,
            )

        count_before = self._doubt_count
        if self._counting == "per_chunk":
            self._doubt_count += sum(1 for p in self._patterns if p.search(chunk))
        else:
            self._count_occurrences(chunk)

        if self._density_threshold is None and self._doubt_count >= self._max_doubt_markers:
            return OverthinkingResult(
                True,
                f"Excessive doubt markers threshold exceeded ({self._doubt_count} occurrences)",
                self._doubt_count,
                _DOUBT_SCORE,
            )

        words = js_words(chunk)
        self._rolling.extend(words)
        self._count_before.extend([count_before] * len(words))
        limit = self._window * 2
        if len(self._rolling) > limit:
            del self._rolling[:-limit]
            del self._count_before[:-limit]
        window_full = len(self._rolling) >= self._window

        if self._density_threshold is not None and window_full:
            density = self.doubt_density
            if density is not None and density >= self._density_threshold:
                return OverthinkingResult(
                    True,
                    "Doubt marker density threshold exceeded "
                    f"({js_to_fixed(density, 1)} per 1000 words)",
                    self._doubt_count,
                    _DOUBT_SCORE,
                )

        score = _repetition_score(self._rolling)
        if score >= self._repetition_threshold and window_full:
            return OverthinkingResult(
                True,
                f"High semantic repetition detected (score: {js_to_fixed(score, 2)})",
                self._doubt_count,
                score,
            )
        return OverthinkingResult(False, None, self._doubt_count, score)

    def _count_occurrences(self, chunk: str) -> None:
        """Count every non-empty match in the stream so far, whatever the chunking.

        Matches starting more than ``_TAIL_CHARS`` before the end are final and
        committed; later ones are counted provisionally, as if the stream ended
        here, and recounted with the next chunk (so a marker at the very end can
        still be withdrawn, e.g. ``wait`` becoming ``waiting``).
        """
        tail = self._tail + chunk
        settled = len(tail) - _TAIL_CHARS
        provisional = 0
        for index, pattern in enumerate(self._patterns):
            resume = self._resume[index]
            for match in pattern.finditer(tail, resume):
                if match.end() == match.start():
                    continue
                if match.start() < settled:
                    self._committed += 1
                    resume = match.end()
                else:
                    provisional += 1
            # Nothing can start before `settled` any more: jumping there bounds the tail.
            self._resume[index] = max(resume, settled)
        cut = max(0, min(self._resume, default=len(tail)) - _CONTEXT_CHARS)
        self._tail = tail[cut:]
        self._resume = [position - cut for position in self._resume]
        self._doubt_count = self._committed + provisional

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{key}={value!r}" for key, value in self.options.items() if value is not None
        )
        return f"OverthinkingDetector({shown})"
