"""The research harness: corpora, replay, metrics, sweeps, export and reports."""

from __future__ import annotations

__all__: list[str] = []
