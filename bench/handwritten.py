"""The floor of hooks-as-nodes: the benchmark agent as a hand-written langgraph graph.

What a careful user would write with langgraph alone, every hook a node: one node per
``before_model`` and per ``after_model`` hook, the ``wrap_model_call`` hooks nested around the
model call and the ``wrap_tool_call`` hooks around each tool call, plain edges between the hook
nodes and one conditional edge to the tools. There is no validation, no ``jump_to``, no repair of
the history: nothing but the graph. graphagent's default mode is measured against it.

It uses only langgraph's public API, so it builds two graphs: one of plain functions for
``invoke``, one of coroutines for ``ainvoke`` (a node has one or the other).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Annotated, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


Handler = Callable[[Any], Any]


def _nest(layers: Sequence[Callable[[Any, Handler], Any]], base: Handler) -> Handler:
    """``layers`` around ``base``, the first outermost (sync and async alike)."""
    handler = base
    for layer in reversed(layers):
        handler = _bind(layer, handler)
    return handler


def _bind(layer: Callable[[Any, Handler], Any], inner: Handler) -> Handler:
    return lambda request: layer(request, inner)


def build(
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    middleware: Sequence[Any],
    *,
    asynchronous: bool,
    checkpointer: Any = None,
) -> Any:
    """The compiled graph, its nodes calling the sync or the async hooks."""
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(State)
    before = [(f"{type(m).__name__}.before_model", m) for m in middleware]
    after = [(f"{type(m).__name__}.after_model", m) for m in reversed(middleware)]
    prefix, node = ("a", _async_node) if asynchronous else ("", _sync_node)
    for name, m in before:
        graph.add_node(name, node(getattr(m, prefix + "before_model")))
    for name, m in after:
        graph.add_node(name, node(getattr(m, prefix + "after_model")))
    make = _async_model_and_tools if asynchronous else _sync_model_and_tools
    model_node, tools_node, route = make(model, tools, middleware)
    graph.add_node("model", model_node)
    graph.add_node("tools", tools_node)
    chain = [START, *(name for name, _ in before), "model", *(name for name, _ in after)]
    for source, target in itertools.pairwise(chain):
        graph.add_edge(source, target)
    graph.add_conditional_edges(chain[-1], route, {"tools": "tools", END: END})
    graph.add_edge("tools", before[0][0] if before else "model")
    return graph.compile(checkpointer=checkpointer)


def _next(state: State) -> str:
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else END


Parts = tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]
"""The model node, the tools node and the router after the last after_model node."""


def _sync_model_and_tools(
    model: BaseChatModel, tools: Sequence[BaseTool], middleware: Sequence[Any]
) -> Parts:
    by_name = {tool.name: tool for tool in tools}
    call_model = _nest(
        [m.wrap_model_call for m in middleware],
        lambda messages: model.bind_tools(tools).invoke(messages),
    )
    call_tool = _nest(
        [m.wrap_tool_call for m in middleware], lambda call: by_name[call["name"]].invoke(call)
    )

    def model_node(state: State) -> dict[str, Any]:
        return {"messages": [call_model(state["messages"])]}

    def tools_node(state: State) -> dict[str, Any]:
        calls = state["messages"][-1].tool_calls  # type: ignore[union-attr]
        return {"messages": [call_tool(call) for call in calls]}

    return model_node, tools_node, _next


def _async_model_and_tools(
    model: BaseChatModel, tools: Sequence[BaseTool], middleware: Sequence[Any]
) -> Parts:
    by_name = {tool.name: tool for tool in tools}

    async def base_model(messages: Any) -> Any:
        return await model.bind_tools(tools).ainvoke(messages)

    async def base_tool(call: Any) -> Any:
        return await by_name[call["name"]].ainvoke(call)

    call_model = _nest([m.awrap_model_call for m in middleware], base_model)
    call_tool = _nest([m.awrap_tool_call for m in middleware], base_tool)

    async def model_node(state: State) -> dict[str, Any]:
        return {"messages": [await call_model(state["messages"])]}

    async def tools_node(state: State) -> dict[str, Any]:
        calls = state["messages"][-1].tool_calls  # type: ignore[union-attr]
        return {"messages": [await call_tool(call) for call in calls]}

    async def route(state: State) -> str:  # a sync router would run in a thread
        return _next(state)

    return model_node, tools_node, route


def _sync_node(method: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def node(state: State, runtime: Any) -> Any:
        return method(state, runtime)

    return node


def _async_node(method: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    async def node(state: State, runtime: Any) -> Any:
        return await method(state, runtime)

    return node


class HandWritten:
    """The two graphs behind one agent-like object: ``invoke``/``stream`` run the sync graph,
    ``ainvoke`` the async one, built on first use (so building one costs one graph, as for the
    other sides)."""

    def __init__(
        self,
        model: BaseChatModel,
        tools: Sequence[BaseTool],
        middleware: Sequence[Any],
        checkpointer: Any = None,
    ) -> None:
        self._parts = (model, tools, middleware, checkpointer)
        self.sync = build(model, tools, middleware, asynchronous=False, checkpointer=checkpointer)

    @cached_property
    def asynchronous(self) -> Any:
        model, tools, middleware, checkpointer = self._parts
        return build(model, tools, middleware, asynchronous=True, checkpointer=checkpointer)

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        return self.sync.invoke(input, config, **kwargs)

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        return await self.asynchronous.ainvoke(input, config, **kwargs)

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        return self.sync.stream(input, config, **kwargs)
