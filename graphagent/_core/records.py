"""The records every stage passes along: ``Hook``, ``HookGroup``, ``Route`` and ``Plan``.

``compile_plan`` (``graphagent._plan``) makes them, finished: checked, observed, with what later
stages need derived here. ``build_graph`` (``graphagent._graph``), the run-time code
(``graphagent._run``, ``graphagent.agent``) and ``explain`` read them. They are plain, frozen data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from graphagent._core.hooks import NODE_HOOKS, Position
from graphagent.errors import AsyncOnlyHookError, hook_label

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from graphagent._core.agent_facts import AgentFacts, Middleware
    from graphagent.state import JumpTo, MergedSchemas

MODEL_NODE = "model"
TOOLS_NODE = "tools"

Implemented = Literal["sync", "async", "both"]
"""Which implementations a hook has: its sync method, its async twin, or both."""


@dataclass(frozen=True, slots=True)
class Hook:
    """One implemented hook of one middleware."""

    middleware: Middleware
    position: Position
    """Which hook it is: ``before_model``, ``wrap_tool_call``... (``POSITIONS``)."""
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
    def mode(self) -> Implemented:
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
    def position(self) -> Position:
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
    ``exit``, there when a ``return_direct`` tool was called or the turn gave the structured
    response; otherwise ``default``.
    """

    default: str
    jumps: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    to_tools: bool = False
    loop: str | None = None
    exit: str | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    """What will run, in what order, and how the nodes connect."""

    middleware: tuple[Middleware, ...]
    hooks: Mapping[Position, tuple[Hook, ...]]
    """Every position's hooks in execution order: ``before_*`` and wrap hooks in list order
    (the first wrap hook outermost), ``after_*`` reversed. Every position has an entry."""
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
    answer_malformed: bool = False
    """Whether the model node answers malformed tool calls itself and asks the model again
    (``create_agent(answer_malformed_tool_calls=...)``); the routes are laid out for it."""
    transformers: tuple[Callable[[tuple[str, ...]], Any], ...] = ()
    """The stream transformers the agent registers, in order, each once (``_plan/transformers``)."""
    prompt_caching: bool = True
    """Whether each model call is shaped for its provider to cache the prefix."""

    @property
    def node_hooks(self) -> tuple[Hook, ...]:
        """Every node hook, in the order a run meets them."""
        return tuple(hook for position in NODE_HOOKS for hook in self.hooks[position])

    @property
    def groups(self) -> tuple[HookGroup, ...]:
        """The nodes running node hooks, in the order a run meets them."""
        return tuple(
            group for position in NODE_HOOKS for group in grouped(self.hooks[position], self.fused)
        )

    @property
    def groups_as_drawn(self) -> tuple[HookGroup, ...]:
        """The hook nodes in the order LangChain adds them, which is the order drawings list them:
        middleware by middleware, each one's hooks in run order (``before_agent`` to
        ``after_agent``). Fused nodes, one per position, come in run order."""
        if self.fused:
            return self.groups
        rank = {id(item): i for i, item in enumerate(self.middleware)}
        return tuple(
            sorted(
                self.groups,
                key=lambda g: (rank[id(g.hooks[0].middleware)], NODE_HOOKS.index(g.position)),
            )
        )

    @property
    def offered(self) -> tuple[BaseTool | dict[str, Any], ...]:
        """The tools offered to the model: the agent's to execute, then the provider's."""
        return (*self.tools, *self.provider_tools)

    @property
    def return_direct(self) -> Mapping[str, bool]:
        """Whether each tool ends the run with its result (``return_direct``)."""
        return MappingProxyType({t.name: bool(t.return_direct) for t in self.tools})

    @property
    def after_tools(self) -> frozenset[str]:
        """The nodes that may run right after the tools: where a deferred handoff happens."""
        route = self.routes.get(TOOLS_NODE)
        if route is None:
            return frozenset()
        return frozenset(n for n in (route.default, route.exit) if n)


def grouped(hooks: tuple[Hook, ...], fused: bool) -> tuple[HookGroup, ...]:
    """The nodes of one position's hooks: one per hook, or one for them all."""
    if fused and hooks:
        return (HookGroup(hooks[0].position, hooks),)
    return tuple(HookGroup(hook.node, (hook,)) for hook in hooks)


def async_only_error(hooks: Sequence[Hook]) -> AsyncOnlyHookError | None:
    """The error a synchronous run must raise because some of ``hooks`` are async-only."""
    async_only = [h for h in hooks if h.sync is None]
    return async_only_hook_error(async_only[0]) if async_only else None


def async_only_hook_error(hook: Hook) -> AsyncOnlyHookError:
    """The error for ``hook``, which has no sync implementation, met by a synchronous run."""
    position = hook.position
    return AsyncOnlyHookError(
        f"Synchronous implementation of {position} is not available: {hook.label} has only an "
        f"async implementation (a{position}), so it cannot run under invoke()/stream(); run the "
        f"agent with ainvoke()/astream(), or also define {position}."
    )
