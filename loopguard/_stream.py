"""The guarded reasoning stream: cut the thinking phase off when the detector fires.

:func:`guarded_reasoning` is the design's event loop over any iterable of
Anthropic Messages streaming events; :func:`stream_messages` opens the
streaming request with the standard library only; and
:func:`execute_guarded_reasoning` ties them together with premise anchoring and
closes the connection the moment the detector aborts.
"""

from __future__ import annotations

import http.client
import os
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ._anchor import anchor_system_prompt
from ._errors import OptionError, StreamError
from ._js import is_finite_number, js_stringify, utf16_len
from ._overthinking import OverthinkingDetector
from ._sse import iter_sse_events

__all__ = [
    "ANTHROPIC_VERSION",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODEL",
    "DEFAULT_THINKING_BUDGET",
    "DEFAULT_TIMEOUT",
    "DEFAULT_URL",
    "GuardedResult",
    "MessageStream",
    "execute_guarded_reasoning",
    "guarded_reasoning",
    "stream_messages",
]

# The design's request, verbatim. These shape the API call, they are not detector
# thresholds, so they are module constants rather than defaults.json entries.
#: Model id of the design's request.
DEFAULT_MODEL = "claude-3-7-sonnet-20250219"
#: Endpoint of the design's request.
DEFAULT_URL = "https://api.anthropic.com/v1/messages"
#: ``anthropic-version`` header of the design's request.
ANTHROPIC_VERSION = "2023-06-01"
#: ``max_tokens`` of the design's request.
DEFAULT_MAX_TOKENS = 6000
#: ``thinking.budget_tokens`` of the design's request.
DEFAULT_THINKING_BUDGET = 3000
#: Seconds a connect or a single read may block (the design had none; a stalled
#: stream must not hang a harness run forever).
DEFAULT_TIMEOUT = 60.0

_API_KEY_ENV = "ANTHROPIC_API_KEY"
_READ_SIZE = 65536
_FALLBACK_REASON = "Loop detected"


@dataclass(frozen=True, slots=True)
class GuardedResult:
    """The outcome of a guarded reasoning stream.

    Attributes
    ----------
    output : str
        The concatenated ``text_delta`` texts received before the stream ended
        or was cut off.
    thinking_tokens : int
        ``ceil(utf16_len/4)`` summed over the ``thinking_delta`` chunks read.
    was_aborted : bool
        Whether the detector fired and the stream was cut off.
    reason : str or None
        The reason passed to the abort callback (the detector's reason, or
        ``"Loop detected"`` when it gave none); ``None`` when not aborted.
    """

    output: str
    thinking_tokens: int
    was_aborted: bool
    reason: str | None


def _check_guard(detector: object, on_abort: object) -> OverthinkingDetector:
    if detector is not None and not isinstance(detector, OverthinkingDetector):
        raise OptionError(
            f"detector must be an OverthinkingDetector or None; got {type(detector).__name__}"
        )
    if on_abort is not None and not callable(on_abort):
        raise OptionError(f"on_abort must be callable or None; got {type(on_abort).__name__}")
    return detector if detector is not None else OverthinkingDetector()


def guarded_reasoning(
    events: Iterable[Any],
    detector: OverthinkingDetector | None = None,
    on_abort: Callable[[str], object] | None = None,
) -> GuardedResult:
    """Consume streaming events, feeding thinking deltas to the detector.

    ``content_block_delta`` events with a ``thinking_delta`` add
    ``ceil(utf16_len/4)`` thinking tokens and go through
    ``detector.analyze_chunk``; ``text_delta`` texts are collected as the
    output. On the first detection ``on_abort(reason)`` is called and the
    function returns at once, without pulling another event (closing the
    source is the caller's job; :func:`execute_guarded_reasoning` does it).
    Malformed events (not a dict, no ``delta``, a non-string ``thinking`` or
    ``text``) are skipped, as the design's ``try``/``catch`` skipped them; an
    exception raised by ``on_abort`` propagates.

    Parameters
    ----------
    events : iterable of dict
        Parsed events, e.g. from :func:`iter_sse_events`.
    detector : OverthinkingDetector, optional
        Used as is (not reset); a fresh default detector when omitted.
    on_abort : callable, optional
        Called once with the reason when the detector fires.

    Examples
    --------
    >>> delta = {"type": "thinking_delta", "thinking": "Wait, but what if it fails? " * 3}
    >>> events = [{"type": "content_block_delta", "delta": delta}] * 3
    >>> result = guarded_reasoning(events, OverthinkingDetector(max_doubt_markers=2))
    >>> result.was_aborted, result.thinking_tokens, result.reason
    (True, 42, 'Excessive doubt markers threshold exceeded (2 occurrences)')
    """
    guard = _check_guard(detector, on_abort)
    if isinstance(events, str | bytes) or not isinstance(events, Iterable):
        raise OptionError(f"events must be an iterable of event dicts; got {type(events).__name__}")
    output: list[str] = []
    thinking_tokens = 0
    for event in events:
        if not isinstance(event, dict) or event.get("type") != "content_block_delta":
            continue
        delta = event.get("delta")
        if not isinstance(delta, dict):
            continue
        kind = delta.get("type")
        if kind == "thinking_delta":
            thinking = delta.get("thinking")
            if not isinstance(thinking, str):
                continue
            thinking_tokens += -(-utf16_len(thinking) // 4)
            analysis = guard.analyze_chunk(thinking)
            if analysis.is_loop_detected:
                reason = analysis.reason or _FALLBACK_REASON
                if on_abort is not None:
                    on_abort(reason)
                return GuardedResult("".join(output), thinking_tokens, True, reason)
        elif kind == "text_delta":
            text = delta.get("text")
            if isinstance(text, str):
                output.append(text)
    return GuardedResult("".join(output), thinking_tokens, False, None)


def _resolve_key(api_key: object) -> str:
    key = os.environ.get(_API_KEY_ENV) if api_key is None else api_key
    if key is None:
        raise StreamError(
            f"no API key: pass api_key= or set the {_API_KEY_ENV} environment variable"
        )
    if not isinstance(key, str):
        raise StreamError(f"api_key must be a string; got {type(key).__name__}")
    # A trailing newline from a key file is a common accident, not part of the key.
    key = key.strip()
    if not key:
        raise StreamError(f"the API key is empty (api_key= or {_API_KEY_ENV})")
    if not all("\x21" <= ch <= "\x7e" for ch in key):
        # Never echo the key, not even in part.
        raise StreamError("the API key contains characters not allowed in an HTTP header")
    return key


def _check_positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionError(f"{name} must be an integer >= 1; got {value!r}")
    return value


class MessageStream:
    """A streaming Messages API request: a context manager iterating raw body bytes.

    Made by :func:`stream_messages`. Entering sends the request and checks the
    status; iterating yields the body as it arrives; leaving (or
    :meth:`close`) closes the connection, also mid-stream. The API key is kept
    out of ``repr`` and of every error message.
    """

    def __init__(
        self, *, url: str, headers: dict[str, str], body: bytes, timeout: float | None
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise OptionError(f"url must be an http:// or https:// URL; got {url!r}")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        try:
            self._port = parts.port
        except ValueError:
            raise OptionError(f"url has an invalid port; got {url!r}") from None
        self._path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._url = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"
        self._headers = headers
        self._body = body
        self._timeout = timeout
        self._connection: http.client.HTTPConnection | None = None
        self._response: http.client.HTTPResponse | None = None
        self._status: int | None = None
        self._closed = False

    @property
    def status(self) -> int | None:
        """The HTTP status, once the request was sent."""
        return self._status

    @property
    def closed(self) -> bool:
        """Whether the connection was closed."""
        return self._closed

    def _scrub(self, message: str) -> str:
        key = self._headers.get("x-api-key", "")
        return message.replace(key, "[redacted]") if key else message

    def open(self) -> None:
        """Send the request; raise :class:`StreamError` unless the status is 2xx."""
        if self._closed:
            raise StreamError("the stream is closed")
        if self._response is not None:
            return
        connection_class = (
            http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        )
        connection = connection_class(self._host, self._port, timeout=self._timeout)
        self._connection = connection
        failure: str | None = None
        try:
            connection.request("POST", self._path, body=self._body, headers=self._headers)
            response = connection.getresponse()
        except (OSError, http.client.HTTPException, ValueError) as exc:
            failure = f"request to {self._url} failed: {type(exc).__name__}: {exc}"
        if failure is not None:
            # Raised outside the except block: the original exception is not chained.
            self.close()
            raise StreamError(self._scrub(failure))
        self._response = response
        self._status = response.status
        if not 200 <= response.status < 300:
            self.close()
            raise StreamError(f"API call failed with status {response.status}")

    def __iter__(self) -> Iterator[bytes]:
        self.open()
        return self._chunks()

    def _chunks(self) -> Iterator[bytes]:
        while self._response is not None and not self._closed:
            failure: str | None = None
            try:
                data = self._response.read1(_READ_SIZE)
            except (OSError, http.client.HTTPException, ValueError) as exc:
                failure = f"reading the stream from {self._url} failed: {type(exc).__name__}: {exc}"
            if failure is not None:
                self.close()
                raise StreamError(self._scrub(failure))
            if not data:
                return
            yield data

    def close(self) -> None:
        """Close the response and the connection (idempotent)."""
        self._closed = True
        response, self._response = self._response, None
        connection, self._connection = self._connection, None
        if response is not None:
            response.close()
        if connection is not None:
            connection.close()

    def __enter__(self) -> MessageStream:
        self.open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"status={self._status}"
        return f"MessageStream(url={self._url!r}, {state})"


def stream_messages(
    *,
    system: str,
    user_prompt: str,
    api_key: str | None = None,
    model: str = DEFAULT_MODEL,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    thinking_budget: int = DEFAULT_THINKING_BUDGET,
    url: str = DEFAULT_URL,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> MessageStream:
    """Prepare the design's streaming Messages API request (extended thinking on).

    Sends ``x-api-key``, ``anthropic-version: 2023-06-01`` and
    ``content-type: application/json`` with the body
    ``{model, max_tokens, system, thinking: {type: "enabled", budget_tokens},
    messages: [{role: "user", content}], stream: true}`` serialised as
    ``JSON.stringify`` does. Standard library only (``http.client``);
    environment proxy settings are not used.

    Parameters
    ----------
    system, user_prompt : str
        The system prompt (already anchored, if wanted) and the user message.
    api_key : str, optional
        Defaults to the ``ANTHROPIC_API_KEY`` environment variable;
        surrounding whitespace is stripped.
    model : str
        Model id; the design's by default.
    max_tokens, thinking_budget : int
        ``max_tokens`` and ``thinking.budget_tokens`` (integers >= 1).
    url : str
        The endpoint (``http://`` or ``https://``).
    timeout : float or None
        Seconds a connect or one read may block; ``None`` waits forever.

    Returns
    -------
    MessageStream
        Use it as a context manager; iterate it for the raw body bytes.

    Raises
    ------
    StreamError
        When no usable API key is found (also, on entering, for transport
        failures and non-2xx statuses: ``API call failed with status N``).
    OptionError
        When another argument is invalid.

    Examples
    --------
    >>> stream = stream_messages(system="Be brief.", user_prompt="2+2?", api_key="sk-test")
    >>> stream
    MessageStream(url='https://api.anthropic.com/v1/messages', status=None)
    """
    for name, value in (("system", system), ("user_prompt", user_prompt)):
        if not isinstance(value, str):
            raise OptionError(f"{name} must be a string; got {type(value).__name__}")
    if not isinstance(model, str) or not model.strip():
        raise OptionError(f"model must be a non-empty string; got {model!r}")
    _check_positive_int("max_tokens", max_tokens)
    _check_positive_int("thinking_budget", thinking_budget)
    if timeout is not None and (not is_finite_number(timeout) or timeout <= 0):
        raise OptionError(f"timeout must be a number > 0 or None; got {timeout!r}")
    if not isinstance(url, str):
        raise OptionError(f"url must be a string; got {type(url).__name__}")
    key = _resolve_key(api_key)
    body = js_stringify(
        {
            "model": model,
            "max_tokens": max_tokens,
            "system": system,
            "thinking": {"type": "enabled", "budget_tokens": thinking_budget},
            "messages": [{"role": "user", "content": user_prompt}],
            "stream": True,
        }
    )
    assert body is not None  # a dict always serialises
    headers = {
        "x-api-key": key,
        "anthropic-version": ANTHROPIC_VERSION,
        "content-type": "application/json",
    }
    return MessageStream(
        url=url,
        headers=headers,
        body=body.encode("utf-8", "surrogatepass"),
        timeout=None if timeout is None else float(timeout),
    )


def execute_guarded_reasoning(
    *,
    system_prompt: str,
    user_prompt: str,
    api_key: str | None = None,
    on_loop_aborted: Callable[[str], object] | None = None,
    detector: OverthinkingDetector | None = None,
    invariants: Iterable[str] | None = None,
    url: str = DEFAULT_URL,
    model: str = DEFAULT_MODEL,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    thinking_budget: int = DEFAULT_THINKING_BUDGET,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> GuardedResult:
    """Anchor the system prompt, stream a reasoning call, and cut it off on overthinking.

    The design's ``executeGuardedReasoning``: the system prompt gets the
    execution invariants (:func:`anchor_system_prompt`), the response is read
    as SSE (:func:`iter_sse_events`) through :func:`guarded_reasoning`, and the
    HTTP connection is closed as soon as the detector aborts (after
    ``on_loop_aborted`` was called, as in the design).

    Parameters
    ----------
    system_prompt, user_prompt : str
        The caller's system prompt (anchored here) and user message.
    api_key : str, optional
        Defaults to ``ANTHROPIC_API_KEY``.
    on_loop_aborted : callable, optional
        Called with the reason when the stream is cut off.
    detector : OverthinkingDetector, optional
        A fresh default detector when omitted.
    invariants : iterable of str, optional
        Invariants for :func:`anchor_system_prompt` (the design's by default).
    url, model, max_tokens, thinking_budget, timeout
        As for :func:`stream_messages`.

    Raises
    ------
    StreamError
        No API key, a transport failure or a non-2xx status.
    OptionError
        An invalid argument (checked before any request is sent).
    """
    guard = _check_guard(detector, on_loop_aborted)
    system = anchor_system_prompt(system_prompt, invariants)
    with stream_messages(
        system=system,
        user_prompt=user_prompt,
        api_key=api_key,
        model=model,
        max_tokens=max_tokens,
        thinking_budget=thinking_budget,
        url=url,
        timeout=timeout,
    ) as stream:
        return guarded_reasoning(iter_sse_events(stream), guard, on_loop_aborted)
