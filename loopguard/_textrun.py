"""``has_repeated_text_run``: a runaway repetition of whole sentences inside one text."""

from __future__ import annotations

import re

from ._defaults import detector_defaults
from ._js import JS_WHITESPACE, is_finite_number, utf16_len, utf16_tail
from ._options import floored_at_least

__all__ = ["has_repeated_text_run", "text_units"]

_WS = re.escape(JS_WHITESPACE)
_UNIT_SPLIT = re.compile(r"[.!?\n]+")
_NOT_KEPT = re.compile(r"[^a-z0-9" + _WS + r"]+")
_WS_RUN = re.compile(r"[" + _WS + r"]+")


def text_units(text: str) -> list[str]:
    """Split ``text`` into normalised sentence-like units, as the original does.

    Pieces are cut at runs of ``.``, ``!``, ``?`` and newline; each is
    lower-cased, everything but ASCII letters, digits and whitespace becomes a
    space, whitespace runs collapse, and empty units are dropped.

    Examples
    --------
    >>> text_units("Hello, World! Hello world.\\nÜber")
    ['hello world', 'hello world', 'ber']
    """
    units = []
    for piece in _UNIT_SPLIT.split(text):
        unit = _WS_RUN.sub(" ", _NOT_KEPT.sub(" ", piece.lower())).strip(JS_WHITESPACE)
        if unit:
            units.append(unit)
    return units


def has_repeated_text_run(
    text: object,
    *,
    min_units: object = None,
    window: object = None,
    max_unique_ratio: object = None,
    tail_limit: object = None,
) -> bool:
    """Report a runaway repetition of sentences in one block of text.

    A port of ``hasRepeatedTextRun`` (``docs/spec/thread-algorithms.md`` §7):
    the last ``tail_limit`` UTF-16 units are cut into normalised units, and the
    text is a runaway when at least ``min_units`` units exist and the last
    ``window`` of them have at most ``max_unique_ratio`` distinct values.

    Parameters
    ----------
    text : str
        The text. Anything else, and the empty string, gives ``False``.
    min_units : int, optional
        Units needed before a verdict (floored, at least 2; default 8).
    window : int, optional
        Trailing units inspected (floored, at least ``min_units``; default 64).
    max_unique_ratio : float, optional
        Used when ``0 < value <= 1``; otherwise the default 0.5.
    tail_limit : int, optional
        Trailing UTF-16 units inspected (floored, at least 1; default 4000).
        Not an option of the original, whose value is fixed at 4000.

    Examples
    --------
    >>> has_repeated_text_run("Repeat me. " * 4)
    False
    >>> has_repeated_text_run("Repeat me. " * 4, min_units=4)
    True
    """
    if not isinstance(text, str) or not text:
        return False
    defaults = detector_defaults("text_run")
    units_min = floored_at_least(min_units, defaults["min_units"], 2)
    units_window = floored_at_least(window, defaults["window"], units_min)
    ratio = (
        float(max_unique_ratio)  # type: ignore[arg-type]
        if is_finite_number(max_unique_ratio) and 0 < max_unique_ratio <= 1  # type: ignore[operator]
        else float(defaults["max_unique_ratio"])
    )
    limit = floored_at_least(tail_limit, defaults["tail_limit"], 1)
    if len(text) > limit or utf16_len(text) > limit:
        text = utf16_tail(text, limit)
    units = text_units(text)
    if len(units) < units_min:
        return False
    considered = units[-units_window:]
    return len(set(considered)) <= len(considered) * ratio
