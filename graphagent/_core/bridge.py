"""The one sync/async bridge: behaviour written once for both kinds of run, and sync-only wrap
hooks serving async runs without deadlock.

Written once: a behaviour is an ``async def`` core that takes a :class:`Mode` and does everything
that differs between a sync and an async run through it (call a handler, sleep, invoke a model,
offload blocking work). Async runs await the core with :data:`ASYNC`; sync runs drive it with
:func:`run_sync` and :data:`SYNC`, whose operations never suspend, so the core finishes in one
step.

Sync-only hooks under async runs:

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

Time limits: :meth:`Mode.call_within` gives a call a number of seconds. An async call past them
is cancelled; a sync one runs in a bridge thread that the caller stops waiting for, and that
thread, like any other, runs its code to the end, unobserved, its result dropped.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import itertools
import queue
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Generic, ParamSpec, Protocol, TypeVar, cast

from langchain_core.runnables import Runnable

from graphagent.errors import AsyncOnlyHookError

T = TypeVar("T")
FirstT = TypeVar("FirstT")
"""What an entry point takes first: a node's state, a call's request."""
SecondT = TypeVar("SecondT")
"""What an entry point takes second: a node's runtime, a call's handler."""
P = ParamSpec("P")
Inner = Callable[[Any], Coroutine[Any, Any, Any]]
SyncLayer = Callable[[Any, Callable[[Any], Any]], Any]


class Mode(Protocol):
    """What differs between a sync and an async run, for a core written once."""

    asynchronous: bool

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``: a sync run's handler returns its result, an async run's is awaited."""

    async def sleep(self, seconds: float) -> None:
        """Wait without blocking an event loop."""

    async def invoke(self, runnable: Runnable[Any, Any], input: Any, **kwargs: Any) -> Any:
        """``runnable.invoke`` in a sync run, ``runnable.ainvoke`` in an async one."""

    async def offload(self, fn: Callable[..., T], *args: Any) -> T:
        """Blocking work (a model's construction, a CPU-heavy edit): inline in a sync run, in a
        thread of the loop's executor in an async one. It must not wait for other work."""

    async def call_within(self, seconds: float, fn: Callable[..., Any], *args: Any) -> Any:
        """:meth:`call`, given ``seconds`` to end, else :class:`TimedOut`. An async run cancels
        the call; a sync run makes it in a bridge thread and stops waiting for it, and the
        thread runs it to its end unobserved (see the module's notes)."""

    async def wait(self, future: concurrent.futures.Future[T], within: float | None = None) -> T:
        """The outcome of ``future``, which other work (a thread, or a task) settles: a sync run
        blocks on it, an async run awaits it. Cancelling the waiting task leaves ``future``
        alone, for whoever else waits on it; so does :class:`TimedOut`, raised when ``within``
        seconds pass first."""


_GIVEN_UP: contextvars.ContextVar[concurrent.futures.Future[None] | None] = contextvars.ContextVar(
    "graphagent_given_up", default=None
)


def given_up() -> concurrent.futures.Future[None] | None:
    """In a sync call given a time limit (:meth:`Mode.call_within`), the future settled when the
    caller stops waiting for it: code that can stop early (a request on another thread's loop)
    waits on it too, and stops rather than run on unobserved. ``None`` elsewhere."""
    return _GIVEN_UP.get()


class TimedOut(TimeoutError):
    """A call given to :meth:`Mode.call_within` did not end in time. Its own type, so that a
    ``TimeoutError`` the call raises itself is never taken for it."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the call did not end within {seconds:g} s")
        self.seconds = seconds


class _Sync:
    asynchronous = False

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return fn(*args)

    async def sleep(self, seconds: float) -> None:
        time.sleep(seconds)  # noqa: ASYNC251 - driven by run_sync, never on an event loop

    async def invoke(self, runnable: Runnable[Any, Any], input: Any, **kwargs: Any) -> Any:
        return runnable.invoke(input, **kwargs)

    async def offload(self, fn: Callable[..., T], *args: Any) -> T:
        return fn(*args)

    async def call_within(self, seconds: float, fn: Callable[..., Any], *args: Any) -> Any:
        outcome: concurrent.futures.Future[Any] = concurrent.futures.Future()
        context = contextvars.copy_context()

        def job() -> None:
            try:
                result = context.run(fn, *args)
            except BaseException as error:  # handed over to the caller, whatever it is
                outcome.set_exception(error)
            else:
                outcome.set_result(result)

        gave_up: concurrent.futures.Future[None] = concurrent.futures.Future()
        context.run(_GIVEN_UP.set, gave_up)
        WORKERS.submit(job)
        finished, _ = concurrent.futures.wait([outcome], timeout=seconds)
        if not finished:
            gave_up.set_result(None)
            raise TimedOut(seconds)
        return outcome.result()

    async def wait(self, future: concurrent.futures.Future[T], within: float | None = None) -> T:
        try:
            return future.result(within)
        except TimeoutError:
            if future.done():  # the future's own outcome
                raise
            raise TimedOut(within or 0.0) from None


class _Async:
    asynchronous = True

    async def call(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        return await fn(*args)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def invoke(self, runnable: Runnable[Any, Any], input: Any, **kwargs: Any) -> Any:
        return await runnable.ainvoke(input, **kwargs)

    async def offload(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.to_thread(fn, *args)

    async def call_within(
        self, seconds: float, fn: Callable[..., Awaitable[Any]], *args: Any
    ) -> Any:
        try:
            async with asyncio.timeout(seconds) as scope:
                return await fn(*args)
        except TimeoutError:
            if scope.expired():
                raise TimedOut(seconds) from None
            raise

    async def wait(self, future: concurrent.futures.Future[T], within: float | None = None) -> T:
        if within is None:
            return await self._wait(future)
        return await self.call_within(within, self._wait, future)  # type: ignore[no-any-return]

    async def _wait(self, future: concurrent.futures.Future[T]) -> T:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[T] = loop.create_future()

        def settle(done: concurrent.futures.Future[T]) -> None:
            error = done.exception()
            if error is None:
                _call_soon(loop, _succeed, waiter, done.result())
            else:
                _call_soon(loop, _fail, waiter, error)

        future.add_done_callback(settle)
        return await waiter


SYNC: Mode = _Sync()
ASYNC: Mode = _Async()


def run_sync(core: Coroutine[Any, Any, T], where: str) -> T:
    """Run a core in a sync run. Its operations are :data:`SYNC`'s, which never suspend, so it
    ends in one step; one that awaits anything else is an error naming ``where`` (a hook)."""
    try:
        core.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    core.close()
    raise AsyncOnlyHookError(
        f"{where} awaited something that suspends while serving a synchronous run "
        "(invoke()/stream()); await only what the Mode it is given offers, or run the agent "
        "with ainvoke()/astream()."
    )


class EntryPoints(Generic[FirstT, SecondT, T]):
    """The sync and async entry points of a two-argument core written once, ``core(mode, first,
    second)``: calling the object runs the core in a sync run, :meth:`arun` awaits it in an async
    one. With ``sync_error``, a sync run raises that instead (an async-only hook met by it).

    Every engine entry point takes two arguments: a node's state and runtime (langgraph passes the
    runtime to a parameter of that name), or a call's request and handler. An object, not a pair
    of closures: when compiling, langgraph reads each node function's closure, an object it skips.
    """

    __slots__ = ("core", "sync_error", "where")

    def __init__(
        self,
        core: Callable[[Mode, FirstT, SecondT], Coroutine[Any, Any, T]],
        where: str,
        sync_error: BaseException | None = None,
    ) -> None:
        self.core, self.where, self.sync_error = core, where, sync_error

    def __call__(self, state: FirstT, runtime: SecondT) -> T:
        if self.sync_error is not None:
            raise self.sync_error
        return run_sync(self.core(SYNC, state, runtime), self.where)

    async def arun(self, state: FirstT, runtime: SecondT) -> T:
        return await self.core(ASYNC, state, runtime)


def in_mode(core: Callable[P, Coroutine[Any, Any, T]], mode: Mode, where: str) -> Callable[P, Any]:
    """``core`` with the calling convention of ``mode``'s runs: the coroutine function itself
    for async runs, a plain function that runs it to the end for sync ones."""
    if mode.asynchronous:
        return core
    plain: Callable[..., Coroutine[Any, Any, T]] = core  # positional only: no dict per call
    return cast("Callable[P, T]", lambda *args: run_sync(plain(*args), where))


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
