"""Option normalisation shared by the detectors.

The originals treat an option as given only when it is a finite number
(``Number.isFinite``); anything else - ``None``, NaN, infinities, strings,
booleans - silently means "use the default". Given values are floored and
clamped rather than rejected, because ``0`` is a meaningful request for "as
low as possible". These helpers reproduce that, so the ports never raise on
an option value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NoReturn, cast

from ._defaults import detector_defaults
from ._errors import DefaultsError, OptionError
from ._js import is_finite_number

__all__ = ["UNSET", "OptionResolver", "clamped_float", "floored_at_least", "given"]


def given(value: object) -> bool:
    """Whether ``value`` counts as given: a finite number that is not a bool."""
    return is_finite_number(value)


def floored_at_least(value: object, default: float, minimum: int) -> int:
    """``finite(v) ? max(minimum, floor(v)) : max(minimum, floor(default))``."""
    chosen = cast(float, value) if is_finite_number(value) else default
    return max(minimum, math.floor(chosen))


def clamped_float(value: object, default: float, low: float, high: float) -> float:
    """``finite(v) ? clamp(v, low, high) : default`` (not floored)."""
    if is_finite_number(value):
        return float(min(high, max(low, cast(float, value))))
    return float(default)


UNSET: Any = object()
"""Marks an option that was not passed, where ``None`` itself is a meaningful value."""


class OptionResolver:
    """Resolve the options of one detector: a given value is checked, an absent one read
    from its ``defaults.json`` block (and checked too, so a broken file is reported).

    Parameters
    ----------
    block : str
        The detector's block in ``defaults.json``.
    nonfinite_is_absent : bool
        Whether NaN and infinities count as absent (the originals' convention),
        rather than as invalid values.

    Examples
    --------
    >>> options = OptionResolver("alm", nonfinite_is_absent=True)
    >>> options.integer("max_repeated_tool_calls", float("nan"), 2)
    3
    >>> OptionResolver("alm").integer("max_repeated_tool_calls", 1, 2)
    Traceback (most recent call last):
    ...
    loopguard._errors.OptionError: max_repeated_tool_calls must be an integer >= 2; got 1
    """

    def __init__(self, block: str, *, nonfinite_is_absent: bool = False) -> None:
        self._block = block
        self._nonfinite_is_absent = nonfinite_is_absent
        self._defaults: dict[str, Any] | None = None

    def _pick(self, name: str, value: object, none_is_value: bool = False) -> tuple[Any, bool]:
        absent = value is UNSET or (value is None and not none_is_value)
        if self._nonfinite_is_absent and isinstance(value, float) and not math.isfinite(value):
            absent = True
        if not absent:
            return value, False
        if self._defaults is None:
            self._defaults = detector_defaults(self._block)
        if name not in self._defaults:
            raise DefaultsError(f"defaults.json block {self._block!r} has no option {name!r}")
        return self._defaults[name], True

    def _fail(self, name: str, allowed: str, value: object, from_defaults: bool) -> NoReturn:
        if from_defaults:
            raise DefaultsError(
                f"defaults.json: {self._block}.{name} must be {allowed}; got {value!r}"
            )
        raise OptionError(f"{name} must be {allowed}; got {value!r}")

    def integer(self, name: str, value: object, minimum: int) -> int:
        """A count: an int (or integral float) of at least ``minimum``; bools are not counts."""
        chosen, from_defaults = self._pick(name, value)
        if isinstance(chosen, float) and chosen.is_integer():
            chosen = int(chosen)
        if isinstance(chosen, bool) or not isinstance(chosen, int) or chosen < minimum:
            self._fail(name, f"an integer >= {minimum}", chosen, from_defaults)
        return chosen

    def optional_integer(self, name: str, value: object, minimum: int) -> int | None:
        """Like :meth:`integer`, where ``None`` is a value (pass :data:`UNSET` for absent)."""
        chosen, from_defaults = self._pick(name, value, none_is_value=True)
        if chosen is None:
            return None
        if isinstance(chosen, float) and chosen.is_integer():
            chosen = int(chosen)
        if isinstance(chosen, bool) or not isinstance(chosen, int) or chosen < minimum:
            self._fail(name, f"an integer >= {minimum} or None", chosen, from_defaults)
        return chosen

    def number(self, name: str, value: object, low: float, high: float) -> float:
        """A finite number in ``[low, high]`` (``high`` may be infinite)."""
        chosen, from_defaults = self._pick(name, value)
        allowed = (
            f"a finite number >= {low:g}"
            if math.isinf(high)
            else f"a finite number in [{low:g}, {high:g}]"
        )
        if isinstance(chosen, bool) or not isinstance(chosen, int | float):
            self._fail(name, allowed, chosen, from_defaults)
        try:
            number = float(chosen)
        except OverflowError:
            self._fail(name, allowed, chosen, from_defaults)
        if not math.isfinite(number) or not low <= number <= high:
            self._fail(name, allowed, chosen, from_defaults)
        return number

    def choice(self, name: str, value: object, allowed: Sequence[str]) -> str:
        """One of the ``allowed`` strings."""
        chosen, from_defaults = self._pick(name, value)
        if not isinstance(chosen, str) or chosen not in allowed:
            self._fail(name, "one of " + ", ".join(repr(a) for a in allowed), chosen, from_defaults)
        return chosen

    def flag(self, name: str, value: object) -> bool:
        """``True`` or ``False``."""
        chosen, from_defaults = self._pick(name, value)
        if not isinstance(chosen, bool):
            self._fail(name, "True or False", chosen, from_defaults)
        return chosen
