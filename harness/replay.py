"""Online replay of detectors over a case, and the verdict of each detector on it.

The rules are those of ``docs/corpus-format.md``, "How a detector is scored on a
case":

* a **thread** detector gets one adapter per case and sees every message
  appended in order; it fires at the first prefix it judges stuck, and its
  ``fired_at`` is ``{"message": index of the prefix's last message, "char": null}``;
* a **stream** detector gets a fresh adapter for every message it reads
  (the model's own non-empty text; ``overthinking`` only reasoning), fed the
  message's recorded ``chunks`` or its text cut by the run's chunking policy;
  ``fired_at`` is ``{"message": i, "char": c}`` with ``c`` the character offset
  in that message's text at the end of the chunk that fired;
* the verdict is whether it fired anywhere; against ``label.looping`` it is a
  TP, FP, TN or FN; a fire before ``label.onset`` on a looping case is a TP
  reported as *early*.

Token figures use the seed's estimate, ``ceil(UTF-16 length / 4)``, over the
model's text (messages a streaming detector would read: not user, system or
activity), each message's part estimated on its own. See ``docs/evaluation.md``.

Examples
--------
>>> replayer = Replayer(["repeated_suffix", "repetition_guard"], chunking="word")
>>> a, b = {"type": "user", "text": "again?"}, {"type": "bot", "text": "same"}
>>> [(o.detector, o.fired_at) for o in replayer.replay("c", [a, b, a, b])]
[('repeated_suffix', (3, None)), ('repetition_guard', None)]
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from loopguard._js import utf16_len

from .chunking import ChunkingPolicy, message_chunks, parse_policy
from .detectors import REGISTRY, Detector, get_detector, is_model_text, resolve_params

__all__ = [
    "Outcome",
    "Replayer",
    "TokenIndex",
    "estimate_tokens",
    "verdict_record",
]

Position = tuple[int, int | None]

# Tracebacks in verdict lines are cut to this many characters: enough to find
# the failing line, short enough to keep verdicts.jsonl readable.
_ERROR_CHARS = 2000


def estimate_tokens(text: str) -> int:
    """The seed's token estimate: ``ceil(utf16_len(text) / 4)``.

    Examples
    --------
    >>> estimate_tokens("abcde"), estimate_tokens(""), estimate_tokens("😀")
    (2, 0, 1)
    """
    return -(-utf16_len(text) // 4)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one detector did on one case.

    Attributes
    ----------
    detector : str
        Its registry name.
    fired_at : tuple or None
        ``(message, char)`` of the first fire (``char`` None for thread detectors).
    reason : object
        The detector's reason at the fire (JSON-able), or None.
    extra : dict or None
        More facts from the adapter (the ALM ladder).
    error : str or None
        The exception, when the detector raised on this case (the verdict is void).
    """

    detector: str
    fired_at: Position | None
    reason: Any = None
    extra: Mapping[str, Any] | None = None
    error: str | None = None

    @property
    def fired(self) -> bool:
        """Whether the detector fired (False when it raised)."""
        return self.fired_at is not None and self.error is None


def _error_text(exc: BaseException) -> str:
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    tb = traceback.extract_tb(exc.__traceback__)
    if tb:
        last = tb[-1]
        text += f" (at {last.filename}:{last.lineno} in {last.name})"
    return text[:_ERROR_CHARS]


class _Slot:
    """Mutable per-case state of one detector."""

    __slots__ = ("adapter", "error", "extra", "fired_at", "name", "reason")

    def __init__(self, name: str) -> None:
        self.name = name
        self.adapter: Any = None
        self.fired_at: Position | None = None
        self.reason: Any = None
        self.extra: dict[str, Any] | None = None
        self.error: str | None = None

    def outcome(self) -> Outcome:
        return Outcome(self.name, self.fired_at, self.reason, self.extra, self.error)


class Replayer:
    """Replays a fixed set of detectors, with fixed parameters, over cases.

    Parameters
    ----------
    detectors : sequence of str or Detector
        Registry names (or :class:`~harness.detectors.Detector` objects).
    params : mapping, optional
        ``{detector: {param: value}}`` overrides of the ``defaults.json`` values.
    presets : mapping, optional
        ``{detector: preset name}``.
    chunking : str or ChunkingPolicy
        Policy for messages without ``chunks`` (default ``provider``).
    seed : int
        Seed of the ``provider`` policy.

    Raises
    ------
    UnknownDetectorError, ParameterError, ChunkingError
        On a bad name, parameter or policy (before any case is replayed).
    """

    def __init__(
        self,
        detectors: Sequence[str | Detector],
        params: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        presets: Mapping[str, str] | None = None,
        chunking: str | ChunkingPolicy = "provider",
        seed: int = 0,
    ) -> None:
        chosen = [d if isinstance(d, Detector) else get_detector(d) for d in detectors]
        names = [d.name for d in chosen]
        if len(set(names)) != len(names):
            raise ValueError(f"a detector is listed twice: {', '.join(names)}")
        self.detectors: tuple[Detector, ...] = tuple(chosen)
        registered = [d for d in chosen if REGISTRY.get(d.name) is d]
        resolved = resolve_params([d.name for d in registered], params, presets)
        for d in chosen:
            if d.name not in resolved:
                resolved[d.name] = d.resolve((params or {}).get(d.name))
        self.params: dict[str, dict[str, Any]] = {d.name: resolved[d.name] for d in chosen}
        self.factories = {d.name: d.build(self.params[d.name]) for d in chosen}
        self.policy = parse_policy(chunking)
        self.seed = int(seed)
        self._thread = [d for d in chosen if d.kind == "thread"]
        self._stream = [d for d in chosen if d.kind == "stream"]

    @property
    def names(self) -> list[str]:
        """The detector names, in run order."""
        return [d.name for d in self.detectors]

    def replay(
        self,
        case_id: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        only: Sequence[str] | None = None,
    ) -> list[Outcome]:
        """Replay every detector (or those named in ``only``) over one case, in run order."""
        wanted = None if only is None else set(only)
        slots = {
            d.name: _Slot(d.name) for d in self.detectors if wanted is None or d.name in wanted
        }
        self._replay_thread([d for d in self._thread if d.name in slots], slots, messages)
        self._replay_stream([d for d in self._stream if d.name in slots], slots, case_id, messages)
        return [slots[name].outcome() for name in slots]

    def _replay_thread(
        self,
        detectors: list[Detector],
        slots: dict[str, _Slot],
        messages: Sequence[Mapping[str, Any]],
    ) -> None:
        active: list[_Slot] = []
        for detector in detectors:
            slot = slots[detector.name]
            try:
                slot.adapter = self.factories[detector.name]()
            except Exception as exc:
                slot.error = _error_text(exc)
                continue
            active.append(slot)
        started = list(active)
        for index, message in enumerate(messages):
            if not active:
                break
            still: list[_Slot] = []
            for slot in active:
                try:
                    fire = slot.adapter.append(message)
                except Exception as exc:
                    slot.error = _error_text(exc)
                    continue
                if fire is not None and slot.fired_at is None:
                    slot.fired_at = (index, None)
                    slot.reason = fire.reason
                    if fire.extra:
                        slot.extra = dict(fire.extra)
                    if not getattr(slot.adapter, "follow_after_fire", False):
                        continue
                still.append(slot)
            active = still
        for slot in started:
            if slot.error is not None:
                continue
            finish = getattr(slot.adapter, "finish", None)
            try:
                extra = finish() if finish is not None else None
            except Exception as exc:
                slot.error = _error_text(exc)
                continue
            if extra:
                slot.extra = {**(slot.extra or {}), **extra}
            slot.adapter = None

    def _replay_stream(
        self,
        detectors: list[Detector],
        slots: dict[str, _Slot],
        case_id: str,
        messages: Sequence[Mapping[str, Any]],
    ) -> None:
        pending = list(detectors)
        for index, message in enumerate(messages):
            if not pending:
                break
            readers: list[Detector] = []
            for detector in pending:
                try:
                    if detector.reads(message):
                        readers.append(detector)
                except Exception as exc:
                    slots[detector.name].error = _error_text(exc)
            if not readers:
                pending = [d for d in pending if slots[d.name].error is None]
                continue
            chunks = message_chunks(
                message, self.policy, case_id=case_id, index=index, seed=self.seed
            )
            for detector in readers:
                slot = slots[detector.name]
                try:
                    adapter: Any = self.factories[detector.name]()
                    push = adapter.push
                    position = 0
                    for chunk in chunks:
                        position += len(chunk)
                        fire = push(chunk)
                        if fire is not None:
                            slot.fired_at = (index, position)
                            slot.reason = fire.reason
                            if fire.extra:
                                slot.extra = dict(fire.extra)
                            break
                except Exception as exc:
                    slot.error = _error_text(exc)
            pending = [
                d for d in pending if slots[d.name].error is None and not slots[d.name].fired_at
            ]


def _text(message: Mapping[str, Any]) -> str:
    text = message.get("text")
    return text if isinstance(text, str) else ""


class TokenIndex:
    """Token estimates of a case's model text, for latency and tokens saved or lost.

    A position is ``(message, char)``. For a fire, ``char`` None means the end
    of the message (a thread detector fires after the message is appended); for
    an onset it means the start of the message.
    """

    __slots__ = ("_after", "_model", "_texts")

    def __init__(self, messages: Sequence[Mapping[str, Any]]) -> None:
        self._texts: list[str] = [_text(m) for m in messages]
        self._model = [is_model_text(m) for m in messages]
        # _after[i]: tokens of the model messages after message i (whole messages).
        after = [0] * (len(messages) + 1)
        for i in range(len(messages) - 1, -1, -1):
            after[i] = after[i + 1] + (estimate_tokens(self._texts[i]) if self._model[i] else 0)
        self._after = after

    @property
    def total(self) -> int:
        """Model-text tokens of the whole case."""
        return self._after[0]

    def offset(self, position: Position, *, end: bool) -> int:
        """The character offset of ``position`` (``char`` None: end or start of message)."""
        message, char = position
        if char is None:
            return len(self._texts[message]) if end else 0
        return min(max(char, 0), len(self._texts[message]))

    def _part(self, message: int, start: int, stop: int | None) -> int:
        if not self._model[message]:
            return 0
        return estimate_tokens(self._texts[message][start:stop])

    def after(self, message: int, offset: int) -> int:
        """Model-text tokens after character ``offset`` of ``message``, to the end of the case."""
        return self._part(message, offset, None) + self._after[message + 1]

    def between(self, start: tuple[int, int], stop: tuple[int, int]) -> int:
        """Model-text tokens from ``start`` to ``stop`` (``(message, offset)``; 0 if reversed)."""
        (m1, o1), (m2, o2) = start, stop
        if (m1, o1) >= (m2, o2):
            return 0
        if m1 == m2:
            return self._part(m1, o1, o2)
        middle = self._after[m1 + 1] - self._after[m2]
        return self._part(m1, o1, None) + middle + self._part(m2, 0, o2)


def _position_dict(position: Position | None) -> dict[str, int | None] | None:
    if position is None:
        return None
    return {"message": position[0], "char": position[1]}


def verdict_record(
    case: Any,
    outcome: Outcome,
    *,
    corpus: str,
    tokens: TokenIndex | None = None,
) -> dict[str, Any]:
    """The verdict line of ``outcome`` on ``case`` (a :class:`harness.corpus.Case`).

    Fields: ``corpus``, ``case``, ``detector``, ``fired``, ``fired_at``,
    ``label`` (``label.looping``), ``onset``, ``kind``, ``source``, ``group``,
    ``tags``, ``outcome`` (``tp``/``fp``/``tn``/``fn``, null on error),
    ``reason``, ``early``, ``latency_messages``, ``latency_tokens`` (true
    positives with an onset; negative for an early fire), ``tokens_after_fire``,
    ``tokens_saved`` (TP), ``tokens_lost`` (FP), ``model_tokens``, ``extra``
    and ``error``.
    """
    index = tokens if tokens is not None else TokenIndex(case.messages)
    label = bool(case.looping)
    onset = case.onset
    fired = outcome.fired
    record: dict[str, Any] = {
        "corpus": corpus,
        "case": case.id,
        "detector": outcome.detector,
        "fired": fired,
        "fired_at": _position_dict(outcome.fired_at) if fired else None,
        "label": label,
        "onset": None if onset is None else {"message": onset.message, "char": onset.char},
        "kind": case.kind,
        "source": case.source,
        "group": case.group,
        "tags": list(case.tags),
        "outcome": None,
        "reason": outcome.reason if fired else None,
        "early": None,
        "latency_messages": None,
        "latency_tokens": None,
        "tokens_after_fire": None,
        "tokens_saved": None,
        "tokens_lost": None,
        "model_tokens": index.total,
        "extra": dict(outcome.extra) if outcome.extra else None,
        "error": outcome.error,
    }
    if outcome.error is not None:
        return record
    record["outcome"] = ("tp" if fired else "fn") if label else ("fp" if fired else "tn")
    if not fired or outcome.fired_at is None:
        return record
    fire = outcome.fired_at
    fire_at = (fire[0], index.offset(fire, end=True))
    after = index.after(*fire_at)
    record["tokens_after_fire"] = after
    if not label:
        record["tokens_lost"] = after
        return record
    record["tokens_saved"] = after
    if onset is not None and onset.message < len(case.messages):
        onset_at = (onset.message, index.offset((onset.message, onset.char), end=False))
        early = fire_at < onset_at
        record["early"] = early
        record["latency_messages"] = fire[0] - onset.message
        record["latency_tokens"] = (
            -index.between(fire_at, onset_at) if early else index.between(onset_at, fire_at)
        )
    return record
