"""The run manifest: what code, packages, corpora and settings produced a result."""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["code_version", "file_sha256", "now_iso", "package_versions", "run_manifest"]

#: The distributions whose versions a manifest records.
PACKAGES = ("loopguard", "numpy", "pandas", "scikit-learn", "click", "rich", "jsonschema")

_REPO = Path(__file__).resolve().parent.parent


def now_iso() -> str:
    """The current UTC time, ISO 8601 with seconds (``2026-11-29T14:05:00Z``)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=_REPO,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def code_version() -> dict[str, Any]:
    """``{"git_sha", "dirty", "source"}`` of the repository the harness runs from.

    ``git_sha`` and ``dirty`` are None when the code is not in a git work tree
    (an installed wheel) or git is not available.
    """
    sha = _git("rev-parse", "HEAD")
    if sha is None:
        return {"git_sha": None, "dirty": None, "source": str(_REPO)}
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "git_sha": sha,
        "dirty": bool(status) if status is not None else None,
        "source": str(_REPO),
    }


def package_versions() -> dict[str, str | None]:
    """Python and the installed versions of :data:`PACKAGES` (None when missing)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes (as stored: a .gz file is hashed compressed)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run_manifest(
    *,
    corpora: Sequence[Mapping[str, Any]],
    detectors: Mapping[str, Mapping[str, Any]],
    chunking: str,
    seed: int,
    started: str,
    finished: str,
    settings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``manifest.json`` document.

    Parameters
    ----------
    corpora : sequence of dict
        Per corpus: ``name``, ``path``, and whatever else the run knows (cases read...);
        ``sha256`` is added here.
    detectors : mapping
        ``{name: complete parameters}``.
    """
    listed = []
    for corpus in corpora:
        entry = dict(corpus)
        entry["sha256"] = file_sha256(entry["path"])
        listed.append(entry)
    return {
        "format": 1,
        "code_version": code_version(),
        "packages": package_versions(),
        "argv": list(sys.argv),
        "corpora": listed,
        "detectors": {name: dict(params) for name, params in detectors.items()},
        "chunking": chunking,
        "seed": seed,
        **dict(settings or {}),
        "started": started,
        "finished": finished,
    }
