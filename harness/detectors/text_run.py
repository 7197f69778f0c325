"""``text_run``: the sentence-run check (``has_repeated_text_run``) on each model message, online.

The check is a whole-text one; online it is evaluated after each chunk on the
text of the message so far, and the fire position is the end of the first chunk
after which it holds. Calling the library function on the growing text after
every chunk costs O(tail_limit) per chunk, so :class:`IncrementalTextRun` gives
the same answer from state kept between chunks: the units of completed sentences
are normalised once (with the library's own ``text_units``), and each chunk only
re-normalises the unfinished last unit and, when the text is longer than
``tail_limit``, the unit the tail cut falls in. Evaluating only when a unit
terminator arrives would *not* be the same: the unfinished last unit counts too,
so the check can start to hold in the middle of a sentence. The tests compare
:class:`IncrementalTextRun` with the library call after every chunk.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from loopguard import text_units
from loopguard._js import utf16_len, utf16_tail

from ._base import Detector, Fire, Param, register

__all__ = ["PARAMS", "IncrementalTextRun"]

_TERMINATOR = re.compile(r"[.!?\n]")

PARAMS = (
    Param("min_units", "int", low=2, high=32, description="units needed before a verdict"),
    Param("window", "int", low=8, high=256, description="trailing units inspected"),
    Param(
        "max_unique_ratio",
        "float",
        low=0.1,
        high=1.0,
        description="distinct units / units at or below which it fires",
    ),
    Param(
        "tail_limit",
        "int",
        low=256,
        high=16384,
        tune=False,
        description="trailing UTF-16 units inspected (fixed at 4000 in the original)",
    ),
)


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _tail(text: str, units: int) -> str:
    """``utf16_tail`` with a fast path for text without astral characters."""
    if _ASTRAL.search(text) is None:
        return text[-units:] if units > 0 else ""
    return utf16_tail(text, units)


def _unit(raw: str) -> str | None:
    units = text_units(raw)
    return units[0] if units else None


class IncrementalTextRun:
    """``has_repeated_text_run(text_so_far, **options)`` after each :meth:`push`, incrementally.

    Parameters are the library's, already validated (integers, ratio in (0, 1]).

    Examples
    --------
    >>> run = IncrementalTextRun(min_units=4, window=64, max_unique_ratio=0.5, tail_limit=4000)
    >>> [run.push(c) for c in ["Again. ", "Again. ", "Again. ", "Again"]]
    [False, False, False, True]
    """

    __slots__ = (
        "_limit",
        "_min",
        "_partial",
        "_pieces",
        "_ratio",
        "_start",
        "_starts",
        "_total",
        "_units",
        "_window",
    )

    def __init__(
        self, *, min_units: int, window: int, max_unique_ratio: float, tail_limit: int
    ) -> None:
        # The library's own normalisation: window at least min_units, min_units at least 2.
        self._min = max(2, int(min_units))
        self._window = max(self._min, int(window))
        self._ratio = float(max_unique_ratio)
        self._limit = max(1, int(tail_limit))
        # Completed pieces (text between terminators) that end after the tail cut,
        # oldest first: (start, end) in UTF-16 units and the raw text (its last
        # `limit` characters only, for a piece longer than that: only they can be read).
        self._pieces: deque[tuple[int, int, str]] = deque()
        # The newest completed pieces with a non-empty unit: their starts and units.
        self._starts: list[int] = []
        self._units: list[str] = []
        self._partial = ""  # the unfinished piece (its tail only, past 2 * limit)
        self._start = 0  # where the unfinished piece starts, UTF-16 units
        self._total = 0  # UTF-16 units pushed

    def push(self, chunk: str) -> bool:
        """Append ``chunk``; return whether the text so far has a runaway sentence run."""
        if isinstance(chunk, str) and chunk:
            self._feed(chunk)
        return self._holds()

    def _feed(self, chunk: str) -> None:
        limit = self._limit
        position = 0
        for match in _TERMINATOR.finditer(chunk):
            end = match.start()
            piece = self._partial + chunk[position:end]
            self._total += utf16_len(chunk[position:end])
            if piece:
                short = len(piece) <= limit
                self._pieces.append((self._start, self._total, piece if short else piece[-limit:]))
                # A piece longer than the limit is always cut by the tail: never read whole.
                unit = _unit(piece) if short else None
                if unit:
                    self._starts.append(self._start)
                    self._units.append(unit)
            self._total += 1  # the terminator (never astral)
            self._partial = ""
            self._start = self._total
            position = match.end()
        rest = chunk[position:]
        if rest:
            self._total += utf16_len(rest)
            self._partial += rest
            if len(self._partial) > 2 * limit:
                self._partial = self._partial[-limit:]
        if len(self._units) > 2 * self._window:
            del self._units[: -self._window]
            del self._starts[: -self._window]
        if self._total > limit:
            # Pieces ending before the cut can never be read again (the text only grows).
            cut = self._total - limit
            pieces = self._pieces
            while pieces and pieces[0][1] <= cut:
                pieces.popleft()

    def _holds(self) -> bool:
        # The library keeps the last `limit` UTF-16 units of the text.
        cut = self._total - self._limit if self._total > self._limit else 0
        window = self._window
        first = max(0, len(self._units) - window)
        if first < len(self._starts) and self._starts[first] < cut:
            first = bisect_left(self._starts, cut, first)
        units = self._units[first:]
        if len(units) < window and self._pieces and self._pieces[0][0] < cut:
            # The piece the cut falls in: only its end is in the tail.
            _, end, raw = self._pieces[0]
            unit = _unit(_tail(raw, end - cut))
            if unit:
                units.insert(0, unit)
        if self._partial:
            raw = self._partial
            if self._start < cut:
                raw = _tail(raw, self._total - cut)
            unit = _unit(raw)
            if unit:
                units.append(unit)
        if len(units) < self._min:
            return False
        considered = units[-window:]
        return len(set(considered)) <= len(considered) * self._ratio


class _Adapter:
    __slots__ = ("_push",)

    def __init__(self, options: Mapping[str, Any]) -> None:
        self._push = IncrementalTextRun(**options).push

    def push(self, chunk: str) -> Fire | None:
        return Fire("has_repeated_text_run") if self._push(chunk) else None


def _build(params: Mapping[str, Any]) -> Callable[[], _Adapter]:
    options = dict(params)
    return lambda: _Adapter(options)


register(
    Detector(
        name="text_run",
        kind="stream",
        description="has_repeated_text_run on each model message's text after every chunk",
        defaults_key="text_run",
        params=PARAMS,
        build=_build,
    )
)
