"""What every fast evaluator does once per study: read the cases, cut the chunks, link repeats.

The replay (:mod:`harness.replay`) feeds a streaming detector the chunks of
each message it reads, with a fresh instance per message, and stops at the
first fire of a case. Everything here depends on the corpus and the chunking
only, never on a detector's parameters, so a sweep pays for it once:

* :func:`collect_streams` lists, per case, the messages the detector reads and
  their chunks, cut exactly as the replay cuts them (the same
  :func:`harness.chunking.message_chunks` call);
* :func:`occurrence_links` and :func:`sliding_distinct` are the two numpy
  building blocks of the evaluators: "where did this key last (next) occur in
  the same message" and "how many distinct keys are in the window ending here".

A case the preparation cannot read (a message that is not a mapping, say)
is not guessed at: it is marked for the real replay.

Examples
--------
>>> import numpy as np
>>> keys = np.array([5, 6, 5, 5, 6]); segment = np.array([0, 0, 0, 1, 1])
>>> back, ahead = occurrence_links(keys, segment)
>>> back.tolist(), ahead.tolist()
([-1, -1, 0, -1, -1], [2, -1, -1, -1, -1])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..chunking import ChunkingPolicy, message_chunks

__all__ = [
    "FAR",
    "Stream",
    "Study",
    "case_parts",
    "collect_streams",
    "distances",
    "first_per_group",
    "linked_ids",
    "occurrence_links",
    "sliding_distinct",
    "sliding_once",
]

IntArray = npt.NDArray[np.int64]

#: The distance to an occurrence that does not exist: larger than any window.
FAR = 1 << 30


def case_parts(case: Any) -> tuple[str, Sequence[Any]]:
    """``(id, messages)`` of a :class:`harness.corpus.Case` or of a dict with those keys.

    Raises
    ------
    TypeError
        ``case`` is neither (the message says what was given).
    """
    if isinstance(case, Mapping):
        if "id" not in case or "messages" not in case:
            raise TypeError(f"a case dict needs 'id' and 'messages'; got keys {sorted(case)}")
        return case["id"], case["messages"]
    if hasattr(case, "id") and hasattr(case, "messages"):
        return case.id, case.messages
    raise TypeError(f"a case must have .id and .messages (or be such a dict); got {type(case)}")


@dataclass(frozen=True, slots=True)
class Stream:
    """One message a streaming detector reads: ``case``/``index`` locate it, ``chunks`` feed it."""

    case: int
    index: int
    chunks: list[str]


@dataclass
class Study:
    """The cases of a study as the replay sees them.

    Attributes
    ----------
    ids, messages : list
        Each case's id and messages, in the order given.
    streams : list of Stream
        The messages the detector reads, case by case and in message order.
    fallback : list of int
        Cases left to the real replay (their preparation raised).
    """

    ids: list[str]
    messages: list[Sequence[Any]]
    streams: list[Stream] = field(default_factory=list)
    fallback: list[int] = field(default_factory=list)


def collect_streams(
    cases: Sequence[Any],
    reads: Callable[[Mapping[str, Any]], bool],
    policy: ChunkingPolicy,
    seed: int,
) -> Study:
    """Every message ``reads`` accepts, with the chunks the replay would push.

    A case whose messages cannot be read this way (``reads`` or the chunking
    raises) goes to ``fallback`` whole: the replay would record an error, and
    only the replay itself says which.
    """
    study = Study(ids=[], messages=[])
    for number, case in enumerate(cases):
        case_id, messages = case_parts(case)
        study.ids.append(case_id)
        study.messages.append(messages)
        found: list[Stream] = []
        try:
            for index, message in enumerate(messages):
                if reads(message):
                    chunks = message_chunks(
                        message, policy, case_id=case_id, index=index, seed=seed
                    )
                    found.append(Stream(number, index, chunks))
        except Exception:
            study.fallback.append(number)
            continue
        study.streams.extend(found)
    return study


def linked_ids(keys: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """Dense ids of ``keys`` and, for each position, the previous and next with the same key.

    ``-1`` where there is none. Positions are compared in array order.
    """
    size = len(keys)
    dense = np.zeros(size, dtype=np.int64)
    back = np.full(size, -1, dtype=np.int64)
    ahead = np.full(size, -1, dtype=np.int64)
    if size == 0:
        return dense, back, ahead
    # A stable sort keeps equal keys adjacent and in array order: a neighbour in
    # this order is the previous (next) occurrence.
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    same = ordered[1:] == ordered[:-1]
    dense[order] = np.concatenate(([0], np.cumsum(~same)))
    later, earlier = order[1:][same], order[:-1][same]
    back[later] = earlier
    ahead[earlier] = later
    return dense, back, ahead


def occurrence_links(keys: IntArray, segment: IntArray) -> tuple[IntArray, IntArray]:
    """For each position, the previous and next position with the same key in the same segment.

    ``-1`` where there is none. Positions are compared in array order, so the
    arrays must list each segment's positions in stream order.
    """
    if len(keys) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    span = int(keys.max()) + 1
    _, back, ahead = linked_ids(segment.astype(np.int64) * span + keys)
    return back, ahead


def distances(links: IntArray, *, forward: bool) -> IntArray:
    """``|position - link|`` where a link exists, :data:`FAR` where it does not."""
    here = np.arange(len(links), dtype=np.int64)
    gap = links - here if forward else here - links
    return np.where(links >= 0, gap, FAR)


def sliding_distinct(
    back_gap: IntArray, ahead_gap: IntArray, position: IntArray, start: IntArray, size: int
) -> IntArray:
    """Distinct keys among the last ``size`` positions of each segment prefix.

    For position ``i`` of a segment, the window is the segment's positions
    ``max(segment start, i - size + 1) .. i``. Sliding the window one step adds
    ``i`` (a new key when its previous occurrence is more than ``size`` back)
    and drops ``i - size`` (a key gone when its next occurrence is more than
    ``size`` ahead); the counts are the running sum of those steps, restarted
    at each segment.

    Parameters
    ----------
    back_gap, ahead_gap : ndarray
        :func:`distances` to the previous and next occurrence in the segment.
    position : ndarray
        Index of each position within its segment.
    start : ndarray
        Array index where each position's segment starts.
    size : int
        Window length, at least 1.
    """
    step = (back_gap > size).astype(np.int32)
    if len(step) > size:
        dropped = (ahead_gap[:-size] > size) & (position[size:] >= size)
        step[size:] -= dropped
    running = np.empty(len(step) + 1, dtype=np.int64)
    running[0] = 0
    np.cumsum(step, out=running[1:])
    result: IntArray = running[1:] - running[start]
    return result


def sliding_once(
    back: tuple[IntArray, IntArray],
    ahead: tuple[IntArray, IntArray],
    position: IntArray,
    start: IntArray,
    size: int,
) -> IntArray:
    """Keys occurring exactly once among the last ``size`` positions of each segment prefix.

    The windows are those of :func:`sliding_distinct`. ``back`` and ``ahead``
    hold the :func:`distances` to the first and second previous (next)
    occurrence. Adding position ``i`` makes its key a hapax when it was absent
    from the window and ends one when it was there once; dropping ``i - size``
    ends a hapax when that was its only occurrence and makes one when there
    were two.
    """
    near, second = back
    absent = near > size
    step = absent.astype(np.int32)
    step -= (second > size) & ~absent
    if len(step) > size:
        alone = ahead[0][:-size] > size
        paired = (ahead[1][:-size] > size) & ~alone
        live = position[size:] >= size
        step[size:] += (paired & live).astype(np.int32)
        step[size:] -= alone & live
    running = np.empty(len(step) + 1, dtype=np.int64)
    running[0] = 0
    np.cumsum(step, out=running[1:])
    result: IntArray = running[1:] - running[start]
    return result


def first_per_group(hits: IntArray, group: IntArray) -> IntArray:
    """The first of the sorted positions ``hits`` in each group (``group[hits]`` non-decreasing)."""
    if len(hits) == 0:
        return hits
    owners = group[hits]
    keep = np.empty(len(hits), dtype=bool)
    keep[0] = True
    keep[1:] = owners[1:] != owners[:-1]
    chosen: IntArray = hits[keep]
    return chosen
