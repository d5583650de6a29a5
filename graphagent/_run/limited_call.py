"""One model call through its key's limiter: wait for a slot and a start time, call, and on a
``429`` the client did not retry away learn from it, wait and call again, for at most the
agent's ``max_wait`` seconds of waiting in all.

The client's own retries (``ChatOpenAI(max_retries=2)`` retries a ``429`` inside the SDK) happen
inside one call the limiter sees: it steps in when they give up. Only a provider's ``429`` is
caught; every other exception, ``GraphInterrupt`` and cancellation among them, passes through,
and a cancelled call gives back its slot.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig

from graphagent._core.bridge import Mode, TimedOut
from graphagent._run.limiter import KeyLimiter, jitter_after, limiter_for
from graphagent._run.rate_signals import estimated_tokens, key_of, rejection
from graphagent._run.slots import enter
from graphagent.errors import RateLimitWaitError
from graphagent.limits import RATE_LIMIT_WAIT, RateLimits

Invoke = Callable[[RunnableConfig | None], Awaitable[Any]]
"""Call the model once, with a config to merge into the call's (``None``: none)."""

_CACHE_SIZE = 64


class Gate:
    """The limiters an agent's model calls go through; ``limits=None`` lets them all through."""

    def __init__(self, limits: RateLimits | None) -> None:
        self._limits = limits
        self._limiters: dict[int, tuple[Any, KeyLimiter]] = {}

    async def call(self, mode: Mode, model: Any, messages: Sequence[Any], invoke: Invoke) -> Any:
        """``invoke``'s reply; one that waited carries the seconds in its metadata."""
        if self._limits is None:
            return await invoke(None)
        reply, waited = await limited(
            mode, self._limiter(model, self._limits), self._limits.max_wait, messages, invoke
        )
        metadata = getattr(reply, "response_metadata", None)
        if waited and isinstance(metadata, dict):
            metadata[RATE_LIMIT_WAIT] = round(waited, 3)
        return reply

    def _limiter(self, model: Any, limits: RateLimits) -> KeyLimiter:
        hit = self._limiters.get(id(model))
        if hit is not None and hit[0] is model:
            return hit[1]
        limiter = limiter_for(key_of(model, per_model=limits.per == "model"))
        limiter.configure(limits)
        if len(self._limiters) >= _CACHE_SIZE:
            self._limiters.clear()
        self._limiters[id(model)] = (model, limiter)  # holding the model keeps its id unused
        return limiter


async def limited(
    mode: Mode, limiter: KeyLimiter, max_wait: float, messages: Sequence[Any], invoke: Invoke
) -> tuple[Any, float]:
    """``invoke``'s reply, and the seconds it waited for ``limiter``."""
    waited, jitter = 0.0, 0.0
    cause: BaseException | None = None

    def tokens() -> int:
        return estimated_tokens(messages)

    while True:
        generation, queued = await _enter(mode, limiter, max_wait - waited, tokens, jitter, cause)
        waited += queued
        try:
            reply = await invoke(_waited(waited))
        except Exception as error:
            limiter.leave()
            said = rejection(error)
            if said is None:
                raise
            cause = error
            jitter = jitter_after(limiter.rejected(said, generation, tokens()))
            continue
        except BaseException:
            limiter.leave()
            raise
        limiter.succeeded()
        limiter.leave()
        return reply, waited


def _waited(seconds: float) -> RunnableConfig | None:
    """What a call that waited adds to its config: the wait, in the metadata streams show."""
    return {"metadata": {RATE_LIMIT_WAIT: round(seconds, 3)}} if seconds else None


async def _enter(
    mode: Mode,
    limiter: KeyLimiter,
    budget: float,
    tokens: Callable[[], int],
    jitter: float,
    cause: BaseException | None,
) -> tuple[int, float]:
    """Take a slot and wait for the reserved start: the limiter's generation at the start, and
    the seconds waited (0 when the call could start at once)."""
    began = time.monotonic()
    try:
        queued = await enter(mode, limiter.slots, max(0.0, budget))
    except TimedOut:
        raise _gave_up(limiter, budget, cause) from cause
    generation = limiter.generation
    start = limiter.reserve(tokens, budget - (time.monotonic() - began), jitter)
    if start is None:
        limiter.leave()
        raise _gave_up(limiter, budget, cause) from cause
    delay = start - time.monotonic()
    if delay > 0:
        try:
            await mode.sleep(delay)
        except BaseException:
            limiter.leave()
            raise
    elif not queued:
        return generation, 0.0
    return generation, time.monotonic() - began


def _gave_up(limiter: KeyLimiter, budget: float, cause: BaseException | None) -> RateLimitWaitError:
    provider, endpoint = limiter.key[0], limiter.key[1] or "its default endpoint"
    last = f" The last answer was: {cause}." if cause is not None else ""
    return RateLimitWaitError(
        f"A model call to {provider} at {endpoint} would wait longer for the key's rate limits "
        f"than its remaining {max(0.0, budget):.1f} s of RateLimits(max_wait=...).{last} Give "
        "the key's limits with create_agent(rate_limits=RateLimits(...)) so that calls queue "
        "from the start, raise max_wait, or send fewer calls at once."
    )
