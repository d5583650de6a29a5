"""The process's limiters: one per provider endpoint and API key, shared by every agent, run,
parallel call and sub-agent that calls it, sync or async.

A call first takes one of the key's concurrent slots (queueing, first come first served, when
they are all taken), then reserves a start time: calls start at most at the key's request rate,
spaced evenly, within its tokens per minute, and not before a pause a ``429`` asked for. Limits
come from ``RateLimits`` or are learned from the ``429`` answers (:mod:`._run.rate_signals`):

- a window the headers show used up (requests or tokens) gives its rate, paced at 90 % of it and
  probed back up towards it while calls succeed;
- a ``429`` no window explains (a limit on concurrent requests, or a provider without headers)
  halves the concurrent slots, once per round of calls, and they grow back by one for each
  round that succeeds (additive increase, multiplicative decrease);
- every ``429`` pauses the key for its ``Retry-After`` (else a backoff doubling from 1 s), and
  the call that got it starts again after the pause plus a random part of it, so that the calls
  it paused do not all return at once.

The state is guarded by a lock (sync runs call from many threads, async runs from many loops);
a queued call waits on a ``concurrent.futures.Future`` that a leaving call settles.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

from graphagent._run.rate_signals import Rejection
from graphagent._run.slots import Slots
from graphagent.limits import RateLimits

MARGIN = 0.9
"""Learned rates are paced at this fraction of what the headers show."""
PROBE_EVERY = 20
"""Successes in a row after which a learned rate is raised by ``PROBE_STEP`` (up to the rate
the headers showed)."""
PROBE_STEP = 1.05
FIRST_BACKOFF = 1.0
MAX_BACKOFF = 30.0


@dataclass(slots=True)
class Pace:
    """A rate as a generic cell rate algorithm: ``tat`` is when the bucket would be full again."""

    per_second: float
    burst: float
    tat: float = 0.0

    def earliest(self, now: float, amount: float) -> float:
        amount = min(amount, self.burst)
        return max(now, self.tat + (amount - self.burst) / self.per_second)

    def commit(self, start: float, amount: float) -> None:
        self.tat = max(self.tat, start) + min(amount, self.burst) / self.per_second


def _stricter(first: float | None, second: float | None) -> float | None:
    if first is None or second is None:
        return first if second is None else second
    return min(first, second)


class KeyLimiter:
    """The limiter of one provider key (endpoint, API key, and model name when per model)."""

    def __init__(self, key: tuple[str, ...]) -> None:
        self.key = key
        self.generation = 0
        """Bumped whenever a ``429`` teaches something: a ``429`` from a call started before
        says nothing new (it was sent under the old limits)."""
        self._lock = threading.Lock()
        self._explicit = RateLimits()
        self._learned_cap: int | None = None
        self._requests: Pace | None = None
        self._tokens: Pace | None = None
        self._ceiling: float | None = None  # the request rate the headers last showed
        self._paused_until = 0.0
        self.slots = Slots()
        self._streak = 0
        self._failures = 0

    def configure(self, limits: RateLimits) -> None:
        """Take ``limits``' explicit values, the stricter of each where another agent gave one."""
        with self._lock:
            old = self._explicit
            rps = _stricter(old.requests_per_second, limits.requests_per_second)
            tpm = _stricter(old.tokens_per_minute, limits.tokens_per_minute)
            cap = _stricter(old.concurrent_requests, limits.concurrent_requests)
            if (rps, tpm, cap) == (
                old.requests_per_second,
                old.tokens_per_minute,
                old.concurrent_requests,
            ):
                return
            self._explicit = RateLimits(rps, tpm, None if cap is None else int(cap))
            self.slots.set_cap(self._cap())
            if rps is not None:
                self._requests = _paced(self._requests, rps, 1.0)
            if tpm is not None:
                self._tokens = _paced(self._tokens, tpm / 60, tpm)

    # -- concurrent slots -------------------------------------------------------------------------

    def try_enter(self) -> Future[None] | None:
        """Take a slot (``None``), or a future that a leaving call settles when one is free."""
        return self.slots.try_enter()

    def leave(self) -> None:
        self.slots.leave()

    def abandon(self, waiter: Future[None]) -> None:
        """Stop waiting: give back the slot if ``waiter`` got one meanwhile."""
        self.slots.abandon(waiter)

    def _cap(self) -> int | None:
        explicit = self._explicit.concurrent_requests
        if explicit is None or self._learned_cap is None:
            return self._learned_cap if explicit is None else explicit
        return min(explicit, self._learned_cap)

    # -- start times ------------------------------------------------------------------------------

    def reserve(self, tokens: Callable[[], int], within: float, jitter: float) -> float | None:
        """The time a call counted as ``tokens()`` may start (``time.monotonic``), reserved; or
        ``None``, reserving nothing, when that is more than ``within`` seconds away."""
        if self._requests is None and self._tokens is None and not jitter:
            now = time.monotonic()  # nothing to pace: read without the lock, the common case
            if self._paused_until <= now:
                return now
        with self._lock:
            now = time.monotonic()
            start = max(now, self._paused_until)
            amount = float(tokens()) if self._tokens is not None else 0.0
            if self._requests is not None:
                start = self._requests.earliest(start, 1.0)
            if self._tokens is not None:
                start = self._tokens.earliest(start, amount)
            start += jitter
            if start - now > within:
                return None
            if self._requests is not None:
                self._requests.commit(start, 1.0)
            if self._tokens is not None:
                self._tokens.commit(start, amount)
            return start

    # -- outcomes ---------------------------------------------------------------------------------

    def succeeded(self) -> None:
        if not self._failures and self._learned_cap is None and self._requests is None:
            return  # nothing learned to grow back: the common case, without the lock
        with self._lock:
            self._failures = 0
            self._streak += 1
            if self._learned_cap is not None and self._streak % self._learned_cap == 0:
                self._learned_cap += 1
                self.slots.set_cap(self._cap())
            learned = self._requests is not None and self._explicit.requests_per_second is None
            if learned and self._ceiling and self._streak % PROBE_EVERY == 0:
                rate = min(self._ceiling, self._requests.per_second * PROBE_STEP)  # type: ignore[union-attr]
                self._requests = _paced(self._requests, rate, 1.0)

    def rejected(self, said: Rejection, generation: int, tokens: int) -> float:
        """Learn from a ``429`` to a call started at ``generation``; the seconds it pauses."""
        with self._lock:
            now = time.monotonic()
            learned = self._learn_windows(said, tokens)
            if not learned and generation == self.generation:
                cap = self._cap()
                in_flight = self.slots.in_flight if cap is None else min(cap, self.slots.in_flight)
                self._learned_cap = max(1, in_flight // 2)
                self.slots.set_cap(self._cap())
                learned = True
            if learned:
                self.generation += 1
                self._streak = 0
            pause = said.retry_after
            if pause is None:
                pause = min(MAX_BACKOFF, FIRST_BACKOFF * 2**self._failures)
            self._failures += 1
            self._paused_until = max(self._paused_until, now + pause)
            return pause

    def _learn_windows(self, said: Rejection, tokens: int) -> bool:
        learned = False
        requests, used_tokens = said.requests, said.tokens
        if requests is not None and requests.remaining < 1:
            rate = requests.per_second()
            if rate and self._explicit.requests_per_second is None:
                self._ceiling = rate
                self._requests = _paced(self._requests, rate * MARGIN, 1.0)
                learned = True
        if used_tokens is not None and used_tokens.remaining < tokens:
            rate = used_tokens.per_second()
            if rate and self._explicit.tokens_per_minute is None:
                self._tokens = _paced(self._tokens, rate * MARGIN, used_tokens.limit)
                learned = True
        return learned


def _paced(old: Pace | None, per_second: float, burst: float) -> Pace:
    return Pace(per_second, burst, old.tat if old is not None else 0.0)


def jitter_after(pause: float) -> float:
    """A random part of ``pause`` for a call that got a ``429`` to start later by."""
    return random.uniform(0.0, min(1.0, 0.25 * pause + 0.05))


_LIMITERS: dict[tuple[str, ...], KeyLimiter] = {}
_LIMITERS_LOCK = threading.Lock()


def limiter_for(key: tuple[str, ...]) -> KeyLimiter:
    """The process's limiter of ``key``."""
    with _LIMITERS_LOCK:
        limiter = _LIMITERS.get(key)
        if limiter is None:
            limiter = _LIMITERS[key] = KeyLimiter(key)
        return limiter
