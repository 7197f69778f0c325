"""Throughput of the streaming repetition guard, in words per second.

Pushes a 1M-word text (diverse prose that ends in a runaway loop) in 4-character
chunks through :class:`loopguard.RepetitionGuard` and, in the same run, through
two baselines: a straightforward port (``tests/reference_guard.py``, the spec
transcribed step by step) and a naive guard that re-tokenises and re-counts its
window after every push. Prints figures and whether the results agree; asserts
nothing.

    python benchmarks/guard_throughput.py [--words N] [--baseline-words N] [--repeat K]
"""

from __future__ import annotations

import argparse
import platform
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loopguard import RepetitionGuard
from loopguard._guard import normalize_word
from tests.reference_guard import ReferenceGuard

VOCAB = [
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "it",
    "that",
    "for",
    "on",
    "with",
    "as",
    "this",
    "be",
    "by",
    "are",
    "from",
    "at",
    "or",
    "an",
    "was",
    "not",
    "we",
    "can",
    "will",
    "if",
    "they",
    "all",
    "but",
    "one",
    "more",
    "which",
    "their",
    "has",
    "have",
    "model",
    "tool",
    "call",
    "result",
    "error",
    "retry",
    "search",
    "file",
    "line",
    "value",
    "state",
    "agent",
    "loop",
    "guard",
    "stream",
    "token",
    "window",
    "phrase",
    "check",
    "repeat",
    "count",
    "list",
    "table",
    "code",
    "data",
    "test",
    "run",
    "step",
    "plan",
    "next",
    "then",
]


def make_text(words: int, seed: int = 7, loop_words: int = 0) -> str:
    """Diverse prose (random words, punctuation, newlines), then ``loop_words`` of a loop."""
    rng = random.Random(seed)
    out = []
    for i in range(words):
        word = rng.choice(VOCAB)
        if rng.random() < 0.3:
            word += str(rng.randrange(1000))
        out.append(word + ("." if i % 17 == 16 else ""))
        out.append("\n" if i % 53 == 52 else " ")
    loop = "Let me call lint again and check the output. "
    out.append(loop * (loop_words // len(loop.split())))
    return "".join(out)


def chunks_of(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class NaiveRescanGuard:
    """Same trip rule (count of the newest n-gram over the window) re-computed from scratch."""

    def __init__(self, ngram: int = 4, window: int = 48, max_repeats: int = 4) -> None:
        self.ngram, self.window, self.max_repeats = ngram, window, max_repeats
        self.text = ""
        self.tripped = False
        self.reason: object = None

    def push(self, chunk: str) -> bool:
        if self.tripped:
            return True
        self.text += chunk
        # Re-scan a bounded tail so the baseline is linear, as a sensible naive guard would be.
        tail = self.text[-2000:]
        raw = re.split(r"\s+", tail)[1:-1]
        words = [w for w in (normalize_word(t) for t in raw) if w][-(self.window + 1) :]
        grams = Counter(
            " ".join(words[i : i + self.ngram]) for i in range(len(words) - self.ngram + 1)
        )
        if grams and max(grams.values()) >= self.max_repeats:
            self.tripped = len(set(words)) / len(words) <= 0.4
        return self.tripped


def measure(factory: Any, chunks: list[str], words: int, repeat: int) -> tuple[float, Any]:
    """Best-of-``repeat`` words per second, and the push index and reason of the trip."""
    rates = []
    outcome: Any = None
    for _ in range(repeat):
        guard = factory()
        push = guard.push
        tripped_at = None
        start = time.perf_counter()
        for index, chunk in enumerate(chunks):
            if push(chunk):
                tripped_at = index
                break
        rates.append(words / (time.perf_counter() - start))
        reason = guard.reason() if callable(guard.reason) else guard.reason
        outcome = (tripped_at, reason.as_dict() if hasattr(reason, "as_dict") else reason)
    return max(rates), outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--words", type=int, default=1_000_000)
    parser.add_argument("--baseline-words", type=int, default=50_000)
    parser.add_argument("--chunk", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    text = make_text(args.words - 200, loop_words=200)
    chunks = chunks_of(text, args.chunk)
    print(
        f"python {platform.python_version()} ({sys.executable}) on {platform.machine()}; "
        f"{len(text.split()):,} words in {len(chunks):,} chunks of {args.chunk} characters"
    )
    rate, outcome = measure(RepetitionGuard, chunks, args.words, args.repeat)
    print(f"RepetitionGuard        {rate:>10,.0f} words/s  best of {args.repeat}")
    # With a high diversity ceiling every window passes the gate, so n-grams are always
    # counted: the guard's slowest steady state on this text.
    counting, _ = measure(lambda: RepetitionGuard(max_unique_ratio=0.9), chunks, args.words, 1)
    print(f"  max_unique_ratio 0.9 {counting:>10,.0f} words/s  (n-grams counted in every window)")
    rate_ref, outcome_ref = measure(ReferenceGuard, chunks, args.words, 1)
    print(f"straightforward port   {rate_ref:>10,.0f} words/s  (tests/reference_guard.py)")
    small = make_text(args.baseline_words)
    rate_naive, _ = measure(NaiveRescanGuard, chunks_of(small, args.chunk), args.baseline_words, 1)
    print(f"naive re-scan          {rate_naive:>10,.0f} words/s  ({args.baseline_words:,} words)")
    print(
        f"speed-up: {rate / rate_ref:.2f}x the straightforward port, {rate / rate_naive:.0f}x naive"
    )
    print(f"trip: push {outcome[0]}, {outcome[1]}")
    print(f"same trip and reason as the straightforward port: {outcome == outcome_ref}")


if __name__ == "__main__":
    main()
