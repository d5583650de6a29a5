"""What the engine tells a middleware about its agent, and what a tool call gives back.

``AgentFacts`` is what ``validate_agent`` checks when an agent is built; ``running_agent()`` gives
the facts of the agent whose node hook is running. They are the engine's records, made by
``compile_plan`` and set by the nodes; ``graphagent.middleware.base`` shows them to middleware
authors under the same names.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command

from graphagent._core.options import refuse_unknown_arguments

if TYPE_CHECKING:
    from langgraph.types import TracePolicy

    from graphagent._core.observe import HookObserver

__all__ = ["RUNNING_AGENT", "AgentFacts", "Middleware", "ToolCallResult", "running_agent"]


@refuse_unknown_arguments
@dataclass(frozen=True, slots=True)
class AgentFacts:
    """What a middleware may check about the agent it is built into."""

    tools: tuple[BaseTool, ...]
    """Every tool the agent executes (its own and all middleware's)."""
    checkpointer: bool
    """Whether ``create_agent`` got a checkpointer (a parent graph may still provide one)."""
    provider_tools: tuple[dict[str, Any], ...] = ()
    """Provider-side tools (dicts) offered to the model but executed by the provider."""
    checkpointing_disabled: bool = False
    """``create_agent(checkpointer=False)``: the agent never persists, not even under a parent
    graph that has a checkpointer (``checkpointer=None`` may still inherit one)."""

    @property
    def tool_names(self) -> frozenset[str]:
        """The names of every tool the model is offered, named provider tools included."""
        named = (t.get("name") for t in self.provider_tools)
        return frozenset(tool.name for tool in self.tools) | {n for n in named if n}


RUNNING_AGENT: ContextVar[AgentFacts | None] = ContextVar("graphagent_agent", default=None)
"""Set by the node running a hook to the facts of that hook's agent."""


def running_agent() -> AgentFacts | None:
    """The facts of the agent whose node hook is running (``None`` outside one).

    A middleware instance may serve several agents; what ``validate_agent`` saw is the last
    agent built, while this is the one running now.
    """
    return RUNNING_AGENT.get()


ToolCallResult = ToolMessage | Command[Any]
"""What answers one tool call: what the tool node's innermost handler returns, and what every
``wrap_tool_call`` layer returns (``graphagent.middleware.base`` calls it ``ToolResult``)."""


class Middleware(Protocol):
    """What the engine reads of a middleware once the plan holds it: ``AgentMiddleware`` (in
    ``graphagent.middleware.base``) is one. The engine's records type against this, so ``_core``
    needs nothing of the public middleware module."""

    @property
    def name(self) -> str: ...

    @property
    def order(self) -> int: ...

    @property
    def trace_policy(self) -> TracePolicy | None: ...

    def _hook_observer(self) -> HookObserver | None: ...
