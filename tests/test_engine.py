"""The engine's pieces driven directly, without a graph, each asserted as a call log: the onion
builder, the wrap-hook layers for either kind of run, and the wrap_agent driver."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any

import pytest

from graphagent import AsyncOnlyHookError
from graphagent._core.bridge import ASYNC, SYNC, Mode, run_sync
from graphagent._core.records import Hook
from graphagent._plan.discover import discover
from graphagent._run.chain import build_onion, hook_layers
from graphagent._run.wrap_agent import AgentLayer, enter, leave
from graphagent.middleware import AgentMiddleware

# --- build_onion ------------------------------------------------------------------------------


def _logging_layer(name: str, log: list[str]) -> Callable[[Any, Any], Any]:
    def layer(request: Any, handler: Any) -> Any:
        log.append(f"{name} enter {request}")
        result = handler(request + 1)
        log.append(f"{name} exit {result}")
        return result

    return layer


def test_the_first_layer_is_outermost() -> None:
    log: list[str] = []
    layers = [_logging_layer("m1", log), _logging_layer("m2", log)]

    def base(request: int) -> int:
        log.append(f"base {request}")
        return request * 10

    assert build_onion(layers, base)(0) == 20
    assert log == ["m1 enter 0", "m2 enter 1", "base 2", "m2 exit 20", "m1 exit 20"]


def test_a_layer_may_call_its_handler_never_or_many_times() -> None:
    calls: list[int] = []

    def twice(request: int, handler: Any) -> int:
        return int(handler(request) + handler(request))

    def never(request: int, handler: Any) -> int:
        return -1

    def base(request: int) -> int:
        calls.append(request)
        return request

    assert build_onion([twice], base)(3) == 6
    assert build_onion([never, twice], base)(3) == -1
    assert calls == [3, 3]


def test_the_same_nesting_serves_async_layers() -> None:
    log: list[str] = []

    def layer(name: str) -> Callable[[Any, Any], Coroutine[Any, Any, Any]]:
        async def run(request: int, handler: Any) -> int:
            log.append(f"{name} enter")
            result: int = await handler(request)
            log.append(f"{name} exit")
            return result

        return run

    async def base(request: int) -> int:
        log.append("base")
        return request

    assert asyncio.run(build_onion([layer("m1"), layer("m2")], base)(7)) == 7
    assert log == ["m1 enter", "m2 enter", "base", "m2 exit", "m1 exit"]


# --- hook_layers: each hook as a layer of a sync or an async run ------------------------------


class SyncOnly(AgentMiddleware):
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.log.append(f"sync in {threading.current_thread().name.split('-')[0]}")
        return handler(request)


class AsyncOnly(AgentMiddleware):
    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        self.log.append("async")
        return await handler(request)


class Both(SyncOnly, AsyncOnly):
    pass


def _hook(middleware: AgentMiddleware) -> Hook:
    hook = discover(middleware, "wrap_model_call")
    assert hook is not None
    return hook


def _make(hook: Hook, implementation: Callable[..., Any], mode: Mode) -> Any:
    async def layer(request: Any, inner: Any) -> Any:
        return await mode.call(implementation, request, inner)

    return layer


def test_each_run_calls_the_hook_of_its_own_kind() -> None:
    log: list[str] = []
    hooks = [_hook(Both(log))]

    sync_chain = build_onion(hook_layers(hooks, SYNC, _make), lambda request: request)
    assert sync_chain("r") == "r"

    async def base(request: Any) -> Any:
        return request

    assert asyncio.run(build_onion(hook_layers(hooks, ASYNC, _make), base)("r")) == "r"
    assert log == ["sync in MainThread", "async"]


def test_an_async_run_bridges_a_sync_only_hook_into_a_thread_of_its_own() -> None:
    log: list[str] = []

    async def base(request: Any) -> Any:
        log.append(f"base on {threading.current_thread().name}")
        return request

    chain = build_onion(hook_layers([_hook(SyncOnly(log))], ASYNC, _make), base)

    assert asyncio.run(chain("r")) == "r"
    assert log == ["sync in graphagent", "base on MainThread"]


def test_a_sync_run_refuses_an_async_only_hook() -> None:
    with pytest.raises(AsyncOnlyHookError, match=r"'AsyncOnly.wrap_model_call' has only an async"):
        hook_layers([_hook(AsyncOnly([]))], SYNC, _make)


# --- the wrap_agent driver --------------------------------------------------------------------


class Around(AgentMiddleware):
    """A wrap_agent hook that logs its life; it fails where it is told to."""

    def __init__(self, name: str, log: list[Any], fail_at: str | None = None) -> None:
        self.name, self.log, self.fail_at = name, log, fail_at

    def wrap_agent(self, state: Any, runtime: Any) -> Iterator[None]:
        self.log.append(f"{self.name} open")
        if self.fail_at == "open":
            raise ValueError(f"{self.name} cannot open")
        try:
            result = yield
            self.log.append(f"{self.name} ok {result}")
        except BaseException as error:
            self.log.append(f"{self.name} saw {type(error).__name__}")
            raise
        finally:
            self.log.append(f"{self.name} closed")
        if self.fail_at == "close":
            raise KeyError(f"{self.name} cannot close")


class AsyncAround(Around):
    async def awrap_agent(self, state: Any, runtime: Any) -> AsyncIterator[None]:
        self.log.append(f"{self.name} async open")
        result = yield
        self.log.append(f"{self.name} async ok {result}")


def _layers(mode: Mode, *middleware: AgentMiddleware) -> list[AgentLayer]:
    hooks = [discover(m, "wrap_agent") for m in middleware]
    return [AgentLayer(h, mode.asynchronous and h.asynchronous is not None) for h in hooks if h]


def _drive(mode: Mode, core: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(core) if mode.asynchronous else run_sync(core, "the test")


@pytest.mark.parametrize("mode", [SYNC, ASYNC], ids=["sync", "async"])
def test_layers_open_outermost_first_and_close_innermost_first(mode: Mode) -> None:
    log: list[Any] = []
    layers = _layers(mode, Around("outer", log), Around("inner", log))

    async def run() -> None:
        await enter(layers, {}, None)
        log.append("the run")
        await leave(layers, "output")

    _drive(mode, run())

    assert log == [
        "outer open",
        "inner open",
        "the run",
        "inner ok output",
        "inner closed",
        "outer ok output",
        "outer closed",
    ]


@pytest.mark.parametrize("mode", [SYNC, ASYNC], ids=["sync", "async"])
def test_a_layer_failing_to_open_unwinds_the_layers_already_open(mode: Mode) -> None:
    log: list[Any] = []
    layers = _layers(mode, Around("outer", log), Around("inner", log, fail_at="open"))

    with pytest.raises(ValueError, match="inner cannot open") as caught:
        _drive(mode, enter(layers, {}, None))

    assert log == ["outer open", "inner open", "outer saw ValueError", "outer closed"]
    assert caught.value.__notes__ == ["graphagent: raised in 'inner.wrap_agent'"]


@pytest.mark.parametrize("mode", [SYNC, ASYNC], ids=["sync", "async"])
def test_what_a_layer_raises_while_closing_reaches_the_layers_outside_it(mode: Mode) -> None:
    log: list[Any] = []
    layers = _layers(mode, Around("outer", log), Around("inner", log, fail_at="close"))

    async def run() -> None:
        await enter(layers, {}, None)
        await leave(layers, "output")

    with pytest.raises(KeyError, match="inner cannot close"):
        _drive(mode, run())

    assert log[-3:] == ["inner closed", "outer saw KeyError", "outer closed"]


def test_an_async_run_drives_async_and_sync_generators_alike() -> None:
    log: list[Any] = []
    layers = _layers(ASYNC, AsyncAround("outer", log), Around("inner", log))

    async def run() -> None:
        await enter(layers, {}, None)
        await leave(layers, RuntimeError("the run failed"))

    asyncio.run(run())

    assert log == [
        "outer async open",
        "inner open",
        "inner saw RuntimeError",
        "inner closed",
    ]  # the async layer did not catch the error: it ended at its yield, as a generator does
