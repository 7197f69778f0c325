"""The evaluator interface shared by the fast paths, and the replay of the cases they leave."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..chunking import parse_policy
from ..detectors import Detector
from ..replay import Outcome, Replayer
from ._prepare import IntArray, Study, collect_streams

__all__ = ["FastEvaluator"]

Position = tuple[int, int]


class FastEvaluator:
    """Outcomes of one streaming detector on fixed cases, for any parameters, without replaying.

    Subclasses prepare what does not depend on the parameters once, in their
    constructor, and implement :meth:`_first_fires` and :meth:`_describe`.
    Every result is identical to ``Replayer([name], {name: params},
    chunking=chunking, seed=seed).replay(case_id, messages)[0]``.

    Parameters
    ----------
    detector : Detector
        The registered detector.
    cases : sequence
        :class:`harness.corpus.Case` objects, or dicts with ``id`` and ``messages``.
    chunking : str
        Chunking policy of messages without recorded ``chunks``.
    seed : int
        Seed of the ``provider`` policy.
    """

    def __init__(
        self, detector: Detector, cases: Sequence[Any], *, chunking: str, seed: int
    ) -> None:
        self.detector = detector
        self.name = detector.name
        self.policy = parse_policy(chunking)
        self.seed = int(seed)
        self.study: Study = collect_streams(cases, detector.reads, self.policy, self.seed)
        self._quiet = Outcome(self.name, None)

    @property
    def case_ids(self) -> list[str]:
        """The case ids, in the order of :meth:`outcomes`."""
        return list(self.study.ids)

    def resolve(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        """The complete, validated parameters (defaults for the missing ones), as the replay's."""
        return self.detector.resolve(params)

    def outcomes(self, params: Mapping[str, Any] | None) -> list[Outcome]:
        """One :class:`~harness.replay.Outcome` per case, in order, as the replay gives them.

        Raises
        ------
        ParameterError
            An unknown parameter or a value out of bounds (as the replay).
        """
        options = self.resolve(params)
        cases, stops = self._first_fires(options)
        out = [self._quiet] * len(self.study.ids)
        for case, (position, reason) in zip(
            cases.tolist(), self._describe(options, stops), strict=True
        ):
            out[case] = Outcome(self.name, position, reason)
        for case, outcome in self._replayed(options):
            out[case] = outcome
        return out

    def fired(self, params: Mapping[str, Any] | None) -> npt.NDArray[np.bool_]:
        """Whether the detector fires on each case (False where the replay records an error)."""
        options = self.resolve(params)
        cases, _ = self._first_fires(options)
        result = np.zeros(len(self.study.ids), dtype=bool)
        result[cases] = True
        for case, outcome in self._replayed(options):
            result[case] = outcome.fired
        return result

    def _replayed(self, options: dict[str, Any]) -> list[tuple[int, Outcome]]:
        """The cases the preparation left out, through the real replay."""
        if not self.study.fallback:
            return []
        replayer = Replayer(
            [self.detector], {self.name: options}, chunking=self.policy, seed=self.seed
        )
        ids, messages = self.study.ids, self.study.messages
        return [
            (case, replayer.replay(ids[case], messages[case])[0]) for case in self.study.fallback
        ]

    def _first_fires(self, options: dict[str, Any]) -> tuple[IntArray, Any]:
        """``(cases, stops)``: the cases that fire, in order, and what locates each fire.

        ``stops`` is the subclass's own description of the fires, handed back to
        :meth:`_describe`.
        """
        raise NotImplementedError

    def _describe(self, options: dict[str, Any], stops: Any) -> list[tuple[Position, Any]]:
        """``(fired_at, reason)`` of each fire of :meth:`_first_fires`, in the same order."""
        raise NotImplementedError
