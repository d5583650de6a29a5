"""The ``order`` attribute: higher is outer, ties keep list order."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphagent import MiddlewareError, create_agent
from graphagent._plan import compile_plan
from graphagent.middleware import AgentMiddleware
from graphagent.testing import ScriptedChatModel


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
    assert [h.owner for h in plan.before_model] == names
    assert [h.owner for h in plan.after_model] == names[::-1]


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
