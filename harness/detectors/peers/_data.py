"""The peers' defaults document and the constructor of their registry entries.

The peers are not part of the ``loopguard`` library, so their production
thresholds do not live in ``loopguard/defaults.json``: they live in
``defaults.json`` next to this module, with the provenance of every value.
:func:`peer_detector` builds a :class:`~harness.detectors.Detector` whose
defaults and presets are read from that document.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import Any

from .._base import (
    AdapterFactory,
    Detector,
    DetectorError,
    Kind,
    Param,
    is_model_text,
)

__all__ = ["DEFAULTS_FILE", "constants", "load_document", "peer_detector"]

#: The file, in this package, that holds every peer default.
DEFAULTS_FILE = "defaults.json"


@cache
def _load() -> dict[str, Any]:
    try:
        text = resources.files(__package__).joinpath(DEFAULTS_FILE).read_text(encoding="utf-8")
        data: dict[str, Any] = json.loads(text)
    except (OSError, ValueError) as exc:  # pragma: no cover - a broken install
        raise DetectorError(f"cannot read harness/detectors/peers/{DEFAULTS_FILE}: {exc}") from exc
    for key in ("detectors", "provenance"):
        if not isinstance(data, dict) or not isinstance(data.get(key), dict):
            raise DetectorError(f"harness/detectors/peers/{DEFAULTS_FILE} has no {key!r} object")
    return data


def load_document() -> dict[str, Any]:
    """A deep copy of the peers' ``defaults.json``.

    Examples
    --------
    >>> load_document()["detectors"]["roo_code"]["limit"]
    3
    """
    return copy.deepcopy(_load())


def constants(name: str) -> dict[str, Any]:
    """The fixed (not tunable) source constants of peer ``name``, a deep copy.

    Examples
    --------
    >>> constants("qwen_code")["polling_tool_sets"]["qwen"]
    ['task_list']
    """
    found = _load().get("constants", {}).get(name)
    if not isinstance(found, dict):
        raise DetectorError(f"the peers' {DEFAULTS_FILE} has no constants for {name!r}")
    return copy.deepcopy(found)


def peer_detector(
    *,
    name: str,
    kind: Kind,
    description: str,
    params: tuple[Param, ...],
    build: Callable[[Mapping[str, Any]], AdapterFactory],
    reads: Callable[[Mapping[str, Any]], bool] = is_model_text,
) -> Detector:
    """A registry entry for peer ``name``, its defaults and presets read from the peers' file.

    The defaults block and the presets block are both named ``name``.

    Raises
    ------
    DetectorError
        The peers' file has no default for a parameter, or one out of its bounds.
    """
    return Detector(
        name=name,
        kind=kind,
        description=description,
        defaults_key=name,
        params=params,
        build=build,
        reads=reads,
        defaults_document=_load(),
    )
