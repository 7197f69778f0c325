"""Atomic file writes: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_open", "atomic_write_json", "atomic_write_jsonl", "atomic_write_text"]


@contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on success rename it over ``path``.

    The rename happens only when the ``with`` block ends without an exception,
    after the data is flushed and fsynced, so a crash leaves the old file intact.
    The file gets the permissions a plain ``open`` would give (umask applied).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        handle: IO[Any]
        if "b" in mode:
            handle = os.fdopen(fd, "wb")
        else:
            handle = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_open(path) as handle:
        handle.write(text)


def atomic_write_json(path: str | os.PathLike[str], data: Any, *, indent: int | None = 2) -> None:
    """Write ``data`` as JSON (UTF-8, keys in insertion order) to ``path`` atomically."""
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=indent) + "\n")


def atomic_write_jsonl(path: str | os.PathLike[str], records: Iterable[Any]) -> int:
    """Write one compact JSON document per line to ``path`` atomically; return the count.

    A name ending in ``.gz`` is gzip-compressed with a zero timestamp, so the
    same records always give the same bytes.
    """
    count = 0
    gz = str(path).endswith(".gz")
    with atomic_open(path, "wb") as raw:
        stream: IO[bytes] = (
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0)  # type: ignore[assignment]
            if gz
            else raw
        )
        for record in records:
            line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
            stream.write(line.encode("utf-8") + b"\n")
            count += 1
        if gz:
            stream.close()
    return count
