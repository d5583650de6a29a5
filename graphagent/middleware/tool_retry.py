"""``ToolRetryMiddleware``: run a tool again, with a growing wait, when it raises."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.typing import ContextT

from graphagent._core.bridge import Mode
from graphagent._core.options import refuse_unknown_arguments
from graphagent.middleware._kit.cores import ToolScopedCore
from graphagent.middleware._kit.retry import (
    Exhausted,
    OnFailure,
    RetryOn,
    RetryOptions,
    call_with_retries,
    failure_text,
    retry_by_default,
    retry_policy,
)
from graphagent.middleware._kit.tool_option import covers, tool_names
from graphagent.middleware.base import ToolResult
from graphagent.state import AgentState, ResponseT

__all__ = ["ToolRetryMiddleware"]


@refuse_unknown_arguments
class ToolRetryMiddleware(RetryOptions, ToolScopedCore[AgentState[Any], ContextT, ResponseT]):
    """Retry a failing tool call with exponential backoff.

    Each call of a covered tool is tried up to ``1 + max_retries`` times. Before retry ``n``
    (counting from 0) it waits ``initial_delay * backoff_factor ** n`` seconds, at most
    ``max_delay``, varied by up to ±25% when ``jitter`` is on. Errors ``retry_on`` rejects
    propagate at once; LangGraph control-flow signals (interrupts) always pass through untouched.

    Args:
        max_retries: Retries after the first attempt; 0 disables retrying.
        tools: The tools to retry, as names or tools; ``None`` covers every tool. A name the
            agent does not have fails when the agent is built.
        retry_on: Which errors are retried: a tuple of exception classes, or a function taking
            the exception and returning True to retry. The default retries every exception
            except provider errors marked as not retryable.
        on_failure: What happens when every attempt failed: ``"continue"`` answers the call
            with an error ``ToolMessage`` the model can read; ``"error"`` re-raises the last
            error; a function ``f(exc) -> str`` writes the ``ToolMessage`` text.
        backoff_factor: Each wait is this many times the previous one; 0 keeps every wait at
            ``initial_delay``.
        initial_delay: Seconds before the first retry; 0 retries at once.
        max_delay: The longest wait, in seconds (``math.inf`` for no cap).
        jitter: Vary each wait by up to ±25%, so calls that failed together do not retry
            together.

    Raises:
        MiddlewareError: An option of the wrong type or out of range.
    """

    def __init__(
        self,
        *,
        max_retries: int = 2,
        tools: Sequence[BaseTool | str] | None = None,
        retry_on: RetryOn = retry_by_default,
        on_failure: OnFailure = "continue",
        backoff_factor: float = 2.0,
        initial_delay: float = 1.0,
        max_delay: float = 60.0,
        jitter: bool = True,
    ) -> None:
        owner = type(self).__name__
        self._policy = retry_policy(
            owner,
            max_retries=max_retries,
            retry_on=retry_on,
            on_failure=on_failure,
            backoff_factor=backoff_factor,
            initial_delay=initial_delay,
            max_delay=max_delay,
            jitter=jitter,
        )
        # Not `self.tools`: on a middleware that attribute registers tools with the agent.
        self._covered = tool_names(owner, tools)

    async def _wrap_tool_call(
        self, mode: Mode, request: ToolCallRequest, handler: Callable[..., Any]
    ) -> ToolResult:
        """Run ``handler`` until it answers or the retries run out."""
        if not covers(self._covered, request.tool_call["name"]):
            result: ToolResult = await mode.call(handler, request)
            return result
        outcome = await call_with_retries(mode, self._policy, lambda: handler(request))
        return self._settle(request, outcome)

    def _settle(self, request: ToolCallRequest, outcome: ToolResult | Exhausted) -> ToolResult:
        if not isinstance(outcome, Exhausted):
            return outcome
        name = request.tool_call["name"]
        default = f"Tool '{name}' failed after {outcome.describe()}. Please try again."
        return ToolMessage(
            content=failure_text(self._policy, outcome, default),
            name=name,
            tool_call_id=request.tool_call["id"],
            status="error",
        )
