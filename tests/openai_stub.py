"""A local OpenAI-compatible chat-completions server for wire-format tests.

The test scripts the replies (text, tool calls, JSON text, HTTP errors) and reads back every
request body the client sent. The server listens on 127.0.0.1 on an ephemeral port, answers
``POST /v1/chat/completions`` as plain JSON or, when the request says ``stream: true``, as
server-sent events, and shuts itself down after ``lifetime`` seconds if nobody stops it first.
"""

from __future__ import annotations

import dataclasses
import json
import re
import socket
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from tests.prompt_cache_rules import OpenAICacheRule

__all__ = [
    "CachingOpenAIStub",
    "OpenAIStub",
    "Reply",
    "StubCall",
    "Usage",
    "call",
    "error",
    "json_reply",
    "text",
    "tool_calls",
]

ENDPOINT = "/v1/chat/completions"
MAX_BODY_BYTES = 1_000_000
ARGUMENT_PIECE = 5  # characters of tool-call arguments per streamed delta


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 12
    completion_tokens: int = 5
    cached_tokens: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        }


@dataclass(frozen=True, slots=True)
class StubCall:
    """One function call as the provider sends it: ``arguments`` is raw JSON text."""

    name: str
    arguments: str
    id: str


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer: an assistant message, or an HTTP error when ``status`` is not 200."""

    content: str | None = None
    tool_calls: tuple[StubCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    status: int = 200
    error_message: str = ""
    error_param: str | None = None

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


def text(content: str, usage: Usage | None = None) -> Reply:
    """An assistant reply with text content."""
    return Reply(content=content, usage=usage or Usage())


def json_reply(value: Any) -> Reply:
    """An assistant reply whose content is ``value`` as JSON (native structured output)."""
    return Reply(content=json.dumps(value))


def call(name: str, arguments: dict[str, Any] | str, id: str | None = None) -> StubCall:
    """A function call; a string ``arguments`` is sent verbatim (even when it is not JSON)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return StubCall(name, raw, id or f"call_{name}")


def tool_calls(*calls: StubCall, content: str | None = None, usage: Usage | None = None) -> Reply:
    """An assistant reply making ``calls`` (several calls make a parallel tool call)."""
    return Reply(content=content, tool_calls=calls, usage=usage or Usage())


def error(status: int, message: str, param: str | None = None) -> Reply:
    """An HTTP error in OpenAI's error-body shape."""
    return Reply(status=status, error_message=message, error_param=param)


class OpenAIStub:
    """The server: ``script(...)`` queues replies, ``requests`` holds every body received."""

    def __init__(self, lifetime: float = 60.0) -> None:
        self.requests: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._deadline = threading.Timer(lifetime, self._server.shutdown)
        self._deadline.daemon = True

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        """The request handler class (another provider's stub answers its own routes)."""
        return _handler_for(self)

    @property
    def url(self) -> str:
        """The base URL to give the client (``.../v1``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def unused(self) -> list[Reply]:
        with self._lock:
            return list(self._replies)

    def reset(self) -> None:
        """Forget the requests, problems and replies of the previous test."""
        with self._lock:
            self.requests.clear()
            self.problems.clear()
            self._replies.clear()

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def start(self) -> OpenAIStub:
        self._thread.start()
        self._deadline.start()
        return self

    def stop(self) -> None:
        self._deadline.cancel()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler_for(self)

    def take(self, body: dict[str, Any]) -> Reply | None:
        """Record a request body and hand out the next scripted reply (None when none is left)."""
        with self._lock:
            self.requests.append(body)
            if self._replies:
                return self._replies.popleft()
            self.problems.append(f"request {len(self.requests)} came after the script ran out")
            return None


def _handler_for(stub: OpenAIStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 10  # a stalled client frees its thread after this

        def setup(self) -> None:
            super().setup()
            # Small writes go out at once instead of waiting on the client's delayed ACK.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def end_headers(self) -> None:
            # One request per connection: no pooled socket outlives the event loop that opened
            # it (each asyncio.run has its own loop), and no handler thread waits for a next one.
            self.send_header("Connection", "close")
            self.close_connection = True
            super().end_headers()

        def do_POST(self) -> None:
            if self.path != ENDPOINT:
                self._send_json(404, _error_body(f"no route {self.path}", None))
                return
            length = int(self.headers.get("Content-Length", "0"))
            if length > MAX_BODY_BYTES:
                self._send_json(413, _error_body("request body too large", None))
                return
            try:
                body = json.loads(self.rfile.read(length))
            except ValueError as exc:
                stub.problems.append(f"a request body was not JSON: {exc}")
                self._send_json(400, _error_body("the request body is not JSON", None))
                return
            reply = stub.take(body)
            if reply is None:
                self._send_json(500, _error_body("the stub has no scripted reply left", None))
            elif reply.status != 200:
                self._send_json(reply.status, _error_body(reply.error_message, reply.error_param))
            elif body.get("stream"):
                self._send_events(_chunks(reply, body))
            else:
                self._send_json(200, _completion(reply, body))

        def _send_json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _send_events(self, chunks: Iterator[dict[str, Any]]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            events = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
            for event in [*events, "data: [DONE]\n\n"]:
                data = event.encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.write(b"0\r\n\r\n")

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler


def _error_body(message: str, param: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param}}


def _envelope(body: dict[str, Any], kind: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": kind,
        "created": 1_700_000_000,
        "model": body.get("model", "gpt-test"),
        "system_fingerprint": "fp_stub",
    }


def _completion(reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content, "refusal": None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.tool_calls
        ]
    choice = {"index": 0, "message": message, "finish_reason": reply.finish_reason}
    return {
        **_envelope(body, "chat.completion"),
        "choices": [{**choice, "logprobs": None}],
        "usage": reply.usage.as_json(),
    }


def _chunks(reply: Reply, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The reply as OpenAI streams it: role, content pieces, tool-call pieces, finish, usage."""
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    extra = {"usage": None} if include_usage else {}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
        return {**_envelope(body, "chat.completion.chunk"), "choices": [choice], **extra}

    yield chunk({"role": "assistant", "content": "" if reply.content else None})
    for piece in re.findall(r"\S+\s*|\s+", reply.content or ""):
        yield chunk({"content": piece})
    for index, c in enumerate(reply.tool_calls):
        function = {"name": c.name, "arguments": ""}
        yield chunk(
            {"tool_calls": [{"index": index, "id": c.id, "type": "function", "function": function}]}
        )
        for start in range(0, len(c.arguments), ARGUMENT_PIECE):
            piece = c.arguments[start : start + ARGUMENT_PIECE]
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, reply.finish_reason)
    if include_usage:
        yield {
            **_envelope(body, "chat.completion.chunk"),
            "choices": [],
            "usage": reply.usage.as_json(),
        }


class CachingOpenAIStub(OpenAIStub):
    """The server, with OpenAI's prompt caching (tests/prompt_cache_rules.py): every reply's
    usage counts the request's prompt, and the part of it read from the cache."""

    def __init__(self, lifetime: float = 60.0, rule: OpenAICacheRule | None = None) -> None:
        super().__init__(lifetime)
        self.rule = rule or OpenAICacheRule()

    def reset(self) -> None:
        super().reset()
        with self._lock:
            self.rule.clear()

    def take(self, body: dict[str, Any]) -> Reply | None:
        reply = super().take(body)
        if reply is None or reply.status != 200:
            return reply
        with self._lock:
            usage = self.rule.apply(body)
        counted = Usage(usage.prompt_tokens, reply.usage.completion_tokens, usage.cached_tokens)
        return dataclasses.replace(reply, usage=counted)
