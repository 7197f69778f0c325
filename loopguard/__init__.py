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
from ._anchor import DEFAULT_INVARIANTS, anchor_system_prompt
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
from ._lexicons import LEXICONS, SEED_PATTERNS, lexicon_patterns, marker_pattern
from ._neardup import (
    ERROR_MARKERS,
    MESSAGE_TYPE_SETS,
    ErrorRetry,
    NearDuplicateResultRun,
    ParaphraseLoop,
    Scorer,
    has_error_retry,
    has_near_duplicate_result_run,
    has_paraphrase_loop,
    is_error_result,
    settled_result,
)
from ._overthinking import COUNTING_MODES, OverthinkingDetector, OverthinkingResult
from ._similarity import (
    SIMILARITY_METHODS,
    jaccard,
    normalize_text,
    normalize_value,
    shingle_set,
    text_similarity,
    token_set,
    value_text,
)
from ._sse import iter_sse_events
from ._stall import StallDetector, has_stalled
from ._stream import (
    ANTHROPIC_VERSION,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODEL,
    DEFAULT_THINKING_BUDGET,
    DEFAULT_TIMEOUT,
    DEFAULT_URL,
    GuardedResult,
    MessageStream,
    execute_guarded_reasoning,
    guarded_reasoning,
    stream_messages,
)
from ._textrun import has_repeated_text_run, text_units
from ._thread import BuiltThread, build_thread

__version__ = "0.1.0"

__all__ = [
    "ANTHROPIC_VERSION",
    "ARGS_ENCODINGS",
    "COUNTING_MODES",
    "CYCLE_OPTIONS",
    "DEFAULT_INVARIANTS",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODEL",
    "DEFAULT_THINKING_BUDGET",
    "DEFAULT_TIMEOUT",
    "DEFAULT_URL",
    "ERROR_MARKERS",
    "HALT_COUNTINGS",
    "HEURISTICS",
    "LEXICONS",
    "MESSAGE_TYPE_SETS",
    "SEED_PATTERNS",
    "SIMILARITY_METHODS",
    "Action",
    "AntiLoopingMonitor",
    "BuiltThread",
    "DefaultsError",
    "EmergencyHalt",
    "ErrorRetry",
    "GuardReason",
    "GuardedResult",
    "InjectWarning",
    "LoopguardError",
    "MessageStream",
    "NearDuplicateResultRun",
    "OptionError",
    "OverthinkingDetector",
    "OverthinkingResult",
    "ParaphraseLoop",
    "RepetitionGuard",
    "Scorer",
    "StallDetector",
    "StreamError",
    "TemperatureSkew",
    "__version__",
    "action_hash",
    "anchor_system_prompt",
    "build_thread",
    "canonical_json",
    "defaults_path",
    "describe_thread_cycle",
    "detector_defaults",
    "encode_arguments",
    "execute_guarded_reasoning",
    "guarded_reasoning",
    "has_error_retry",
    "has_near_duplicate_result_run",
    "has_paraphrase_loop",
    "has_repeated_activity_tail",
    "has_repeated_message_text_run",
    "has_repeated_result_run",
    "has_repeated_suffix",
    "has_repeated_text_run",
    "has_stalled",
    "is_error_result",
    "is_thread_cyclic",
    "iter_sse_events",
    "jaccard",
    "lexicon_patterns",
    "load_defaults",
    "marker_pattern",
    "normalize_text",
    "normalize_value",
    "preset",
    "settled_result",
    "shingle_set",
    "state_change_percent",
    "stream_messages",
    "text_similarity",
    "text_units",
    "token_set",
    "value_text",
]
