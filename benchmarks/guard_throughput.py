"""Throughput of the streaming repetition guard, in words per second.

Pushes a 1M-word text in 4-character chunks through :class:`loopguard.RepetitionGuard`
and, in the same run, through a naive baseline that re-tokenises and re-counts
its whole window after every push. Prints figures; asserts nothing.

    python benchmarks/guard_throughput.py [--words N] [--baseline-words N] [--repeat K]
"""

from __future__ import annotations

import argparse
import platform
import random
import re
import statistics
import time
from collections import Counter

from loopguard import RepetitionGuard
from loopguard._guard import normalize_word

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


def make_text(words: int, seed: int = 7) -> str:
    """A diverse text: random words with punctuation and newlines, never a runaway loop."""
    rng = random.Random(seed)
    out = []
    for i in range(words):
        word = rng.choice(VOCAB)
        if rng.random() < 0.3:
            word += str(rng.randrange(1000))
        out.append(word + ("." if i % 17 == 16 else ""))
        out.append("\n" if i % 53 == 52 else " ")
    return "".join(out)


def chunks_of(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class NaiveRescanGuard:
    """Same trip rule (count of the newest n-gram over the window) re-computed from scratch."""

    def __init__(self, ngram: int = 4, window: int = 48, max_repeats: int = 4) -> None:
        self.ngram, self.window, self.max_repeats = ngram, window, max_repeats
        self.text = ""
        self.tripped = False

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


def measure(factory: type, chunks: list[str], words: int, repeat: int) -> tuple[float, bool]:
    rates = []
    tripped = False
    for _ in range(repeat):
        guard = factory()
        start = time.perf_counter()
        for chunk in chunks:
            if guard.push(chunk):
                tripped = True
                break
        rates.append(words / (time.perf_counter() - start))
    return statistics.median(rates), tripped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=1_000_000)
    parser.add_argument("--baseline-words", type=int, default=50_000)
    parser.add_argument("--chunk", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    text = make_text(args.words)
    chunks = chunks_of(text, args.chunk)
    print(f"python {platform.python_version()} on {platform.machine()}, {len(chunks):,} chunks")
    rate, tripped = measure(RepetitionGuard, chunks, args.words, args.repeat)
    print(f"RepetitionGuard      {rate:>12,.0f} words/s  ({args.words:,} words, tripped={tripped})")
    small = make_text(args.baseline_words)
    rate_naive, tripped_naive = measure(
        NaiveRescanGuard, chunks_of(small, args.chunk), args.baseline_words, 1
    )
    print(
        f"naive re-scan        {rate_naive:>12,.0f} words/s  "
        f"({args.baseline_words:,} words, tripped={tripped_naive})"
    )
    print(f"speed-up             {rate / rate_naive:>12.1f}x")


if __name__ == "__main__":
    main()
