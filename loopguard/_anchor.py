"""Premise anchoring: pin the reasoning space with invariants in the system prompt."""

from __future__ import annotations

from collections.abc import Iterable

from ._errors import OptionError
from ._js import JS_WHITESPACE

__all__ = ["DEFAULT_INVARIANTS", "anchor_system_prompt"]

#: The four invariants of the overthinking-detector design, verbatim.
DEFAULT_INVARIANTS: tuple[str, ...] = (
    "Do NOT reconsider the fundamental architectural premise once chosen.",
    "Assume happy path runtime guarantees: Environment is Node.js 22 LTS, single-process, "
    "64-bit architecture.",
    "Do NOT invent hypothetical edge cases outside standard POSIX / ECMAScript specifications.",
    "If a valid solution is reached, conclude reasoning immediately and emit the output.",
)

_HEADER = "[CRITICAL EXECUTION INVARIANTS]:"


def anchor_system_prompt(prompt: str, invariants: Iterable[str] | None = None) -> str:
    """Append numbered execution invariants to a system prompt, as the design does.

    Builds ``"\\n{prompt}\\n\\n[CRITICAL EXECUTION INVARIANTS]:\\n1. ...\\n"`` and
    trims it with JavaScript ``String.prototype.trim`` semantics.

    Parameters
    ----------
    prompt : str
        The caller's system prompt.
    invariants : iterable of str, optional
        The invariant lines, numbered 1..n; :data:`DEFAULT_INVARIANTS` when
        omitted. Must be non-empty and hold non-blank strings.

    Raises
    ------
    OptionError
        When ``prompt`` is not a string or ``invariants`` is not a non-empty
        collection of non-blank strings.

    Examples
    --------
    >>> print(anchor_system_prompt("You are terse.", ["Pick one design.", "Stop when done."]))
    You are terse.
    <BLANKLINE>
    [CRITICAL EXECUTION INVARIANTS]:
    1. Pick one design.
    2. Stop when done.
    """
    if not isinstance(prompt, str):
        raise OptionError(f"prompt must be a string; got {type(prompt).__name__}")
    lines = DEFAULT_INVARIANTS if invariants is None else _check_invariants(invariants)
    numbered = "".join(f"{number}. {line}\n" for number, line in enumerate(lines, 1))
    return f"\n{prompt}\n\n{_HEADER}\n{numbered}".strip(JS_WHITESPACE)


def _check_invariants(invariants: object) -> tuple[str, ...]:
    if isinstance(invariants, str | bytes) or not isinstance(invariants, Iterable):
        raise OptionError(
            "invariants must be a list of strings (one invariant each); "
            f"got {type(invariants).__name__}"
        )
    lines = tuple(invariants)
    if not lines:
        raise OptionError("invariants must hold at least one invariant (None for the defaults)")
    for index, line in enumerate(lines):
        if not isinstance(line, str) or not line.strip(JS_WHITESPACE):
            raise OptionError(f"invariants[{index}] must be a non-blank string; got {line!r}")
    return lines
