"""The event loop that serves MCP calls of synchronous runs (``invoke``/``stream``).

FastMCP's client is asyncio only, and a connection belongs to the loop that opened it. A sync
run's tool call therefore runs its coroutine on one long-lived loop in a daemon thread, shared by
every sync call of the process: a kept-alive stdio server started there stays up between calls,
and calls made at the same time share its connection. The coroutine runs in a copy of the
caller's context, so ``interrupt()`` finds the run it pauses. If the calling thread is stopped
(``KeyboardInterrupt``), or a time limit of the run gives up on the call, the pending call is
cancelled, and the server told so.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from graphagent._core.bridge import given_up

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _forget_the_loop() -> None:
    """In a forked child the loop's thread is gone: the child starts a loop of its own."""
    global _loop, _lock
    _loop, _lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_the_loop)


def _serving_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="graphagent-mcp", daemon=True).start()
            _loop = loop
        return _loop


def run(call: Coroutine[Any, Any, T]) -> T:
    """The result of ``call``, run on the MCP loop while this thread waits."""
    loop = _serving_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        call.close()
        raise RuntimeError(
            "A synchronous MCP tool call was made on the loop that serves synchronous MCP calls; "
            "await the tool's ainvoke() there instead."
        )
    future = asyncio.run_coroutine_threadsafe(call, loop)
    try:
        _until_settled_or_given_up(future)
        return future.result()
    except BaseException:
        future.cancel()
        raise


def _until_settled_or_given_up(future: concurrent.futures.Future[Any]) -> None:
    """Wait for ``future``; if the caller gives up first (a time limit of the run, such as
    ``ToolTimeoutMiddleware``'s), cancel it, so the server is told and no thread waits on."""
    gave_up = given_up()
    pending = [future] if gave_up is None else [future, gave_up]
    concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
    if not future.done():
        future.cancel()
        raise TimeoutError("the caller stopped waiting for the MCP call, which was cancelled")
