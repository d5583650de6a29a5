"""``create_agent``: normalise the arguments, compile the plan, build the graph, compile it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage
from langchain_core.tools import BaseTool, tool
from langgraph.cache.base import BaseCache
from langgraph.store.base import BaseStore
from langgraph.types import Checkpointer

from graphagent._graph import build_graph
from graphagent._log import log
from graphagent._plan import compile_plan
from graphagent.agent import DEFAULT_AGENT_NAME, CompiledAgent
from graphagent.explain import explain
from graphagent.middleware.base import AgentMiddleware
from graphagent.models import resolve_model
from graphagent.structured_output import as_strategy


def create_agent(
    model: str | BaseChatModel,
    tools: Sequence[BaseTool | Callable[..., Any] | dict[str, Any]] | None = None,
    *,
    system_prompt: str | SystemMessage | None = None,
    middleware: Sequence[AgentMiddleware[Any, Any, Any]] = (),
    response_format: Any = None,
    state_schema: type[Any] | None = None,
    context_schema: type[Any] | None = None,
    checkpointer: Checkpointer = None,
    store: BaseStore | None = None,
    interrupt_before: list[str] | None = None,
    interrupt_after: list[str] | None = None,
    debug: bool = False,
    name: str | None = None,
    cache: BaseCache[Any] | None = None,
) -> CompiledAgent:
    """Build an agent: a compiled LangGraph graph looping model -> tools -> model.

    Middleware hooks become nodes (``before_*``/``after_*``) and wrappers (``wrap_*``) of that
    loop. Everything is validated before anything is built; errors name the middleware, the
    hook and the fix.
    """
    model = resolve_model(model)
    strategy = as_strategy(response_format)
    plan = compile_plan(
        _middleware_list(middleware),
        _normalise_tools(_tools_list(tools)),
        state_schema,
        structured_output=strategy is not None,
        checkpointer=checkpointer not in (None, False),
        checkpointing_disabled=checkpointer is False,
    )
    graph = build_graph(
        plan,
        model,
        system_message=_system_message(system_prompt),
        context_schema=context_schema,
        name=name,
        response_format=strategy,
    )
    compiled = graph.compile(
        checkpointer=checkpointer,
        store=store,
        interrupt_before=interrupt_before,
        interrupt_after=interrupt_after,
        debug=debug,
        name=name or DEFAULT_AGENT_NAME,
        cache=cache,
    )
    if name:  # lets callers tell agents apart in a composed stream, as LangChain's agents do
        compiled = compiled.with_config(metadata={"lc_agent_name": name})
    agent = CompiledAgent.adopt(compiled, plan)
    if log.isEnabledFor(logging.DEBUG):
        log.debug("create_agent built this plan:\n%s", explain(agent))
    return agent


def _tools_list(tools: Any) -> list[Any]:
    if tools is None:
        return []
    if isinstance(tools, str):
        instead = f"a list of the tools themselves, not their names: tools=[{tools}]"
        _not_a_list("tools", repr(tools), "a str", instead)
    if isinstance(tools, BaseTool | dict) or callable(tools):
        shown = getattr(tools, "name", None) or getattr(tools, "__name__", None) or repr(tools)
        _not_a_list("tools", shown, "a single tool", f"a list, even of one: tools=[{shown}]")
    if not isinstance(tools, Iterable):
        _not_a_list("tools", repr(tools), type(tools).__name__, "a list of tools")
    return list(tools)


def _middleware_list(middleware: Any) -> list[Any]:
    shown = repr(middleware)
    if isinstance(middleware, type) and issubclass(middleware, AgentMiddleware):
        name = middleware.__name__
        _not_a_list("middleware", name, "a class", f"a list of instances: middleware=[{name}()]")
    if isinstance(middleware, AgentMiddleware):
        instead = "a list, even of one: middleware=[...]"
        _not_a_list("middleware", shown, "a single middleware", instead)
    if middleware is None or isinstance(middleware, str) or not isinstance(middleware, Iterable):
        got = "a str" if isinstance(middleware, str) else type(middleware).__name__
        got = "None" if middleware is None else got
        _not_a_list("middleware", shown, got, "a list of middleware, or leave it out")
    return list(middleware)


def _not_a_list(parameter: str, shown: str, got: str, instead: str) -> NoReturn:
    raise TypeError(f"create_agent({parameter}={shown}) got {got}; pass {instead}.")


def _normalise_tools(
    tools: Iterable[BaseTool | Callable[..., Any] | dict[str, Any]],
) -> list[BaseTool | dict[str, Any]]:
    """BaseTools run in the tools node; functions become tools; dicts are provider-side tools
    (web search, code execution, ...) sent to the model and never executed by the agent."""
    normalised: list[BaseTool | dict[str, Any]] = []
    for position, item in enumerate(tools):
        if isinstance(item, BaseTool | dict):
            normalised.append(item)
        elif callable(item):
            normalised.append(tool(item))
        else:
            raise TypeError(
                f"tools[{position}] is {item!r} ({type(item).__name__}); pass a BaseTool, a "
                "function with a docstring, or a provider tool dict."
            )
    return normalised


def _system_message(prompt: str | SystemMessage | None) -> SystemMessage | None:
    if prompt is None or isinstance(prompt, SystemMessage):
        return prompt
    if isinstance(prompt, str):
        return SystemMessage(prompt)
    raise TypeError(f"system_prompt must be a str or a SystemMessage, got {type(prompt).__name__}.")
