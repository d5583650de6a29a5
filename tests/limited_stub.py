"""The OpenAI stub behind a provider's limits: requests per second, tokens per minute and
concurrent requests, each per API key.

A request over a limit is answered ``429`` as OpenAI answers it: an error body of type
``requests`` or ``tokens``, ``retry-after`` (whole seconds) and ``retry-after-ms``, and the
``x-ratelimit-*`` headers, which every answer carries. The requests and tokens limits are token
buckets that refill continuously (a key limited to 10 requests per second may send 10 at once,
then one every 0.1 s); a rejected request does not count against them. The tokens a request
counts are OpenAI's estimate: its messages' characters over four, plus its ``max_tokens``.

``responder`` answers each admitted request from its body (a bench's many runs cannot share one
script); without it the script answers, as in :class:`OpenAIStub`.
"""

from __future__ import annotations

import io
import json
import math
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.openai_stub import OpenAIStub, Reply, _error_body, _handler_for, call, text, tool_calls

__all__ = ["KeyLimits", "LimitedStub", "estimated_tokens", "tool_turns"]

BACKLOG = 512  # pending connections: a burst of runs connects at once


@dataclass(frozen=True, slots=True)
class KeyLimits:
    """What one API key may do; ``None`` is no limit."""

    requests_per_second: float | None = None
    tokens_per_minute: int | None = None
    concurrent: int | None = None


@dataclass(slots=True)
class _Bucket:
    capacity: float
    per_second: float
    level: float = field(init=False)
    stamp: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.level = self.capacity

    def refill(self, now: float) -> None:
        elapsed = max(0.0, now - self.stamp)
        self.level = min(self.capacity, self.level + elapsed * self.per_second)
        self.stamp = max(self.stamp, now)

    def wait(self, amount: float) -> float:
        """Seconds until ``amount`` is there (0 when it is)."""
        return max(0.0, min(amount, self.capacity) - self.level) / self.per_second

    def headers(self, kind: str) -> dict[str, str]:
        return {
            f"x-ratelimit-limit-{kind}": str(int(self.capacity)),
            f"x-ratelimit-remaining-{kind}": str(max(0, math.floor(self.level))),
            f"x-ratelimit-reset-{kind}": duration((self.capacity - self.level) / self.per_second),
        }


@dataclass(slots=True)
class _Key:
    requests: _Bucket | None
    tokens: _Bucket | None
    in_flight: int = 0


@dataclass(frozen=True, slots=True)
class Verdict:
    """Admitted (``reason`` None) or rejected; the headers go on the answer either way."""

    headers: dict[str, str]
    reason: str | None = None
    retry_after: float = 0.0


class LimitedStub(OpenAIStub):
    """An :class:`OpenAIStub` enforcing ``limits`` per API key; each admitted answer takes
    ``latency`` seconds, so that concurrent requests overlap as they do against a provider."""

    def __init__(
        self,
        limits: KeyLimits,
        *,
        latency: float = 0.0,
        responder: Callable[[dict[str, Any]], Reply] | None = None,
        lifetime: float = 120.0,
    ) -> None:
        super().__init__(lifetime=lifetime)
        self._server.socket.listen(BACKLOG)
        self.limits = limits
        self.latency = latency
        self.responder = responder
        self.served = 0
        self.rejected: Counter[str] = Counter()
        self.most_in_flight = 0
        self._keys: dict[str, _Key] = {}
        self._gate = threading.Lock()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return _limited_handler(self, _handler_for(self))

    def take(self, body: dict[str, Any]) -> Reply | None:
        if self.responder is None:
            return super().take(body)
        with self._lock:
            self.requests.append(body)
        return self.responder(body)

    def admit(self, key: str, body: dict[str, Any]) -> Verdict:
        """Count the request against ``key``'s limits, or reject it naming the one it is over."""
        with self._gate:
            now = time.monotonic()
            state = self._keys.get(key) or self._new_key(key)
            for bucket in (state.requests, state.tokens):
                if bucket is not None:
                    bucket.refill(now)
            verdict = self._verdict(state, estimated_tokens(body))
            if verdict.reason is None:
                state.in_flight += 1
                self.most_in_flight = max(self.most_in_flight, state.in_flight)
            else:
                self.rejected[verdict.reason] += 1
            return verdict

    def release(self, key: str) -> None:
        with self._gate:
            self._keys[key].in_flight -= 1
            self.served += 1

    def _new_key(self, key: str) -> _Key:
        rps, tpm = self.limits.requests_per_second, self.limits.tokens_per_minute
        state = _Key(
            requests=_Bucket(max(1.0, rps), rps) if rps else None,
            tokens=_Bucket(tpm, tpm / 60) if tpm else None,
        )
        self._keys[key] = state
        return state

    def _verdict(self, state: _Key, tokens: int) -> Verdict:
        headers: dict[str, str] = {}
        waits: dict[str, float] = {}
        buckets = (("requests", state.requests, 1), ("tokens", state.tokens, tokens))
        for kind, bucket, amount in buckets:
            if bucket is not None:
                waits[kind] = bucket.wait(amount)
        busy = self.limits.concurrent is not None and state.in_flight >= self.limits.concurrent
        reason = next((kind for kind, wait in waits.items() if wait > 0), None)
        if reason is None and busy:
            reason, waits["concurrent"] = "concurrent", max(self.latency, 0.05)
        if reason is None:
            if state.requests is not None:
                state.requests.level -= 1
            if state.tokens is not None:
                state.tokens.level -= min(tokens, state.tokens.capacity)
        for kind, bucket in (("requests", state.requests), ("tokens", state.tokens)):
            if bucket is not None:
                headers |= bucket.headers(kind)
        return Verdict(headers, reason, waits.get(reason, 0.0) if reason else 0.0)


def _limited_handler(
    stub: LimitedStub, base: type[BaseHTTPRequestHandler]
) -> type[BaseHTTPRequestHandler]:
    class Limited(base):  # type: ignore[valid-type,misc]
        extra_headers: dict[str, str] = {}  # noqa: RUF012 - replaced per request

        def end_headers(self) -> None:
            for name, value in self.extra_headers.items():
                self.send_header(name, value)
            super().end_headers()

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            try:
                body = json.loads(raw)
            except ValueError:
                body = {}
            key = self.headers.get("Authorization", "")
            verdict = stub.admit(key, body)
            self.extra_headers = verdict.headers
            if verdict.reason is not None:
                self.extra_headers = {**verdict.headers, **_retry_after(verdict.retry_after)}
                self._reject(_rejection(verdict.reason))
                return
            try:
                time.sleep(stub.latency)  # the answer takes time (a handler thread of its own)
                self.rfile = io.BytesIO(raw)
                super().do_POST()
            finally:
                stub.release(key)

        def _reject(self, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(429)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Limited


def _retry_after(seconds: float) -> dict[str, str]:
    return {
        "retry-after": str(max(1, math.ceil(seconds))),
        "retry-after-ms": str(max(1, math.ceil(seconds * 1000))),
    }


def _rejection(reason: str) -> dict[str, Any]:
    body = _error_body(f"Rate limit reached for {reason} on this key. Please try again.", None)
    body["error"].update(type=reason, code="rate_limit_exceeded")
    return body


def estimated_tokens(body: dict[str, Any]) -> int:
    """The tokens a request counts against a tokens-per-minute limit, as OpenAI estimates them."""
    characters = sum(len(json.dumps(m.get("content"))) for m in body.get("messages") or ())
    return characters // 4 + int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)


def duration(seconds: float) -> str:
    """``seconds`` as OpenAI writes a reset time: ``"20ms"``, ``"1.5s"``, ``"6m0s"``."""
    if seconds < 1:
        return f"{max(0, round(seconds * 1000))}ms"
    minutes, rest = divmod(seconds, 60)
    rest_text = f"{rest:.3f}".rstrip("0").rstrip(".")
    return f"{int(minutes)}m{rest_text}s" if minutes else f"{rest_text}s"


def tool_turns(turns: int, tool: str = "lookup") -> Callable[[dict[str, Any]], Reply]:
    """A responder for many runs at once: ``turns`` turns of one call to ``tool`` (with
    ``{"n": turn}``), then the answer ``"done"``; each run makes ``turns + 1`` model calls."""

    def respond(body: dict[str, Any]) -> Reply:
        answered = sum(1 for m in body["messages"] if m.get("role") == "tool")
        if answered < turns:
            return tool_calls(call(tool, {"n": answered}, id=f"call_{answered}"))
        return text("done")

    return respond
