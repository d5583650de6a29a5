"""``compile_plan``: discover hooks, validate everything, order it, and lay out the routes.

The plan is plain data: the graph shape can be tested, printed or drawn without building a graph.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from langchain_core.tools import BaseTool
from langgraph.constants import END, START

from graphagent._hookspec import (
    ALL_HOOKS,
    INPUT_HOOK,
    NODE_HOOKS,
    WRAP_HOOKS,
    checked_hook,
    jump_targets,
    near_hook,
)
from graphagent._trace_policy import check_trace_policy
from graphagent.errors import (
    DuplicateMiddlewareError,
    HooklessMiddlewareWarning,
    MiddlewareError,
    hook_label,
)
from graphagent.middleware.base import AgentFacts, AgentMiddleware
from graphagent.state import (
    AgentState,
    JumpTo,
    MergedSchemas,
    merge_state_schemas,
)

MODEL_NODE = "model"
TOOLS_NODE = "tools"
_FORBIDDEN_IN_NAMES = (":", "|")

Mode = Literal["sync", "async", "both"]


@dataclass(frozen=True, slots=True)
class Hook:
    """One implemented hook of one middleware."""

    middleware: AgentMiddleware[Any, Any, Any]
    position: str
    """Which hook it is: ``before_model``, ``wrap_tool_call``... (``_hookspec.POSITIONS``)."""
    sync: Callable[..., Any] | None
    asynchronous: Callable[..., Any] | None
    can_jump_to: tuple[JumpTo, ...] = ()

    @property
    def owner(self) -> str:
        return self.middleware.name

    @property
    def node(self) -> str:
        """The graph node of a node hook: ``"{middleware name}.{hook}"``."""
        return f"{self.owner}.{self.position}"

    @property
    def label(self) -> str:
        return hook_label(self.owner, self.position)

    @property
    def mode(self) -> Mode:
        if self.sync and self.asynchronous:
            return "both"
        return "sync" if self.sync else "async"


@dataclass(frozen=True, slots=True)
class HookGroup:
    """The node hooks one graph node runs, in order: one hook by default; with ``fuse_hooks``,
    every hook of one position, in a node named after the position (``"before_model"``)."""

    node: str
    hooks: tuple[Hook, ...]

    @property
    def position(self) -> str:
        return self.hooks[0].position

    @property
    def can_jump_to(self) -> tuple[JumpTo, ...]:
        """Every target one of the hooks declares."""
        return tuple(dict.fromkeys(t for hook in self.hooks for t in hook.can_jump_to))


@dataclass(frozen=True, slots=True)
class Route:
    """Where a node goes next.

    In order: the node a declared ``jump_to`` target maps to; with ``to_tools``, the tools for
    pending tool calls, or ``loop`` again when the model's calls were all answered in place; with
    ``exit``, there when a ``return_direct`` tool was called; otherwise ``default``.
    """

    default: str
    jumps: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    to_tools: bool = False
    loop: str | None = None
    exit: str | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    """What will run, in what order, and how the nodes connect."""

    middleware: tuple[AgentMiddleware[Any, Any, Any], ...]
    before_agent: tuple[Hook, ...]
    before_model: tuple[Hook, ...]
    after_model: tuple[Hook, ...]
    after_agent: tuple[Hook, ...]
    wrap_model_call: tuple[Hook, ...]
    wrap_tool_call: tuple[Hook, ...]
    wrap_agent: tuple[Hook, ...]
    transform_input: tuple[Hook, ...]
    tools: tuple[BaseTool, ...]
    provider_tools: tuple[dict[str, Any], ...]
    schemas: MergedSchemas
    entry: str
    routes: Mapping[str, Route]
    facts: AgentFacts
    """What the middleware checked the agent against (``validate_agent``); node hooks run with
    it as the :func:`~graphagent.middleware.base.running_agent`."""
    fused: bool = False
    """Whether the node hooks of each position run as one node (``fuse_hooks``)."""

    @property
    def node_hooks(self) -> tuple[Hook, ...]:
        return self.before_agent + self.before_model + self.after_model + self.after_agent

    @property
    def groups(self) -> tuple[HookGroup, ...]:
        """The nodes running node hooks, in the order a run meets them."""
        return tuple(group for hooks in self._positions for group in _grouped(hooks, self.fused))

    @property
    def _positions(self) -> tuple[tuple[Hook, ...], ...]:
        return (self.before_agent, self.before_model, self.after_model, self.after_agent)


def compile_plan(
    middleware: Sequence[Any],
    tools: Sequence[BaseTool | dict[str, Any]] = (),
    state_schema: type[Any] | None = None,
    *,
    structured_output: bool = False,
    checkpointer: bool = False,
    checkpointing_disabled: bool = False,
    fuse_hooks: bool = False,
) -> Plan:
    """Validate the middleware list and turn it into a :class:`Plan`; nothing is built yet.

    With ``structured_output``, a model turn whose tool calls were all answered in place (an
    invalid structured response) loops back to the model even when the agent has no tools.
    Each middleware's ``validate_agent`` sees the agent's tools and whether it has a checkpointer.
    With ``fuse_hooks``, the node hooks of each position run as one node (:class:`HookGroup`).
    """
    listed = _check_instances(middleware)
    _check_names(listed)
    stack = ordered(listed)
    discovered = [hook for item in stack for hook in discover_all(item)]
    hooks = {p: [h for h in discovered if h.position == p] for p in ALL_HOOKS}
    all_tools = _collect_tools([t for t in tools if not isinstance(t, dict)], stack)
    schemas = merge_state_schemas(_schema_sources(stack), state_schema)
    provider_tools = tuple(t for t in tools if isinstance(t, dict))
    facts = AgentFacts(all_tools, checkpointer, provider_tools, checkpointing_disabled)
    for item in stack:
        check_trace_policy(item)
        item.validate_agent(facts)
    after_model = tuple(reversed(hooks["after_model"]))
    after_agent = tuple(reversed(hooks["after_agent"]))
    before_agent, before_model = tuple(hooks["before_agent"]), tuple(hooks["before_model"])
    groups = tuple(
        _grouped(hooks, fuse_hooks)
        for hooks in (before_agent, before_model, after_model, after_agent)
    )
    return_direct = any(t.return_direct for t in all_tools)
    entry, routes = _routes(groups, bool(all_tools), return_direct, loops=structured_output)
    return Plan(
        middleware=stack,
        before_agent=before_agent,
        before_model=before_model,
        after_model=after_model,
        after_agent=after_agent,
        wrap_model_call=tuple(hooks["wrap_model_call"]),
        wrap_tool_call=tuple(hooks["wrap_tool_call"]),
        wrap_agent=tuple(hooks["wrap_agent"]),
        transform_input=tuple(hooks[INPUT_HOOK]),
        tools=all_tools,
        provider_tools=provider_tools,
        schemas=schemas,
        entry=entry,
        routes=MappingProxyType(routes),
        facts=facts,
        fused=fuse_hooks,
    )


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


def _grouped(hooks: tuple[Hook, ...], fused: bool) -> tuple[HookGroup, ...]:
    """The nodes of one position's hooks: one per hook, or one for them all."""
    if fused and hooks:
        return (HookGroup(hooks[0].position, hooks),)
    return tuple(HookGroup(hook.node, (hook,)) for hook in hooks)


def discover_all(middleware: AgentMiddleware[Any, Any, Any]) -> list[Hook]:
    """Every hook ``middleware`` implements, each checked; a middleware that does nothing at
    all is warned about."""
    _check_method_names(middleware)
    found = [hook for p in ALL_HOOKS if (hook := discover(middleware, p))]
    if not found and _does_nothing(middleware):
        warnings.warn(
            f"'{middleware.name}' defines no hook, no tools and no state_schema, so it does "
            f"nothing; implement one of {', '.join((*NODE_HOOKS, *WRAP_HOOKS))} (or its async "
            f"twin) or {INPUT_HOOK}, or leave it out of the middleware list.",
            HooklessMiddlewareWarning,
            stacklevel=6,  # create_agent's caller, past its argument check
        )
    return found


def _check_method_names(middleware: AgentMiddleware[Any, Any, Any]) -> None:
    """Refuse a method named one typo away from a hook: it would silently never run."""
    mro = type(middleware).__mro__
    for klass in mro[: mro.index(AgentMiddleware)]:
        for attr, value in vars(klass).items():
            hook = near_hook(attr)
            if hook and (callable(value) or isinstance(value, staticmethod | classmethod)):
                raise MiddlewareError(
                    f"'{middleware.name}' defines {attr}(), which is not a hook and so never "
                    f"runs; rename it to {hook} (or, for a helper of your own, to a name "
                    "starting with an underscore)."
                )


def _does_nothing(middleware: AgentMiddleware[Any, Any, Any]) -> bool:
    return (
        not middleware.tools
        and middleware.state_schema is AgentState
        and type(middleware).validate_agent is AgentMiddleware.validate_agent
    )


def discover(middleware: AgentMiddleware[Any, Any, Any], position: str) -> Hook | None:
    """The hook ``position`` of ``middleware`` if its class overrides it (or its async twin) and
    the instance uses it."""
    if position in middleware._unused_hooks:
        return None
    cls = type(middleware)
    sync = _overridden(cls, position)
    asynchronous = None if position == INPUT_HOOK else _overridden(cls, "a" + position)
    if sync is None and asynchronous is None:
        return None
    declared: list[Any] = []
    for func in (sync, asynchronous):
        declared += getattr(func, "__can_jump_to__", None) or []
    targets = jump_targets(hook_label(middleware.name, position), declared or None, position)
    return Hook(
        middleware=middleware,
        position=position,
        sync=_checked(middleware, position) if sync else None,
        asynchronous=_checked(middleware, "a" + position) if asynchronous else None,
        can_jump_to=targets,
    )


def _checked(middleware: AgentMiddleware[Any, Any, Any], method: str) -> Any:
    label = hook_label(middleware.name, method)
    return checked_hook(label, method, getattr(middleware, method), bound=True)


def _overridden(cls: type, attr: str) -> Callable[..., Any] | None:
    func = getattr(cls, attr, None)
    if func is None or func is getattr(AgentMiddleware, attr):
        return None
    return func  # type: ignore[no-any-return]


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


def _routes(
    groups: tuple[tuple[HookGroup, ...], ...],
    has_tools: bool,
    return_direct: bool = False,
    loops: bool = False,
) -> tuple[str, dict[str, Route]]:
    """Chain each hook position to the next (``groups``: the nodes of each node hook position,
    in run order); the loop is model -> tools -> model."""
    before_agent, before_model, after_model, after_agent = groups
    loop_entry = before_model[0].node if before_model else MODEL_NODE
    exit_ = after_agent[0].node if after_agent else END
    routes: dict[str, Route] = {}

    # After the model (and its after_model hooks): tools for pending calls, the model again when
    # every call was answered in place, else the exit.
    loop = loop_entry if has_tools or loops else None
    turn_end = Route(exit_, to_tools=has_tools, loop=loop)

    def chain(groups: tuple[HookGroup, ...], last: Route, end: str) -> None:
        for i, group in enumerate(groups):
            jumps: dict[str, str] = {"end": end, "model": loop_entry, "tools": TOOLS_NODE}
            if not has_tools:
                del jumps["tools"]
            declared: Mapping[str, str] = MappingProxyType(
                {t: jumps[t] for t in group.can_jump_to if t in jumps}
            )
            nxt = Route(groups[i + 1].node) if i + 1 < len(groups) else last
            routes[group.node] = dataclasses.replace(nxt, jumps=declared)

    chain(before_agent, Route(loop_entry), exit_)
    chain(before_model, Route(MODEL_NODE), exit_)
    chain(after_model, turn_end, exit_)
    chain(after_agent, Route(END), END)
    routes[MODEL_NODE] = Route(after_model[0].node) if after_model else turn_end
    if has_tools:
        routes[TOOLS_NODE] = Route(loop_entry, exit=exit_ if return_direct else None)
    entry = before_agent[0].node if before_agent else loop_entry
    routes[START] = Route(entry)
    return entry, routes
