"""Chunking policies: how the replay cuts a message's text when it has no ``chunks``.

A streaming detector is fed a message's ``chunks`` when the corpus recorded
them; otherwise its ``text`` is cut by the policy chosen for the run:

``provider``
    Pieces of 1 to 9 characters, lengths drawn from a generator seeded by
    ``(seed, case id, message index)``, the way provider streams deliver a
    few characters at a time. The same seed gives the same cuts in any
    process and any order.
``word``
    One word per chunk with the whitespace that follows it (leading
    whitespace goes with the first word).
``sentence``
    Cut after each run of ``.``, ``!``, ``?`` or newline and the spaces or
    tabs after it.
``fixed:N``
    Pieces of N characters (the last may be shorter), N >= 1.
``whole``
    The whole text as one chunk.

Characters are Python code points, so an astral character is never split.
Concatenating the chunks always gives the text back.

Examples
--------
>>> policy = parse_policy("word")
>>> policy.chunks("  Hello big world ", case_id="c", index=0, seed=0)
['  Hello ', 'big ', 'world ']
>>> parse_policy("fixed:4").chunks("abcdefghij", case_id="c", index=0, seed=0)
['abcd', 'efgh', 'ij']
>>> "".join(parse_policy("provider").chunks("some text", case_id="c", index=1, seed=7))
'some text'
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._errors import ChunkingError

__all__ = [
    "DEFAULT_POLICY",
    "POLICY_NAMES",
    "SENSITIVITY_POLICIES",
    "ChunkingError",
    "ChunkingPolicy",
    "message_chunks",
    "parse_policy",
]

#: The policy names (``fixed`` is written ``fixed:N``).
POLICY_NAMES = ("provider", "word", "sentence", "fixed:N", "whole")
#: The run's policy when none is chosen.
DEFAULT_POLICY = "provider"
#: The policies ``--chunking-sensitivity`` compares when none are listed.
SENSITIVITY_POLICIES = ("provider", "word", "sentence", "fixed:64", "whole")

# Provider streams deliver a few characters per event; 1..9 covers what the
# production providers were seen to send per delta (see docs/evaluation.md).
_PROVIDER_MIN = 1
_PROVIDER_MAX = 9

_WORD = re.compile(r"\s*\S+\s*|\s+")
_SENTENCE_END = re.compile(r"[.!?\n]+[ \t]*")


@dataclass(frozen=True)
class ChunkingPolicy:
    """A parsed chunking policy; ``name`` is its canonical spelling (``fixed:16``)."""

    name: str
    size: int = 0

    def chunks(self, text: str, *, case_id: str, index: int, seed: int) -> list[str]:
        """Cut ``text`` (message ``index`` of case ``case_id``) into chunks."""
        if not text:
            return [text]
        kind = self.name.split(":", 1)[0]
        if kind == "whole":
            return [text]
        if kind == "fixed":
            step = self.size
            return [text[i : i + step] for i in range(0, len(text), step)]
        if kind == "word":
            return _WORD.findall(text)
        if kind == "sentence":
            return _sentences(text)
        return _provider(text, f"{seed}\x1f{case_id}\x1f{index}")


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        out.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        out.append(text[start:])
    return out


def _provider(text: str, key: str) -> list[str]:
    # random.Random seeded with a str hashes it with SHA-512: stable across
    # processes and Python runs, unlike hash().
    rng = random.Random(key)
    sizes = range(_PROVIDER_MIN, _PROVIDER_MAX + 1)
    out: list[str] = []
    position = 0
    n = len(text)
    while position < n:
        for size in rng.choices(sizes, k=n // 5 + 1):
            out.append(text[position : position + size])
            position += size
            if position >= n:
                break
    return out


def parse_policy(policy: str | ChunkingPolicy) -> ChunkingPolicy:
    """Parse a policy name (``provider``, ``word``, ``sentence``, ``fixed:N``, ``whole``).

    Raises
    ------
    ChunkingError
        Unknown name, or ``fixed:N`` with N not a positive integer.
    """
    if isinstance(policy, ChunkingPolicy):
        return policy
    if not isinstance(policy, str):
        raise ChunkingError(f"chunking policy must be a string; got {type(policy).__name__}")
    text = policy.strip()
    if text in ("provider", "word", "sentence", "whole"):
        return ChunkingPolicy(text)
    if text.startswith("fixed:"):
        size = text[len("fixed:") :]
        if size.isdigit() and int(size) >= 1:
            return ChunkingPolicy(f"fixed:{int(size)}", int(size))
        raise ChunkingError(f"chunking policy {policy!r}: N in fixed:N must be an integer >= 1")
    raise ChunkingError(f"unknown chunking policy {policy!r}; allowed: {', '.join(POLICY_NAMES)}")


def message_chunks(
    message: Mapping[str, Any], policy: ChunkingPolicy, *, case_id: str, index: int, seed: int
) -> list[str]:
    """The chunks a streaming detector is fed for ``message``.

    The recorded ``chunks`` when the message has them (whatever the policy),
    else its text cut by ``policy``.
    """
    recorded = message.get("chunks")
    if isinstance(recorded, list):
        return [c for c in recorded if isinstance(c, str)]
    text = message.get("text")
    return policy.chunks(
        text if isinstance(text, str) else "", case_id=case_id, index=index, seed=seed
    )
