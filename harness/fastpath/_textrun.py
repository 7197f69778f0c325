"""The text run's fast path: ``has_repeated_text_run`` after every chunk, as array operations.

After chunk ``k`` of a message the replay asks ``has_repeated_text_run`` about
the text so far ``T`` (``harness/detectors/text_run.py``): cut ``T`` to its
last ``tail_limit`` UTF-16 units, split it into sentence units at runs of
``.!?`` and newlines, and fire when there are at least ``min_units`` units and
the last ``window`` of them have at most ``max_unique_ratio`` of distinct values.

The units of ``T`` are: the units of the message's *complete* pieces (a piece
followed by a terminator already pushed), then the unit of the unfinished
piece after the last terminator (the *trailing* unit, which changes with every
chunk). Prepared once per study, for every chunk end: how many complete units
precede it (``a``), the trailing unit's id, the last complete unit equal to it,
and the number of distinct complete units so far; for every complete unit: its
id and where it starts and ends. A trial is then, for every chunk end at once:

* without a cut (``T`` within ``tail_limit``): if ``a + trailing >= window``,
  the distinct count of the last ``window - trailing`` complete units (a sliding
  distinct count over the unit stream) plus the trailing unit when it is not
  among them; otherwise the distinct count of all of them;
* with a cut at ``c = len(T) - tail_limit``: the units are those of the
  complete pieces starting at or after ``c``, the unit of the tail of the piece
  ``c`` falls in, and the trailing unit. When the trailing piece itself starts
  before ``c`` the text has at most one unit and cannot fire. These depend on
  ``tail_limit`` only (fixed in a sweep: it is not tuned), so they are prepared
  once per value, for the chunk ends of messages longer than it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..detectors import Detector
from ..detectors.text_run import IncrementalTextRun
from ._base import FastEvaluator, Position
from ._prepare import (
    FAR,
    IntArray,
    distances,
    first_per_group,
    occurrence_links,
    sliding_distinct,
)

__all__ = ["TextRunEvaluator"]

_TERMINATOR = re.compile(r"[.!?\n]")
_ALNUM_RUNS = re.compile("[a-z0-9]+").findall
_REASON = "has_repeated_text_run"


def _unit(piece: str) -> str:
    """``text_units(piece)``'s one unit ('' for none), for a piece without terminators.

    ``text_units`` turns every run of characters other than ``[a-z0-9]`` (after
    lower-casing) into one space and trims the ends: the unit is the piece's
    lower-cased ``[a-z0-9]`` runs joined by single spaces (the tests compare
    both on random text).
    """
    return " ".join(_ALNUM_RUNS(piece.lower()))


class _Cut:
    """What a ``tail_limit`` changes at the chunk ends of messages longer than it."""

    __slots__ = ("ends", "first", "inside", "never", "sliced", "spread")

    def __init__(self, ends: IntArray) -> None:
        size = len(ends)
        self.ends = ends  # chunk-end indices
        self.never = np.zeros(size, dtype=bool)  # the trailing piece is cut: one unit at most
        self.first = np.zeros(size, dtype=np.int64)  # first complete unit in the tail
        self.sliced = np.zeros(size, dtype=bool)  # a piece is cut and its tail has a unit
        self.spread = np.zeros(size, dtype=np.int64)  # distinct complete units in the tail
        self.inside = np.zeros(size, dtype=bool)  # the cut piece's unit is among the others


class TextRunEvaluator(FastEvaluator):
    """Fast path of ``text_run`` (see the module docstring)."""

    def __init__(
        self, detector: Detector, cases: Sequence[Any], *, chunking: str, seed: int
    ) -> None:
        super().__init__(detector, cases, chunking=chunking, seed=seed)
        self._ids: dict[str, int] = {}
        self._prepare_units()
        self._cuts: dict[int, _Cut | None] = {}

    def _prepare_units(self) -> None:
        streams = self.study.streams
        texts = ["".join(stream.chunks) for stream in streams]
        # All messages in one string, each followed by a newline: a terminator, so no
        # piece spans two messages. Positions below are indices into it.
        text = "\n".join(texts) + "\n"
        self._text = text
        starts = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum([len(t) + 1 for t in texts], out=starts[1:])
        if text.isascii():
            self._offsets: IntArray | None = None
        else:
            wide = (
                np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32) > 0xFFFF
            )
            self._offsets = np.zeros(len(text) + 1, dtype=np.int64)
            np.cumsum(1 + wide, out=self._offsets[1:])

        def wide16(points: IntArray) -> IntArray:
            return points if self._offsets is None else self._offsets[points]

        # Complete pieces: those ended by a terminator of their own message.
        stops = np.asarray([m.start() for m in _TERMINATOR.finditer(text)], dtype=np.int64)
        own = ~np.isin(stops, starts[1:] - 1)
        begins = np.concatenate(([0], stops[:-1] + 1))
        ids = self._ids
        unit_ids: list[int] = []
        kept: list[int] = []
        for number, (begin, stop) in enumerate(
            zip(begins[own].tolist(), stops[own].tolist(), strict=True)
        ):
            if stop > begin:
                unit = _unit(text[begin:stop])
                if unit:
                    unit_ids.append(ids.setdefault(unit, len(ids)))
                    kept.append(number)
        chosen = np.flatnonzero(own)[np.asarray(kept, dtype=np.int64)]
        self._unit_ids = np.asarray(unit_ids, dtype=np.int64)
        self._unit_start = begins[chosen]
        self._unit_stop = stops[chosen]
        self._unit_start16 = wide16(self._unit_start)
        self._unit_stop16 = wide16(self._unit_stop)
        unit_stream = np.searchsorted(starts, self._unit_start, "right") - 1
        self._unit_first = np.searchsorted(self._unit_start, starts, "left")
        self._unit_begin = self._unit_first[unit_stream]
        self._unit_pos = np.arange(len(unit_ids), dtype=np.int64) - self._unit_begin
        back, ahead = occurrence_links(self._unit_ids, unit_stream)
        self._unit_back = distances(back, forward=False)
        self._unit_ahead = distances(ahead, forward=True)

        # Chunk ends.
        sizes = np.asarray([len(c) for stream in streams for c in stream.chunks], dtype=np.int64)
        per_stream = np.asarray([len(stream.chunks) for stream in streams], dtype=np.int64)
        end_stream = np.repeat(np.arange(len(streams), dtype=np.int64), per_stream)
        ends = np.cumsum(sizes) + end_stream  # one separator before each later message
        self._end_stream = end_stream
        self._end_case = np.asarray([s.case for s in streams], dtype=np.int64)[end_stream]
        self._end_message = np.asarray([s.index for s in streams], dtype=np.int64)[end_stream]
        self._fire_char = ends - starts[end_stream]
        passed = np.searchsorted(stops, ends, "left")
        trail = np.where(passed > 0, stops[np.maximum(passed - 1, 0)] + 1, 0)
        self._before = np.searchsorted(self._unit_stop, ends, "left")
        self._complete = self._before - self._unit_first[end_stream]
        ends16 = wide16(ends)
        self._ends16 = ends16
        self._length16 = ends16 - wide16(starts[end_stream])
        self._trailing16 = ends16 - wide16(trail)
        self._longest = int(self._length16.max()) if len(ends) else 0

        # The trailing unit after each chunk end: the one string operation per chunk.
        trailing: list[int] = []
        previous = (-1, -1)
        tail = -1
        for begin, end in zip(trail.tolist(), ends.tolist(), strict=True):
            if (begin, end) != previous:
                unit = _unit(text[begin:end]) if begin < end else ""
                tail = ids.setdefault(unit, len(ids)) if unit else -1
                previous = (begin, end)
            trailing.append(tail)
        self._trailing = np.asarray(trailing, dtype=np.int64)
        self._has_trailing = self._trailing >= 0

        # Distinct complete units before each chunk end (first occurrences so far).
        fresh = np.zeros(len(unit_ids) + 1, dtype=np.int64)
        np.cumsum(self._unit_back >= FAR, out=fresh[1:])
        self._spread = fresh[self._before] - fresh[self._unit_first[end_stream]]
        self._last_same = self._previous_equal(unit_stream)

    def _previous_equal(self, unit_stream: IntArray) -> IntArray:
        """For each chunk end, the last complete unit before it equal to its trailing unit."""
        found = np.full(len(self._trailing), -1, dtype=np.int64)
        asked = np.flatnonzero(self._has_trailing)
        if len(asked) == 0 or len(self._unit_ids) == 0:
            return found
        # (message, unit id) pairs as dense numbers, then (pair, index) as one sortable key.
        names = len(self._ids) + 1
        pairs = np.concatenate(
            (
                unit_stream * names + self._unit_ids,
                self._end_stream[asked] * names + self._trailing[asked],
            )
        )
        _, dense = np.unique(pairs, return_inverse=True)
        dense = dense.reshape(-1)
        count = len(self._unit_ids)
        span = count + 1
        keys = dense[:count] * span + np.arange(count, dtype=np.int64)
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        query = dense[count:] * span + self._before[asked]
        slot = np.searchsorted(ordered, query, "left") - 1
        hit = slot >= 0
        hit[hit] = ordered[slot[hit]] // span == dense[count:][hit]
        found[asked[hit]] = ordered[slot[hit]] % span
        return found

    # -- per tail_limit ----------------------------------------------------------------

    def _cut(self, limit: int) -> _Cut | None:
        """The cut facts of the chunk ends longer than ``limit`` (None: no chunk end is)."""
        if self._longest <= limit:
            return None
        if limit in self._cuts:
            return self._cuts[limit]
        ends = np.flatnonzero(self._length16 > limit)
        cut = _Cut(ends)
        cut.never = self._trailing16[ends] > limit
        # The cut as an offset into the joined text (UTF-16 units, then code points).
        here16 = self._ends16[ends] - limit
        cut.first = np.searchsorted(self._unit_start16, here16, "left")
        piece = cut.first - 1
        own_first = self._unit_first[self._end_stream[ends]]
        straddle = ~cut.never & (piece >= own_first)
        straddle[straddle] = self._unit_stop16[piece[straddle]] > here16[straddle]
        offsets = self._offsets
        here = here16 if offsets is None else np.searchsorted(offsets, here16, "left")
        ids, text = self._ids, self._text
        cut_unit = np.full(len(ends), -1, dtype=np.int64)
        for row, begin, stop in zip(
            np.flatnonzero(straddle).tolist(),
            here[straddle].tolist(),
            self._unit_stop[piece[straddle]].tolist(),
            strict=True,
        ):
            unit = _unit(text[begin:stop])
            if unit:
                cut_unit[row] = ids.setdefault(unit, len(ids))
        cut.sliced = cut_unit >= 0
        # Distinct complete units in [first, before) of each chunk end: both bounds only
        # grow along a message, so one pass with a multiset of the units between them.
        unit_ids = self._unit_ids.tolist()
        rows = np.flatnonzero(~cut.never)
        stream_of = self._end_stream[ends[rows]].tolist()
        befores = self._before[ends[rows]].tolist()
        firsts = cut.first[rows].tolist()
        firsts_own = own_first[rows].tolist()
        cuts = cut_unit[rows].tolist()
        tails = self._trailing[ends[rows]].tolist()
        spread = np.zeros(len(rows), dtype=np.int64)
        inside = np.zeros(len(rows), dtype=bool)
        counts: dict[int, int] = {}
        current = low = high = -1
        for k in range(len(rows)):
            if stream_of[k] != current:
                current = stream_of[k]
                counts.clear()
                low = high = firsts_own[k]
            while high < befores[k]:
                counts[unit_ids[high]] = counts.get(unit_ids[high], 0) + 1
                high += 1
            while low < firsts[k]:
                left = counts[unit_ids[low]] - 1
                if left:
                    counts[unit_ids[low]] = left
                else:
                    del counts[unit_ids[low]]
                low += 1
            spread[k] = len(counts)
            if cuts[k] >= 0:
                inside[k] = cuts[k] in counts or cuts[k] == tails[k]
        cut.spread[rows] = spread
        cut.inside[rows] = inside
        self._cuts[limit] = cut
        return cut

    # -- per trial ---------------------------------------------------------------------

    @staticmethod
    def _options(options: dict[str, Any]) -> tuple[int, int, float, int]:
        # The adapter's own normalisation, so both see the same values.
        run = IncrementalTextRun(**options)
        return run._min, run._window, run._ratio, run._limit

    def _hits(self, options: dict[str, Any]) -> IntArray:
        least, window, ratio, limit = self._options(options)
        if len(self._before) == 0:
            return np.zeros(0, dtype=np.int64)
        trail = self._has_trailing
        fires = np.zeros(len(self._before), dtype=bool)
        candidates = np.flatnonzero(self._complete + trail >= least)
        spans = {}
        for size in (window, window - 1):
            spans[size] = sliding_distinct(
                self._unit_back, self._unit_ahead, self._unit_pos, self._unit_begin, size
            )

        def full_distinct(ends: IntArray) -> Any:
            # The last `window` units: the trailing one (if any) and the complete ones before it.
            last = self._before[ends] - 1
            with_tail = trail[ends]
            alone = spans[window][last]
            shared = spans[window - 1][last] + (
                self._last_same[ends] < self._before[ends] - window + 1
            )
            return np.where(with_tail, shared, alone)

        if len(candidates):
            count = self._complete[candidates] + trail[candidates]
            full = count >= window
            distinct = self._spread[candidates] + (
                trail[candidates] & (self._last_same[candidates] < 0)
            )
            length = np.where(full, window, count)
            if full.any():
                distinct[full] = full_distinct(candidates[full])
            fires[candidates] = distinct <= length * ratio
        cut = self._cut(limit)
        if cut is not None and len(cut.ends):
            ends = cut.ends
            tail = trail[ends]
            kept = self._before[ends] - cut.first
            count = cut.sliced + kept + tail
            full = kept + tail >= window
            distinct = (
                cut.spread
                + (tail & (self._last_same[ends] < cut.first))
                + (cut.sliced & ~cut.inside)
            )
            if full.any():
                distinct[full] = full_distinct(ends[full])
            length = np.where(full, window, count)
            fires[ends] = ~cut.never & (count >= least) & (distinct <= length * ratio)
        return np.flatnonzero(fires)

    def _first_fires(self, options: dict[str, Any]) -> tuple[IntArray, Any]:
        first = first_per_group(self._hits(options), self._end_case)
        return self._end_case[first], first

    def _describe(self, options: dict[str, Any], stops: Any) -> list[tuple[Position, Any]]:
        return [
            ((message, char), _REASON)
            for message, char in zip(
                self._end_message[stops].tolist(), self._fire_char[stops].tolist(), strict=True
            )
        ]
