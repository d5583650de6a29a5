"""wrap_agent: an agent-level generator hook that closes on every path out of a run."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import re
from collections.abc import AsyncGenerator, Generator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command

from graphagent import AsyncOnlyHookError, HookReturnError, create_agent
from graphagent.middleware import AgentMiddleware, before_model, wrap_agent, wrap_tool_call
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import ENTRY_POINTS, run_agent
from tests.tools import add, ask, boom

TRACE_ID: contextvars.ContextVar[str] = contextvars.ContextVar("trace_id", default="-")


class Span(AgentMiddleware):
    """Records how each run ended."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def wrap_agent(self, state: Any, runtime: Any) -> Generator[None, Any, None]:
        self.log.append((self.name, "open"))
        try:
            result = yield
        except BaseException as exc:
            self.log.append((self.name, "error", type(exc).__name__))
            raise
        else:
            self.log.append((self.name, "ok", _summary(result)))
        finally:
            self.log.append((self.name, "closed"))


class Outer(Span):
    pass


class Inner(Span):
    pass


class AsyncSpan(AgentMiddleware):
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    async def awrap_agent(self, state: Any, runtime: Any) -> AsyncGenerator[None, Any]:
        self.log.append("async open")
        try:
            result = yield
            self.log.append(("async ok", _summary(result)))
        except BaseException as exc:
            self.log.append(("async error", type(exc).__name__))
            raise
        finally:
            self.log.append("async closed")


def _summary(result: Any) -> Any:
    if isinstance(result, dict) and "__interrupt__" in result:
        return "interrupted"
    return result["messages"][-1].content if isinstance(result, dict) else result


def agent_with(
    *middleware: AgentMiddleware, replies: list[Any], tools: list[Any], **kw: Any
) -> Any:
    return create_agent(ScriptedChatModel(replies), tools, middleware=list(middleware), **kw)


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_success_closes_with_the_final_output_outer_last(how: str) -> None:
    log: list[Any] = []
    agent = agent_with(
        Outer(log), Inner(log), replies=[calls(("add", {"a": 1, "b": 2})), "3"], tools=[add]
    )

    result = run_agent(agent, how, {"messages": ["1+2"]})

    assert result["messages"][-1].content == "3"
    assert log == [
        ("Outer", "open"),
        ("Inner", "open"),
        ("Inner", "ok", "3"),
        ("Inner", "closed"),
        ("Outer", "ok", "3"),
        ("Outer", "closed"),
    ]


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_an_exception_anywhere_is_raised_at_the_yield(how: str) -> None:
    log: list[Any] = []
    agent = agent_with(Outer(log), replies=[calls(("boom", {}))], tools=[boom])

    with pytest.raises(ConnectionError, match="service down"):
        run_agent(agent, how, {"messages": ["go"]})

    assert log == [("Outer", "open"), ("Outer", "error", "ConnectionError"), ("Outer", "closed")]


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_an_interrupt_is_a_normal_return_carrying_the_interrupt(how: str) -> None:
    log: list[Any] = []
    agent = agent_with(
        Outer(log),
        replies=[calls(("ask", {"question": "ok?"})), "thanks"],
        tools=[ask],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": how}}

    paused = run_agent(agent, how, {"messages": ["go"]}, config=config)
    (pending,) = agent.get_state(config).interrupts
    done = run_agent(agent, how, Command(resume="yes"), config=config)

    assert pending.value == "ok?"
    if how.endswith("invoke"):  # a stream's last "values" chunk does not carry interrupts
        assert [i.value for i in paused["__interrupt__"]] == ["ok?"]
    else:
        assert paused["messages"][-1].tool_calls[0]["name"] == "ask"
    assert done["messages"][-1].content == "thanks"
    assert log == [
        ("Outer", "open"),
        ("Outer", "ok", "interrupted"),
        ("Outer", "closed"),
        ("Outer", "open"),
        ("Outer", "ok", "thanks"),
        ("Outer", "closed"),
    ]


def test_closing_a_stream_early_closes_the_hooks() -> None:
    log: list[Any] = []
    agent = agent_with(Outer(log), replies=[calls(("add", {"a": 1, "b": 2})), "3"], tools=[add])

    stream = agent.stream({"messages": ["go"]}, stream_mode="updates")
    first = next(stream)
    stream.close()

    assert "model" in first
    assert log == [("Outer", "open"), ("Outer", "error", "GeneratorExit"), ("Outer", "closed")]


def test_closing_an_async_stream_early_and_cancelling_close_the_hooks() -> None:
    log: list[Any] = []
    agent = agent_with(AsyncSpan(log), replies=[calls(("add", {"a": 1, "b": 2})), "3"], tools=[add])

    async def close_early() -> None:
        stream = agent.astream({"messages": ["go"]}, stream_mode="updates")
        await anext(stream)
        await stream.aclose()

    asyncio.run(close_early())
    assert log == ["async open", ("async error", "GeneratorExit"), "async closed"]

    log.clear()
    started = asyncio.Event()

    @tool
    async def slow() -> str:
        """Takes forever."""
        started.set()
        await asyncio.sleep(60)
        return "late"

    slow_agent = agent_with(AsyncSpan(log), replies=[calls(("slow", {}))], tools=[slow])

    async def cancel() -> None:
        task = asyncio.create_task(slow_agent.ainvoke({"messages": ["go"]}))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel())
    assert log == ["async open", ("async error", "CancelledError"), "async closed"]


def test_stream_chunks_keep_the_shape_the_caller_asked_for() -> None:
    agent = create_agent(ScriptedChatModel(["hi"], repeat_last=True), middleware=[Outer([])])
    plain = create_agent(ScriptedChatModel(["hi"], repeat_last=True))

    for kwargs in (
        {"stream_mode": "updates"},
        {"stream_mode": ["updates", "custom"]},
        {"stream_mode": "messages"},
        {"stream_mode": "updates", "subgraphs": True},
        {"stream_mode": ["values"], "subgraphs": True},
        {"stream_mode": "updates", "version": "v2"},
    ):
        wrapped = [_strip_ids(c) for c in agent.stream({"messages": ["x"]}, **kwargs)]
        expected = [_strip_ids(c) for c in plain.stream({"messages": ["x"]}, **kwargs)]
        assert wrapped == expected, kwargs


def _strip_ids(chunk: Any) -> str:
    """The chunk's repr without run-specific ids (uuids, and task ids in namespaces)."""
    return UUID.sub("<id>", repr(chunk))


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|run-[\w-]+")


@pytest.mark.usefixtures("hook_mode")
def test_per_run_values_reach_hooks_wrappers_and_parallel_tools() -> None:
    seen: list[tuple[str, str]] = []

    @wrap_agent
    def trace(state: Any, runtime: Any) -> Generator[None, Any, None]:
        token = TRACE_ID.set("run-1")
        try:
            yield
        finally:
            TRACE_ID.reset(token)

    @before_model
    def hook(state: Any, runtime: Any) -> None:
        seen.append(("before_model", TRACE_ID.get()))

    @before_model
    def second(state: Any, runtime: Any) -> None:
        seen.append(("second before_model", TRACE_ID.get()))

    @wrap_tool_call
    def around_tool(request: Any, handler: Any) -> Any:
        seen.append(("wrap_tool_call", TRACE_ID.get()))
        return handler(request)

    @tool
    def where(i: int) -> str:
        """Report the trace id."""
        seen.append((f"tool {i}", TRACE_ID.get()))
        return "ok"

    model = ScriptedChatModel([calls(("where", {"i": 1}), ("where", {"i": 2})), "done"])
    agent = create_agent(model, [where], middleware=[trace, hook, second, around_tool])

    agent.invoke({"messages": ["go"]})

    assert {value for _, value in seen} == {"run-1"}
    assert len(seen) == 8
    assert TRACE_ID.get() == "-", "the value does not outlive the run"


def test_concurrent_runs_never_see_each_others_values() -> None:
    leaks: list[str] = []

    @wrap_agent
    async def trace(state: Any, runtime: Any) -> AsyncGenerator[None, Any]:
        token = TRACE_ID.set(state["messages"][0].content)
        try:
            yield
        finally:
            TRACE_ID.reset(token)

    @tool
    async def echo() -> str:
        """Report the trace id."""
        await asyncio.sleep(0)
        return TRACE_ID.get()

    @before_model
    async def check(state: Any, runtime: Any) -> None:
        if TRACE_ID.get() != state["messages"][0].content:
            leaks.append(TRACE_ID.get())

    model = ScriptedChatModel(
        [lambda messages: calls(("echo", {})) if len(messages) == 1 else str(messages[-1].content)],
        repeat_last=True,
    )
    agent = create_agent(model, [echo], middleware=[trace, check])

    async def main() -> list[Any]:
        runs = [agent.ainvoke({"messages": [HumanMessage(f"run-{i}")]}) for i in range(100)]
        return await asyncio.gather(*runs)

    results = asyncio.run(main())

    assert leaks == []
    assert [r["messages"][-1].content for r in results] == [f"run-{i}" for i in range(100)]


def test_the_hook_observes_it_cannot_swallow_an_error() -> None:
    @wrap_agent
    def swallow(state: Any, runtime: Any) -> Generator[None, Any, None]:
        with contextlib.suppress(ConnectionError):
            yield

    agent = agent_with(swallow, replies=[calls(("boom", {}))], tools=[boom])
    with pytest.raises(ConnectionError):
        agent.invoke({"messages": ["go"]})


def test_a_sync_hook_serves_async_runs_and_async_only_is_refused_in_sync_runs() -> None:
    log: list[Any] = []
    agent = agent_with(Outer(log), replies=["hi"], tools=[])
    asyncio.run(agent.ainvoke({"messages": ["x"]}))
    assert log[-1] == ("Outer", "closed")

    only_async = agent_with(AsyncSpan(log), replies=["hi"], tools=[])
    with pytest.raises(AsyncOnlyHookError, match=r"'AsyncSpan\.wrap_agent' has only an async"):
        only_async.invoke({"messages": ["x"]})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("return_early", "returned without yielding"),
        ("twice", "yielded more than once"),
        ("not_generator", "must be a generator that yields once"),
    ],
)
def test_misbehaving_hooks_get_clear_errors(body: str, message: str) -> None:
    class Bad(AgentMiddleware):
        def wrap_agent(self, state: Any, runtime: Any) -> Any:
            if body == "not_generator":
                return None
            return self._gen()

        def _gen(self) -> Generator[None, Any, None]:
            if body == "return_early":
                return
            yield
            yield

    agent = agent_with(Bad(), replies=["hi"], tools=[])
    with pytest.raises(HookReturnError, match=message):
        agent.invoke({"messages": ["x"]})


def test_runs_as_a_subgraph_node_are_wrapped() -> None:
    log: list[Any] = []
    inner = agent_with(Outer(log), replies=["from the agent"], tools=[], name="helper")
    parent = StateGraph(MessagesState)
    parent.add_node("helper", inner)
    parent.add_edge(START, "helper")
    parent.add_edge("helper", END)

    result = parent.compile().invoke({"messages": ["hi"]})

    assert result["messages"][-1].content == "from the agent"
    assert log == [("Outer", "open"), ("Outer", "ok", "from the agent"), ("Outer", "closed")]


def test_a_failing_hook_start_unwinds_the_outer_hooks() -> None:
    log: list[Any] = []

    class Broken(AgentMiddleware):
        def wrap_agent(self, state: Any, runtime: Any) -> Generator[None, Any, None]:
            raise RuntimeError("cannot open")
            yield  # pragma: no cover

    agent = agent_with(Outer(log), Broken(), replies=["hi"], tools=[])
    with pytest.raises(RuntimeError, match="cannot open"):
        agent.invoke({"messages": ["x"]})
    assert log == [("Outer", "open"), ("Outer", "error", "RuntimeError"), ("Outer", "closed")]


@pytest.mark.usefixtures("hook_mode")
def test_async_steps_from_different_tasks_keep_the_run_context() -> None:
    """A consumer may await each step in a task of its own (asyncio.wait_for does); the run's
    context values must hold for every step, and never reach the consumer."""
    seen: list[str] = []

    @wrap_agent
    async def trace(state: Any, runtime: Any) -> AsyncGenerator[None, Any]:
        token = TRACE_ID.set("run-x")
        try:
            yield
        finally:
            TRACE_ID.reset(token)

    @before_model
    def hook(state: Any, runtime: Any) -> None:
        seen.append(TRACE_ID.get())

    model = ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "3"])
    agent = create_agent(model, [add], middleware=[trace, hook])

    async def consume() -> list[Any]:
        stream = agent.astream({"messages": ["go"]}, stream_mode="updates")
        chunks = []
        while True:
            try:
                chunks.append(await asyncio.wait_for(anext(stream), timeout=10))
            except StopAsyncIteration:
                return chunks
            assert TRACE_ID.get() == "-"

    chunks = asyncio.run(consume())

    assert seen == ["run-x", "run-x"]
    assert any("model" in chunk for chunk in chunks)


def test_the_hook_gets_the_run_context_the_store_and_the_agent_name() -> None:
    from langgraph.store.memory import InMemoryStore

    from graphagent import AgentRuntime

    seen: list[Any] = []

    @wrap_agent
    def look(state: Any, runtime: Any) -> Generator[None, Any, None]:
        seen.append((type(runtime), runtime.agent_name, runtime.context, runtime.store))
        yield

    store = InMemoryStore()
    agent = create_agent(ScriptedChatModel(["hi"]), middleware=[look], name="helper", store=store)
    agent.invoke({"messages": ["x"]}, context={"tenant": "acme"})

    assert seen == [(AgentRuntime, "helper", {"tenant": "acme"}, store)]
