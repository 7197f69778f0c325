"""``alm``: the Anti-Looping Monitor observing every message of the thread.

The first ladder action (step 1, the temperature skew, or a halt if it comes
first) counts as the fire. The monitor keeps observing after that, and the
verdict's ``ladder`` lists every action: message index, step, kind and reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loopguard import ARGS_ENCODINGS, HALT_COUNTINGS, AntiLoopingMonitor

from ._base import Detector, Fire, Param, register
from ._monitor import checked_build

__all__ = ["PARAMS"]

PARAMS = (
    Param("max_repeated_tool_calls", "int", low=2, high=8, description="identical calls in a row"),
    Param("drift_window", "int", low=2, high=10, description="turns over which state must drift"),
    Param(
        "state_drift_threshold_percent",
        "float",
        low=0.0,
        high=1.0,
        description="minimum state change (percent) that counts",
    ),
    Param(
        "args_encoding", "categorical", choices=ARGS_ENCODINGS, description="argument JSON for hash"
    ),
    Param(
        "base_temperature",
        "float",
        low=0.0,
        high=2.0,
        tune=False,
        description="temperature before the skew (no effect on verdicts)",
    ),
    Param(
        "skewed_temperature",
        "float",
        low=0.0,
        high=2.0,
        tune=False,
        description="temperature of the skew (no effect on verdicts)",
    ),
    Param(
        "max_turn_execution_count",
        "int",
        low=1,
        high=1000,
        tune=False,
        description="counted turns in a loop that halt (no effect on the first fire)",
    ),
    Param(
        "halt_counting",
        "categorical",
        choices=HALT_COUNTINGS,
        tune=False,
        description="turns counted for the halt (no effect on the first fire)",
    ),
    Param(
        "reset_on_progress",
        "bool",
        tune=False,
        description="progress resets the ladder (no effect on the first fire)",
    ),
)


class _Adapter:
    follow_after_fire = True

    def __init__(self, options: Mapping[str, Any]) -> None:
        self._monitor = AntiLoopingMonitor(**options)
        self._index = -1
        self._ladder: list[dict[str, Any]] = []

    def append(self, message: Mapping[str, Any]) -> Fire | None:
        self._index += 1
        fire: Fire | None = None
        for action in self._monitor.observe(message):
            step = {
                "message": self._index,
                "step": action.step,
                "kind": action.kind,
                "reason": getattr(action, "reason", None),
            }
            self._ladder.append(step)
            if fire is None:
                fire = Fire(step)
        return fire

    def finish(self) -> Mapping[str, Any]:
        return {
            "ladder": self._ladder,
            "max_step": max((s["step"] for s in self._ladder), default=0),
        }


_build = checked_build("alm", lambda options: AntiLoopingMonitor(**options), _Adapter)

register(
    Detector(
        name="alm",
        kind="thread",
        description="Anti-Looping Monitor; a fire is its first ladder action, every step reported",
        defaults_key="alm",
        params=PARAMS,
        build=_build,
    )
)
