"""Loop detectors of well-known agents, reimplemented from their public behaviour.

Each module registers one peer's detectors in the harness registry; their
defaults (the peers' production thresholds) and the provenance of every value
live in ``defaults.json`` in this package, not in ``loopguard/defaults.json``.
See ``docs/peers.md`` for the source facts, what is reproduced, what is
interpreted and which known bugs are kept.

Examples
--------
>>> from harness.detectors import get_detector
>>> from harness.detectors.peers import PEERS
>>> [get_detector(name).kind for name in PEERS]
['thread', 'stream', 'thread', 'thread', 'thread', 'thread', 'stream', 'stream']
"""

from __future__ import annotations

import importlib

__all__ = ["MODULES", "PEERS"]

#: The peer modules, imported (and so registered) in this order.
MODULES = ("gemini", "openhands", "roo_code", "cline", "qwen_code", "copilot", "vllm")

#: The peer detector names, in registration order.
PEERS = (
    "gemini_tool_cycle",
    "gemini_chanting",
    "openhands_stuck",
    "roo_code",
    "cline",
    "qwen_code",
    "copilot_repetition",
    "vllm_repetition",
)

for _module in MODULES:
    importlib.import_module(f"{__name__}.{_module}")
