"""Fault injection: each hook position raises in turn. Every time the error says which middleware
and hook raised it, wrap_agent closes with the error, and the checkpointed thread can still be
resumed (the failed step re-runs: with fused hooks, the whole node) and continued afterwards."""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from graphagent import create_agent
from graphagent.middleware import AgentMiddleware
from graphagent.testing import ScriptedChatModel, calls
from tests.tools import add


class Injected(RuntimeError):
    pass


class Counting(AgentMiddleware):
    """Counts the calls of its node hooks."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def _visit(self, position: str) -> None:
        self.calls[position] = self.calls.get(position, 0) + 1

    def before_agent(self, state: Any, runtime: Any) -> None:
        self._visit("before_agent")

    def before_model(self, state: Any, runtime: Any) -> None:
        self._visit("before_model")

    def after_model(self, state: Any, runtime: Any) -> None:
        self._visit("after_model")

    def after_agent(self, state: Any, runtime: Any) -> None:
        self._visit("after_agent")


class Faulty(Counting):
    """Every hook position; ``fail_at`` names the one that raises (once armed)."""

    def __init__(self, fail_at: str) -> None:
        super().__init__()
        self.fail_at = fail_at
        self.armed = True

    def _visit(self, position: str) -> None:
        if self.armed and position == self.fail_at:
            raise Injected(f"injected at {position}")

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self._visit("wrap_model_call")
        return handler(request)

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        self._visit("wrap_tool_call")
        return handler(request)


class Closer(AgentMiddleware):
    """Records how each run ended."""

    def __init__(self) -> None:
        self.endings: list[str] = []

    def wrap_agent(self, state: Any, runtime: Any) -> Generator[None, Any, None]:
        try:
            yield
        except BaseException as error:
            self.endings.append(type(error).__name__)
            raise
        else:
            self.endings.append("ok")


POSITIONS = [
    "before_agent",
    "before_model",
    "wrap_model_call",
    "after_model",
    "wrap_tool_call",
    "after_agent",
]


def replies() -> list[Any]:
    return [calls(("add", {"a": 1, "b": 2})), "3", "again", "and again"]


# Calls of Counting's hook at the failing position while the failed run is resumed. Listed before
# Faulty, its before_* hooks run before Faulty's and its after_* hooks after them: the rounds
# still to come, plus, when fused, its before_* hook again (it ran before the failure, in the
# same node, whose writes were never committed).
RESUMED_CALLS = {"before_agent": 0, "before_model": 1, "after_model": 2, "after_agent": 1}


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
@pytest.mark.parametrize("position", POSITIONS)
def test_each_hook_position_failing(position: str, how: str, hook_mode: str) -> None:
    faulty, closer, passing = Faulty(position), Closer(), Counting()
    agent = create_agent(
        ScriptedChatModel(replies()),
        [add],
        middleware=[closer, passing, faulty],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": f"{position}-{how}"}}

    def run(inputs: Any) -> Any:
        if how == "invoke":
            return agent.invoke(inputs, config)
        return asyncio.run(agent.ainvoke(inputs, config))

    with pytest.raises(Injected) as caught:
        run({"messages": [HumanMessage("1+2")]})
    assert f"graphagent: raised in 'Faulty.{position}'" in caught.value.__notes__
    assert closer.endings == ["Injected"]

    faulty.armed = False
    passing.calls.clear()
    resumed = run(None)
    assert resumed["messages"][-1].content == "3"
    assert [m.type for m in resumed["messages"]] == ["human", "ai", "tool", "ai"]
    if position in RESUMED_CALLS:
        rerun = hook_mode == "fused" and position.startswith("before_")
        assert passing.calls.get(position, 0) == RESUMED_CALLS[position] + rerun

    continued = run({"messages": [HumanMessage("once more")]})
    assert continued["messages"][-1].content == "again"
    assert closer.endings == ["Injected", "ok", "ok"]


def test_a_failing_tool_and_model_are_named_too() -> None:
    @tool
    def broken() -> str:
        """Fails."""
        raise Injected("tool failed")

    agent = create_agent(ScriptedChatModel([calls(("broken", {}))]), [broken])
    with pytest.raises(Injected) as caught:
        agent.invoke({"messages": ["go"]})
    assert "graphagent: raised in the tool 'broken'" in caught.value.__notes__

    def explode(messages: Any) -> str:
        raise Injected("model failed")

    agent = create_agent(ScriptedChatModel([explode]), middleware=[Faulty("nowhere")])
    with pytest.raises(Injected) as caught:
        agent.invoke({"messages": ["go"]})
    assert "graphagent: raised in the model call (ScriptedChatModel)" in caught.value.__notes__


def test_a_failing_wrap_agent_is_named() -> None:
    class Opening(AgentMiddleware):
        def wrap_agent(self, state: Any, runtime: Any) -> Generator[None, Any, None]:
            raise Injected("cannot open")
            yield  # pragma: no cover

    agent = create_agent(ScriptedChatModel(["hi"]), middleware=[Opening()])
    with pytest.raises(Injected) as caught:
        agent.invoke({"messages": ["go"]})
    assert "graphagent: raised in 'Opening.wrap_agent'" in caught.value.__notes__
