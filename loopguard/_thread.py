"""``build_thread``: the largest newest suffix of a conversation that fits a token budget."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._defaults import detector_defaults
from ._errors import OptionError
from ._js import JS_WHITESPACE, is_finite_number

__all__ = ["BuiltThread", "build_thread"]

Message = dict[str, Any]
Estimator = Callable[[Mapping[str, Any]], Any]
Inclusive = Callable[[Message, float], Any]

_JS_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)")


@dataclass
class BuiltThread:
    """The assembled thread: ``messages`` oldest first, each with its ``usage``, and the total."""

    messages: list[Message]
    usage: dict[str, Any] = field(default_factory=lambda: {"tokens": 0})

    def as_dict(self) -> dict[str, Any]:
        """The JavaScript result shape ``{messages, usage: {tokens}}``."""
        return {"messages": self.messages, "usage": self.usage}


def _to_number(value: object) -> float:
    """JavaScript ``ToNumber`` for JSON-like values (used where the original coerces)."""
    if value is None or value is False:
        return 0.0
    if value is True:
        return 1.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip(JS_WHITESPACE)
        if text == "":
            return 0.0
        if text in ("Infinity", "+Infinity"):
            return math.inf
        if text == "-Infinity":
            return -math.inf
        lowered = text[:2].lower()
        for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
            if lowered == prefix:
                try:
                    return float(int(text[2:], base))
                except ValueError:
                    return math.nan
        return float(text) if _JS_DECIMAL.fullmatch(text) else math.nan
    if isinstance(value, list | tuple):
        # An array becomes the string of its elements joined by commas.
        if len(value) == 0:
            return 0.0
        if len(value) == 1:
            item = value[0]
            if item is None:
                return 0.0
            if isinstance(item, str) or is_finite_number(item):
                return _to_number(item)
        return math.nan
    return math.nan


def _js_truthy(value: object) -> bool:
    if value is None or value is False or value == "":
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value != 0 and not math.isnan(value)
    return True


def normalize_token_count(value: object) -> float:
    """``normalizeTokenCount``: a finite non-negative number, else ``0``."""
    if is_finite_number(value) and value >= 0:  # type: ignore[operator]
        return value  # type: ignore[return-value]
    return 0


def _tokens_of(usage: object) -> object:
    """``usage?.tokens``, with a missing key reported as the ``_MISSING`` marker."""
    if isinstance(usage, Mapping):
        return usage.get("tokens", _MISSING)
    return getattr(usage, "tokens", _MISSING) if usage is not None else _MISSING


_MISSING = object()


def _kept_usage(usage: object) -> bool:
    """``usage?.tokens >= 0`` under JavaScript's relational coercion."""
    tokens = _tokens_of(usage)
    if tokens is _MISSING:
        return False
    if isinstance(tokens, dict):
        return False
    number = _to_number(tokens)
    return not math.isnan(number) and number >= 0


def build_thread(
    messages: Sequence[Mapping[str, Any]] | None,
    *,
    max_tokens: object,
    estimate: Estimator | None = None,
    min_messages: object = None,
    inclusive: Inclusive | bool | None = None,
) -> BuiltThread:
    """Assemble the largest newest suffix of ``messages`` that fits ``max_tokens``.

    A port of ``buildThread`` (see ``docs/spec/thread-algorithms.md`` §1),
    quirks included: every message is estimated up front, the newest
    ``min_messages`` are always kept, and a straddling message is kept whole
    (``inclusive=True``) or trimmed by ``inclusive(message, trim_to)``.

    Parameters
    ----------
    messages : sequence of dict
        The conversation, oldest first. Each message is copied, never mutated.
    max_tokens : number
        The budget. Like the original, a value that is not a number never trims.
    estimate : callable, optional
        ``estimate(message) -> {"tokens": n}``, called in order for every
        message that does not carry a usable ``usage``.
    min_messages : int, optional
        The newest messages kept even over budget (absolute value; default 0).
    inclusive : bool or callable, optional
        Keep the message that straddles the budget (``True``) or trim it with a
        function returning the trimmed message or ``False`` to drop it.

    Returns
    -------
    BuiltThread
        ``messages`` (each with ``usage``) and ``usage`` (``{"tokens": total}``).

    Examples
    --------
    >>> msgs = [{"text": "a", "usage": {"tokens": 5}}, {"text": "b", "usage": {"tokens": 10}}]
    >>> build_thread(msgs, max_tokens=12).usage
    {'tokens': 10}
    """
    if messages is None:
        return BuiltThread([], {"tokens": 0})
    if isinstance(messages, str | bytes | Mapping):
        raise OptionError("messages must be a sequence of message objects")
    default_min = detector_defaults("build_thread")["min_messages"]
    minimum = abs(min_messages if is_finite_number(min_messages) else default_min)  # type: ignore[arg-type]
    limit = max_tokens if is_finite_number(max_tokens) else _to_number(max_tokens)

    processed: list[Message] = []
    for index, original in enumerate(messages):
        source = dict(original) if isinstance(original, Mapping) else {}
        usage = source.get("usage")
        if _kept_usage(usage):
            estimated: object = usage
        else:
            if estimate is None:
                raise OptionError(
                    f"estimate is required: message {index} carries no usage with tokens >= 0"
                )
            estimated = estimate(original)
        rest = {key: value for key, value in source.items() if key != "usage"}
        rest["usage"] = {"tokens": normalize_token_count(_tokens_of(estimated))}
        processed.append(rest)

    limit = float(limit) if not isinstance(limit, int | float) else limit  # type: ignore[arg-type]
    total: float = 0
    out: list[Message] = []
    count = len(processed)
    keep_straddler = _js_truthy(inclusive)
    for i in range(count - 1, -1, -1):
        msg = processed[i]
        tokens = normalize_token_count(msg["usage"]["tokens"])
        within_min = (count - i) <= minimum
        if total + tokens > limit and not within_min:
            if keep_straddler:
                if callable(inclusive):
                    trim_to = limit - total
                    if trim_to > 0:
                        result = inclusive(msg, trim_to)
                        if result is False:
                            break
                        msg = result
                        tokens = normalize_token_count(
                            _tokens_of(result.get("usage") if isinstance(result, Mapping) else None)
                        )
                        if tokens > trim_to:
                            tokens = trim_to
                            carried = result.get("usage") if isinstance(result, Mapping) else None
                            new_usage = dict(carried) if isinstance(carried, Mapping) else {}
                            new_usage["tokens"] = trim_to
                            msg = {**result, "usage": new_usage}
                total += tokens
                out.append(msg)
            break
        total += tokens
        out.append(msg)
        if total >= limit and not within_min and not keep_straddler:
            break
    out.reverse()
    return BuiltThread(out, {"tokens": total})
