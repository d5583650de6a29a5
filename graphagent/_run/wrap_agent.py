"""Agent-level ``wrap_agent`` hooks around a whole run, on every path out of it.

A ``wrap_agent`` hook is a generator that yields once: the run happens at the ``yield``, which
returns the run's final output, or raises what ended the run (an exception, ``GeneratorExit``
when a stream is closed early, ``CancelledError`` when the task is cancelled). Hooks observe: an
exception they swallow is raised all the same, and they cannot replace the output.

The driver is written once, as coroutines; a sync run drives them with
:func:`graphagent._core.bridge.run_sync`, which works because every layer of a sync run is a plain
generator and never suspends.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import AsyncGenerator, Coroutine, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphagent._core.bridge import Mode, run_sync
from graphagent._core.langgraph_internals import INTERRUPT, closed_stream
from graphagent._core.records import Hook, async_only_hook_error
from graphagent.errors import HookReturnError, note_origin


@dataclass(slots=True)
class AgentLayer:
    """One ``wrap_agent`` hook around one run: a generator (``wrap_agent``), or an async
    generator (``awrap_agent``) under an async run, both driven through one interface."""

    hook: Hook
    asynchronous: bool
    generator: AsyncGenerator[Any, Any] | None = None

    async def start(self, state: Any, runtime: Any) -> None:
        self.generator = self._open(state, runtime)
        try:
            await anext(self.generator)
        except StopAsyncIteration:
            raise HookReturnError(_no_yield(self.hook)) from None

    async def finish(self, result: Any) -> None:
        generator = self._started()
        try:
            await generator.asend(result)
        except StopAsyncIteration:
            return
        await generator.aclose()
        raise HookReturnError(_yielded_twice(self.hook))

    async def fail(self, error: BaseException) -> None:
        generator = self._started()
        if isinstance(error, GeneratorExit):
            await generator.aclose()
            return
        try:
            await generator.athrow(error)
        except StopAsyncIteration:
            return
        except BaseException as raised:
            if raised is not error:
                raise
            return
        await generator.aclose()
        raise HookReturnError(_yielded_twice(self.hook))

    def _open(self, state: Any, runtime: Any) -> AsyncGenerator[Any, Any]:
        if self.asynchronous:
            generator = self.hook.asynchronous(state, runtime)  # type: ignore[misc]
            if not inspect.isasyncgen(generator):
                raise HookReturnError(
                    _not_a_generator(self.hook, "awrap_agent", "async def ... yield")
                )
            return generator
        plain = self.hook.sync(state, runtime)  # type: ignore[misc]
        if not inspect.isgenerator(plain):
            raise HookReturnError(_not_a_generator(self.hook, "wrap_agent", "yield"))
        return _AsAsync(plain)

    def _started(self) -> AsyncGenerator[Any, Any]:
        if self.generator is None:  # pragma: no cover - enter() starts every layer it ends
            raise RuntimeError(f"{self.hook.label} ended before it started")
        return self.generator


class _AsAsync(AsyncGenerator[Any, Any]):
    """A generator seen as an async generator; its steps never suspend."""

    def __init__(self, generator: Generator[Any, Any, Any]) -> None:
        self._generator = generator

    async def asend(self, value: Any) -> Any:
        try:
            return self._generator.send(value)
        except StopIteration:
            raise StopAsyncIteration from None

    async def athrow(self, *error: Any) -> Any:
        try:
            return self._generator.throw(*error)
        except StopIteration:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._generator.close()


def layers_for(hooks: Sequence[Hook], *, asynchronous: bool) -> list[AgentLayer]:
    """One layer per hook; a sync run refuses async-only hooks before anything starts. Under an
    async run a sync-only hook's generator runs inline, on the event loop."""
    if not asynchronous:
        async_only = next((h for h in hooks if h.sync is None), None)
        if async_only is not None:
            raise async_only_hook_error(async_only)
    return [AgentLayer(h, asynchronous and h.asynchronous is not None) for h in hooks]


async def enter(layers: Sequence[AgentLayer], state: Any, runtime: Any) -> None:
    """Start the layers outermost first; if one fails, unwind those already started."""
    for started, layer in enumerate(layers):
        try:
            await layer.start(state, runtime)
        except BaseException as error:
            if isinstance(error, Exception):
                note_origin(error, layer.hook.label)
            await leave(layers[:started], error)
            raise


async def leave(layers: Sequence[AgentLayer], outcome: Any) -> None:
    """End the layers innermost first with the run's result, or with what ended it.

    ``outcome`` is the final output, or a ``BaseException``. A layer that raises while ending
    hands its exception to the layers outside it; the last exception standing is raised.
    """
    error = outcome if isinstance(outcome, BaseException) else None
    for layer in reversed(layers):
        try:
            if error is None:
                await layer.finish(outcome)
            else:
                await layer.fail(error)
        except BaseException as raised:
            if isinstance(raised, Exception):
                note_origin(raised, layer.hook.label)
            error = raised
    if error is not None and error is not outcome:
        raise error


DONE = object()
"""What a stream step returns once the stream is exhausted."""


@dataclass(slots=True)
class WrappedRun:
    """One run inside its ``wrap_agent`` layers, written once for both kinds of run: the
    agent's stream loops only move chunks, and run every step in the run's own context."""

    layers: list[AgentLayer]
    mode: Mode
    shape: StreamShape
    context: contextvars.Context
    unchanged: bool | None = None

    @classmethod
    def of(
        cls, hooks: Sequence[Hook], mode: Mode, default_modes: Any, kwargs: dict[str, Any]
    ) -> WrappedRun:
        shape = StreamShape.of(kwargs.pop("stream_mode", None), default_modes, kwargs)
        layers = layers_for(hooks, asynchronous=mode.asynchronous)
        # The run's own context: hooks and steps see what hooks set, even when an async
        # caller takes the steps from different tasks.
        return cls(layers, mode, shape, contextvars.copy_context())

    def within(self, step: Coroutine[Any, Any, Any]) -> Any:
        """Run ``step`` in the run's context: to its end in a sync run; as a task to await in
        an async one (cancelling the caller cancels it too)."""
        if self.mode.asynchronous:
            return asyncio.create_task(step, context=self.context)
        return self.context.run(run_sync, step, "a wrap_agent hook")

    def step(self, step: Coroutine[Any, Any, Any]) -> Any:
        """:meth:`within`, but run in the caller's own task when the layers set no context
        variable: both contexts then hold the same values, and a task per step would cost an
        event-loop round for nothing (most ``wrap_agent`` hooks set none, e.g. OpenTelemetry
        tracing with no provider)."""
        if self.mode.asynchronous and self.same_context:
            return step
        return self.within(step)

    @property
    def same_context(self) -> bool:
        """Whether the run's context holds what the calling task's holds (checked once the
        layers were entered, and then kept: they set nothing more until the run ends)."""
        if self.unchanged is None:
            current = contextvars.copy_context()
            self.unchanged = len(current) == len(self.context) and all(
                var in current and current[var] is value for var, value in self.context.items()
            )
        return self.unchanged

    async def enter(self, state: Any, runtime: Any) -> None:
        await enter(self.layers, state, runtime)

    def chunks(self, part: Any) -> Iterator[Any]:
        wanted, chunk = self.shape.take(part)
        if wanted:
            yield chunk

    async def leave(self, error: BaseException | None = None) -> None:
        """End the layers with the run's final output, or with what ended it (a closed parent
        stream's drain reads as the ``GeneratorExit`` it stands for)."""
        if error is None:
            await leave(self.layers, self.shape.final_output)
        else:
            await leave(self.layers, GeneratorExit() if closed_stream(error) else error)


@dataclass(slots=True)
class StreamShape:
    """Run the graph with "values" and "updates" added to the caller's stream modes (to know the
    final output), and give the caller only the chunks, in the shape, it asked for."""

    modes: tuple[str, ...]
    single: bool
    subgraphs: bool
    version: str
    latest: Any = None
    interrupts: list[Any] = field(default_factory=list)

    @classmethod
    def of(cls, requested: Any, default: Any, kwargs: dict[str, Any]) -> StreamShape:
        mode = default if requested is None else requested
        single = isinstance(mode, str)
        modes = (mode,) if single else tuple(mode)
        return cls(modes, single, bool(kwargs.get("subgraphs")), kwargs.get("version", "v1"))

    def inner_modes(self) -> list[Any]:
        return list(dict.fromkeys([*self.modes, "values", "updates"]))

    def take(self, part: Any) -> tuple[bool, Any]:
        """Record ``part``; return whether the caller gets it, and in which shape."""
        if self.version == "v2":
            namespace, mode, data = part["ns"], part["type"], part["data"]
        elif self.subgraphs:
            namespace, mode, data = part
        else:
            namespace, (mode, data) = (), part
        if not namespace:
            self._record(mode, data, part)
        if mode not in self.modes:
            return False, None
        if self.version == "v2":
            return True, part
        if self.single:
            return True, (namespace, data) if self.subgraphs else data
        return True, (namespace, mode, data) if self.subgraphs else (mode, data)

    def _record(self, mode: str, data: Any, part: Any) -> None:
        if mode == "values":
            self.latest = data
            if self.version == "v2":
                self.interrupts.extend(part.get("interrupts", ()))
        elif mode == "updates" and self.version != "v2" and isinstance(data, dict):
            self.interrupts.extend(data.get(INTERRUPT, ()))

    @property
    def final_output(self) -> Any:
        """What ``invoke`` returns: the last state, with ``__interrupt__`` when it paused."""
        if not self.interrupts:
            return self.latest
        base = self.latest if isinstance(self.latest, dict) else {}
        return {**base, INTERRUPT: list(self.interrupts)}


def _not_a_generator(hook: Hook, method: str, how: str) -> str:
    return (
        f"{hook.label} must be a generator that yields once ({how}); {method} returned "
        "something else."
    )


def _no_yield(hook: Hook) -> str:
    return f"{hook.label} returned without yielding; yield once, where the run should happen."


def _yielded_twice(hook: Hook) -> str:
    return (
        f"{hook.label} yielded more than once; yield exactly once (the run happens there) and "
        "put clean-up after it, in a finally block."
    )
