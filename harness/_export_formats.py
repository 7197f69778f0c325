"""Tuned options rendered for the upstream libraries: Go, TypeScript, JSON and TOML.

Only options that exist upstream are rendered as code; the rest are listed in
a comment so nothing tuned is silently dropped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["FORMATS", "render_options"]

FORMATS = ("go", "ts", "json", "toml")

# detector -> (Go struct, TypeScript call, {snake option: (Go field, TS key)}).
_UPSTREAM: dict[str, tuple[str, str, dict[str, tuple[str, str]]]] = {
    "repetition_guard": (
        "thread.GuardOptions",
        "createRepetitionGuard({{ {options} }})",
        {
            "ngram": ("Ngram", "ngram"),
            "window": ("Window", "window"),
            "max_repeats": ("MaxRepeats", "maxRepeats"),
            "max_unique_ratio": ("MaxUniqueRatio", "maxUniqueRatio"),
            "min_chars": ("MinChars", "minChars"),
        },
    ),
    "text_run": (
        "thread.TextRunOptions",
        "hasRepeatedTextRun(text, {{ {options} }})",
        {
            "min_units": ("MinUnits", "minUnits"),
            "window": ("Window", "window"),
            "max_unique_ratio": ("MaxUniqueRatio", "maxUniqueRatio"),
        },
    ),
}
_CYCLE_FIELDS = {
    "min_repetitions": ("MinRepetitions", "minRepetitions"),
    "min_pattern_length": ("MinPatternLength", "minPatternLength"),
    "max_pattern_length": ("MaxPatternLength", "maxPatternLength"),
    "min_result_repetitions": ("MinResultRepetitions", "minResultRepetitions"),
}
for _name in ("repeated_suffix", "repeated_result_run", "thread_cycle"):
    _UPSTREAM[_name] = (
        "thread.CycleOptions",
        "isThreadCyclic(messages, {{ {options} }})",
        _CYCLE_FIELDS,
    )


def _literal(value: Any, *, go: bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and not go:
            return str(int(value))
        return repr(value)
    return json.dumps(value)


def _go(detector: str, options: Mapping[str, Any]) -> list[str]:
    struct, _, fields = _UPSTREAM[detector]
    parts = [
        f"{fields[k][0]}: thread.Opt({_literal(v, go=True)})"
        for k, v in options.items()
        if k in fields and v is not None
    ]
    return [f"// {detector}", f"{struct}{{{', '.join(parts)}}}"]


def _ts(detector: str, options: Mapping[str, Any]) -> list[str]:
    _, call, fields = _UPSTREAM[detector]
    parts = [
        f"{fields[k][1]}: {_literal(v, go=False)}"
        for k, v in options.items()
        if k in fields and v is not None
    ]
    return [f"// {detector}", call.format(options=", ".join(parts)) + ";"]


def _toml_value(value: Any) -> str:
    if value is None:
        return '"null"'
    return _literal(value, go=False)


def render_options(tuned: Mapping[str, Mapping[str, Any]], fmt: str) -> str:
    """Render ``{detector: {option: value}}`` for pasting into an upstream library.

    Parameters
    ----------
    tuned : mapping
        The tuned options per detector (snake_case option names).
    fmt : {"go", "ts", "json", "toml"}
        Go ``thread`` package options structs, TypeScript calls, JSON, or TOML.

    Examples
    --------
    >>> print(render_options({"repetition_guard": {"ngram": 5, "max_unique_ratio": 0.35}}, "go"))
    // repetition_guard
    thread.GuardOptions{Ngram: thread.Opt(5), MaxUniqueRatio: thread.Opt(0.35)}
    >>> print(render_options({"repetition_guard": {"ngram": 5}}, "ts"))
    // repetition_guard
    createRepetitionGuard({ ngram: 5 });
    """
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if fmt == "json":
        return json.dumps(tuned, indent=2, ensure_ascii=False)
    if fmt == "toml":
        lines = []
        for detector, options in tuned.items():
            lines.append(f"[{detector}]")
            lines += [f"{key} = {_toml_value(value)}" for key, value in options.items()]
            lines.append("")
        return "\n".join(lines).rstrip() + "\n"
    lines: list[str] = []
    for detector, options in tuned.items():
        if detector not in _UPSTREAM:
            lines.append(f"// {detector}: no upstream option struct; tuned values: {dict(options)}")
            continue
        lines += _go(detector, options) if fmt == "go" else _ts(detector, options)
        fields = _UPSTREAM[detector][2]
        rest = {k: v for k, v in options.items() if k not in fields}
        if rest:
            lines.append(f"// not an upstream option (loopguard only): {rest}")
    return "\n".join(lines)
