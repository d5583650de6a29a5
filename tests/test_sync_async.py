"""Sync and async runs: bridging sync hooks into async runs, refusing async-only hooks in sync
runs, and langgraph's control-flow exceptions passing through every graphagent layer."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from graphagent import AsyncOnlyHookError, create_agent
from graphagent.middleware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    after_model,
    before_model,
    wrap_model_call,
    wrap_tool_call,
)
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run, run_agent
from tests.tools import add


class Both(AgentMiddleware):
    """Records which twin ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def before_model(self, state: Any, runtime: Any) -> None:
        self.ran.append("sync before_model")

    async def abefore_model(self, state: Any, runtime: Any) -> None:
        self.ran.append("async before_model")

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self.ran.append("sync wrap_model_call")
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        self.ran.append("async wrap_model_call")
        return await handler(request)

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self.ran.append("sync wrap_tool_call")
        return handler(request)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        self.ran.append("async wrap_tool_call")
        return await handler(request)


def test_each_run_uses_the_matching_twin(run: Run, how: str) -> None:
    mw = Both()
    model = ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "3"])
    run(create_agent(model, [add], middleware=[mw]), {"messages": ["go"]})

    kind = "async" if how.startswith("a") else "sync"
    assert mw.ran == [
        f"{kind} before_model",
        f"{kind} wrap_model_call",
        f"{kind} wrap_tool_call",
        f"{kind} before_model",
        f"{kind} wrap_model_call",
    ]


def test_sync_only_hooks_serve_async_runs() -> None:
    """A sync wrapper between two async ones: it runs off the event loop, its handler drives the
    inner async layer on the loop, and the outer async layer sees the result."""
    order: list[str] = []
    loop_thread: list[int] = []

    @wrap_model_call
    async def outer(request: ModelRequest, handler: Callable[..., Awaitable[ModelResponse]]) -> Any:
        loop_thread.append(threading.get_ident())
        order.append("outer enter")
        response = await handler(request)
        order.append("outer exit")
        return response

    @wrap_model_call
    def middle(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        order.append(f"middle enter (on loop thread: {threading.get_ident() in loop_thread})")
        response = handler(request.override(system_prompt="from the sync layer"))
        order.append("middle exit")
        return response

    @wrap_model_call
    async def inner(request: ModelRequest, handler: Callable[..., Awaitable[ModelResponse]]) -> Any:
        order.append(f"inner sees {request.system_prompt!r}")
        return await handler(request)

    @before_model
    def count(state: Any, runtime: Any) -> None:
        order.append("before_model")

    @wrap_tool_call
    def tool_wrap(request: Any, handler: Callable[[Any], Any]) -> Any:
        order.append("tool wrap")
        return handler(request)

    model = ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "3"])
    agent = create_agent(model, [add], middleware=[count, outer, middle, inner, tool_wrap])
    result = asyncio.run(agent.ainvoke({"messages": ["go"]}))

    one_call = [
        "before_model",
        "outer enter",
        "middle enter (on loop thread: False)",
        "inner sees 'from the sync layer'",
        "middle exit",
        "outer exit",
    ]
    assert order == [*one_call, "tool wrap", *one_call]
    assert result["messages"][-1].content == "3"


@pytest.mark.parametrize("how", ["invoke", "stream"])
def test_async_only_hooks_in_a_sync_run_are_a_clear_error(how: str) -> None:
    ran: list[str] = []

    @before_model
    def first(state: Any, runtime: Any) -> None:
        ran.append("first")

    @after_model
    async def audit(state: Any, runtime: Any) -> None:
        ran.append("audit")

    agent = create_agent(ScriptedChatModel(["x"]), middleware=[first, audit])
    with pytest.raises(AsyncOnlyHookError) as caught:
        run_agent(agent, how, {"messages": ["go"]})
    assert str(caught.value) == (
        "Synchronous implementation of after_model is not available: 'audit.after_model' has "
        "only an async implementation (aafter_model), so it cannot run under invoke()/stream(); "
        "run the agent with ainvoke()/astream(), or also define after_model."
    )


@pytest.mark.parametrize("hook", ["wrap_model_call", "wrap_tool_call"])
def test_async_only_wrappers_fail_before_any_layer_runs(hook: str) -> None:
    ran: list[str] = []

    @wrap_model_call
    def sync_layer(request: Any, handler: Callable[[Any], Any]) -> Any:
        ran.append("sync layer")
        return handler(request)

    async def only_async(request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        return await handler(request)

    decorator = wrap_model_call if hook == "wrap_model_call" else wrap_tool_call
    model = ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "3"])
    agent = create_agent(model, [add], middleware=[decorator(name="late")(only_async), sync_layer])

    with pytest.raises(AsyncOnlyHookError, match=rf"'late.{hook}' has only an async"):
        agent.invoke({"messages": ["go"]})
    assert ran == ([] if hook == "wrap_model_call" else ["sync layer"])
    assert asyncio.run(agent.ainvoke({"messages": ["go"]}))["messages"][-1].content == "3"


@tool
def approve(action: str) -> str:
    """Ask a human."""
    answer = interrupt({"action": action})
    return f"{action}: {answer}"


class CatchAll(AgentMiddleware):
    """Wrap hooks that only pass through (sync-only, so async runs use the thread bridge)."""

    def __init__(self) -> None:
        self.model_calls = 0

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self.model_calls += 1
        return handler(request)

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request)


def test_interrupts_pass_through_every_layer_and_resume(how_call: str) -> None:
    mw = CatchAll()
    model = ScriptedChatModel([calls(("approve", {"action": "deploy"})), "deployed"])
    agent = create_agent(model, [approve], middleware=[mw], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": how_call}}

    paused = run_agent(agent, how_call, {"messages": ["deploy it"]}, config=config)
    assert paused["__interrupt__"][0].value == {"action": "deploy"}
    assert not any(isinstance(m, ToolMessage) for m in paused["messages"])

    done = run_agent(agent, how_call, Command(resume="yes"), config=config)
    assert done["messages"][2].content == "deploy: yes"
    assert done["messages"][-1].content == "deployed"
    assert mw.model_calls == 2


def test_interrupt_inside_a_model_wrapper_resumes(how_call: str) -> None:
    @wrap_model_call
    def confirm(request: Any, handler: Callable[[Any], Any]) -> Any:
        if interrupt("call the model?") != "yes":
            return AIMessage("skipped")
        return handler(request)

    agent = create_agent(
        ScriptedChatModel(["called"]), middleware=[confirm], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}
    paused = run_agent(agent, how_call, {"messages": ["q"]}, config=config)
    assert paused["__interrupt__"][0].value == "call the model?"
    done = run_agent(agent, how_call, Command(resume="yes"), config=config)
    assert done["messages"][-1].content == "called"
