"""A local Anthropic Messages API server for wire-format and prompt-caching tests.

It answers ``POST /v1/messages`` as plain JSON or, when the request says ``stream: true``, as the
server-sent events the Anthropic API sends (``message_start``, content blocks and their deltas,
``message_delta``, ``message_stop``). The test scripts the replies with tests/openai_stub.py's
helpers (``text``, ``tool_calls``, ``call``, ``error``) and reads back every request body.

Every reply's usage is counted from the request by Anthropic's caching rule
(tests/prompt_cache_rules.py): ``input_tokens`` is the uncached input, and
``cache_read_input_tokens``/``cache_creation_input_tokens`` what was read from and written to the
cache. A request with more ``cache_control`` breakpoints than the rule allows is a 400, as
Anthropic answers it.

``checks`` are called with each request body before it is answered; the first to return a
``Reply`` answers instead (an HTTP error such as a 429 or a 400 "prompt is too long"), and the
scripted reply stays queued for the next request.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.openai_stub import OpenAIStub, Reply, _handler_for as openai_handler_for
from tests.prompt_cache_rules import AnthropicCacheRule, AnthropicUsage, TooManyBreakpoints

__all__ = ["AnthropicStub", "Check"]

ENDPOINT = "/v1/messages"
MAX_BODY_BYTES = 4_000_000
ARGUMENT_PIECE = 5  # characters of tool-call arguments per streamed delta

Check = Callable[[dict[str, Any]], Reply | None]


class AnthropicStub(OpenAIStub):
    """The server: ``script(...)`` queues replies, ``requests`` holds every body received."""

    def __init__(self, lifetime: float = 60.0, rule: AnthropicCacheRule | None = None) -> None:
        self.checks: list[Check] = []
        self.rule = rule or AnthropicCacheRule()
        super().__init__(lifetime)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler_for(self)

    @property
    def url(self) -> str:
        """The base URL to give the client (the SDK adds ``/v1/messages``)."""
        return super().url.removesuffix("/v1")

    def reset(self) -> None:
        """Forget the requests, problems, replies, checks and cache of the previous test."""
        super().reset()
        with self._lock:
            self.checks.clear()
            self.rule.clear()

    def answer(self, body: dict[str, Any]) -> tuple[Reply, AnthropicUsage | None]:
        """Record a request body; the reply to send and the usage it is counted at."""
        with self._lock:
            self.requests.append(body)
            for check in self.checks:
                refused = check(body)
                if refused is not None:
                    return refused, None
            try:
                usage = self.rule.apply(body)
            except TooManyBreakpoints as exc:
                return Reply(status=400, error_message=str(exc)), None
            if self._replies:
                return self._replies.popleft(), usage
            self.problems.append(f"request {len(self.requests)} came after the script ran out")
            return Reply(status=500, error_message="the stub has no scripted reply left"), None


def _handler_for(stub: AnthropicStub) -> type[BaseHTTPRequestHandler]:
    class Handler(openai_handler_for(stub)):  # type: ignore[misc]
        """tests/openai_stub.py's handler (connections, JSON), answering Anthropic's route."""

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            if self.path != ENDPOINT or length > MAX_BODY_BYTES:
                why = f"no route {self.path}" if self.path != ENDPOINT else "body too large"
                self._send_json(404 if self.path != ENDPOINT else 413, _error_body(why))
                return
            try:
                body = json.loads(self.rfile.read(length))
            except ValueError as exc:
                stub.problems.append(f"a request body was not JSON: {exc}")
                self._send_json(400, _error_body("the request body is not JSON"))
                return
            reply, usage = stub.answer(body)
            if reply.status != 200 or usage is None:
                self._send_json(reply.status, _error_body(reply.error_message))
            elif body.get("stream"):
                self._send_events(_events(reply, body, usage))
            else:
                self._send_json(200, _message(reply, body, usage))

        def _send_events(self, events: Iterator[dict[str, Any]]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event in events:
                data = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.write(b"0\r\n\r\n")

    return Handler


def _error_body(message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def _usage(usage: AnthropicUsage, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "output_tokens": output_tokens,
    }


def _stop_reason(reply: Reply) -> str:
    return "tool_use" if reply.tool_calls else "end_turn"


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.content:
        blocks.append({"type": "text", "text": reply.content})
    for c in reply.tool_calls:
        blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": _input(c)})
    return blocks


def _input(c: Any) -> Any:
    try:
        return json.loads(c.arguments)
    except ValueError:
        return {}


def _message(
    reply: Reply, body: dict[str, Any], usage: AnthropicUsage, content: bool = True
) -> dict[str, Any]:
    return {
        "id": "msg_stub",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude-test"),
        "content": _blocks(reply) if content else [],
        "stop_reason": _stop_reason(reply) if content else None,
        "stop_sequence": None,
        "usage": _usage(usage, reply.usage.completion_tokens if content else 1),
    }


def _events(reply: Reply, body: dict[str, Any], usage: AnthropicUsage) -> Iterator[dict[str, Any]]:
    """The reply as Anthropic streams it: the message, each block with its deltas, the end."""
    yield {"type": "message_start", "message": _message(reply, body, usage, content=False)}
    index = 0
    if reply.content:
        yield {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": ""},
        }
        yield {"type": "ping"}
        for piece in re.findall(r"\S+\s*|\s+", reply.content):
            delta = {"type": "text_delta", "text": piece}
            yield {"type": "content_block_delta", "index": 0, "delta": delta}
        yield {"type": "content_block_stop", "index": 0}
        index = 1
    for offset, c in enumerate(reply.tool_calls, start=index):
        start = {"type": "tool_use", "id": c.id, "name": c.name, "input": {}}
        yield {"type": "content_block_start", "index": offset, "content_block": start}
        for at in range(0, len(c.arguments), ARGUMENT_PIECE):
            delta = {
                "type": "input_json_delta",
                "partial_json": c.arguments[at : at + ARGUMENT_PIECE],
            }
            yield {"type": "content_block_delta", "index": offset, "delta": delta}
        yield {"type": "content_block_stop", "index": offset}
    end = {"stop_reason": _stop_reason(reply), "stop_sequence": None}
    yield {
        "type": "message_delta",
        "delta": end,
        "usage": _usage(usage, reply.usage.completion_tokens),  # the totals, as the API sends
    }
    yield {"type": "message_stop"}
