"""Agent-level ``wrap_agent`` hooks around a whole run, on every path out of it.

A ``wrap_agent`` hook is a generator that yields once: the run happens at the ``yield``, which
returns the run's final output, or raises what ended the run (an exception, ``GeneratorExit``
when a stream is closed early, ``CancelledError`` when the task is cancelled). Hooks observe: an
exception they swallow is raised all the same, and they cannot replace the output.

The driver is written once, as coroutines; a sync run drives them with
:func:`graphagent._bridge.run_sync`, which works because every layer of a sync run is a plain
generator and never suspends.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from graphagent._plan import Hook
from graphagent.errors import AsyncOnlyHookError, HookReturnError, note_origin

INTERRUPT = "__interrupt__"
"""The key of interrupts in langgraph's outputs (langgraph keeps its constant private)."""


class Layer(Protocol):
    hook: Hook

    async def start(self, state: Any, runtime: Any) -> None: ...

    async def finish(self, result: Any) -> None: ...

    async def fail(self, error: BaseException) -> None: ...


@dataclass(slots=True)
class SyncLayer:
    """A ``wrap_agent`` generator."""

    hook: Hook
    generator: Generator[Any, Any, Any] | None = None

    async def start(self, state: Any, runtime: Any) -> None:
        generator = self.hook.sync(state, runtime)  # type: ignore[misc]
        if not inspect.isgenerator(generator):
            raise HookReturnError(_not_a_generator(self.hook, "wrap_agent", "yield"))
        self.generator = generator
        try:
            next(generator)
        except StopIteration:
            raise HookReturnError(_no_yield(self.hook)) from None

    async def finish(self, result: Any) -> None:
        assert self.generator is not None
        try:
            self.generator.send(result)
        except StopIteration:
            return
        self.generator.close()
        raise HookReturnError(_yielded_twice(self.hook))

    async def fail(self, error: BaseException) -> None:
        assert self.generator is not None
        if isinstance(error, GeneratorExit):
            self.generator.close()
            return
        try:
            self.generator.throw(error)
        except StopIteration:
            return
        except BaseException as raised:
            if raised is not error:
                raise
            return
        self.generator.close()
        raise HookReturnError(_yielded_twice(self.hook))


@dataclass(slots=True)
class AsyncLayer:
    """An ``awrap_agent`` async generator."""

    hook: Hook
    generator: AsyncGenerator[Any, Any] | None = None

    async def start(self, state: Any, runtime: Any) -> None:
        generator = self.hook.asynchronous(state, runtime)  # type: ignore[misc]
        if not inspect.isasyncgen(generator):
            raise HookReturnError(_not_a_generator(self.hook, "awrap_agent", "async def ... yield"))
        self.generator = generator
        try:
            await anext(generator)
        except StopAsyncIteration:
            raise HookReturnError(_no_yield(self.hook)) from None

    async def finish(self, result: Any) -> None:
        assert self.generator is not None
        try:
            await self.generator.asend(result)
        except StopAsyncIteration:
            return
        await self.generator.aclose()
        raise HookReturnError(_yielded_twice(self.hook))

    async def fail(self, error: BaseException) -> None:
        assert self.generator is not None
        if isinstance(error, GeneratorExit):
            await self.generator.aclose()
            return
        try:
            await self.generator.athrow(error)
        except StopAsyncIteration:
            return
        except BaseException as raised:
            if raised is not error:
                raise
            return
        await self.generator.aclose()
        raise HookReturnError(_yielded_twice(self.hook))


def layers_for(hooks: Sequence[Hook], *, asynchronous: bool) -> list[Layer]:
    """One layer per hook; a sync run refuses async-only hooks before anything starts."""
    if not asynchronous:
        async_only = [h for h in hooks if h.sync is None]
        if async_only:
            hook = async_only[0]
            raise AsyncOnlyHookError(
                f"{hook.label} has only an async implementation (awrap_agent), so it cannot run "
                "under invoke()/stream(); run the agent with ainvoke()/astream(), or also "
                "define wrap_agent."
            )
    return [
        AsyncLayer(h) if asynchronous and h.asynchronous is not None else SyncLayer(h)
        for h in hooks
    ]


async def enter(layers: Sequence[Layer], state: Any, runtime: Any) -> None:
    """Start the layers outermost first; if one fails, unwind those already started."""
    for started, layer in enumerate(layers):
        try:
            await layer.start(state, runtime)
        except BaseException as error:
            if isinstance(error, Exception):
                note_origin(error, layer.hook.label)
            await leave(layers[:started], error)
            raise


async def leave(layers: Sequence[Layer], outcome: Any) -> None:
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
