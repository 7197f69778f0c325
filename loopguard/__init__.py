"""loopguard: detectors for agents that loop, chant or overthink.

Standard library only. Faithful ports of the production thread heuristics and
streaming guard, the overthinking detector and the Anti-Looping Monitor; every
default lives in ``defaults.json``.
"""

from __future__ import annotations

from ._alm import (
    ARGS_ENCODINGS,
    HALT_COUNTINGS,
    Action,
    AntiLoopingMonitor,
    EmergencyHalt,
    InjectWarning,
    TemperatureSkew,
    action_hash,
    canonical_json,
    encode_arguments,
    state_change_percent,
)
from ._cycle import (
    CYCLE_OPTIONS,
    HEURISTICS,
    describe_thread_cycle,
    has_repeated_activity_tail,
    has_repeated_message_text_run,
    has_repeated_result_run,
    has_repeated_suffix,
    is_thread_cyclic,
)
from ._defaults import defaults_path, detector_defaults, load_defaults, preset
from ._errors import DefaultsError, LoopguardError, OptionError, StreamError
from ._guard import GuardReason, RepetitionGuard
from ._textrun import has_repeated_text_run, text_units
from ._thread import BuiltThread, build_thread

__version__ = "0.1.0"

__all__ = [
    "ARGS_ENCODINGS",
    "CYCLE_OPTIONS",
    "HALT_COUNTINGS",
    "HEURISTICS",
    "Action",
    "AntiLoopingMonitor",
    "BuiltThread",
    "DefaultsError",
    "EmergencyHalt",
    "GuardReason",
    "InjectWarning",
    "LoopguardError",
    "OptionError",
    "RepetitionGuard",
    "StreamError",
    "TemperatureSkew",
    "__version__",
    "action_hash",
    "build_thread",
    "canonical_json",
    "defaults_path",
    "describe_thread_cycle",
    "detector_defaults",
    "encode_arguments",
    "has_repeated_activity_tail",
    "has_repeated_message_text_run",
    "has_repeated_result_run",
    "has_repeated_suffix",
    "has_repeated_text_run",
    "is_thread_cyclic",
    "load_defaults",
    "preset",
    "state_change_percent",
    "text_units",
]
