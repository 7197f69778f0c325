"""Premise anchoring, the SSE reader, guarded_reasoning and the streaming client.

The client is tested against a real SSE server on 127.0.0.1 started by the test.

SOURCE: expected prompt text, headers and request body are those of
executeGuardedReasoning in the overthinking-detector design (seeds/
overthinking-detector.ts of the spec), copied here where a test needs them.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from loopguard import _stream
from loopguard._anchor import DEFAULT_INVARIANTS, anchor_system_prompt
from loopguard._errors import OptionError, StreamError
from loopguard._overthinking import OverthinkingDetector, OverthinkingResult
from loopguard._sse import iter_sse_events
from loopguard._stream import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODEL,
    DEFAULT_THINKING_BUDGET,
    GuardedResult,
    MessageStream,
    execute_guarded_reasoning,
    guarded_reasoning,
    stream_messages,
)

KEY = "sk-ant-test-0123456789abcdef"

# The design's anchored prompt for systemPrompt "You are a senior engineer.", built by
# its template literal and .trim() (copied from the seed, SOURCE above).
SEED_ANCHORED = """You are a senior engineer.

[CRITICAL EXECUTION INVARIANTS]:
1. Do NOT reconsider the fundamental architectural premise once chosen.
2. Assume happy path runtime guarantees: Environment is Node.js 22 LTS, single-process, \
64-bit architecture.
3. Do NOT invent hypothetical edge cases outside standard POSIX / ECMAScript specifications.
4. If a valid solution is reached, conclude reasoning immediately and emit the output."""

# The reflection trap of the design's diagram, as thinking deltas.
SPIRAL = [
    "Hypothesis A: keep one mutex around the cache, that is the correct solution. ",
    "Wait, but what if thread safety is broken here? ",
    "Hypothesis B: add a second mutex for the index and a third for the LRU list. ",
    "Wait, that introduces a potential deadlock. Let me rethink the locking order. ",
    "Hypothesis C: go back to one mutex around the cache with minor changes. ",
]


def delta_event(kind: str, text: str) -> dict[str, Any]:
    field_name = "thinking" if kind == "thinking_delta" else "text"
    return {"type": "content_block_delta", "index": 0, "delta": {"type": kind, field_name: text}}


def sse(event: dict[str, Any]) -> bytes:
    payload = json.dumps(event, ensure_ascii=False)
    return f"event: {event['type']}\ndata: {payload}\n\n".encode()


# --- premise anchoring ------------------------------------------------------------


def test_anchor_reproduces_the_seed_prompt() -> None:
    assert anchor_system_prompt("You are a senior engineer.") == SEED_ANCHORED
    assert len(DEFAULT_INVARIANTS) == 4


def test_anchor_numbers_custom_invariants_and_trims_like_javascript() -> None:
    text = anchor_system_prompt("\ufeff\u00a0Be brief.", ["Use Python 3.11.", "Stop early."])
    # JS trim removes U+FEFF and NBSP (Python's str.strip() keeps U+FEFF).
    assert text == (
        "Be brief.\n\n[CRITICAL EXECUTION INVARIANTS]:\n1. Use Python 3.11.\n2. Stop early."
    )
    assert anchor_system_prompt("").startswith("[CRITICAL EXECUTION INVARIANTS]:\n1. Do NOT")


@pytest.mark.parametrize(
    ("prompt", "invariants", "name"),
    [
        (None, None, "prompt"),
        ("p", "one string", "invariants"),
        ("p", [], "invariants"),
        ("p", ["ok", "  "], r"invariants\[1\]"),
        ("p", ["ok", 3], r"invariants\[1\]"),
    ],
)
def test_anchor_rejects_bad_input(prompt: object, invariants: object, name: str) -> None:
    with pytest.raises(OptionError, match=name):
        anchor_system_prompt(prompt, invariants)  # type: ignore[arg-type]


# --- SSE parsing ------------------------------------------------------------------


def test_sse_reassembles_utf8_split_across_reads() -> None:
    raw = sse(delta_event("text_delta", "h\u00e9\U0001f600 \u4e16"))
    pieces = [raw[i : i + 1] for i in range(len(raw))]  # every multi-byte char is split
    assert list(iter_sse_events(pieces)) == [delta_event("text_delta", "h\u00e9\U0001f600 \u4e16")]


def test_sse_skips_done_malformed_and_non_data_lines() -> None:
    body = (
        b"\xef\xbb\xbfevent: ping\n"
        b": a comment\n"
        b'data: {"type": "a"}\n'
        b"data: [DONE]\n"
        b"data: {not json\n"
        b'data:{"type": "no space after the colon"}\n'
        b"data: NaN\n"
        b"data: 42\n"
        b'data:   {"type": "b"}  \r\n'
        b'data: {"type": "c"}\r\n'
        b'data: {"type": "no newline at the end"}'
    )
    assert list(iter_sse_events([body])) == [{"type": "a"}, {"type": "b"}, {"type": "c"}]


def test_sse_is_lazy() -> None:
    pulled: list[int] = []

    def chunks() -> Iterator[bytes]:
        for i in range(100):
            pulled.append(i)
            yield sse({"type": "n", "i": i})

    events = iter_sse_events(chunks())
    assert next(events) == {"type": "n", "i": 0}
    assert pulled == [0]


def test_sse_rejects_text() -> None:
    with pytest.raises(OptionError, match="chunks"):
        iter_sse_events("data: {}\n")  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="chunks"):
        list(iter_sse_events(["data: {}\n"]))  # type: ignore[list-item]


# --- guarded_reasoning -------------------------------------------------------------


def test_guarded_reasoning_stops_pulling_at_the_first_trip() -> None:
    pulled = 0

    def events() -> Iterator[dict[str, Any]]:
        nonlocal pulled
        for i in range(1000):
            pulled += 1
            yield delta_event("thinking_delta", SPIRAL[i % len(SPIRAL)])

    reasons: list[str] = []
    result = guarded_reasoning(events(), on_abort=reasons.append)
    # Trace of the default detector: "Wait, but" once per 5 deltas, so the 4th one
    # (delta 17, index 16) reaches max_doubt_markers = 4.
    expected = "Excessive doubt markers threshold exceeded (4 occurrences)"
    assert result.was_aborted and result.reason == expected
    assert reasons == [expected]
    assert pulled == 17
    spent = sum(-(-len(SPIRAL[i % 5]) // 4) for i in range(17))
    assert result.thinking_tokens == spent


def test_guarded_reasoning_collects_text_and_skips_malformed_events() -> None:
    events: list[Any] = [
        None,
        42,
        {"type": "message_start"},
        {"type": "content_block_delta"},
        {"type": "content_block_delta", "delta": "text"},
        {"type": "content_block_delta", "delta": {"type": "thinking_delta"}},
        {"type": "content_block_delta", "delta": {"type": "thinking_delta", "thinking": 7}},
        {"type": "content_block_delta", "delta": {"type": "text_delta"}},
        delta_event("thinking_delta", "\U0001f600\U0001f600\U0001f600"),  # 6 UTF-16 units
        delta_event("text_delta", "Use one "),
        delta_event("text_delta", "mutex."),
        {"type": "message_stop"},
    ]
    result = guarded_reasoning(events)
    assert result == GuardedResult("Use one mutex.", 2, False, None)


def test_guarded_reasoning_uses_the_given_detector_without_reset() -> None:
    detector = OverthinkingDetector(max_thinking_tokens_hard_cap=3)
    detector.analyze_chunk("12345678")  # 2 tokens already spent
    result = guarded_reasoning([delta_event("thinking_delta", "abcd")], detector)
    assert result == GuardedResult("", 1, True, "Hard cap of 3 thinking tokens reached")


def test_guarded_reasoning_falls_back_to_loop_detected() -> None:
    class Silent(OverthinkingDetector):
        def analyze_chunk(self, text: str) -> OverthinkingResult:
            return OverthinkingResult(True, None, 0, 0.0)

    reasons: list[str] = []
    result = guarded_reasoning([delta_event("thinking_delta", "x")], Silent(), reasons.append)
    assert result.reason == "Loop detected" and reasons == ["Loop detected"]


def test_guarded_reasoning_propagates_callback_errors_and_checks_arguments() -> None:
    def boom(reason: str) -> None:
        raise RuntimeError(reason)

    detector = OverthinkingDetector(max_doubt_markers=1)
    with pytest.raises(RuntimeError, match="Excessive"):
        guarded_reasoning([delta_event("thinking_delta", "Wait, but")], detector, boom)
    with pytest.raises(OptionError, match="detector"):
        guarded_reasoning([], detector="strict")  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="on_abort"):
        guarded_reasoning([], on_abort="print")  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="events"):
        guarded_reasoning(None)  # type: ignore[arg-type]


# --- the client against a local SSE server ----------------------------------------


@dataclass
class Exchange:
    """What the local server saw and did for one request."""

    method: str = ""
    path: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    sent: int = 0
    broken: bool = False
    done: threading.Event = field(default_factory=threading.Event)


Responder = Callable[[BaseHTTPRequestHandler, Exchange], None]


class LocalServer:
    def __init__(self, respond: Responder) -> None:
        self.exchanges: list[Exchange] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                exchange = Exchange(method="POST", path=self.path)
                exchange.headers = {k.lower(): v for k, v in self.headers.items()}
                length = int(self.headers.get("content-length", "0"))
                exchange.body = self.rfile.read(length)
                server.exchanges.append(exchange)
                try:
                    respond(self, exchange)
                except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
                    exchange.broken = True
                finally:
                    exchange.done.set()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1/messages"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[[Responder], LocalServer]]:
    servers: list[LocalServer] = []

    def start(respond: Responder) -> LocalServer:
        servers.append(LocalServer(respond))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def start_stream(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.end_headers()


TOTAL_SPIRAL_EVENTS = 400


def spiral_responder(handler: BaseHTTPRequestHandler, exchange: Exchange) -> None:
    start_stream(handler)
    handler.wfile.write(sse({"type": "message_start", "message": {"id": "msg_1"}}))
    for i in range(TOTAL_SPIRAL_EVENTS):
        handler.wfile.write(sse(delta_event("thinking_delta", SPIRAL[i % len(SPIRAL)])))
        handler.wfile.flush()
        exchange.sent = i + 1
        time.sleep(0.005)


def test_client_aborts_a_looping_stream_and_closes_the_connection(
    serve: Callable[[Responder], LocalServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve(spiral_responder)
    # Keep the client's stream alive, so that only an explicit close (not garbage
    # collection) can end the connection while the assertions run.
    opened: list[MessageStream] = []

    def keep(**kwargs: Any) -> MessageStream:
        opened.append(stream_messages(**kwargs))
        return opened[-1]

    monkeypatch.setattr(_stream, "stream_messages", keep)
    reasons: list[str] = []
    started = time.monotonic()
    result = execute_guarded_reasoning(
        system_prompt="You are a senior engineer.",
        user_prompt="Design a thread-safe LRU cache.",
        api_key=KEY,
        url=server.url,
        on_loop_aborted=reasons.append,
    )
    assert result.was_aborted and reasons == [result.reason]
    assert result.output == ""
    assert opened[0].closed
    exchange = server.exchanges[0]
    assert exchange.done.wait(10), "the server never noticed the closed connection"
    assert exchange.broken
    # The default detector trips on the 17th thinking delta; the server managed only a
    # few more writes before the closed socket failed them, far from all 400 events.
    assert 17 <= exchange.sent < TOTAL_SPIRAL_EVENTS // 10
    assert time.monotonic() - started < TOTAL_SPIRAL_EVENTS * 0.005


def test_request_headers_and_body_are_the_seeds(serve: Callable[[Responder], LocalServer]) -> None:
    def respond(handler: BaseHTTPRequestHandler, exchange: Exchange) -> None:
        start_stream(handler)
        handler.wfile.write(sse(delta_event("text_delta", "ok")))

    server = serve(respond)
    user = "Design a cache \u2014 in Node.js"
    result = execute_guarded_reasoning(
        system_prompt="You are a senior engineer.", user_prompt=user, api_key=KEY, url=server.url
    )
    assert result == GuardedResult("ok", 0, False, None)
    exchange = server.exchanges[0]
    assert (exchange.method, exchange.path) == ("POST", "/v1/messages")
    assert exchange.headers["x-api-key"] == KEY
    assert exchange.headers["anthropic-version"] == "2023-06-01"
    assert exchange.headers["content-type"] == "application/json"
    expected = {
        "model": DEFAULT_MODEL,
        "max_tokens": DEFAULT_MAX_TOKENS,
        "system": SEED_ANCHORED,
        "thinking": {"type": "enabled", "budget_tokens": DEFAULT_THINKING_BUDGET},
        "messages": [{"role": "user", "content": user}],
        "stream": True,
    }
    # JSON.stringify: the seed's key order, no spaces, non-ASCII unescaped.
    assert exchange.body == json.dumps(expected, separators=(",", ":"), ensure_ascii=False).encode()
    assert (DEFAULT_MODEL, DEFAULT_MAX_TOKENS, DEFAULT_THINKING_BUDGET) == (
        "claude-3-7-sonnet-20250219",
        6000,
        3000,
    )


def test_full_stream_returns_the_whole_output(serve: Callable[[Responder], LocalServer]) -> None:
    thinking = ["The cache needs an index. ", "A map plus a list works. "]

    def respond(handler: BaseHTTPRequestHandler, exchange: Exchange) -> None:
        start_stream(handler)
        out = handler.wfile
        out.write(sse({"type": "message_start", "message": {"id": "msg_2"}}))
        for text in thinking:
            out.write(sse(delta_event("thinking_delta", text)))
        out.write(b": keep-alive comment\n\ndata: {broken json\n\n")
        raw = sse(delta_event("text_delta", "Use a Map and a doubly linked list \u2014 done. "))
        cut = raw.index("\u2014".encode()) + 1  # inside the 3-byte em dash
        out.write(raw[:cut])
        out.flush()
        time.sleep(0.05)
        out.write(raw[cut:])
        out.write(sse(delta_event("text_delta", "\U0001f600")))
        out.write(sse({"type": "message_stop"}))
        out.write(b"data: [DONE]\n\n")
        exchange.sent = 1

    server = serve(respond)
    aborted: list[str] = []
    result = execute_guarded_reasoning(
        system_prompt="s",
        user_prompt="u",
        api_key=KEY,
        url=server.url,
        on_loop_aborted=aborted.append,
        invariants=["Stay on topic."],
        max_tokens=100,
        thinking_budget=50,
    )
    assert result == GuardedResult(
        "Use a Map and a doubly linked list \u2014 done. \U0001f600",
        sum(-(-len(t) // 4) for t in thinking),
        False,
        None,
    )
    assert aborted == []
    body = json.loads(server.exchanges[0].body)
    assert body["system"] == "s\n\n[CRITICAL EXECUTION INVARIANTS]:\n1. Stay on topic."
    assert (body["max_tokens"], body["thinking"]["budget_tokens"]) == (100, 50)


def test_non_2xx_status_is_a_stream_error_without_the_key(
    serve: Callable[[Responder], LocalServer],
) -> None:
    def respond(handler: BaseHTTPRequestHandler, exchange: Exchange) -> None:
        body = json.dumps({"type": "error", "error": {"message": f"bad key {KEY}"}}).encode()
        handler.send_response(401)
        handler.send_header("content-length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    server = serve(respond)
    with pytest.raises(StreamError) as caught:
        execute_guarded_reasoning(system_prompt="s", user_prompt="u", api_key=KEY, url=server.url)
    assert str(caught.value) == "API call failed with status 401"
    assert KEY not in repr(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is None


def test_transport_errors_never_show_the_key() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Nothing listens on the port any more: the connection is refused.
    stream = stream_messages(
        system="s", user_prompt="u", api_key=KEY, url=f"http://127.0.0.1:{port}/v1/messages"
    )
    assert KEY not in repr(stream)
    with pytest.raises(StreamError) as caught:
        stream.open()
    assert stream.closed
    message = str(caught.value)
    assert "failed" in message and KEY not in message
    assert caught.value.__context__ is None


def test_api_key_resolution(
    serve: Callable[[Responder], LocalServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(StreamError, match="ANTHROPIC_API_KEY"):
        execute_guarded_reasoning(system_prompt="s", user_prompt="u")
    with pytest.raises(StreamError, match="not allowed") as caught:
        stream_messages(system="s", user_prompt="u", api_key="sk-ant bad\nkey")
    assert "bad" not in str(caught.value)

    def respond(handler: BaseHTTPRequestHandler, exchange: Exchange) -> None:
        start_stream(handler)

    server = serve(respond)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY + "-env\n")
    result = execute_guarded_reasoning(system_prompt="s", user_prompt="u", url=server.url)
    assert result == GuardedResult("", 0, False, None)
    assert server.exchanges[0].headers["x-api-key"] == KEY + "-env"


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"max_tokens": 0}, "max_tokens"),
        ({"thinking_budget": 1.5}, "thinking_budget"),
        ({"timeout": -1}, "timeout"),
        ({"url": "ftp://example.com/x"}, "url"),
        ({"model": ""}, "model"),
        ({"user_prompt": None}, "user_prompt"),
    ],
)
def test_stream_messages_checks_arguments(options: dict[str, Any], name: str) -> None:
    arguments: dict[str, Any] = {"system": "s", "user_prompt": "u", "api_key": KEY}
    arguments.update(options)
    with pytest.raises(OptionError, match=name):
        stream_messages(**arguments)
