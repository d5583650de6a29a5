"""The sync/async bridge: sync-only wrap hooks under async runs at any concurrency and fan-out,
and cancellation that reaches the async work beneath them.

None of these tests is timed; each waits under a generous limit so a deadlock fails the test
instead of hanging the suite.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from graphagent import AsyncOnlyHookError, create_agent
from graphagent._core.bridge import ASYNC, SYNC, Mode, TimedOut, Workers, run_sync
from graphagent.middleware import AgentMiddleware
from graphagent.testing import ScriptedChatModel

LIMIT = 120.0  # seconds: far beyond any healthy run, so only a hang reaches it


class SyncWrappers(AgentMiddleware):
    """The most common shape of user middleware: sync-only wrap hooks."""

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request)

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request)


def _fan_out(names: list[str]) -> Callable[[list[BaseMessage]], AIMessage]:
    """A reply that calls every tool in ``names`` at once, then answers once they replied."""
    ids = itertools.count()

    def reply(messages: list[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage("done")
        tool_calls = [{"name": n, "args": {"x": 1}, "id": f"call-{next(ids)}"} for n in names]
        return AIMessage("", tool_calls=tool_calls)

    return reply


class GenerateOnly(BaseChatModel):
    """A chat model with only ``_generate``: its async path borrows a default-executor thread."""

    fan_out: list[str]

    @property
    def _llm_type(self) -> str:
        return "generate-only"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=_fan_out(self.fan_out)(messages))])


def _sync_tool(name: str) -> Any:
    def run(x: int) -> int:
        time.sleep(0.001)  # a real blocking call, as sync tools make
        return x

    return tool(name, description=f"Tool {name}.")(run)


def _wait(coroutine: Any) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(coroutine, LIMIT)

    return asyncio.run(bounded())


@pytest.mark.parametrize("how", ["ainvoke", "astream"])
def test_fan_out_wider_than_the_default_pool(how: str) -> None:
    width = (os.cpu_count() or 1) + 10  # more calls than the default executor has threads
    names = [f"t{i}" for i in range(width)]
    model = ScriptedChatModel([_fan_out(names), _fan_out(names)])
    agent = create_agent(model, [_sync_tool(n) for n in names], middleware=[SyncWrappers()])
    inputs = {"messages": [("user", "go")]}

    if how == "ainvoke":
        result = _wait(agent.ainvoke(inputs))
    else:

        async def last() -> Any:
            return [chunk async for chunk in agent.astream(inputs, stream_mode="values")][-1]

        result = _wait(last())

    answers = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert len(answers) == width
    assert all(m.content == "1" for m in answers)
    assert result["messages"][-1].content == "done"


def test_two_hundred_concurrent_runs_of_sync_wrappers_around_a_generate_only_model() -> None:
    names = ["t0", "t1", "t2"]
    model = GenerateOnly(fan_out=names)
    agent = create_agent(model, [_sync_tool(n) for n in names], middleware=[SyncWrappers()])

    async def many() -> list[Any]:
        runs = [agent.ainvoke({"messages": [("user", f"run {i}")]}) for i in range(200)]
        return await asyncio.gather(*runs)

    results = _wait(many())

    assert len(results) == 200
    for result in results:
        assert [type(m).__name__ for m in result["messages"]] == [
            "HumanMessage",
            "AIMessage",
            "ToolMessage",
            "ToolMessage",
            "ToolMessage",
            "AIMessage",
        ]


def test_nested_sync_wrappers_each_get_a_thread() -> None:
    class Outer(SyncWrappers):
        pass

    class Inner(SyncWrappers):
        pass

    names = [f"t{i}" for i in range((os.cpu_count() or 1) + 10)]
    model = ScriptedChatModel([_fan_out(names), _fan_out(names)])
    agent = create_agent(model, [_sync_tool(n) for n in names], middleware=[Outer(), Inner()])

    result = _wait(agent.ainvoke({"messages": [("user", "go")]}))

    assert result["messages"][-1].content == "done"


# --- the worker pool --------------------------------------------------------------------------


def test_workers_always_have_a_free_thread() -> None:
    """Jobs that can only finish together all run at once, however many there are."""
    workers = Workers()
    count = 40
    barrier = threading.Barrier(count, timeout=LIMIT)
    finished = threading.Semaphore(0)

    def job() -> None:
        barrier.wait()
        finished.release()

    for _ in range(count):
        workers.submit(job)
    assert all(finished.acquire(timeout=LIMIT) for _ in range(count))


def test_idle_workers_are_reused_then_retire() -> None:
    workers = Workers(idle_seconds=0.2)
    seen: list[str] = []
    done = threading.Event()

    def job() -> None:
        seen.append(threading.current_thread().name)
        done.set()

    for _ in range(3):
        done.clear()
        workers.submit(job)
        assert done.wait(LIMIT)
    assert len(set(seen)) == 1  # one thread served all three jobs, one after the other

    name = seen[0]
    deadline = time.monotonic() + LIMIT
    while any(t.name == name for t in threading.enumerate()):
        assert time.monotonic() < deadline, "an idle worker never retired"
        time.sleep(0.05)


# --- behaviour written once: a core run in either mode ----------------------------------------


async def _core(mode: Mode, log: list[str]) -> str:
    log.append(f"async={mode.asynchronous}")
    await mode.sleep(0)
    answer = await mode.call(_double_sync if not mode.asynchronous else _double_async, "ab")
    return str(await mode.offload(str.upper, answer))


def _double_sync(text: str) -> str:
    return text * 2


async def _double_async(text: str) -> str:
    await asyncio.sleep(0)
    return text * 2


def test_one_core_serves_both_kinds_of_run() -> None:
    log: list[str] = []

    assert run_sync(_core(SYNC, log), "'Core.wrap_model_call'") == "ABAB"
    assert asyncio.run(_core(ASYNC, log)) == "ABAB"
    assert log == ["async=False", "async=True"]


def test_a_core_that_suspends_in_a_sync_run_names_the_hook() -> None:
    async def suspends() -> None:
        await asyncio.sleep(0)

    with pytest.raises(AsyncOnlyHookError, match=r"^'Core\.wrap_model_call' awaited something"):
        run_sync(suspends(), "'Core.wrap_model_call'")


# --- time limits and shared outcomes -----------------------------------------------------------


def _in_mode(mode: Mode, core: Any) -> Any:
    """Run ``core`` as a run of ``mode`` would: to its end in one step, or on an event loop."""
    return _wait(core) if mode.asynchronous else run_sync(core, "'Core.wrap_tool_call'")


@pytest.mark.parametrize("mode", [SYNC, ASYNC], ids=["sync", "async"])
def test_call_within_returns_what_ends_in_time(mode: Mode) -> None:
    async def answer(x: int) -> int:
        return x + 1

    fn = answer if mode.asynchronous else (lambda x: x + 1)
    assert _in_mode(mode, mode.call_within(LIMIT, fn, 41)) == 42


@pytest.mark.parametrize("mode", [SYNC, ASYNC], ids=["sync", "async"])
def test_a_timeout_error_of_the_call_itself_is_not_taken_for_the_limit(mode: Mode) -> None:
    async def fails() -> None:
        raise TimeoutError("the service did not answer")

    def fails_sync() -> None:
        raise TimeoutError("the service did not answer")

    fn = fails if mode.asynchronous else fails_sync
    with pytest.raises(TimeoutError, match="the service") as caught:
        _in_mode(mode, mode.call_within(LIMIT, fn))
    assert not isinstance(caught.value, TimedOut)


def test_a_sync_call_past_its_limit_is_left_running_in_its_thread() -> None:
    release, finished = threading.Event(), threading.Event()
    threads: list[str] = []

    def hangs() -> str:
        threads.append(threading.current_thread().name)
        release.wait(LIMIT)  # held until the caller has given up on it
        finished.set()
        return "late"

    # The call cannot end before `release` is set, whatever the limit: 0.01 s decides nothing.
    with pytest.raises(TimedOut, match=r"within 0\.01 s"):
        run_sync(SYNC.call_within(0.01, hangs), "'Core.wrap_tool_call'")
    assert not finished.is_set()
    release.set()
    assert finished.wait(LIMIT)
    assert threads[0].startswith("graphagent-bridge-")


def test_an_async_call_past_its_limit_is_cancelled() -> None:
    seen: list[str] = []

    async def hangs() -> None:
        try:
            await asyncio.Event().wait()  # nothing ever sets it
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    with pytest.raises(TimedOut):
        _wait(ASYNC.call_within(0.01, hangs))
    assert seen == ["cancelled"]


@pytest.mark.parametrize("mode", [SYNC, ASYNC], ids=["sync", "async"])
def test_wait_gives_the_outcome_another_thread_settles(mode: Mode) -> None:
    answer: concurrent.futures.Future[str] = concurrent.futures.Future()
    failure: concurrent.futures.Future[str] = concurrent.futures.Future()
    threading.Thread(target=answer.set_result, args=("shared",)).start()
    threading.Thread(target=failure.set_exception, args=(KeyError("gone"),)).start()

    assert _in_mode(mode, mode.wait(answer)) == "shared"
    with pytest.raises(KeyError, match="gone"):
        _in_mode(mode, mode.wait(failure))


def test_cancelling_an_async_waiter_leaves_the_future_to_the_others() -> None:
    shared: concurrent.futures.Future[str] = concurrent.futures.Future()

    async def scenario() -> str:
        first = asyncio.ensure_future(ASYNC.wait(shared))
        second = asyncio.ensure_future(ASYNC.wait(shared))
        await asyncio.sleep(0)
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        shared.set_result("still here")
        return await second

    assert _wait(scenario()) == "still here"
    assert not shared.cancelled()


@pytest.mark.parametrize("mode", [SYNC, ASYNC], ids=["sync", "async"])
def test_a_wait_given_a_time_stops_waiting_and_leaves_the_future_alone(mode: Mode) -> None:
    never: concurrent.futures.Future[str] = concurrent.futures.Future()
    timed_out: concurrent.futures.Future[str] = concurrent.futures.Future()
    timed_out.set_exception(TimeoutError("its own"))

    with pytest.raises(TimedOut):
        _in_mode(mode, mode.wait(never, within=0.01))
    with pytest.raises(TimeoutError, match="its own") as caught:
        _in_mode(mode, mode.wait(timed_out, within=10))

    assert not isinstance(caught.value, TimedOut)
    assert not never.done()
