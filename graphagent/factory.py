"""``create_agent``: normalise the arguments, compile the plan, build the graph, compile it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool
from langgraph.cache.base import BaseCache
from langgraph.prebuilt import ToolNode
from langgraph.store.base import BaseStore
from langgraph.types import Checkpointer

from graphagent._core.ceiling import DEFAULT_MAX_MODEL_CALLS, checked_ceiling
from graphagent._core.log import log
from graphagent._core.options import refuse_unknown_keywords
from graphagent._core.runtime import DEFAULT_AGENT_NAME
from graphagent._graph.graph import build_graph
from graphagent._plan.compile import compile_plan
from graphagent.agent import CompiledAgent
from graphagent.explain import explain
from graphagent.limits import RateLimits, ToolLimits, checked_rate_limits, checked_tool_limits
from graphagent.middleware.base import AgentMiddleware
from graphagent.models import ConfigurableChatModel, resolve_model
from graphagent.structured_output import AutoStrategy, ToolStrategy, as_strategy


@refuse_unknown_keywords
def create_agent(
    model: str | BaseChatModel | ConfigurableChatModel,
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
    transformers: Sequence[Callable[[tuple[str, ...]], Any]] | None = None,
    fuse_hooks: bool = False,
    max_model_calls: int | None = DEFAULT_MAX_MODEL_CALLS,
    answer_malformed_tool_calls: bool = True,
    prompt_caching: bool = True,
    rate_limits: RateLimits | bool | None = None,
    tool_limits: ToolLimits | None = None,
) -> CompiledAgent:
    """Build an agent: a compiled LangGraph graph looping model -> tools -> model.

    Middleware hooks become nodes (``before_*``/``after_*``) and wrappers (``wrap_*``) of that
    loop. Everything is validated before anything is built; errors name the middleware, the
    hook and the fix.

    Args:
        model: The chat model, or a model id such as ``"openai:gpt-4o"`` or
            ``"claude-sonnet-4-5"``, which ``init_chat_model`` turns into one, or a
            ``ConfigurableChatModel`` (``init_chat_model(configurable_fields=...)``): each model
            call then builds the model the run's ``config["configurable"]`` selects.
        tools: The tools the model may call: LangChain tools, plain functions (their docstring
            becomes the description the model reads) and provider tool dicts, which are sent
            to the model and run by the provider, never by the agent. Middleware may add tools
            of their own. ``None`` or an empty list: the model answers without tools.
        system_prompt: Instructions put first in every model call, as text or as a
            ``SystemMessage``. A ``wrap_model_call`` hook (or ``dynamic_prompt``) can replace
            them per call.
        middleware: Middleware instances. ``before_*`` hooks run in list order, ``after_*``
            hooks in reverse, and the first ``wrap_*`` hook is the outermost; an ``order``
            attribute (default 0, higher is outer) moves a middleware without reordering the
            list. Names must be unique.
        response_format: Ask for structured output: a ``ToolStrategy``, a ``ProviderStrategy``,
            an ``AutoStrategy``, or a bare schema (a pydantic model, dataclass, TypedDict, JSON
            schema dict or a union of them), for which the strategy is chosen from the model's
            profile. The parsed value comes back as the ``structured_response`` field.
        state_schema: A TypedDict extending ``AgentState`` with fields of your own; it is merged
            with the middleware's state schemas.
        context_schema: The type of the run's ``context``: what callers pass as
            ``invoke(..., context=...)`` and what tools and hooks read as ``runtime.context``.
        checkpointer: Where the state is saved after every step, per ``thread_id``: a LangGraph
            checkpointer (``InMemorySaver``, SQLite, PostgreSQL). Interrupts and conversations
            that continue across calls need one. ``None``: none of its own (as a node of a
            parent graph, the agent uses the parent's for the current run); ``True``: as a node,
            keep its state in the parent's checkpointer across runs; ``False``: never save,
            even under a parent that has a checkpointer.
        store: A LangGraph store (``BaseStore``) for data that outlives a thread, reachable by
            tools and hooks as ``runtime.store``.
        interrupt_before: Names of the nodes to pause before (LangGraph's static breakpoints):
            ``"model"``, ``"tools"`` or a hook node such as ``"Audit.before_model"`` (with
            ``fuse_hooks``, a position such as ``"before_model"``). Needs a checkpointer;
            ``invoke(None, config)`` carries on. Meant for debugging: to review tool calls, use
            ``HumanInTheLoopMiddleware``.
        interrupt_after: Names of the nodes to pause after; as ``interrupt_before``.
        debug: Run the graph in LangGraph's debug mode, which prints every step's tasks and
            state writes as the agent runs.
        name: The agent's name. It is stamped on the model's replies (``AIMessage.name``),
            names the graph (and so its node when added to a parent graph), tags its runs'
            metadata (``lc_agent_name``), and reaches ``wrap_agent`` hooks as
            ``runtime.agent_name``. Without one the graph is named ``"LangGraph"``, as
            LangChain's is.
        cache: A LangGraph cache (``BaseCache``) for work that declares a cache policy, such as
            ``@task(cache_policy=...)`` functions called from tools or hooks. graphagent's own
            nodes declare none, so without such work nothing is cached.
        transformers: Stream transformers for ``stream_events(version="v3")`` runs, LangGraph's
            experimental event protocol: ``StreamTransformer`` classes, or factories called as
            ``factory(scope)``. They come after langgraph's ``ToolCallTransformer`` (which gives
            ``run.tool_calls``) and those the middleware declare (``transformers``), each one
            once.
        fuse_hooks: graphagent only. Run the node hooks of each position as one node, named
            after the position (``"before_model"``, ...), instead of one node per hook: far
            fewer graph steps and checkpoints with the same state, order and jumps. Streams
            show one ``updates`` item per position, and when a hook interrupts, resuming runs
            the hooks before it in its position again. See "One node per position" in
            docs/middleware.md, and docs/performance.md for when it pays.
        max_model_calls: graphagent only. The ceiling on model calls in one run (retries and
            fallbacks count), 250 by default: a model or a hook that loops stops with
            ``RunawayRunError`` naming the loop, long before langgraph's recursion limit. One
            run may set its own with ``config={"configurable": {"max_model_calls": n}}``;
            ``None`` removes the ceiling. See docs/limits.md.
        answer_malformed_tool_calls: graphagent only. A tool call whose arguments are not a
            JSON object (a string, ``null``, a list, invalid JSON) is answered at once with an
            error ``ToolMessage`` naming the tool and what was wrong, and the model is called
            again to correct it (``max_model_calls`` bounds a model that never does). ``False``
            gives LangChain's behaviour: a reply whose only calls are malformed ends the run,
            and the next model call answers them. See "Malformed calls" in docs/tools.md.
        prompt_caching: graphagent only. Shape every model call so its provider caches the
            repeated prefix (on by default): a ``prompt_cache_key`` per thread for OpenAI,
            ``cache_control`` breakpoints for Anthropic, ``cachePoint`` blocks for Bedrock.
            A key or breakpoints of the caller's own win; ``False`` sends requests as they are.
            See docs/prompt-caching.md.
        rate_limits: graphagent only. The limits of the provider keys the model calls. By
            default (``None``) each endpoint and API key has one limiter in the process, which
            learns the key's limits from its ``429`` answers and queues calls instead of
            failing them, for up to two minutes each; a ``RateLimits`` states the limits (and
            the longest wait); ``False`` turns the limiter off. See docs/limits.md.
        tool_limits: graphagent only. How many tool calls run at once: by default at most 16
            of one run; ``ToolLimits(per_run=..., per_tool={"fetch": 4})`` sets the run's
            limit (``None``: none) and limits of named tools across the agent's runs. See
            docs/limits.md.

    Returns:
        The compiled agent, a LangGraph ``CompiledStateGraph``: run it with ``invoke``,
        ``ainvoke``, ``stream`` or ``astream``, or add it to a parent graph as a node.

    Raises:
        MiddlewareError: A middleware list, hook, schema or tool set that cannot be built
            (``DuplicateMiddlewareError`` and ``StateSchemaConflictError`` among them).
        TypeError: ``tools``, ``middleware``, ``model`` or ``system_prompt`` of the wrong kind
            (a configurable model with ``bind_tools`` or ``with_structured_output`` applied
            among them: the agent binds tools and structured output itself).
        ValueError: A model id naming a provider graphagent does not know, or a
            ``max_model_calls`` below 1.
        MissingIntegrationError: A model id whose provider package is not installed.
    """
    ceiling = checked_ceiling(max_model_calls)
    limits = checked_rate_limits(rate_limits)
    model = resolve_model(model)
    strategy = as_strategy(response_format)
    plan = compile_plan(
        _middleware_list(middleware),
        _normalise_tools(_tools_list(tools)),
        state_schema,
        structured_output=strategy is not None,
        output_tools=isinstance(strategy, ToolStrategy | AutoStrategy),
        checkpointer=checkpointer not in (None, False),
        checkpointing_disabled=checkpointer is False,
        fuse_hooks=fuse_hooks,
        answer_malformed=answer_malformed_tool_calls,
        prompt_caching=prompt_caching,
        interrupt_before=interrupt_before,
        interrupt_after=interrupt_after,
        transformers=transformers,
    )
    graph = build_graph(
        plan,
        model,
        system_message=_system_message(system_prompt),
        context_schema=context_schema,
        name=name,
        response_format=strategy,
        rate_limits=limits,
        tool_limits=checked_tool_limits(tool_limits, (t.name for t in plan.tools)),
    )
    compiled = graph.compile(
        checkpointer=checkpointer,
        store=store,
        interrupt_before=interrupt_before,
        interrupt_after=interrupt_after,
        debug=debug,
        name=name or DEFAULT_AGENT_NAME,
        cache=cache,
        transformers=list(plan.transformers),
    )
    compiled = compiled.with_config(_run_defaults(name))
    agent = CompiledAgent.adopt(compiled, plan, ceiling)
    if log.isEnabledFor(logging.DEBUG):
        log.debug("create_agent built this plan:\n%s", explain(agent))
    return agent


RECURSION_LIMIT = 9_999
"""langgraph's step limit for a run that sets none, as LangChain's agents set it."""


def _run_defaults(name: str | None) -> RunnableConfig:
    """What every run of the agent starts from, as in LangChain: its recursion limit, and the
    metadata tagging its traces as an agent's (with the agent's name, so that callers can tell
    agents apart in a composed stream). A run's own config overrides them."""
    metadata: dict[str, Any] = {"ls_integration": "langchain_create_agent"}
    if name:
        metadata["lc_agent_name"] = name
    return {"recursion_limit": RECURSION_LIMIT, "metadata": metadata}


def _tools_list(tools: Any) -> list[Any]:
    if tools is None:
        return []
    if isinstance(tools, str):
        instead = f"a list of the tools themselves, not their names: tools=[{tools}]"
        _not_a_list("tools", repr(tools), "a str", instead)
    if isinstance(tools, ToolNode):
        raise TypeError(
            f"'{type(tools).__name__}' object is not iterable: create_agent(tools=...) takes the "
            "tools themselves and builds its own tools node; pass "
            "tools=list(tool_node.tools_by_name.values())."
        )
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
