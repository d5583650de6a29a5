"""Wrap hooks written once: a built-in defines one core per wrap hook, and these bases derive the
public sync and async hooks from it.

A core is an ``async def`` taking a :class:`~graphagent._core.bridge.Mode` first; it calls the
handler with ``mode.call`` and does everything else that differs between runs through the mode
too. The sync hook drives it with ``run_sync`` (so it never suspends), the async hook awaits it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from langgraph.typing import ContextT

from graphagent._core.bridge import ASYNC, SYNC, Mode, run_sync
from graphagent.errors import hook_label
from graphagent.middleware._kit.tool_option import check_known
from graphagent.middleware.base import AgentFacts, AgentMiddleware, StateT, ToolResult
from graphagent.requests import ModelCallResult, ModelRequest, ModelResponse
from graphagent.state import ResponseT

if TYPE_CHECKING:
    from langgraph.prebuilt.tool_node import ToolCallRequest


class ModelCallCore(AgentMiddleware[StateT, ContextT, ResponseT]):
    """A middleware whose ``wrap_model_call`` behaviour is one core, :meth:`_wrap_model_call`."""

    async def _wrap_model_call(
        self, mode: Mode, request: ModelRequest[ContextT], handler: Callable[..., Any]
    ) -> ModelCallResult:
        raise NotImplementedError

    def wrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], ModelResponse],
    ) -> ModelCallResult:
        """Surround each model call with this middleware's behaviour (see the class)."""
        where = hook_label(self.name, "wrap_model_call")
        return run_sync(self._wrap_model_call(SYNC, request, handler), where)

    async def awrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], Awaitable[ModelResponse]],
    ) -> ModelCallResult:
        """Async twin of :meth:`wrap_model_call`: the same behaviour, nothing blocking the loop."""
        return await self._wrap_model_call(ASYNC, request, handler)


class ToolCallCore(AgentMiddleware[StateT, ContextT, ResponseT]):
    """A middleware whose ``wrap_tool_call`` behaviour is one core, :meth:`_wrap_tool_call`."""

    async def _wrap_tool_call(
        self, mode: Mode, request: ToolCallRequest, handler: Callable[..., Any]
    ) -> ToolResult:
        raise NotImplementedError

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolResult],
    ) -> ToolResult:
        """Surround each tool call with this middleware's behaviour (see the class)."""
        where = hook_label(self.name, "wrap_tool_call")
        return run_sync(self._wrap_tool_call(SYNC, request, handler), where)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        """Async twin of :meth:`wrap_tool_call`: the same behaviour, nothing blocking the loop."""
        return await self._wrap_tool_call(ASYNC, request, handler)


class ToolScopedCore(ToolCallCore[StateT, ContextT, ResponseT]):
    """A ``ToolCallCore`` whose ``tools=`` option limits it to some tools: the names parsed once
    (``_covered``, by :func:`~graphagent.middleware._kit.tool_option.tool_names`), and their check
    against the agent it is built into."""

    _covered: frozenset[str] | None = None

    @property
    def covered_tools(self) -> frozenset[str] | None:
        """Names of the tools this middleware acts on (``None``: every tool)."""
        return self._covered

    def validate_agent(self, agent: AgentFacts) -> None:
        """Reject names in ``tools`` that are not tools the agent executes."""
        check_known(self.name, "tools", self._covered, agent)
