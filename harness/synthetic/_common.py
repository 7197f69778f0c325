"""Shared machinery of the synthetic generators: seeds, chunking, messages, cases, splits.

Every generator builds one *run* (an underlying agent trace) from a :class:`Run`, and cuts
one or more labelled cases from it. All randomness comes from the run's own
``random.Random``, seeded from a SHA-256 of the family name, the corpus seed and the run
index, so a run never depends on another run, on the process, or on the clock.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Sequence
from random import Random
from typing import Any, TypeVar

__all__ = [
    "GENERATOR_VERSION",
    "TRAIN_FRACTION",
    "Case",
    "Message",
    "Run",
    "cut_message",
    "derive_seed",
    "fingerprint",
    "is_streamed",
    "periodic_start",
    "split_for_group",
]

Message = dict[str, Any]
Case = dict[str, Any]
T = TypeVar("T")

#: Bumped whenever a generator changes its output, so old and new corpora are told apart.
GENERATOR_VERSION = 1

#: Share of groups assigned to the training split (decided by a hash of the group).
TRAIN_FRACTION = 0.7

# Message types a model streams; the corpus format feeds every other type's text to
# streaming detectors, so those are the messages that carry `chunks`.
_NOT_STREAMED = frozenset({"user", "system", "activity"})

# Texts at least this long (summed over all messages), or runs at least this long, are
# tagged `long`; short and small ones `short`.
_LONG_CHARS = 4000
_LONG_MESSAGES = 40
_SHORT_CHARS = 600
_SHORT_MESSAGES = 8


def derive_seed(family: str, seed: int, index: int) -> int:
    """Return the 64-bit seed of run ``index`` of ``family`` in the corpus seeded ``seed``.

    SHA-256 rather than :func:`hash`, which is salted per process for strings.
    """
    key = f"loopguard-synthetic/v{GENERATOR_VERSION}/{family}/{seed}/{index}"
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")


def split_for_group(group: str) -> str:
    """Return ``"train"`` or ``"test"`` for a group, from a stable hash of its name.

    Every case of a group gets the same answer, so a group never straddles the splits.
    """
    digest = hashlib.sha256(f"loopguard-split/{group}".encode()).digest()
    position = int.from_bytes(digest[:8], "big") / 2.0**64
    return "train" if position < TRAIN_FRACTION else "test"


def is_streamed(message: Message) -> bool:
    """Whether a streaming detector reads this message (model text that is not empty)."""
    return message.get("type") not in _NOT_STREAMED and bool(message.get("text"))


def fingerprint(message: Message) -> str:
    """The identity of a message for verbatim repetition: type, text and meta.

    ``chunks`` and ``state`` are left out on purpose: the same text streamed with other
    chunk boundaries is the same message.
    """
    meta = message.get("meta")
    return json.dumps(
        [message.get("type"), message.get("text"), None if meta is None else meta],
        ensure_ascii=False,
        sort_keys=True,
    )


def periodic_start(keys: Sequence[Any], start: int, period: int) -> int:
    """Move ``start`` back while ``keys[start:]`` stays periodic with ``period``.

    The generators use this so that an onset is never later than the first message of
    the first occurrence of the repeated block, even when the healthy prefix happens to
    end with a copy of the block's tail.
    """
    while (
        start > 0 and start - 1 + period < len(keys) and keys[start - 1] == keys[start - 1 + period]
    ):
        start -= 1
    return start


def cut_message(message: Message, char: int) -> Message:
    """Return a copy of a message whose text (and chunks) stop after ``char`` characters.

    The chunks are cut, not redrawn: the shorter message is the same stream, stopped early.
    """
    out = dict(message)
    out["text"] = message["text"][:char]
    if "chunks" in message:
        chunks: list[str] = []
        used = 0
        for chunk in message["chunks"]:
            if used >= char:
                break
            piece = chunk[: char - used]
            chunks.append(piece)
            used += len(piece)
        out["chunks"] = chunks
    return out


class Run:
    """One underlying run of a family: its random source, chunk sizes and cases.

    Parameters
    ----------
    family : str
        The family name (kebab case); it prefixes ids and groups.
    seed : int
        The corpus seed.
    index : int
        The run's index within its family.

    Examples
    --------
    >>> run = Run("demo", 0, 3)
    >>> message = run.bot("Hello there.")
    >>> "".join(message["chunks"]) == message["text"]
    True
    """

    def __init__(self, family: str, seed: int, index: int) -> None:
        self.family = family
        self.seed = seed
        self.index = index
        self.run_seed = derive_seed(family, seed, index)
        self.rng = Random(self.run_seed)
        # A per-run chunk-size profile: some providers stream single characters, others
        # a few tokens at once; every chunk stays within 1..9 characters.
        low = self.rng.randint(1, 4)
        self.chunk_low = low
        self.chunk_high = self.rng.randint(max(low + 2, 5), 9)
        self.group = f"synthetic/{family}/s{seed}-{index:05d}"
        self.cases: list[Case] = []

    # -- random helpers -------------------------------------------------------------
    def choice(self, seq: Sequence[T]) -> T:
        """A uniformly chosen element of ``seq``."""
        return seq[self.rng.randrange(len(seq))]

    def chance(self, p: float) -> bool:
        """True with probability ``p``."""
        return self.rng.random() < p

    def sample(self, seq: Sequence[T], k: int) -> list[T]:
        """``k`` distinct elements of ``seq`` in random order."""
        return self.rng.sample(list(seq), k)

    def randint(self, low: int, high: int) -> int:
        """A uniform integer in ``low..high`` (both included)."""
        return self.rng.randint(low, high)

    # -- messages -------------------------------------------------------------------
    def chunks(self, text: str) -> list[str]:
        """Cut ``text`` into stream chunks of 1..9 characters (whole code points)."""
        out: list[str] = []
        i = 0
        n = len(text)
        low, high = self.chunk_low, self.chunk_high
        randint = self.rng.randint
        while i < n:
            step = randint(low, high)
            out.append(text[i : i + step])
            i += step
        return out

    def message(self, type_: str, text: str, **extra: Any) -> Message:
        """A message of any type; model text gets freshly drawn ``chunks``."""
        out: Message = {"type": type_, "text": text}
        out.update(extra)
        if type_ not in _NOT_STREAMED and text:
            out["chunks"] = self.chunks(text)
        return out

    def user(self, text: str, **extra: Any) -> Message:
        """A user message (not streamed)."""
        return self.message("user", text, **extra)

    def system(self, text: str) -> Message:
        """A system message (not streamed)."""
        return self.message("system", text)

    def bot(self, text: str) -> Message:
        """An answer message of the model, with chunks."""
        return self.message("bot", text)

    def reasoning(self, text: str) -> Message:
        """A reasoning message of the model, with chunks."""
        return self.message("reasoning", text)

    def request(self, name: str, arguments: Any, text: str = "") -> Message:
        """An activity message announcing a tool call."""
        function = {"name": name, "arguments": copy.deepcopy(arguments)}
        return {
            "type": "activity",
            "text": text,
            "meta": {"activity": {"type": "request", "function": function}},
        }

    def response(
        self,
        name: str,
        arguments: Any,
        result: Any,
        text: str = "",
        state: dict[str, str] | None = None,
    ) -> Message:
        """An activity message with the settled result of a tool call."""
        function = {
            "name": name,
            "arguments": copy.deepcopy(arguments),
            "result": copy.deepcopy(result),
        }
        out: Message = {
            "type": "activity",
            "text": text,
            "meta": {"activity": {"type": "response", "function": function}},
        }
        if state is not None:
            out["state"] = dict(state)
        return out

    def call(
        self, name: str, arguments: Any, result: Any, state: dict[str, str] | None = None
    ) -> list[Message]:
        """A request and its response."""
        return [self.request(name, arguments), self.response(name, arguments, result, state=state)]

    def again(self, message: Message) -> Message:
        """A verbatim repeat of ``message``; model text is re-chunked like a new stream."""
        out = copy.deepcopy(message)
        if "chunks" in out:
            out["chunks"] = self.chunks(out["text"])
        return out

    # -- cases ----------------------------------------------------------------------
    def add_case(
        self,
        variant: str,
        messages: Sequence[Message],
        *,
        looping: bool,
        kind: str,
        note: str,
        onset: int | None = None,
        char: int | None = None,
        tags: Iterable[str] = (),
        hard_negative: bool = False,
    ) -> Case:
        """Append a labelled case cut from this run and return it.

        ``onset`` (a message index) is required for loops and forbidden otherwise;
        ``char`` is the character offset of a loop inside that message's text.
        """
        msgs = list(messages)
        if looping:
            if onset is None or not 0 <= onset < len(msgs):
                raise ValueError(
                    f"{self.group}/{variant}: onset {onset!r} outside 0..{len(msgs) - 1}"
                )
            if char is not None and not 0 <= char < len(msgs[onset]["text"]):
                raise ValueError(f"{self.group}/{variant}: char {char} outside message {onset}")
            label_onset: dict[str, Any] | None = {"message": onset, "char": char}
        else:
            if onset is not None or char is not None:
                raise ValueError(f"{self.group}/{variant}: a negative case has no onset")
            label_onset = None
        all_tags = [self.family, *tags]
        if hard_negative and not looping:
            all_tags.append("hard-negative")
        size = sum(len(m.get("text") or "") for m in msgs)
        if "long" in all_tags or "short" in all_tags:
            pass  # the generator already classified the run
        elif size >= _LONG_CHARS or len(msgs) >= _LONG_MESSAGES:
            all_tags.append("long")
        elif size < _SHORT_CHARS and len(msgs) <= _SHORT_MESSAGES:
            all_tags.append("short")
        unique_tags = list(dict.fromkeys(all_tags))
        case: Case = {
            "id": f"{self.group}/{variant}",
            "messages": msgs,
            "label": {
                "looping": looping,
                "onset": label_onset,
                "kind": kind,
                "source": "synthetic",
                "note": note,
            },
            "group": self.group,
            "split": split_for_group(self.group),
            "tags": unique_tags,
            "origin": {
                "dataset": "synthetic",
                "generator": self.family,
                "seed": self.seed,
                "index": self.index,
                "run_seed": self.run_seed,
                "variant": variant,
                "version": GENERATOR_VERSION,
            },
        }
        self.cases.append(case)
        return case
