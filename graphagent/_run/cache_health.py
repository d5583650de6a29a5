"""Cache health on every model call: what it read, what it could have read, and why not.

The agent's model call keeps, per thread, what its previous call sent (digests of the model,
the tools, the system prompt and each message) and how many input tokens it had. The next call
should read at least that much from the cache when it kept that prefix; when it reads less, the
reply says why, when it can tell: the model, the tools, the system prompt or earlier messages
changed (with the middleware that declare they change it), or nothing changed and the entry
expired or was not found. When a thread that used to read from the cache stops doing so, the
``graphagent`` logger warns once for the thread.

What is kept lives in the process, for its most recent threads: a thread continued by another
process starts without an expectation.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool

from graphagent._core.cache_health import (
    MESSAGES,
    METADATA_KEY,
    MODEL,
    SYSTEM,
    TOOLS,
    CacheUse,
    cache_tokens,
)
from graphagent._core.log import log
from graphagent.requests import ModelRequest

__all__ = ["CacheHealth"]

MINIMUM_CACHED = 1024
"""The shortest prefix OpenAI and Anthropic cache, in tokens."""
ENTRY_LIFETIME = 300.0
"""Seconds an unused cache entry lives at OpenAI and Anthropic (at the least)."""
ROUNDING = 128
"""OpenAI reads a cached prefix in blocks of 128 tokens: when nothing changed, a read this much
short is a full one."""
THREADS_KEPT = 1024
WINDOW = 3
"""Calls over which a collapse of the hit rate is judged."""
COLLAPSED, HEALTHY = 0.2, 0.5


@dataclass(frozen=True, slots=True)
class Sent:
    """Digests of what one call sent, in the order a provider caches it."""

    model: str
    tools: str
    system: str
    messages: tuple[str, ...]

    def changed(self, now: Sent) -> str | None:
        """The first part of the prefix that ``now`` changed, if any."""
        if now.model != self.model:
            return MODEL
        if now.tools != self.tools:
            return TOOLS
        if now.system != self.system:
            return SYSTEM
        if now.messages[: len(self.messages)] != self.messages:
            return MESSAGES
        return None


@dataclass(slots=True)
class _Thread:
    sent: Sent
    input: int
    at: float
    recent: deque[tuple[int, int]] = field(default_factory=lambda: deque(maxlen=WINDOW))
    healthy: bool = False
    warned: bool = False


class CacheHealth:
    """What the calls of one agent read from cache, per thread."""

    def __init__(
        self,
        agent: str,
        volatile: Sequence[tuple[str, tuple[str, ...]]] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._agent = agent
        self._volatile = volatile
        self._clock = clock
        self._threads: OrderedDict[str, _Thread] = OrderedDict()
        self._lock = threading.Lock()

    def observe(
        self, request: ModelRequest, reply: Any, thread_of_run: Callable[[], str | None]
    ) -> None:
        """Write on ``reply`` what its call read from the cache, and why it read less than the
        thread's previous call left cached. The run's thread is looked up (``thread_of_run``)
        only for a reply that reports its cache use: most models' replies never do."""
        if not isinstance(reply, AIMessage):
            return
        tokens = cache_tokens(reply)
        if tokens is None:
            return
        thread = thread_of_run()
        if thread is None:
            return
        sent, now = _sent(request), self._clock()
        with self._lock:
            previous = self._threads.pop(thread, None)
            use = self._judge(previous, sent, tokens, now)
            current = _Thread(sent, use.input, now)
            if previous is not None:
                current.recent, current.healthy = previous.recent, previous.healthy
                current.warned = previous.warned
            self._threads[thread] = current
            while len(self._threads) > THREADS_KEPT:
                self._threads.popitem(last=False)
            self._note(thread, current, use)
        reply.response_metadata[METADATA_KEY] = use.as_dict()

    def _judge(
        self, previous: _Thread | None, sent: Sent, tokens: tuple[int, int, int], now: float
    ) -> CacheUse:
        total, read, written = tokens
        if previous is None or previous.input < MINIMUM_CACHED:
            return CacheUse(total, read, written)
        expected = previous.input
        part = previous.sent.changed(sent)
        if read >= expected or (part is None and read + ROUNDING >= expected):
            return CacheUse(total, read, written, expected)
        return CacheUse(total, read, written, expected, self._why(previous, part, now))

    def _why(self, previous: _Thread, part: str | None, now: float) -> str:
        if part is not None:
            names = [name for name, parts in self._volatile if part in parts]
            by = f" (changed by {', '.join(names)})" if names else ""
            return f"the {part} changed{by}" if part != MESSAGES else f"{part} changed{by}"
        idle = now - previous.at
        if idle > ENTRY_LIFETIME:
            return f"the cache entry expired ({idle:.0f} s since the previous call)"
        return "the provider did not find the prefix (evicted, or routed to another cache)"

    def _note(self, thread: str, state: _Thread, use: CacheUse) -> None:
        state.recent.append((use.read, use.input))
        read = sum(r for r, _ in state.recent)
        total = sum(t for _, t in state.recent) or 1
        if read / total >= HEALTHY:
            state.healthy = True
            return
        if state.warned or not state.healthy or len(state.recent) < WINDOW:
            return
        if read / total < COLLAPSED:
            state.warned = True
            log.warning(
                "%s: prompt-cache reads collapsed on thread %s: the last %d model calls read "
                "%.0f%% of their input from cache%s",
                self._agent,
                thread,
                WINDOW,
                100 * read / total,
                f"; the last one because {use.miss}" if use.miss else "",
            )


def _sent(request: ModelRequest) -> Sent:
    model = request.model
    name = next(
        (
            getattr(model, a)
            for a in ("model_name", "model", "model_id")
            if isinstance(getattr(model, a, None), str)
        ),
        "",
    )
    return Sent(
        f"{getattr(model, '_llm_type', type(model).__name__)}:{name}",
        _digest(_tool_text(t) for t in request.tools),
        _digest([request.system_message.text if request.system_message is not None else ""]),
        tuple(_digest([_message_text(m)]) for m in request.messages),
    )


def _digest(parts: Any) -> str:
    hashed = hashlib.blake2b(digest_size=12)
    for part in parts:
        hashed.update(part.encode("utf-8", "surrogatepass"))
        hashed.update(b"\0")
    return hashed.hexdigest()


def _tool_text(tool: BaseTool | dict[str, Any]) -> str:
    if isinstance(tool, BaseTool):
        return f"{tool.name}\0{tool.description}\0{tool.args}"
    return repr(sorted(tool.items(), key=lambda kv: str(kv[0])))


def _message_text(message: BaseMessage) -> str:
    """A message as the cache sees it, without the breakpoints caching itself adds."""
    calls = (
        [c.get("id") or c["name"] for c in message.tool_calls]
        if isinstance(message, AIMessage)
        else []
    )
    answered = message.tool_call_id if isinstance(message, ToolMessage) else ""
    return f"{message.type}\0{message.text}\0{calls}\0{answered}"
