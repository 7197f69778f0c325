"""``repeated_result_run``: the last settled tool results are identical calls and results.

Evaluated on every prefix with :class:`~harness.detectors._incremental.ResultRunCheck`
(``has_repeated_result_run(prefix, **params)``, each result serialised once).
"""

from __future__ import annotations

from ._base import Detector, Param, incremental_check, register
from ._incremental import ResultRunCheck

__all__ = ["PARAMS"]

_BLOCK = "repeated_result_run"

PARAMS = (
    Param(
        "min_result_repetitions",
        "int",
        low=2,
        high=8,
        block=_BLOCK,
        description="identical settled results in a row",
    ),
)

register(
    Detector(
        name="repeated_result_run",
        kind="thread",
        description="has_repeated_result_run on every prefix of the thread",
        defaults_key=_BLOCK,
        params=PARAMS,
        build=incremental_check(ResultRunCheck, "repeated_result_run"),
    )
)
