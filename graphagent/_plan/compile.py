"""``compile_plan``: discover hooks, validate everything, order it, and lay out the routes.

The plan is plain data: the graph shape can be tested, printed or drawn without building a graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from langchain_core.tools import BaseTool

from graphagent._core.agent_facts import AgentFacts
from graphagent._core.hooks import POSITIONS, Position
from graphagent._core.observe import observed
from graphagent._core.records import Hook, Plan
from graphagent._core.trace_policy import check_trace_policy
from graphagent._plan.discover import discover_all
from graphagent._plan.routes import lay_out
from graphagent._plan.transformers import Factory, stream_transformers
from graphagent.errors import DuplicateMiddlewareError, MiddlewareError
from graphagent.middleware.base import AgentMiddleware
from graphagent.state import AgentState, merge_state_schemas

_FORBIDDEN_IN_NAMES = (":", "|")
_REVERSED: frozenset[Position] = frozenset({"after_model", "after_agent"})
"""The positions whose hooks run in reverse list order: ``after_*`` unwind like the onion."""


def compile_plan(
    middleware: Sequence[Any],
    tools: Sequence[BaseTool | dict[str, Any]] = (),
    state_schema: type[Any] | None = None,
    *,
    structured_output: bool = False,
    output_tools: bool = False,
    checkpointer: bool = False,
    checkpointing_disabled: bool = False,
    fuse_hooks: bool = False,
    answer_malformed: bool = False,
    prompt_caching: bool = True,
    interrupt_before: Sequence[str] | None = None,
    interrupt_after: Sequence[str] | None = None,
    transformers: Sequence[Factory] | None = None,
) -> Plan:
    """Validate the middleware list and turn it into the finished :class:`Plan` every later
    stage reads (``build_graph``, the run, ``explain``); nothing is built yet.

    ``structured_output``: the agent has a ``response_format``; ``output_tools``: its strategy
    may answer through a tool call (``ToolStrategy``, ``AutoStrategy``), see ``lay_out``.
    Each middleware's ``validate_agent`` sees the agent's tools and whether it has a checkpointer.
    With ``fuse_hooks``, the node hooks of each position run as one node (``HookGroup``).
    ``answer_malformed``: the model node answers malformed tool calls itself (see ``lay_out``);
    ``prompt_caching``: each model call is shaped for its provider to cache the prefix.
    ``interrupt_before``/``interrupt_after`` are checked against the nodes; ``transformers``
    join those the middleware declare. The hooks a middleware's observer watches run inside it.
    """
    plan = _laid_out(
        middleware,
        tools,
        state_schema,
        structured_output=structured_output,
        output_tools=output_tools,
        checkpointer=checkpointer,
        checkpointing_disabled=checkpointing_disabled,
        fuse_hooks=fuse_hooks,
        answer_malformed=answer_malformed,
        prompt_caching=prompt_caching,
        transformers=transformers,
    )
    check_breakpoints(plan, "interrupt_before", interrupt_before)
    check_breakpoints(plan, "interrupt_after", interrupt_after)
    return observed(plan)


def _laid_out(
    middleware: Sequence[Any],
    tools: Sequence[BaseTool | dict[str, Any]],
    state_schema: type[Any] | None,
    *,
    structured_output: bool,
    output_tools: bool,
    checkpointer: bool,
    checkpointing_disabled: bool,
    fuse_hooks: bool,
    answer_malformed: bool,
    prompt_caching: bool,
    transformers: Sequence[Factory] | None,
) -> Plan:
    """The plan of the checked list: its hooks in order, its tools, schemas, routes and stream
    transformers."""
    listed = _check_instances(middleware)
    _check_names(listed)
    stack = ordered(listed)
    hooks = by_position([hook for item in stack for hook in discover_all(item)])
    all_tools = _collect_tools([t for t in tools if not isinstance(t, dict)], stack)
    schemas = merge_state_schemas(_schema_sources(stack), state_schema)
    provider_tools = tuple(t for t in tools if isinstance(t, dict))
    facts = AgentFacts(all_tools, checkpointer, provider_tools, checkpointing_disabled)
    for item in stack:
        check_trace_policy(item)
        item.validate_agent(facts)
    entry, routes = lay_out(
        hooks,
        fused=fuse_hooks,
        # As in LangChain, a wrap_tool_call hook gets a tools node even without tools: it may
        # execute a tool a wrap_model_call hook offers (request.override(tool=...)).
        has_tools=bool(all_tools or hooks["wrap_tool_call"]),
        return_direct=any(t.return_direct for t in all_tools),
        structured_output=structured_output,
        output_tools=output_tools,
        answer_malformed=answer_malformed,
    )
    return Plan(
        middleware=stack,
        hooks=hooks,
        tools=all_tools,
        provider_tools=provider_tools,
        schemas=schemas,
        entry=entry,
        routes=MappingProxyType(routes),
        facts=facts,
        fused=fuse_hooks,
        answer_malformed=answer_malformed,
        prompt_caching=prompt_caching,
        transformers=tuple(stream_transformers(stack, transformers)),
    )


def by_position(discovered: Sequence[Hook]) -> MappingProxyType[Position, tuple[Hook, ...]]:
    """Every position's hooks in execution order, from hooks discovered in middleware order."""
    hooks = {p: tuple(h for h in discovered if h.position == p) for p in POSITIONS}
    for position in _REVERSED:
        hooks[position] = hooks[position][::-1]
    return MappingProxyType(hooks)


def check_breakpoints(plan: Plan, parameter: str, nodes: Sequence[str] | None) -> None:
    """Refuse an ``interrupt_before``/``interrupt_after`` naming a hook's own node when
    ``fuse_hooks`` runs that hook inside its position's node."""
    if not plan.fused:
        return
    inside = {hook.node: group.node for group in plan.groups for hook in group.hooks}
    when = parameter.rpartition("_")[2]
    for node in nodes or ():
        if inside.get(node, node) != node:
            raise MiddlewareError(
                f"create_agent({parameter}=[{node!r}]) names the hook {node!r}, which "
                f"fuse_hooks=True runs inside the node {inside[node]!r}; pass "
                f"{inside[node]!r} (the run then pauses {when} all of that position's hooks), "
                "or leave fuse_hooks off."
            )


def _check_instances(middleware: Sequence[Any]) -> list[AgentMiddleware[Any, Any, Any]]:
    checked = []
    for position, item in enumerate(middleware):
        if isinstance(item, type) and issubclass(item, AgentMiddleware):
            raise MiddlewareError(
                f"middleware[{position}] is the class {item.__name__}, not an instance; "
                f"pass {item.__name__}(...)."
            )
        if not isinstance(item, AgentMiddleware):
            raise MiddlewareError(
                f"middleware[{position}] is {item!r} ({type(item).__name__}), which is not an "
                "AgentMiddleware; subclass AgentMiddleware or use a decorator such as "
                "@before_model."
            )
        name = item.name
        if not isinstance(name, str) or not name or any(c in name for c in _FORBIDDEN_IN_NAMES):
            raise MiddlewareError(
                f"middleware[{position}] has the name {name!r}; a name must be a non-empty "
                f"string without {' or '.join(map(repr, _FORBIDDEN_IN_NAMES))}."
            )
        checked.append(item)
    return checked


def ordered(
    middleware: Sequence[AgentMiddleware[Any, Any, Any]],
) -> tuple[AgentMiddleware[Any, Any, Any], ...]:
    """Execution order: higher ``order`` first (outer); ties keep list order."""
    for position, item in enumerate(middleware):
        if type(item.order) is not int:
            raise MiddlewareError(
                f"middleware[{position}] '{item.name}' has order={item.order!r}; order must be "
                "an int (higher is outer, default 0)."
            )
    return tuple(sorted(middleware, key=lambda item: -item.order))


def _check_names(stack: Sequence[AgentMiddleware[Any, Any, Any]]) -> None:
    positions: dict[str, list[int]] = {}
    for position, item in enumerate(stack):
        positions.setdefault(item.name, []).append(position)
    for name, found in positions.items():
        if len(found) > 1:
            at = ", ".join(map(str, found[:-1])) + f" and {found[-1]}"
            two = len(found) == 2
            rename = "one a distinct name" if two else "all but one distinct names"
            raise DuplicateMiddlewareError(
                "Please remove duplicate middleware instances: the name "
                f"'{name}' is used at positions {at}; give {rename} "
                "(name=... on a decorator, or a `name` attribute) or use "
                f"{'a subclass' if two else 'subclasses'}."
            )


def _collect_tools(
    tools: Sequence[BaseTool], stack: Sequence[AgentMiddleware[Any, Any, Any]]
) -> tuple[BaseTool, ...]:
    owners: dict[str, str] = {}
    collected: list[BaseTool] = []
    sources = [("the agent's tool list", t) for t in tools]
    sources += [(f"middleware '{m.name}'", t) for m in stack for t in m.tools]
    for owner, tool in sources:
        if not isinstance(tool, BaseTool):
            raise MiddlewareError(
                f"{owner} includes {tool!r}, which is not a BaseTool; "
                "wrap functions with langchain_core.tools.tool."
            )
        if tool.name in owners:
            raise MiddlewareError(
                f"Tool name '{tool.name}' comes from both {owners[tool.name]} and {owner}; "
                "tool names must be unique, rename one of them."
            )
        owners[tool.name] = owner
        collected.append(tool)
    return tuple(collected)


def _schema_sources(stack: Sequence[AgentMiddleware[Any, Any, Any]]) -> list[tuple[str, type[Any]]]:
    """AgentState, then the middleware's schemas (the caller's is merged over them)."""
    return [("AgentState", AgentState), *((m.name, m.state_schema) for m in stack)]
