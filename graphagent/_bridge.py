"""The one sync/async bridge: sync-only wrap hooks serving async runs, without deadlock.

A sync-only ``wrap_model_call``/``wrap_tool_call`` layer under ``ainvoke`` runs in a thread (it
may block), and each call it makes to its handler runs the inner layers back on the event loop.
While the inner work runs, the layer's thread waits. That inner work may itself need a thread —
a sync tool, a model that only implements ``_generate`` — and gets one from the loop's default
executor, a pool of a few threads. Had the waiting layers come from that pool too, enough of them
would fill it, and the work they wait for could never start.

So bridged layers never take a pool thread: they run on :data:`WORKERS`, which always has a free
thread (an idle one, or a new one), and a thread only ever waits for work that runs elsewhere.

Cancelling the run cancels the inner work a layer is waiting for, and every later handler call
of that layer raises ``CancelledError`` without running anything (a sync retry loop cannot run a
cancelled tool again). Code already running in the thread — a sync tool, ``time.sleep`` in a
layer — cannot be interrupted; it runs to its end, unobserved.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import itertools
import queue
import threading
from collections.abc import Callable, Coroutine
from typing import Any

Inner = Callable[[Any], Coroutine[Any, Any, Any]]
SyncLayer = Callable[[Any, Callable[[Any], Any]], Any]

_IDLE_SECONDS = 30.0
_thread_numbers = itertools.count(1)


class Workers:
    """Threads for bridged sync code: a free one whenever asked, idle ones retire.

    Invariant (under the lock): ``idle`` = threads waiting for a job minus jobs queued for them, and
    it never goes below zero, so every queued job has a waiting thread to take it.
    """

    def __init__(self, idle_seconds: float = _IDLE_SECONDS) -> None:
        self._idle_seconds = idle_seconds
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._idle = 0

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            if self._idle:
                self._idle -= 1
                self._jobs.put(job)
                return
        name = f"graphagent-bridge-{next(_thread_numbers)}"
        threading.Thread(target=self._work, args=(job,), name=name, daemon=True).start()

    def _work(self, job: Callable[[], None]) -> None:
        next_job: Callable[[], None] | None = job
        while next_job is not None:
            next_job()
            with self._lock:
                self._idle += 1
            next_job = self._next_job()

    def _next_job(self) -> Callable[[], None] | None:
        while True:
            try:
                return self._jobs.get(timeout=self._idle_seconds)
            except queue.Empty:
                with self._lock:
                    if self._idle:  # more waiting threads than queued jobs: this one can go
                        self._idle -= 1
                        return None


WORKERS = Workers()


async def run_in_worker(fn: Callable[..., Any], *args: Any) -> Any:
    """``await fn(*args)`` run in a bridge thread, in a copy of the caller's context."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def job() -> None:
        try:
            result = context.run(fn, *args)
        except BaseException as error:  # handed over to the awaiting task, whatever it is
            _call_soon(loop, _fail, future, error)
        else:
            _call_soon(loop, _succeed, future, result)

    WORKERS.submit(job)
    return await future


def bridge_to_async(sync_layer: SyncLayer) -> Callable[[Any, Inner], Coroutine[Any, Any, Any]]:
    """An async layer that runs ``sync_layer`` in a bridge thread, its handler on the loop."""

    async def layer(request: Any, inner: Inner) -> Any:
        calls = InnerCalls(asyncio.get_running_loop(), inner)
        try:
            return await run_in_worker(sync_layer, request, calls.handler)
        except asyncio.CancelledError:
            await calls.cancel()
            raise

    return layer


class InnerCalls:
    """The handler a bridged layer gets: each call runs ``inner`` as a task on the loop and
    blocks the layer's thread until it ends."""

    def __init__(self, loop: asyncio.AbstractEventLoop, inner: Inner) -> None:
        self._loop = loop
        self._inner = inner
        self._running: set[asyncio.Task[Any]] = set()
        self._cancelled = False

    def handler(self, request: Any) -> Any:
        """Called from the layer's thread."""
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()
        if not _call_soon(self._loop, self._start, request, done):
            raise asyncio.CancelledError("the event loop of this run has closed")
        try:
            return done.result()
        except concurrent.futures.CancelledError:
            raise asyncio.CancelledError from None

    def _start(self, request: Any, done: concurrent.futures.Future[Any]) -> None:
        if self._cancelled:
            done.cancel()
            return
        task = self._loop.create_task(self._inner(request))
        self._running.add(task)
        task.add_done_callback(lambda t: self._finish(t, done))

    def _finish(self, task: asyncio.Task[Any], done: concurrent.futures.Future[Any]) -> None:
        self._running.discard(task)
        if task.cancelled():
            done.cancel()
        elif (error := task.exception()) is not None:
            done.set_exception(error)
        else:
            done.set_result(task.result())

    async def cancel(self) -> None:
        """Cancel the inner work in flight, wait until it has stopped, refuse any more."""
        self._cancelled = True
        running = list(self._running)
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)


def _call_soon(loop: asyncio.AbstractEventLoop, fn: Callable[..., None], *args: Any) -> bool:
    """Schedule ``fn`` on ``loop`` from another thread; False when the loop has closed."""
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:
        return False
    return True


def _succeed(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():
        future.set_result(result)


def _fail(future: asyncio.Future[Any], error: BaseException) -> None:
    if future.done():
        return
    if isinstance(error, asyncio.CancelledError):
        future.cancel()
    else:
        future.set_exception(error)
