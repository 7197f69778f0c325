"""The repetition guard's fast path: every trip decision of a study as numpy array operations.

``RepetitionGuard`` (``docs/spec/thread-algorithms.md`` §8) decides at each
completed word ``j`` of a message, with ``n`` = ngram, ``W`` = window and the
message's words numbered from 0:

* the window holds words ``s .. j`` with ``s = max(0, j - W)`` (the check runs
  before the oldest word is evicted, so up to ``W + 1`` words);
* the count of the gram ending at ``j`` is the number of grams ending in
  ``s + n - 1 .. j`` equal to it (a gram is counted once all its words are in
  the window), so "count >= max_repeats" is "the (max_repeats - 1)-th previous
  occurrence of this gram in the message is at most ``W - n + 1`` words back";
* the ``min_chars`` gate compares the UTF-16 units pushed up to and including
  the push that completed word ``j`` (a word completes when the whitespace after
  it arrives);
* the diversity ``distinct / size`` is a sliding distinct count;
* the structural-enumeration exemption needs the newlines before the window's
  words, their hapax count and their distinct line leads.

What depends only on the corpus is prepared once: the completed words of every
message read (normalised, raw, newlines before, the push that completed each
and the text pushed by then), word ids and their previous/next occurrence. The
gram ids and their occurrence chains are prepared once per ``n`` and kept.
Each trial is then a handful of whole-corpus array operations (the diversity,
hapax and line-lead counts are running sums restarted at each message); the
count and ratios of a reason are computed on small matrices of window word
indices, for the fired positions only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from loopguard import RepetitionGuard
from loopguard._guard import (
    MIN_DISTINCT_LINE_LEADS,
    MIN_STRUCTURE_NEWLINES,
    STRUCTURE_AGGRESSIVE_GATE,
    STRUCTURE_HAPAX_FLOOR,
    normalize_word,
)
from loopguard._js import JS_WHITESPACE

from ..detectors import Detector
from ._base import FastEvaluator, Position
from ._prepare import (
    FAR,
    IntArray,
    distances,
    first_per_group,
    linked_ids,
    occurrence_links,
    sliding_distinct,
    sliding_once,
)

__all__ = ["GuardEvaluator"]

_WS = "[" + re.escape(JS_WHITESPACE) + "]"
_SPLIT_WS = re.compile("(" + _WS + "+)").split

# Gaps are kept as uint16: a window never reaches that far back in the registry's bounds.
_GAP_CAP = np.iinfo(np.uint16).max
# Window matrices are built in batches of at most this many cells, to bound memory.
_MATRIX_CELLS = 1 << 22


class GuardEvaluator(FastEvaluator):
    """Fast path of ``repetition_guard`` (see the module docstring)."""

    def __init__(
        self, detector: Detector, cases: Sequence[Any], *, chunking: str, seed: int
    ) -> None:
        super().__init__(detector, cases, chunking=chunking, seed=seed)
        self._prepare_words()
        # ngram -> gram ids (-1 before the first full gram) and previous-occurrence links.
        self._grams: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        # (ngram, k) -> gap to the k-th previous occurrence of the gram, capped.
        self._gaps: dict[tuple[int, int], np.ndarray] = {}
        self._chain: dict[int, tuple[int, np.ndarray]] = {}

    def _prepare_words(self) -> None:
        streams = self.study.streams
        texts = ["".join(stream.chunks) for stream in streams]
        # All messages in one string, each followed by a space. Tokens are then cut as
        # the guard cuts them (a token is complete once whitespace follows), except that
        # each message's unfinished last token now ends at that space: it is dropped.
        # Positions below are indices into the joined string.
        joined = " ".join(texts) + " "
        starts = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum([len(text) + 1 for text in texts], out=starts[1:])
        parts = _SPLIT_WS(joined)
        tokens = parts[0::2]
        lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
        token_end = np.cumsum(lengths)[0::2]
        token_start = token_end - lengths[0::2]
        unfinished = np.isin(token_end, starts[1:] - 1)

        # Normalise each distinct raw token once, with the guard's own function.
        codes: dict[str, int] = {}
        token_code = np.asarray([codes.setdefault(t, len(codes)) for t in tokens], np.int64)
        ids: dict[str, int] = {}
        code_word = np.asarray(
            [ids.setdefault(w, len(ids)) if (w := normalize_word(r)) else -1 for r in codes],
            dtype=np.int64,
        )
        token_word = code_word[token_code]
        kept = np.flatnonzero((token_word >= 0) & ~unfinished)
        self._words = list(ids)
        self._raws = list(map(tokens.__getitem__, kept.tolist()))
        self._wid = token_word[kept]
        size = len(kept)
        start, end = token_start[kept], token_end[kept]
        stream_of = np.searchsorted(starts, start, "right") - 1

        # Newlines before a word: those since the previous kept word of its message
        # (tokens hold no whitespace, so they are all in the separators).
        points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        newline_sum = np.zeros(len(joined) + 1, dtype=np.int64)
        np.cumsum(points == 10, out=newline_sum[1:])
        previous = np.concatenate(([0], end[:-1]))
        since = np.maximum(previous, starts[stream_of])
        self._newlines = newline_sum[start] - newline_sum[since]

        # The push that completed each word: the chunk holding the whitespace after it.
        chunk_sizes = [len(chunk) for stream in streams for chunk in stream.chunks]
        chunk_stream = np.repeat(
            np.arange(len(streams), dtype=np.int64),
            [len(stream.chunks) for stream in streams],
        )
        chunk_end = np.cumsum(np.asarray(chunk_sizes, dtype=np.int64)) + chunk_stream
        chunk = np.searchsorted(chunk_end, end, "right")
        if joined.isascii():
            units = chunk_end
            first_units = starts
        else:
            wide = np.zeros(len(joined) + 1, dtype=np.int64)
            np.cumsum(1 + (points > 0xFFFF), out=wide[1:])
            units, first_units = wide[chunk_end], wide[starts]
        self._chars16 = (units - first_units[chunk_stream])[chunk]
        self._fire_char = (chunk_end - starts[chunk_stream])[chunk]

        counts = np.bincount(stream_of, minlength=len(streams))
        firsts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        self._stream_of = stream_of
        self._start = firsts[stream_of]
        self._pos = np.arange(size, dtype=np.int64) - self._start
        self._case_of = np.asarray([s.case for s in streams], dtype=np.int64)[stream_of]
        self._message_of = np.asarray([s.index for s in streams], dtype=np.int64)[stream_of]
        # Word ids local to their message: grams are built on them, so gram ids are local too.
        span = int(self._wid.max()) + 1 if size else 1
        self._span = span
        self._local, back, ahead = linked_ids(stream_of * span + self._wid)
        self._back_gap = distances(back, forward=False)
        self._ahead_gap = distances(ahead, forward=True)
        self._newline_sum = np.concatenate(([0], np.cumsum(self._newlines)))
        self._links = (back, ahead)
        self._exemption: tuple[IntArray, ...] | None = None

    def _exemption_arrays(self) -> tuple[IntArray, ...]:
        """Gaps for the hapax and line-lead counts (prepared on first need: the exemption
        only applies when ``max_unique_ratio < 0.5``)."""
        if self._exemption is not None:
            return self._exemption
        back, ahead = self._links
        back2 = np.where(back >= 0, back[np.maximum(back, 0)], -1)
        ahead2 = np.where(ahead >= 0, ahead[np.maximum(ahead, 0)], -1)
        # Line leads: the same links among the words that follow a newline only; the
        # other words get gap 0, so they never enter or leave the distinct count.
        marked = np.flatnonzero(self._newlines > 0)
        lead_back = np.zeros(len(self._wid), dtype=np.int64)
        lead_ahead = np.zeros(len(self._wid), dtype=np.int64)
        if len(marked):
            before, after = occurrence_links(self._wid[marked], self._stream_of[marked])
            lead_back[marked] = np.where(before >= 0, marked - marked[np.maximum(before, 0)], FAR)
            lead_ahead[marked] = np.where(after >= 0, marked[np.maximum(after, 0)] - marked, FAR)
        self._exemption = (
            distances(back2, forward=False),
            distances(ahead2, forward=True),
            lead_back,
            lead_ahead,
        )
        return self._exemption

    # -- per ngram ---------------------------------------------------------------------

    def _gram_ids(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Ids of the grams ending at each word (-1: none yet), local to the message, and the
        previous occurrence of each (-1: none), as int32."""
        known = self._grams.get(n)
        if known is not None:
            return known
        lower = self._local if n == 2 else self._gram_ids(n - 1)[0]
        size = len(self._wid)
        valid = np.flatnonzero(self._pos >= n - 1)
        key = lower[valid - 1].astype(np.int64) * self._span + self._wid[valid]
        # As linked_ids, for int32 results: equal grams are adjacent in a stable sort, in
        # stream order, so a neighbour there is the previous occurrence.
        order = np.argsort(key, kind="stable")
        ordered = key[order]
        same = ordered[1:] == ordered[:-1]
        ids = np.full(size, -1, dtype=np.int32)
        ids[valid[order]] = np.concatenate(([0], np.cumsum(~same, dtype=np.int32)))
        back = np.full(size, -1, dtype=np.int32)
        back[valid[order[1:][same]]] = valid[order[:-1][same]]
        self._grams[n] = (ids, back)
        return ids, back

    def _gap(self, n: int, k: int) -> np.ndarray:
        """Words back to the ``k``-th previous occurrence of each word's gram (capped, uint16)."""
        known = self._gaps.get((n, k))
        if known is not None:
            return known
        _, back = self._gram_ids(n)
        size = len(back)
        here = np.arange(size, dtype=np.int32)
        # "None" is index `size`, which links to itself: a chain step is one gather.
        looped = np.append(np.where(back >= 0, back, size), size).astype(np.int32)
        depth, links = self._chain.get(n, (0, here))
        while depth < k:
            # Each step is cached: a sweep asks for every max_repeats of every ngram.
            links = looped[links]
            depth += 1
            # Without an occurrence the difference is negative: huge once unsigned.
            gap = (here - links).view(np.uint32)
            self._gaps[(n, depth)] = np.minimum(gap, _GAP_CAP).astype(np.uint16)
        self._chain[n] = (depth, links)
        return self._gaps[(n, k)]

    # -- per trial ---------------------------------------------------------------------

    @staticmethod
    def _options(options: dict[str, Any]) -> tuple[int, int, int, float, float]:
        # The guard's own normalisation (floors, minimums, clamp), so both see the same values.
        normal = RepetitionGuard(**options).options
        return (
            int(normal["ngram"]),
            int(normal["window"]),
            int(normal["max_repeats"]),
            float(normal["max_unique_ratio"]),
            normal["min_chars"],
        )

    def _trips(self, options: dict[str, Any]) -> tuple[IntArray, IntArray]:
        """Every word at which a fresh guard would trip (ignoring earlier trips), and its count."""
        n, window, repeats, ratio, min_chars = self._options(options)
        empty = np.zeros(0, dtype=np.int64)
        if len(self._wid) == 0:
            return empty, empty
        reach = window - n + 1
        if reach < _GAP_CAP:
            ok = self._gap(n, repeats - 1) <= reach
        else:  # outside the registry's bounds: walk the chain without the cache
            ok = self._far_gap(n, repeats - 1) <= reach
        if min_chars > 0:
            ok &= self._chars16 >= min_chars
        hits = np.flatnonzero(ok)
        if len(hits) == 0:
            return empty, empty
        distinct = sliding_distinct(
            self._back_gap, self._ahead_gap, self._pos, self._start, window + 1
        )[hits]
        size = np.minimum(self._pos[hits], window) + 1
        diverse = distinct / size <= ratio
        hits, distinct = hits[diverse], distinct[diverse]
        if ratio < STRUCTURE_AGGRESSIVE_GATE and len(hits):
            spared = self._enumerated(hits, window)
            hits, distinct = hits[~spared], distinct[~spared]
        return hits, distinct

    def _far_gap(self, n: int, k: int) -> IntArray:
        _, back = self._gram_ids(n)
        links = back
        for _ in range(k - 1):
            links = np.where(links >= 0, back[np.maximum(links, 0)], -1)
        here = np.arange(len(links), dtype=np.int64)
        gap: IntArray = np.where(links >= 0, here - links, FAR)
        return gap

    def _first_fires(self, options: dict[str, Any]) -> tuple[IntArray, Any]:
        hits, distinct = self._trips(options)
        keep = first_per_group(np.arange(len(hits), dtype=np.int64), self._case_of[hits])
        return self._case_of[hits[keep]], (hits[keep], distinct[keep])

    def _describe(self, options: dict[str, Any], stops: Any) -> list[tuple[Position, Any]]:
        ends, distinct = stops
        if len(ends) == 0:
            return []
        n, window, _, _, _ = self._options(options)
        ids, _ = self._gram_ids(n)
        size = np.minimum(self._pos[ends], window) + 1
        wanted = ids[ends]

        def same_gram(cells: IntArray, rows: IntArray) -> Any:
            return ids[cells] == wanted[rows]

        # Only grams wholly inside the window are counted: those ending at its last
        # size - n + 1 words.
        repeats = self._window_sum(ends, size - n + 1, window, same_gram)
        hapax = self._hapax(ends, size, window)
        words, raws, wid = self._words, self._raws, self._wid
        out: list[tuple[Position, Any]] = []
        for end, count, units, once, total, message, char in zip(
            ends.tolist(),
            repeats.tolist(),
            distinct.tolist(),
            hapax.tolist(),
            size.tolist(),
            self._message_of[ends].tolist(),
            self._fire_char[ends].tolist(),
            strict=True,
        ):
            phrase = " ".join(words[w] for w in wid[end - n + 1 : end + 1].tolist())
            reason = {
                "phrase": phrase,
                "count": count,
                "text": " ".join(raws[end - n + 1 : end + 1]) or phrase,
                "uniqueRatio": units / total,
                "hapaxRatio": once / total,
            }
            out.append(((message, char), reason))
        return out

    # -- window matrices -----------------------------------------------------------------

    def _window_sum(
        self,
        ends: IntArray,
        sizes: IntArray,
        window: int,
        test: Any,
    ) -> IntArray:
        """For each end ``e``, how many of the positions ``e - size + 1 .. e`` pass ``test``.

        ``test(cells, rows)`` gets a matrix of positions (invalid cells repeat the end)
        and the row index of each cell; it returns a boolean matrix.
        """
        total = np.zeros(len(ends), dtype=np.int64)
        width = window + 1
        batch = max(1, _MATRIX_CELLS // width)
        offsets = np.arange(width, dtype=np.int64)
        for lo in range(0, len(ends), batch):
            end = ends[lo : lo + batch]
            size = sizes[lo : lo + batch]
            rows = np.arange(lo, lo + len(end), dtype=np.int64)[:, None]
            cells = end[:, None] - offsets[None, :]
            inside = offsets[None, :] < size[:, None]
            cells = np.where(inside, cells, end[:, None])
            passed = test(cells, np.broadcast_to(rows, cells.shape)) & inside
            total[lo : lo + batch] = passed.sum(axis=1)
        return total

    def _hapax(self, ends: IntArray, sizes: IntArray, window: int) -> IntArray:
        """Words occurring once in each window ``e - size + 1 .. e``."""
        back, ahead = self._back_gap, self._ahead_gap
        starts = ends - sizes + 1

        def once(cells: IntArray, rows: IntArray) -> Any:
            return (cells - back[cells] < starts[rows]) & (cells + ahead[cells] > ends[rows])

        return self._window_sum(ends, sizes, window, once)

    def _enumerated(self, hits: IntArray, window: int) -> np.ndarray:
        """Which trip candidates the structural-enumeration exemption spares."""
        size = np.minimum(self._pos[hits], window) + 1
        starts = hits - size + 1
        lines = self._newline_sum[hits + 1] - self._newline_sum[starts]
        spared = np.zeros(len(hits), dtype=bool)
        need = np.flatnonzero(lines >= MIN_STRUCTURE_NEWLINES)
        if len(need) == 0:
            return spared
        back2, ahead2, lead_back, lead_ahead = self._exemption_arrays()
        ends, sizes = hits[need], size[need]
        once = sliding_once(
            (self._back_gap, back2),
            (self._ahead_gap, ahead2),
            self._pos,
            self._start,
            window + 1,
        )[ends]
        novel = once / sizes >= STRUCTURE_HAPAX_FLOOR
        spared[need[novel]] = True
        rest = need[~novel]
        if len(rest):
            leads = sliding_distinct(lead_back, lead_ahead, self._pos, self._start, window + 1)
            spared[rest[leads[hits[rest]] >= MIN_DISTINCT_LINE_LEADS]] = True
        return spared
