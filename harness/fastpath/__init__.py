"""Fast evaluation of streaming detectors for parameter sweeps.

A sweep evaluates thousands of parameter sets on the same cases. The replay
(:class:`harness.replay.Replayer`) pushes every chunk through a fresh detector
for every trial; the evaluators here prepare what does not depend on the
parameters once per study (chunk cuts, words, word and n-gram ids, sentence
units and where each chunk leaves them) and answer each trial with a few numpy
array operations over the whole corpus. Their outcomes are identical to the
replay's (``tests/test_fastpath.py`` checks it on the default corpus and on
random ones); ``docs/fastpath.md`` explains how and gives the speed-up.

Examples
--------
>>> from harness.fastpath import get_fast_evaluator
>>> from harness.replay import Replayer
>>> cases = [{"id": "c", "messages": [{"type": "bot", "text": "again and again " * 20}]}]
>>> fast = get_fast_evaluator("repetition_guard", cases, chunking="word")
>>> params = {"ngram": 2, "max_repeats": 3}
>>> fast.outcomes(params)[0] == Replayer(
...     ["repetition_guard"], {"repetition_guard": params}, chunking="word"
... ).replay("c", cases[0]["messages"])[0]
True
>>> fast.fired(params).tolist()
[True]
>>> get_fast_evaluator("alm", cases) is None
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..detectors import get_detector
from ._base import FastEvaluator
from ._guard import GuardEvaluator
from ._textrun import TextRunEvaluator

__all__ = ["FAST_PATHS", "FastEvaluator", "get_fast_evaluator"]

#: The detectors with a fast path, and its evaluator class.
FAST_PATHS: dict[str, type[FastEvaluator]] = {
    "repetition_guard": GuardEvaluator,
    "text_run": TextRunEvaluator,
}


def get_fast_evaluator(
    detector_name: str,
    cases: Sequence[Any],
    *,
    chunking: str = "provider",
    seed: int = 0,
) -> FastEvaluator | None:
    """A prepared evaluator of ``detector_name`` on ``cases``, or None without a fast path.

    Parameters
    ----------
    detector_name : str
        A registered detector (an unknown name raises ``UnknownDetectorError``).
    cases : sequence
        :class:`harness.corpus.Case` objects, or dicts with ``id`` and ``messages``.
    chunking : str
        Policy for messages without recorded ``chunks`` (as ``Replayer``).
    seed : int
        Seed of the ``provider`` policy.

    Returns
    -------
    FastEvaluator or None
        ``outcomes(params)`` gives one :class:`~harness.replay.Outcome` per case,
        identical to ``Replayer([name], {name: params}, chunking=chunking,
        seed=seed).replay(case_id, messages)[0]``; ``fired(params)`` the fired
        flags as a numpy bool array.

    Raises
    ------
    UnknownDetectorError, ChunkingError, TypeError
        An unknown detector, a bad chunking policy, a case without id and messages.
    """
    detector = get_detector(detector_name)
    evaluator = FAST_PATHS.get(detector.name)
    if evaluator is None:
        return None
    return evaluator(detector, cases, chunking=chunking, seed=seed)
