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
from typing import cast

from ._js import is_finite_number

__all__ = ["clamped_float", "floored_at_least", "given"]


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
