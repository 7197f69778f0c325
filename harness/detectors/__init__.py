"""The detector registry: every detector the harness can replay, with its parameter space.

Each detector is one small module of this package that calls
:func:`register` at import; this package imports the built-in ones in a fixed
order and then every other public module it contains, so adding a detector is
adding one file (``docs/evaluation.md``, "How to add a detector").

Examples
--------
>>> from harness.detectors import get_detector
>>> guard = get_detector("repetition_guard")
>>> guard.kind, guard.defaults["min_chars"], guard.presets["production"]["min_chars"]
('stream', 0, 2000)
>>> guard.validate({"ngram": 12})
Traceback (most recent call last):
...
harness.detectors._base.ParameterError: repetition_guard.ngram must be an integer in [2, 8]; got 12
"""

from __future__ import annotations

import importlib
import pkgutil

from ._base import (
    MODEL_TEXT_EXCLUDED,
    PARAM_TYPES,
    REGISTRY,
    CheckAdapter,
    Detector,
    DetectorError,
    Fire,
    Param,
    ParameterError,
    PrefixAdapter,
    StreamAdapter,
    ThreadAdapter,
    UnknownDetectorError,
    detector_names,
    get_detector,
    incremental_check,
    is_model_text,
    prefix_check,
    reads_types,
    register,
    resolve_params,
)

__all__ = [
    "BUILTIN",
    "MODEL_TEXT_EXCLUDED",
    "PARAM_TYPES",
    "REGISTRY",
    "CheckAdapter",
    "Detector",
    "DetectorError",
    "Fire",
    "Param",
    "ParameterError",
    "PrefixAdapter",
    "StreamAdapter",
    "ThreadAdapter",
    "UnknownDetectorError",
    "detector_names",
    "get_detector",
    "incremental_check",
    "is_model_text",
    "prefix_check",
    "reads_types",
    "register",
    "resolve_params",
]

#: The built-in detectors, in the order listings and reports show them.
BUILTIN = (
    "repeated_suffix",
    "repeated_activity_tail",
    "repeated_result_run",
    "repeated_message_text_run",
    "thread_cycle",
    "repetition_guard",
    "text_run",
    "overthinking",
    "alm",
    "near_duplicate_result_run",
    "error_retry",
    "paraphrase_loop",
    "stall",
)

for _name in BUILTIN:
    importlib.import_module(f"{__name__}.{_name}")
# Detectors added later are discovered: any public module of this package.
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
    if not _info.name.startswith("_") and _info.name not in BUILTIN:
        importlib.import_module(f"{__name__}.{_info.name}")
