"""Calls in flight, at most so many at once, for sync and async runs alike: a provider key's
concurrent requests, a run's parallel tool calls, one tool's calls.

A call takes a slot or queues, first come first served, on a ``concurrent.futures.Future`` that a
leaving call settles (sync runs wait from many threads, async runs from many loops, through
``Mode.wait``). A call that stops waiting (its time is up, or it was cancelled) gives back the
slot it got meanwhile.
"""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import Future

from graphagent._core.bridge import Mode


class Slots:
    """At most ``cap`` calls in flight (``None``: no limit)."""

    def __init__(self, cap: int | None = None) -> None:
        self._cap = cap
        self._lock = threading.Lock()
        self._in_flight = 0
        self._waiters: deque[Future[None]] = deque()

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def queued(self) -> int:
        return len(self._waiters)

    def set_cap(self, cap: int | None) -> None:
        with self._lock:
            self._cap = cap
            self._wake()

    def try_enter(self) -> Future[None] | None:
        """Take a slot (``None``), or a future settled when one is given to this call."""
        with self._lock:
            if not self._waiters and (self._cap is None or self._in_flight < self._cap):
                self._in_flight += 1
                return None
            waiter: Future[None] = Future()
            self._waiters.append(waiter)
            return waiter

    def leave(self) -> None:
        with self._lock:
            self._in_flight -= 1
            self._wake()

    def abandon(self, waiter: Future[None]) -> None:
        """Stop waiting: give back the slot if ``waiter`` got one meanwhile."""
        with self._lock:
            if waiter.done():
                self._in_flight -= 1
                self._wake()
            else:
                self._waiters.remove(waiter)

    def _wake(self) -> None:
        while self._waiters and (self._cap is None or self._in_flight < self._cap):
            self._in_flight += 1
            self._waiters.popleft().set_result(None)


async def enter(mode: Mode, slots: Slots, within: float | None = None) -> bool:
    """Take a slot of ``slots``, waiting at most ``within`` seconds (``TimedOut`` past them);
    whether the call had to wait."""
    waiter = slots.try_enter()
    if waiter is None:
        return False
    try:
        await mode.wait(waiter, within)
    except BaseException:
        slots.abandon(waiter)
        raise
    return True
