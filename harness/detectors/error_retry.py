"""``error_retry``: the same tool error came back several times within a few calls.

Whatever the arguments: errors are compared by their normalised first
characters (``docs/neardup.md`` says what counts as an error).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loopguard import ErrorRetry

from ._base import Detector, Param, register
from ._monitor import monitor_build

__all__ = ["PARAMS", "build"]

_BLOCK = "error_retry"

PARAMS = (
    Param("min_errors", "int", low=2, high=8, description="similar errors, the latest included"),
    Param("window", "int", low=2, high=64, description="settled results looked back over"),
    Param(
        "similarity_threshold",
        "float",
        low=0.3,
        high=1.0,
        description="minimum Jaccard similarity of two error signatures",
    ),
    Param("same_tool", "bool", description="count only errors of the same tool"),
    Param(
        "head_chars",
        "int",
        low=40,
        high=2000,
        log=True,
        description="characters of a result read for error markers and the signature",
    ),
)


def _make(options: Mapping[str, Any]) -> ErrorRetry:
    return ErrorRetry(**options)


build = monitor_build(_BLOCK, _make)

register(
    Detector(
        name=_BLOCK,
        kind="thread",
        description="ErrorRetry: the same tool error several times within a window of calls",
        defaults_key=_BLOCK,
        params=PARAMS,
        build=build,
    )
)
