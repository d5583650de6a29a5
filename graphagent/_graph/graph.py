"""``build_graph``: the only module that touches ``StateGraph``; nodes and routes from the plan."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage
from langgraph.channels import LastValue
from langgraph.graph import StateGraph

from graphagent._core.cache_health import volatile_middleware
from graphagent._core.records import MODEL_NODE, TOOLS_NODE, Plan
from graphagent._core.trace_policy import node_trace_policy
from graphagent._graph.field_types import field_types
from graphagent._graph.model_node import ModelSetup, model_node
from graphagent._graph.nodes import destinations, hook_node, router
from graphagent._graph.state_view import StateChannels
from graphagent._graph.tool_node import tools_node
from graphagent._run.state_clash import name_reducer_failures
from graphagent._run.tool_registry import ToolRegistry
from graphagent.limits import DEFAULT_LIMITS, DEFAULT_TOOL_LIMITS, RateLimits, ToolLimits


def build_graph(
    plan: Plan,
    model: BaseChatModel,
    *,
    system_message: SystemMessage | None,
    context_schema: type[Any] | None,
    name: str | None,
    response_format: Any = None,
    rate_limits: RateLimits | None = DEFAULT_LIMITS,
    tool_limits: ToolLimits = DEFAULT_TOOL_LIMITS,
) -> StateGraph[Any, Any, Any, Any]:
    schemas = plan.schemas
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(
        schemas.state,
        context_schema,
        input_schema=schemas.input,
        output_schema=schemas.output,
    )
    name_reducer_failures(graph.channels)
    state_keys = frozenset(schemas.fields)
    plain_keys = frozenset(k for k, ch in graph.channels.items() if isinstance(ch, LastValue))
    fields = StateChannels.of(graph.channels, {k: f.owner for k, f in schemas.fields.items()})
    types = field_types(schemas.fields, graph.channels)
    after_tools = plan.after_tools
    registry = ToolRegistry(plan.tools, wrapped=bool(plan.hooks["wrap_tool_call"]))
    setup = ModelSetup(
        model,
        system_message,
        plan.offered,
        name,
        state_keys,
        plain_keys,
        registry,
        response_format,
        answer_malformed=plan.answer_malformed,
        prompt_caching=plan.prompt_caching,
        cache_volatile=volatile_middleware(plan.middleware),
        rate_limits=rate_limits,
    )
    calls = model_node(setup, plan.hooks["wrap_model_call"], after_tools=MODEL_NODE in after_tools)
    graph.add_node(MODEL_NODE, calls)
    if TOOLS_NODE in plan.routes:
        tools = tools_node(plan.tools, plan.hooks["wrap_tool_call"], tool_limits)
        graph.add_node(TOOLS_NODE, tools)
    for group in plan.groups_as_drawn:
        graph.add_node(
            group.node,
            hook_node(
                group,
                plan.routes[group.node],
                fields,
                plan.facts,
                types,
                after_tools=group.node in after_tools,
            ),
            trace_policy=node_trace_policy([hook.middleware for hook in group.hooks]),
        )
    for source, route in plan.routes.items():
        # As LangChain draws it: a node routes (a dashed edge) when it may jump, even to where
        # it goes anyway, and so do the tools.
        fixed = not (route.jumps or route.to_tools or route.loop or route.exit)
        if fixed and source != TOOLS_NODE:
            graph.add_edge(source, route.default)
        else:
            routed = router(source, route, plan.return_direct)
            graph.add_conditional_edges(source, routed, destinations(route))
    return graph
