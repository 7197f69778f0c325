"""A literal, slow transcription of createRepetitionGuard (spec §8), step by step.

It exists only to check the optimised :class:`loopguard.RepetitionGuard`
against the plain reading of the specification on random inputs.
"""

from __future__ import annotations

import math
import re
import unicodedata

from loopguard._js import JS_WHITESPACE, utf16_len

WS = "[" + re.escape(JS_WHITESPACE) + "]"


def js_word(raw: str) -> str:
    return "".join(ch for ch in raw.lower() if unicodedata.category(ch)[0] in "LN")


class ReferenceGuard:
    def __init__(
        self,
        ngram: int = 4,
        window: int = 48,
        max_repeats: int = 4,
        max_unique_ratio: float = 0.4,
        min_chars: int = 0,
    ) -> None:
        self.ngram = max(2, math.floor(ngram))
        self.window = max(self.ngram, math.floor(window))
        self.max_repeats = max(2, math.floor(max_repeats))
        self.max_unique_ratio = min(1.0, max(0.0, max_unique_ratio))
        self.min_chars = max(0, math.floor(min_chars))
        self.words: list[str] = []
        self.originals: list[str] = []
        self.newlines_before: list[int] = []
        self.counts: dict[str, int] = {}
        self.word_counts: dict[str, int] = {}
        self.window_newlines = 0
        self.pending = ""
        self.carry = 0
        self.total = 0
        self.tripped = False
        self.reason: dict[str, object] | None = None

    def push(self, text: object) -> bool:
        if self.tripped:
            return True
        if not isinstance(text, str) or text == "":
            return False
        self.total += utf16_len(text)
        self.pending += text
        parts = re.split("(" + WS + "+)", self.pending)
        self.pending = parts.pop()
        for i, part in enumerate(parts):
            if i % 2 == 1:
                self.carry += part.count("\n")
                continue
            word = js_word(part)
            if word:
                self.add(word, part, self.carry)
                self.carry = 0
                if self.tripped:
                    return True
        return self.tripped

    def hapax(self) -> float:
        return sum(1 for c in self.word_counts.values() if c == 1) / len(self.words)

    def leads(self) -> int:
        return len({w for w, nl in zip(self.words, self.newlines_before, strict=True) if nl >= 1})

    def add(self, word: str, raw: str, nl: int) -> None:
        self.words.append(word)
        self.originals.append(raw)
        self.newlines_before.append(nl)
        self.window_newlines += nl
        self.word_counts[word] = self.word_counts.get(word, 0) + 1
        if len(self.words) >= self.ngram:
            gram = " ".join(self.words[-self.ngram :])
            nxt = self.counts.get(gram, 0) + 1
            self.counts[gram] = nxt
            unique = len(self.word_counts) / len(self.words)
            if (
                self.total >= self.min_chars
                and nxt >= self.max_repeats
                and unique <= self.max_unique_ratio
            ):
                enumerated = (
                    self.max_unique_ratio < 0.5
                    and self.window_newlines >= 2
                    and (self.hapax() >= 0.1 or self.leads() >= 3)
                )
                if not enumerated:
                    self.tripped = True
                    if self.reason is None:
                        self.reason = {
                            "phrase": gram,
                            "count": nxt,
                            "text": " ".join(self.originals[-self.ngram :]) or gram,
                            "uniqueRatio": unique,
                            "hapaxRatio": self.hapax(),
                        }
        if len(self.words) > self.window:
            leaving = " ".join(self.words[: self.ngram])
            self.counts[leaving] -= 1
            if self.counts[leaving] <= 0:
                del self.counts[leaving]
            first = self.words[0]
            self.word_counts[first] -= 1
            if self.word_counts[first] <= 0:
                del self.word_counts[first]
            self.window_newlines -= self.newlines_before[0]
            self.words.pop(0)
            self.originals.pop(0)
            self.newlines_before.pop(0)
