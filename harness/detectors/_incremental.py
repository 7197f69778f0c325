"""Incremental forms of two cycle heuristics, for the replay's every-prefix evaluation.

``has_repeated_suffix`` and ``has_repeated_result_run`` serialise every message
of the thread on each call; called on every prefix that is quadratic in
serialisation work, which dominates the replay of long agent traces. These
classes keep each message's serialisation (computed with the library's own
helpers) from one prefix to the next and run the library's decision on the
cached values. The tests compare them with the library functions on every
prefix of random threads.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

from loopguard import detector_defaults
from loopguard._cycle import _activity_function, _fingerprint, suffix_repeats
from loopguard._js import is_finite_number, safe_stringify
from loopguard._options import floored_at_least

__all__ = ["ResultRunCheck", "SuffixCheck"]


class SuffixCheck:
    """``has_repeated_suffix(prefix, **options)`` for each prefix, via :meth:`add`."""

    __slots__ = ("_fingerprints", "_max", "_min_len", "_reps")

    def __init__(self, options: Mapping[str, Any]) -> None:
        defaults = detector_defaults("repeated_suffix")
        self._reps = floored_at_least(
            options.get("min_repetitions"), defaults["min_repetitions"], 1
        )
        self._min_len = floored_at_least(
            options.get("min_pattern_length"), defaults["min_pattern_length"], 1
        )
        given = options.get("max_pattern_length")
        # As the library: a given number, else the default, else messages // repetitions.
        self._max: int | None
        if is_finite_number(given):
            self._max = floored_at_least(given, 0, self._min_len)
        elif defaults["max_pattern_length"] is not None:
            self._max = floored_at_least(defaults["max_pattern_length"], 0, self._min_len)
        else:
            self._max = None
        self._fingerprints: list[str | None] = []

    def add(self, message: Mapping[str, Any]) -> bool:
        """Append ``message``; return the verdict on the thread so far."""
        fingerprints = self._fingerprints
        fingerprints.append(_fingerprint(message))
        n = len(fingerprints)
        reps_needed = self._reps
        if n < self._min_len * reps_needed:
            return False
        max_len = n // reps_needed if self._max is None else self._max
        return suffix_repeats(
            fingerprints, self._min_len, min(max_len, n // reps_needed), reps_needed
        )


class ResultRunCheck:
    """``has_repeated_result_run(prefix, **options)`` for each prefix, via :meth:`add`."""

    __slots__ = ("_need", "_signatures")

    def __init__(self, options: Mapping[str, Any]) -> None:
        default = detector_defaults("repeated_result_run")["min_result_repetitions"]
        self._need = floored_at_least(options.get("min_result_repetitions"), default, 2)
        # Signatures of the last `need` settled responses, oldest first.
        self._signatures: deque[str | None] = deque(maxlen=self._need)

    def add(self, message: Mapping[str, Any]) -> bool:
        """Append ``message``; return the verdict on the thread so far."""
        parts = _activity_function(message)
        if parts is not None:
            activity, function = parts
            name = function.get("name")
            if (
                activity.get("type") == "response"
                and isinstance(name, str)
                and not name.startswith("_")
                and "result" in function
            ):
                arguments = (
                    safe_stringify(function["arguments"]) if "arguments" in function else None
                )
                self._signatures.append(
                    safe_stringify([name, arguments, safe_stringify(function["result"])])
                )
        signatures = self._signatures
        if len(signatures) < self._need:
            return False
        first = signatures[0]
        return all(signature == first for signature in signatures)
