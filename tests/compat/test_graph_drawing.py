"""LangChain 1.5's agent graphs as ``get_graph()`` shows them (and so ``draw_mermaid()``): the
nodes in the order LangChain adds them, and every edge, dashed where the node routes. Each
expectation was read off LangChain 1.5.2's own agent of the same shape; node names are the same
in both (``"{middleware}.{hook}"``, ``"model"``, ``"tools"``)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import tool
from pydantic import BaseModel

from graphagent import create_agent
from graphagent.middleware import AgentMiddleware, hook_config
from graphagent.structured_output import ProviderStrategy, ToolStrategy
from graphagent.testing import ScriptedChatModel


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return query


@tool(return_direct=True)
def finish(answer: str) -> str:
    """Give the final answer."""
    return answer


class Answer(BaseModel):
    text: str


def middleware(name: str, *hooks: str, jumps: tuple[str, ...] = ()) -> AgentMiddleware:
    """A middleware named ``name`` implementing ``hooks``, each declaring ``jumps``."""

    def node_hook(self: Any, state: Any, runtime: Any) -> None:
        return None

    def wrap_hook(self: Any, request: Any, handler: Any) -> Any:
        return handler(request)

    methods: dict[str, Any] = {}
    for name_ in hooks:
        method = wrap_hook if name_.startswith("wrap_") else node_hook
        methods[name_] = hook_config(can_jump_to=list(jumps))(method) if jumps else method
    return type(name, (AgentMiddleware,), methods)()


def drawn(
    tools: list[Any], *stack: AgentMiddleware, response_format: Any = None, answer: bool = False
) -> Any:
    """The nodes and edges of an agent's graph; by default with LangChain's handling of malformed
    tool calls (``answer_malformed_tool_calls=False``), whose graph LangChain's matches."""
    agent = create_agent(
        ScriptedChatModel([]),
        tools,
        middleware=list(stack),
        response_format=response_format,
        answer_malformed_tool_calls=answer,
    )
    graph = agent.get_graph()
    arrows = {(e.source, e.target, bool(e.conditional)) for e in graph.edges}
    return list(graph.nodes), {f"{s} {'-.->' if c else '-->'} {t}" for s, t, c in arrows}


def test_nodes_come_model_tools_then_each_middlewares_hooks_in_list_order() -> None:
    first = middleware("A", "after_agent", "after_model", "before_model", "before_agent")
    nodes, _ = drawn([lookup], first, middleware("B", "after_model", "before_model"))

    assert nodes == [
        "__start__",
        "model",
        "tools",
        "A.before_agent",
        "A.before_model",
        "A.after_model",
        "A.after_agent",
        "B.before_model",
        "B.after_model",
        "__end__",
    ]


def test_the_tools_route_back_and_the_model_loops_only_when_something_answers_in_place() -> None:
    _, plain = drawn([lookup])
    _, wrapped = drawn([lookup], middleware("A", "wrap_model_call"))
    _, checked = drawn([lookup], middleware("A", "after_model"))

    assert plain == {
        "__start__ --> model",
        "model -.-> __end__",
        "model -.-> tools",
        "tools -.-> model",
    }
    assert wrapped == plain | {"model -.-> model"}
    assert drawn([lookup], answer=True)[1] == wrapped, "the model answers malformed calls itself"
    assert checked == {
        "__start__ --> model",
        "model --> A.after_model",
        "A.after_model -.-> __end__",
        "A.after_model -.-> model",
        "A.after_model -.-> tools",
        "tools -.-> model",
    }


def test_structured_output_through_a_tool_may_end_the_run_after_the_tools() -> None:
    _, edges = drawn([lookup], response_format=ToolStrategy(Answer))

    assert edges == {
        "__start__ --> model",
        "model -.-> __end__",
        "model -.-> model",
        "model -.-> tools",
        "tools -.-> __end__",
        "tools -.-> model",
    }


@pytest.mark.parametrize(
    ("response_format", "expected"),
    [
        (ToolStrategy(Answer), {"__start__ --> model", "model -.-> __end__", "model -.-> model"}),
        (ProviderStrategy(Answer), {"__start__ --> model", "model --> __end__"}),
    ],
    ids=["tool", "provider"],
)
def test_without_tools_only_an_output_tool_sends_the_model_back(
    response_format: Any, expected: set[str]
) -> None:
    assert drawn([], response_format=response_format)[1] == expected


def test_a_return_direct_tool_may_leave_for_the_after_agent_hooks() -> None:
    _, edges = drawn([finish, lookup], middleware("Z", "after_agent"))

    assert edges == {
        "__start__ --> model",
        "model -.-> Z.after_agent",
        "model -.-> tools",
        "tools -.-> Z.after_agent",
        "tools -.-> model",
        "Z.after_agent --> __end__",
    }


def test_a_hook_that_may_jump_routes_even_where_its_jump_leads_anyway() -> None:
    # B.after_model's "end" is the after_agent hook, where it goes in any case.
    checker = middleware("B", "after_model", jumps=("end",))
    _, edges = drawn([], checker, middleware("C", "after_agent"))

    assert edges == {
        "__start__ --> model",
        "model --> B.after_model",
        "B.after_model -.-> C.after_agent",
        "C.after_agent --> __end__",
    }


def test_the_two_jumps_langchain_routes_into_a_loop_or_a_crash() -> None:
    # LangChain sends an after_agent hook's "end" back to the first after_agent hook, and has no
    # edge for the loop's entry jumping to "model" (a KeyError when it does): graphagent ends the
    # run, and runs the loop's entry again.
    entry = middleware("A", "before_model", jumps=("model",))
    closer = middleware("Z", "after_agent", jumps=("end",))
    _, edges = drawn([], entry, closer)

    assert "A.before_model -.-> A.before_model" in edges
    assert "Z.after_agent -.-> __end__" in edges
    assert "Z.after_agent -.-> Z.after_agent" not in edges
