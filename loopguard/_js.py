"""JavaScript semantics the original implementations depend on.

The production detectors are TypeScript; their results depend on details of
JavaScript strings (UTF-16 lengths, the ``\\s`` whitespace set, full Unicode
lower-casing) and of ``JSON.stringify``. This module reproduces exactly those
details so that the ports agree with the conformance corpus.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

__all__ = [
    "JS_WHITESPACE",
    "is_finite_number",
    "js_stringify",
    "safe_stringify",
    "utf16_len",
    "utf16_tail",
]

#: The characters JavaScript's ``\\s`` and ``String.prototype.trim`` treat as whitespace.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
WS_CLASS = "[" + re.escape(JS_WHITESPACE) + "]"

UNSERIALIZABLE = '"[unserializable]"'


def is_finite_number(value: object) -> bool:
    """``Number.isFinite(value)``: a real, finite number, and not a bool."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value)


def utf16_len(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def utf16_tail(text: str, units: int) -> str:
    """``text.slice(-units)`` in UTF-16 units; a cut astral pair leaves a lone low surrogate."""
    if utf16_len(text) <= units:
        return text
    taken = 0
    i = len(text)
    while i > 0 and taken < units:
        width = 2 if ord(text[i - 1]) > 0xFFFF else 1
        if taken + width > units:
            # Only the low half of the pair fits, as JavaScript would keep it.
            low = 0xDC00 + ((ord(text[i - 1]) - 0x10000) & 0x3FF)
            return chr(low) + text[i:]
        taken += width
        i -= 1
    return text[i:]


_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\ud800-\udfff]')


def _escape_char(match: re.Match[str]) -> str:
    ch = match.group(0)
    return _ESCAPES.get(ch) or f"\\u{ord(ch):04x}"


def _quote(text: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, text) + '"'


def js_number(value: float | int) -> str:
    """Format a number as ``JSON.stringify`` does (non-finite numbers become ``null``).

    Examples
    --------
    >>> [js_number(v) for v in (1.0, 1e21, 1e-7, 1e16, 0.5)]
    ['1', '1e+21', '1e-7', '10000000000000000', '0.5']
    """
    if isinstance(value, int) and abs(value) < 2**53:
        return str(value)
    number = float(value)
    if not math.isfinite(number):
        return "null"
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    # repr() is the shortest round-trip form, as in JavaScript; only the layout differs.
    _, digit_tuple, exponent = Decimal(repr(abs(number))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    k = len(digits)
    # ECMA-262 Number::toString: the value is 0.digits * 10**point.
    point = len(digit_tuple) + int(exponent)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    exp = point - 1
    exp_str = f"e+{exp}" if exp >= 0 else f"e-{-exp}"
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return sign + mantissa + exp_str


class _Undefined:
    """Marker for values ``JSON.stringify`` turns into ``undefined``."""


UNDEFINED = _Undefined()


def _object_keys(obj: dict[Any, Any]) -> list[tuple[str, Any]]:
    # JavaScript orders integer-like keys (canonical array indexes) first, ascending.
    items = [(k if isinstance(k, str) else _key_text(k), v) for k, v in obj.items()]
    index_keys = [(k, v) for k, v in items if _is_array_index(k)]
    if not index_keys:
        return items
    rest = [(k, v) for k, v in items if not _is_array_index(k)]
    index_keys.sort(key=lambda kv: int(kv[0]))
    return index_keys + rest


def _key_text(key: object) -> str:
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int | float):
        return js_number(key)
    return str(key)


def _is_array_index(key: str) -> bool:
    return (
        key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and int(key) < 2**32 - 1
    )


def _encode(value: Any, stack: list[int]) -> str | _Undefined:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, dict | list | tuple):
        ident = id(value)
        if ident in stack:
            raise ValueError("Converting circular structure to JSON")
        stack.append(ident)
        try:
            if isinstance(value, dict):
                parts = []
                for key, item in _object_keys(value):
                    encoded = _encode(item, stack)
                    if encoded is UNDEFINED:
                        continue
                    parts.append(_quote(key) + ":" + str(encoded))
                return "{" + ",".join(parts) + "}"
            items = [_encode(item, stack) for item in value]
            return "[" + ",".join("null" if e is UNDEFINED else str(e) for e in items) + "]"
        finally:
            stack.pop()
    if value is UNDEFINED or callable(value):
        return UNDEFINED
    raise TypeError(f"cannot serialize {type(value).__name__} as JSON")


def js_stringify(value: Any) -> str | None:
    """``JSON.stringify(value)``; ``None`` where JavaScript returns ``undefined``.

    Python ``None`` is JSON ``null``; :data:`UNDEFINED` and callables are
    ``undefined``. Raises on circular structures and on unsupported types.
    """
    encoded = _encode(value, [])
    return None if encoded is UNDEFINED else str(encoded)


def safe_stringify(value: Any) -> str | None:
    """``safeStringify``: ``JSON.stringify`` or the 18-character ``"[unserializable]"``."""
    try:
        return js_stringify(value)
    except (ValueError, TypeError, RecursionError):
        return UNSERIALIZABLE
