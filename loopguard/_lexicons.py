"""Doubt-marker lexicons of the overthinking detector.

``seed`` holds the eight regular expressions of the overthinking-detector
design, verbatim in JavaScript syntax. The other lexicons are plain-text
markers taken from published studies of reasoning traces; they are matched as
whole words, case-insensitively, with any run of whitespace between the words
of a multi-word marker.

Sources (named, not linked):

- ``seed``: the overthinking-detector design (``DOUBT_PATTERNS``).
- ``nowait``: the NoWait paper ("Wait, We Don't Need to 'Wait'! Removing
  Thinking Tokens Improves Reasoning Efficiency", Wang et al., 2025), the
  reflection keywords it suppresses.
- ``self_braking``: the Self-Braking Tuning paper ("Let LLMs Break Free from
  Overthinking via Self-Braking Tuning", Zhao et al., 2025), its reflection
  and self-verification markers.
- ``dynasor``: Dynasor / Dynasor-CoT (Hao AI Lab), the hesitation words its
  certainty probing watches for.
- ``r1``: analyses of DeepSeek-R1 reasoning traces, the words that open a
  self-correction or re-verification.
- ``union``: every marker above; ``seed`` regexes first, then the plain-text
  markers, with case-insensitive duplicates dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

from ._errors import OptionError
from ._js import JS_WHITESPACE

__all__ = ["LEXICONS", "SEED_PATTERNS", "lexicon_patterns", "marker_pattern"]

_WS = "[" + re.escape(JS_WHITESPACE) + "]"

#: The seed's ``DOUBT_PATTERNS`` as JavaScript regex sources (all with the ``i`` flag).
SEED_PATTERNS: tuple[str, ...] = (
    r"\bwait,?\s+but\b",
    r"\blet me reconsider\b",
    r"\bon second thought\b",
    r"\bwait,?\s+what if\b",
    r"\bthis might be wrong\b",
    r"\bactually,?\s+let's rethink\b",
    r"\bhold on,?\s+there is a flaw\b",
    r"\balternatively,?\s+maybe\b",
)

_NOWAIT = (
    "wait",
    "alternatively",
    "hmm",
    "but",
    "however",
    "alternative",
    "another",
    "check",
    "double-check",
    "oh",
    "maybe",
    "verify",
    "other",
    "again",
    "now",
    "ah",
    "any",
)

_SELF_BRAKING = (
    "Another",
    "Backtrack",
    "But",
    "Check",
    "Going back",
    "Hmm",
    "Hmmm",
    "However",
    "Hold on",
    "Instead of",
    "Just to be thorough",
    "Just to make sure",
    "Let me check",
    "Let me just double-check",
    "Let me try another",
    "Let me verify",
    "Maybe I can consider",
    "Maybe I should consider",
    "Might",
    "Not sure",
    "Perhaps",
    "Recheck",
    "Retry",
    "Trace back",
    "Wait",
)

_DYNASOR = ("wait", "hold", "but", "okay", "no", "hmm")

_R1 = (
    "wait",
    "mistake",
    "however",
    "but",
    "retry",
    "error",
    "verify",
    "wrong",
    "evaluate",
    "check",
)


def _dedupe(*groups: tuple[str, ...]) -> tuple[str, ...]:
    seen: set[str] = set()
    out: list[str] = []
    for group in groups:
        for marker in group:
            key = " ".join(marker.casefold().split())
            if key not in seen:
                seen.add(key)
                out.append(marker)
    return tuple(out)


#: Lexicon name -> markers. ``seed`` (and the start of ``union``) are regex sources.
LEXICONS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "seed": SEED_PATTERNS,
        "nowait": _NOWAIT,
        "self_braking": _SELF_BRAKING,
        "dynasor": _DYNASOR,
        "r1": _R1,
        "union": SEED_PATTERNS + _dedupe(_NOWAIT, _SELF_BRAKING, _DYNASOR, _R1),
    }
)


def _seed_pattern(source: str) -> re.Pattern[str]:
    # JavaScript without the u flag: \b and \w are ASCII-only and /i never folds a
    # non-ASCII character onto an ASCII letter (re.ASCII), while \s is the JS set.
    return re.compile(source.replace(r"\s", _WS), re.ASCII | re.IGNORECASE)


def marker_pattern(marker: str) -> re.Pattern[str]:
    """Compile a plain-text marker into a whole-word, case-insensitive pattern.

    Word characters are Unicode ``\\w``; the words of a multi-word marker may be
    separated by any run of JavaScript whitespace.

    Examples
    --------
    >>> p = marker_pattern("Hold on")
    >>> bool(p.search("hold\\n  ON, a flaw")), bool(p.search("holdon"))
    (True, False)
    >>> bool(marker_pattern("wait").search("waiting"))
    False
    """
    if not isinstance(marker, str) or not marker.split():
        raise OptionError(f"a doubt marker must be a non-blank string, got {marker!r}")
    body = (_WS + "+").join(re.escape(word) for word in marker.split())
    return re.compile(r"(?<!\w)" + body + r"(?!\w)", re.IGNORECASE)


def lexicon_patterns(name: str) -> tuple[re.Pattern[str], ...]:
    """Return the compiled patterns of lexicon ``name``, one per marker.

    Seed entries keep the seed's JavaScript semantics; plain-text markers use
    :func:`marker_pattern`.

    Raises
    ------
    OptionError
        When ``name`` is not a key of :data:`LEXICONS`.

    Examples
    --------
    >>> len(lexicon_patterns("seed")), len(lexicon_patterns("dynasor"))
    (8, 6)
    """
    if not isinstance(name, str) or name not in LEXICONS:
        known = ", ".join(LEXICONS)
        raise OptionError(f"lexicon must be one of {known}; got {name!r}")
    return _compiled(name)


@cache
def _compiled(name: str) -> tuple[re.Pattern[str], ...]:
    seed = set(SEED_PATTERNS)
    return tuple(
        _seed_pattern(marker) if marker in seed else marker_pattern(marker)
        for marker in LEXICONS[name]
    )
