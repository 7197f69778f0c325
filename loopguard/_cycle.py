"""The thread-level cycle heuristics and their combination.

Ports of ``hasRepeatedSuffix``, ``hasRepeatedActivityTail``,
``hasRepeatedResultRun``, the message-text adapter, ``isThreadCyclic`` and
``describeThreadCycle`` (``docs/spec/thread-algorithms.md`` §2-§6). Every
function accepts the four shared cycle options and ignores those it does not
use; the constants the original fixes are extra options whose defaults (in
``defaults.json``) are the production values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise
from typing import Any

from ._defaults import detector_defaults
from ._js import is_finite_number, safe_stringify
from ._options import floored_at_least
from ._textrun import has_repeated_text_run

__all__ = [
    "CYCLE_OPTIONS",
    "HEURISTICS",
    "describe_thread_cycle",
    "has_repeated_activity_tail",
    "has_repeated_message_text_run",
    "has_repeated_result_run",
    "has_repeated_suffix",
    "is_thread_cyclic",
]

_NO_FIELD: Mapping[str, Any] = {}

#: Every option the cycle heuristics read; each heuristic ignores the others.
CYCLE_OPTIONS = frozenset(
    {
        "min_repetitions",
        "min_pattern_length",
        "max_pattern_length",
        "min_result_repetitions",
        "min_tail_length",
        "min_io_count",
        "compression_factor",
        "progress_repeats",
        "last_messages",
        "text_min_units",
        "text_window",
        "text_max_unique_ratio",
    }
)


def _check_options(options: Mapping[str, object]) -> None:
    unknown = sorted(set(options) - CYCLE_OPTIONS)
    if unknown:
        allowed = ", ".join(sorted(CYCLE_OPTIONS))
        raise TypeError(f"unknown cycle option(s) {', '.join(unknown)}; allowed: {allowed}")


def _as_list(messages: object) -> list[Any]:
    if isinstance(messages, list):
        return messages
    if messages is None or isinstance(messages, str | bytes | Mapping):
        return []
    try:
        return list(messages)  # type: ignore[call-overload, no-any-return]
    except TypeError:
        return []


def _fields(message: object) -> Mapping[str, Any]:
    return message if isinstance(message, Mapping) else _NO_FIELD


def _fingerprint(message: object) -> str | None:
    m = _fields(message)
    meta = safe_stringify(m["meta"]) if "meta" in m else None
    return safe_stringify([m.get("type"), m.get("text"), meta])


def has_repeated_suffix(
    messages: Sequence[Any] | None,
    *,
    min_repetitions: object = None,
    min_pattern_length: object = None,
    max_pattern_length: object = None,
    min_result_repetitions: object = None,
    **_ignored: object,
) -> bool:
    """Report a thread that ends in a verbatim repeating block of messages.

    Messages are fingerprinted by ``(type, text, meta)``; patterns of
    ``min_pattern_length`` to ``max_pattern_length`` messages are tried
    shortest first, and the thread is cyclic when the last pattern repeats
    ``min_repetitions`` times back to back at its very end.

    Parameters
    ----------
    messages : sequence of dict
        The thread, oldest first.
    min_repetitions, min_pattern_length : int, optional
        Floored, at least 1 (defaults 2 and 2).
    max_pattern_length : int, optional
        Floored, at least ``min_pattern_length``; default ``len // min_repetitions``.
    min_result_repetitions : optional
        Ignored here.

    Examples
    --------
    >>> a, b = {"type": "user", "text": "again?"}, {"type": "bot", "text": "same"}
    >>> has_repeated_suffix([a, b, a, b])
    True
    >>> has_repeated_suffix([a, b, a, b], min_repetitions=3)
    False
    """
    _check_options(_ignored)
    items = _as_list(messages)
    defaults = detector_defaults("repeated_suffix")
    reps_needed = floored_at_least(min_repetitions, defaults["min_repetitions"], 1)
    min_len = floored_at_least(min_pattern_length, defaults["min_pattern_length"], 1)
    n = len(items)
    if n < min_len * reps_needed:
        return False
    if is_finite_number(max_pattern_length):
        max_len = floored_at_least(max_pattern_length, 0, min_len)
    elif defaults["max_pattern_length"] is not None:
        max_len = floored_at_least(defaults["max_pattern_length"], 0, min_len)
    else:
        max_len = n // reps_needed
    # Longer patterns cannot repeat often enough; the original skips them one by one.
    max_len = min(max_len, n // reps_needed)
    return suffix_repeats([_fingerprint(m) for m in items], min_len, max_len, reps_needed)


def suffix_repeats(
    fingerprints: Sequence[str | None], min_len: int, max_len: int, reps_needed: int
) -> bool:
    """Whether the last ``p`` fingerprints repeat ``reps_needed`` times back to back at the end.

    ``p`` runs from ``min_len`` to ``max_len``, shortest first, as in the
    original; shared by :func:`has_repeated_suffix` and the harness's
    incremental replay of it.
    """
    n = len(fingerprints)
    last = fingerprints[-1] if n else None
    for p in range(min_len, max_len + 1):
        # A second repetition must end with the same message: a cheap test first.
        if reps_needed > 1 and fingerprints[n - 1 - p] != last:
            continue
        pattern = fingerprints[n - p :]
        reps = 0
        i = n - p
        while i >= 0:
            if fingerprints[i : i + p] != pattern:
                break
            reps += 1
            i -= p
        if reps >= reps_needed:
            return True
    return False


def _activity_function(message: object) -> tuple[Mapping[str, Any], Mapping[str, Any]] | None:
    """``(activity, function)`` of a well-formed activity message, else ``None``."""
    m = _fields(message)
    if m.get("type") != "activity":
        return None
    meta = m.get("meta")
    activity = meta.get("activity") if isinstance(meta, Mapping) else None
    if not isinstance(activity, Mapping):
        return None
    function = activity.get("function")
    if not isinstance(function, Mapping):
        return None
    return activity, function


def has_repeated_activity_tail(
    messages: Sequence[Any] | None,
    *,
    min_tail_length: object = None,
    min_io_count: object = None,
    compression_factor: object = None,
    progress_repeats: object = None,
    **_ignored: object,
) -> bool:
    """Report a trailing run of tool calls that keeps re-treading a few signatures.

    The contiguous activity messages at the end of the thread are reduced to
    ``(type, name, input, output)`` signatures; the tail is a loop when it
    compresses at least ``compression_factor``:1, names, inputs and outputs all
    repeat, and no request repeated ``progress_repeats`` times got a different
    output every time (polling that makes progress).

    Parameters
    ----------
    messages : sequence of dict
        The thread, oldest first.
    min_tail_length : int, optional
        Activity messages needed (production value 8; floored, at least 1).
    min_io_count : int, optional
        Request inputs and response outputs needed (production 4; at least 1).
    compression_factor : float, optional
        ``unique signatures * factor <= tail length`` (production 2; above 0).
    progress_repeats : int, optional
        Repeats of one request with all-distinct outputs that spare the tail
        (production 3; at least 1).

    Examples
    --------
    >>> def call(kind, **fn):
    ...     return {"type": "activity", "meta": {"activity": {"type": kind, "function": fn}}}
    >>> pair = [call("request", name="ls", arguments={}),
    ...         call("response", name="ls", arguments={}, result="x")]
    >>> has_repeated_activity_tail(pair * 4)
    True
    """
    _check_options(_ignored)
    items = _as_list(messages)
    defaults = detector_defaults("repeated_activity_tail")
    tail_min = floored_at_least(min_tail_length, defaults["min_tail_length"], 1)
    io_min = floored_at_least(min_io_count, defaults["min_io_count"], 1)
    factor = (
        float(compression_factor)  # type: ignore[arg-type]
        if is_finite_number(compression_factor) and compression_factor > 0  # type: ignore[operator]
        else float(defaults["compression_factor"])
    )
    progress_min = floored_at_least(progress_repeats, defaults["progress_repeats"], 1)

    tail: list[tuple[object, str, str | None, str | None]] = []
    for message in reversed(items):
        parts = _activity_function(message)
        if parts is None:
            break
        activity, function = parts
        kind, name = activity.get("type"), function.get("name")
        if not isinstance(kind, str) or not isinstance(name, str):
            break
        input_hash = safe_stringify(function["arguments"]) if "arguments" in function else None
        output_hash = safe_stringify(function["result"]) if "result" in function else None
        tail.append((kind, name, input_hash, output_hash))
    tail.reverse()
    if len(tail) < tail_min:
        return False
    request_inputs = [e[2] for e in tail if e[0] == "request" and e[2] is not None]
    response_outputs = [e[3] for e in tail if e[0] == "response" and e[3] is not None]
    if len(request_inputs) < io_min or len(response_outputs) < io_min:
        return False

    signatures = {safe_stringify(list(entry)) for entry in tail}
    outputs_by_key: dict[str | None, set[str]] = {}
    counts: dict[str | None, int] = {}
    for (k1, n1, in1, _), (k2, n2, _, out2) in pairwise(tail):
        if k1 == "request" and k2 == "response" and n1 == n2 and in1 is not None:
            if out2 is None:
                continue
            key = safe_stringify([n1, in1])
            outputs_by_key.setdefault(key, set()).add(out2)
            counts[key] = counts.get(key, 0) + 1
    progressing = any(
        count >= progress_min and len(outputs_by_key[key]) == count for key, count in counts.items()
    )
    return (
        len(signatures) * factor <= len(tail)
        and len({e[1] for e in tail}) < len(tail)
        and len(set(request_inputs)) < len(request_inputs)
        and len(set(response_outputs)) < len(response_outputs)
        and not progressing
    )


def has_repeated_result_run(
    messages: Sequence[Any] | None,
    *,
    min_result_repetitions: object = None,
    **_ignored: object,
) -> bool:
    """Report that the last settled tool results are identical calls with identical results.

    Only settled ``response`` activities count; reasoning, text, requests and
    ``_``-prefixed notices in between are skipped, so interleaving does not
    hide the loop. The signature is ``(name, arguments, result)``.

    Parameters
    ----------
    messages : sequence of dict
        The thread, oldest first.
    min_result_repetitions : int, optional
        Identical results needed (floored, at least 2; default 3).

    Examples
    --------
    >>> resp = {"type": "activity", "meta": {"activity": {"type": "response",
    ...     "function": {"name": "search", "arguments": {"q": "x"}, "result": []}}}}
    >>> think = {"type": "reasoning", "text": "try again"}
    >>> has_repeated_result_run([resp, think, resp, think, resp])
    True
    """
    _check_options(_ignored)
    items = _as_list(messages)
    default = detector_defaults("repeated_result_run")["min_result_repetitions"]
    need = floored_at_least(min_result_repetitions, default, 2)
    signatures: list[str | None] = []
    for message in reversed(items):
        parts = _activity_function(message)
        if parts is None:
            continue
        activity, function = parts
        name = function.get("name")
        if activity.get("type") != "response" or not isinstance(name, str):
            continue
        if name.startswith("_") or "result" not in function:
            continue
        arguments = safe_stringify(function["arguments"]) if "arguments" in function else None
        signatures.append(safe_stringify([name, arguments, safe_stringify(function["result"])]))
        if len(signatures) >= need:
            break
    if len(signatures) < need:
        return False
    return all(signature == signatures[0] for signature in signatures)


def has_repeated_message_text_run(
    messages: Sequence[Any] | None,
    *,
    last_messages: object = None,
    text_min_units: object = None,
    text_window: object = None,
    text_max_unique_ratio: object = None,
    **_ignored: object,
) -> bool:
    """Report a runaway sentence loop inside one of the last messages' text.

    The adapter of the original: each of the last ``last_messages`` messages
    that is neither ``reasoning`` nor ``activity`` and has a string text is
    checked on its own with :func:`has_repeated_text_run`.

    Parameters
    ----------
    messages : sequence of dict
        The thread, oldest first.
    last_messages : int, optional
        How many trailing messages are checked (production 5; at least 1).
    text_min_units, text_window, text_max_unique_ratio : optional
        Options of :func:`has_repeated_text_run` (production: its defaults).

    Examples
    --------
    >>> has_repeated_message_text_run([{"type": "bot", "text": "Same again. " * 10}])
    True
    """
    _check_options(_ignored)
    items = _as_list(messages)
    defaults = detector_defaults("repeated_message_text_run")
    count = floored_at_least(last_messages, defaults["last_messages"], 1)
    options = {
        "min_units": text_min_units
        if is_finite_number(text_min_units)
        else defaults["text_min_units"],
        "window": text_window if is_finite_number(text_window) else defaults["text_window"],
        "max_unique_ratio": text_max_unique_ratio
        if is_finite_number(text_max_unique_ratio)
        else defaults["text_max_unique_ratio"],
    }
    for message in items[-count:]:
        m = _fields(message)
        kind, text = m.get("type"), m.get("text")
        if kind in ("reasoning", "activity") or not isinstance(text, str):
            continue
        if has_repeated_text_run(text, **options):
            return True
    return False


#: The heuristics in the order the original evaluates them, under their exact names.
HEURISTICS: tuple[tuple[str, Callable[..., bool]], ...] = (
    ("repeated_suffix", has_repeated_suffix),
    ("repeated_activity_tail", has_repeated_activity_tail),
    ("repeated_result_run", has_repeated_result_run),
    ("repeated_message_text_run", has_repeated_message_text_run),
)


def describe_thread_cycle(messages: Sequence[Any] | None, **options: object) -> str | None:
    """Name the first heuristic that considers the thread stuck, or ``None``.

    Accepts every option of the four heuristics (each reads its own).

    Examples
    --------
    >>> a, b = {"type": "user", "text": "again?"}, {"type": "bot", "text": "same"}
    >>> describe_thread_cycle([a, b, a, b])
    'repeated_suffix'
    >>> describe_thread_cycle([a, b]) is None
    True
    """
    _check_options(options)
    for name, heuristic in HEURISTICS:
        if heuristic(messages, **options):
            return name
    return None


def is_thread_cyclic(messages: Sequence[Any] | None, **options: object) -> bool:
    """Report whether any heuristic considers the thread stuck (short-circuits in order).

    Examples
    --------
    >>> is_thread_cyclic([{"type": "bot", "text": "hi"}])
    False
    """
    return describe_thread_cycle(messages, **options) is not None
