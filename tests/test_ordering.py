"""The order hooks run in: seed 003's experiments (list order, state flowing between hooks),
and the ``order`` attribute (higher is outer, ties keep list order)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NotRequired

import pytest
from hypothesis import given, strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from graphagent import MiddlewareError, create_agent
from graphagent._plan.compile import compile_plan
from graphagent.middleware import (
    AgentMiddleware,
    AgentState,
    after_agent,
    after_model,
    before_agent,
    before_model,
)
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run
from tests.tools import add


class Named(AgentMiddleware):
    """Logs every hook, indenting wrap hooks by nesting depth (as in seed 003)."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def _say(self, text: str) -> None:
        self.log.append(text)

    def before_agent(self, state: Any, runtime: Any) -> None:
        self._say(f"{self.name}.before_agent")

    def before_model(self, state: Any, runtime: Any) -> None:
        self._say(f"{self.name}.before_model")

    def after_model(self, state: Any, runtime: Any) -> None:
        self._say(f"{self.name}.after_model")

    def after_agent(self, state: Any, runtime: Any) -> None:
        self._say(f"{self.name}.after_agent")

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self._say(f"{self.name}.wrap_model_call enter")
        try:
            return handler(request)
        finally:
            self._say(f"{self.name}.wrap_model_call exit")

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self._say(f"{self.name}.wrap_tool_call enter ({request.tool_call['name']})")
        try:
            return handler(request)
        finally:
            self._say(f"{self.name}.wrap_tool_call exit")


class M1(Named):
    pass


class M2(Named):
    pass


class M3(Named):
    pass


ROUND = [
    "M1.before_model",
    "M2.before_model",
    "M3.before_model",
    "M1.wrap_model_call enter",
    "M2.wrap_model_call enter",
    "M3.wrap_model_call enter",
    "M3.wrap_model_call exit",
    "M2.wrap_model_call exit",
    "M1.wrap_model_call exit",
    "M3.after_model",
    "M2.after_model",
    "M1.after_model",
]
TOOL_ROUND = [
    "M1.wrap_tool_call enter (add)",
    "M2.wrap_tool_call enter (add)",
    "M3.wrap_tool_call enter (add)",
    "M3.wrap_tool_call exit",
    "M2.wrap_tool_call exit",
    "M1.wrap_tool_call exit",
]


@pytest.mark.usefixtures("hook_mode")
def test_before_in_order_after_reversed_wraps_nested(run: Run) -> None:
    log: list[str] = []
    model = ScriptedChatModel([calls(("add", {"a": 17, "b": 25})), "17 + 25 = 42"])
    agent = create_agent(model, [add], middleware=[M1(log), M2(log), M3(log)])

    result = run(agent, {"messages": [HumanMessage("17 + 25?")]})

    assert log == [
        "M1.before_agent",
        "M2.before_agent",
        "M3.before_agent",
        *ROUND,
        *TOOL_ROUND,
        *ROUND,
        "M3.after_agent",
        "M2.after_agent",
        "M1.after_agent",
    ]
    assert [type(m) for m in result["messages"]] == [
        HumanMessage,
        AIMessage,
        ToolMessage,
        AIMessage,
    ]
    assert result["messages"][2].content == "42"
    assert result["messages"][-1].content == "17 + 25 = 42"


class CounterState(AgentState):
    model_call_count: NotRequired[int]


@pytest.mark.usefixtures("hook_mode")
def test_custom_state_counter(run: Run) -> None:
    events: list[str] = []

    @before_agent(state_schema=CounterState)
    def on_start(state: CounterState, runtime: Any) -> dict[str, Any]:
        events.append("before_agent -> model_call_count=0")
        return {"model_call_count": 0}

    @before_model(state_schema=CounterState)
    def before(state: CounterState, runtime: Any) -> None:
        n = state.get("model_call_count", 0)
        events.append(f"before_model -> call {n + 1}, {len(state['messages'])} messages")

    @after_model(state_schema=CounterState)
    def after(state: CounterState, runtime: Any) -> dict[str, Any]:
        n = state.get("model_call_count", 0)
        last = state["messages"][-1]
        events.append(f"after_model -> count {n} -> {n + 1}, last is {type(last).__name__}")
        return {"model_call_count": n + 1}

    @after_agent(state_schema=CounterState)
    def on_end(state: CounterState, runtime: Any) -> None:
        events.append(f"after_agent -> {state.get('model_call_count', 0)} model calls")

    model = ScriptedChatModel([calls(("add", {"a": 17, "b": 25})), "17 + 25 = **42**"])
    agent = create_agent(model, [add], middleware=[on_start, before, after, on_end])

    result = run(agent, {"messages": [HumanMessage("17 + 25?")], "model_call_count": 0})

    assert events == [
        "before_agent -> model_call_count=0",
        "before_model -> call 1, 1 messages",
        "after_model -> count 0 -> 1, last is AIMessage",
        "before_model -> call 2, 3 messages",
        "after_model -> count 1 -> 2, last is AIMessage",
        "after_agent -> 2 model calls",
    ]
    assert result["model_call_count"] == 2
    assert len(result["messages"]) == 4
    assert result["messages"][2].content == "42"


def test_no_middleware_no_tools_is_one_model_call(run: Run) -> None:
    model = ScriptedChatModel(["hello"])
    agent = create_agent(model)

    result = run(agent, {"messages": [HumanMessage("hi")]})

    assert [m.content for m in result["messages"]] == ["hi", "hello"]
    assert model.call_count == 1
    assert set(agent.get_graph().nodes) == {"__start__", "model", "__end__"}


# --- the order attribute ----------------------------------------------------------------------


class Logged(AgentMiddleware):
    def __init__(self, name: str, order: int, log: list[str]) -> None:
        self.name, self.order, self.log = name, order, log

    def before_model(self, state: Any, runtime: Any) -> None:
        self.log.append(f"{self.name}.before_model")

    def after_model(self, state: Any, runtime: Any) -> None:
        self.log.append(f"{self.name}.after_model")

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.log.append(f"{self.name}.wrap enter")
        return handler(request)


@pytest.mark.usefixtures("hook_mode")
def test_higher_order_is_outer_wherever_it_is_listed() -> None:
    log: list[str] = []
    tracer = Logged("tracer", 100, log)
    agent = create_agent(
        ScriptedChatModel(["hi"]),
        middleware=[Logged("a", 0, log), Logged("b", 0, log), tracer, Logged("low", -1, log)],
    )

    agent.invoke({"messages": ["x"]})

    assert log == [
        "tracer.before_model",
        "a.before_model",
        "b.before_model",
        "low.before_model",
        "tracer.wrap enter",
        "a.wrap enter",
        "b.wrap enter",
        "low.wrap enter",
        "low.after_model",
        "b.after_model",
        "a.after_model",
        "tracer.after_model",
    ]
    assert [m.name for m in agent.plan.middleware] == ["tracer", "a", "b", "low"]


@given(st.lists(st.integers(-3, 3), max_size=6))
def test_the_plan_sorts_by_order_and_keeps_list_order_for_ties(orders: list[int]) -> None:
    stack = [Logged(f"m{i}", order, []) for i, order in enumerate(orders)]
    plan = compile_plan(stack)
    names = [m.name for m in plan.middleware]
    assert names == [m.name for m in sorted(stack, key=lambda m: -m.order)]
    assert [h.owner for h in plan.hooks["before_model"]] == names
    assert [h.owner for h in plan.hooks["after_model"]] == names[::-1]


@pytest.mark.parametrize("bad", [1.5, "1", True, None])
def test_order_must_be_an_int(bad: Any) -> None:
    with pytest.raises(
        MiddlewareError, match=r"middleware\[0\] 'x' has order=.*; order must be an int"
    ):
        create_agent(ScriptedChatModel([]), middleware=[Logged("x", bad, [])])


def test_decorators_take_an_order() -> None:
    from graphagent.middleware import before_model, dynamic_prompt

    @before_model(order=5)
    def first(state: Any, runtime: Any) -> None:
        return None

    @dynamic_prompt(order=-2)
    def prompt(request: Any) -> str:
        return "be brief"

    assert (first.order, prompt.order) == (5, -2)
    plan = compile_plan([Logged("plain", 0, []), prompt, first])
    assert [m.name for m in plan.middleware] == ["first", "plain", "prompt"]
