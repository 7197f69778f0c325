"""Defaults as data: every detector's default options live in ``defaults.json``.

The harness rewrites that file when it exports tuned values, so no default is
written anywhere else in the library: each options object is built from here.
The environment variable ``LOOPGUARD_DEFAULTS`` names another file to use
instead (read once, at the first use), for trying an exported copy without
touching the installed one.
"""

from __future__ import annotations

import copy
import json
import os
from functools import cache
from importlib import resources
from typing import Any

from ._errors import DefaultsError

__all__ = ["defaults_path", "detector_defaults", "load_defaults", "preset"]

_FILE = "defaults.json"
ENV_VAR = "LOOPGUARD_DEFAULTS"


def defaults_path() -> str:
    """Return the path of the defaults file in use (``LOOPGUARD_DEFAULTS`` or the library's)."""
    override = os.environ.get(ENV_VAR)
    if override:
        return override
    return str(resources.files("loopguard").joinpath(_FILE))


@cache
def _load() -> dict[str, Any]:
    path = defaults_path()
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise DefaultsError(f"cannot read the defaults file {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("detectors"), dict):
        raise DefaultsError(f"the defaults file {path} has no 'detectors' object")
    return data


def load_defaults() -> dict[str, Any]:
    """Return a deep copy of the whole ``defaults.json`` document.

    Examples
    --------
    >>> load_defaults()["detectors"]["repetition_guard"]["ngram"]
    4
    """
    return copy.deepcopy(_load())


def detector_defaults(name: str) -> dict[str, Any]:
    """Return a copy of the default options of detector ``name``.

    Raises
    ------
    DefaultsError
        When ``defaults.json`` has no block for ``name``.
    """
    detectors = _load()["detectors"]
    if name not in detectors:
        known = ", ".join(sorted(detectors))
        raise DefaultsError(f"defaults.json has no detector {name!r}; known: {known}")
    return dict(detectors[name])


def preset(detector: str, name: str) -> dict[str, Any]:
    """Return the defaults of ``detector`` overlaid with its named preset ``name``.

    Examples
    --------
    >>> preset("repetition_guard", "production")["min_chars"]
    2000
    """
    presets = _load().get("presets", {}).get(detector, {})
    if name not in presets:
        known = ", ".join(sorted(presets)) or "none"
        raise DefaultsError(f"detector {detector!r} has no preset {name!r}; known: {known}")
    merged = detector_defaults(detector)
    merged.update(presets[name])
    return merged
