"""A run's parallel tool calls: at most so many in flight, and one that fails lets its siblings
finish.

Caps (``ToolLimits``): a call takes a place among its run's calls, then among its tool's calls
(across the agent's runs), always in that order, and gives them back when the tool returns; the
wrappers around the call hold none, so a call waiting for a person's review holds no place.

Branches: the calls of a turn run as parallel tasks, and langgraph cancels the other tasks of a
step once one fails. So a call that fails waits until the run's other calls in flight have
ended, then fails: each of them gets its own answer (saved, with a checkpointer, so that resuming
runs only the failed call again). An interrupt is no failure (langgraph lets the others run on),
and a cancelled call waits for nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any

from langgraph.errors import GraphBubbleUp

from graphagent._core.bridge import Mode
from graphagent._core.ceiling import running_ledger
from graphagent._run.slots import Slots, enter
from graphagent.limits import ToolLimits

_SLOTS = "tool_slots"
_BRANCHES = "tool_branches"


class Branches:
    """The tool calls of one run in flight, and a future settled when none is."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._idle: Future[None] | None = None

    def start(self) -> None:
        with self._lock:
            self._running += 1

    def finish(self) -> None:
        with self._lock:
            self._running -= 1
            if self._running == 0 and self._idle is not None:
                self._idle.set_result(None)
                self._idle = None

    def all_ended(self) -> Future[None] | None:
        """A future settled once no call is in flight (``None``: none is now)."""
        with self._lock:
            if self._running == 0:
                return None
            if self._idle is None:
                self._idle = Future()
            return self._idle


class ToolGate:
    """The caps of an agent's tool calls, and the branches of each of its runs."""

    def __init__(self, limits: ToolLimits) -> None:
        self._per_run = limits.per_run
        self._per_tool = {name: Slots(cap) for name, cap in limits.per_tool.items()}

    async def branch(self, mode: Mode, call: Callable[[], Awaitable[Any]]) -> Any:
        """``call()``; if it fails, after the run's other calls in flight have ended."""
        branches = _scoped(_BRANCHES, Branches)
        if branches is None:
            return await call()
        branches.start()
        try:
            result = await call()
        except Exception as error:
            branches.finish()
            others = None if isinstance(error, GraphBubbleUp) else branches.all_ended()
            if others is not None:
                await mode.wait(others)
            raise
        except BaseException:
            branches.finish()
            raise
        branches.finish()
        return result

    async def limited(self, mode: Mode, tool: str, call: Callable[[], Awaitable[Any]]) -> Any:
        """``call()`` holding a place among the run's calls and among ``tool``'s."""
        run_slots = _scoped(_SLOTS, lambda: Slots(self._per_run)) if self._per_run else None
        held = [s for s in (run_slots, self._per_tool.get(tool)) if s is not None]
        taken: list[Slots] = []
        try:
            for slots in held:
                await enter(mode, slots)
                taken.append(slots)
            return await call()
        finally:
            for slots in reversed(taken):
                slots.leave()


def _scoped(name: str, make: Callable[[], Any]) -> Any:
    """The run's object ``name`` (made on first use); ``None`` outside an agent's run."""
    ledger = running_ledger()
    if ledger is None:
        return None
    found = ledger.scoped.get(name)
    if found is None:
        found = ledger.scoped.setdefault(name, make())
    return found
