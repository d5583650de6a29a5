"""Parent graphs and runs shared by the composition tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from tests.conftest import run_agent


class Parent(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def one_node(agent: Any, *, checkpointer: Any = None, state: type[Any] = Parent) -> Any:
    """A parent graph running ``agent`` as its one node."""
    graph = StateGraph(state)
    graph.add_node(agent)
    graph.add_edge(START, agent.name)
    graph.add_edge(agent.name, END)
    return graph.compile(checkpointer=checkpointer)


def fan_out(agent: Any, sends: Callable[[Any], list[Any]], *, checkpointer: Any = None) -> Any:
    """A parent graph whose start sends what ``sends(state)`` returns to ``agent``'s node."""
    graph = StateGraph(Parent)
    graph.add_node(agent)
    graph.add_conditional_edges(START, sends, [agent.name])
    graph.add_edge(agent.name, END)
    return graph.compile(checkpointer=checkpointer)


def run(graph: Any, how: str, inputs: Any, **kwargs: Any) -> dict[str, Any]:
    """``run_agent`` for any graph: its final output through ``how``."""
    return run_agent(graph, how, inputs, **kwargs)


def chunks(graph: Any, how: str, inputs: Any, **kwargs: Any) -> list[Any]:
    """Every chunk of ``stream`` (``how`` is ``"invoke"`` or ``"stream"``) or ``astream``."""
    if how in ("invoke", "stream"):
        return list(graph.stream(inputs, **kwargs))

    async def collect() -> list[Any]:
        return [chunk async for chunk in graph.astream(inputs, **kwargs)]

    return asyncio.run(collect())
