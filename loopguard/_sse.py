"""Server-sent events: a raw byte stream to JSON events, exactly as the design reads it."""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterable, Iterator
from typing import Any

from ._errors import OptionError
from ._js import JS_WHITESPACE

__all__ = ["iter_sse_events"]

_DATA = "data: "
_DONE = "[DONE]"


def _reject_constant(name: str) -> Any:
    # JSON.parse has no NaN / Infinity, json.loads does: make them malformed.
    raise ValueError(f"{name} is not JSON")


def iter_sse_events(chunks: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    """Parse a raw SSE byte stream into its JSON ``data:`` events, lazily.

    Reproduces the design's reader: bytes are decoded incrementally as UTF-8
    (a character split across reads is reassembled; invalid bytes become
    U+FFFD; a leading BOM is dropped, as ``TextDecoder`` does), the buffer is
    split on ``"\\n"`` with the trailing partial line kept for the next read,
    only lines starting with ``"data: "`` count, their rest is trimmed,
    ``[DONE]`` is skipped and malformed JSON is skipped silently. A partial
    last line with no ``"\\n"`` is dropped when the stream ends, as in the design.

    Differences, none of which changes the result for the design's input: a
    trailing ``"\\r"`` is stripped from each line (CRLF streams; the design's
    trim removed it from data lines anyway), and JSON values that are not
    objects are skipped (the design's reader ignored them, having no ``type``).

    Parameters
    ----------
    chunks : iterable of bytes
        The response body as it is read (``bytes``, ``bytearray`` or
        ``memoryview`` pieces of any size).

    Yields
    ------
    dict
        Each parsed event object, as soon as its line is complete.

    Raises
    ------
    OptionError
        When ``chunks`` is not an iterable of bytes-like pieces.

    Examples
    --------
    >>> body = [b'data: {"type": "ping"}\\n\\ndata: [DONE]\\n', b'data: {bad\\ndata: {"a"']
    >>> list(iter_sse_events(body + [b': 1}\\n']))
    [{'type': 'ping'}, {'a': 1}]
    """
    if isinstance(chunks, str | bytes | bytearray | memoryview) or not isinstance(chunks, Iterable):
        raise OptionError(
            f"chunks must be an iterable of bytes pieces; got {type(chunks).__name__}"
        )
    return _events(chunks)


def _events(chunks: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
    buffer = ""
    for chunk in chunks:
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise OptionError(f"chunks must yield bytes pieces; got {type(chunk).__name__}")
        buffer += decoder.decode(bytes(chunk))
        lines = buffer.split("\n")
        buffer = lines.pop()
        for line in lines:
            event = _parse_line(line.removesuffix("\r"))
            if event is not None:
                yield event


def _parse_line(line: str) -> dict[str, Any] | None:
    if not line.startswith(_DATA):
        return None
    payload = line[len(_DATA) :].strip(JS_WHITESPACE)
    if payload == _DONE:
        return None
    try:
        event = json.loads(payload, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None
    return event if isinstance(event, dict) else None
