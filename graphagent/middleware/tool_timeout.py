"""``ToolTimeoutMiddleware``: give tool calls a time limit, and answer one that runs past it."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.typing import ContextT

from graphagent._core.bridge import Mode, TimedOut
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import GraphAgentError, MiddlewareError, MiddlewareTypeError
from graphagent.middleware._kit.cores import ToolScopedCore
from graphagent.middleware._kit.tool_option import covers, tool_names
from graphagent.middleware.base import ToolResult
from graphagent.state import AgentState, ResponseT

__all__ = ["ToolTimeoutError", "ToolTimeoutMiddleware"]

_ON_TIMEOUT = ("continue", "error")


class ToolTimeoutError(GraphAgentError, TimeoutError):
    """A tool call ran past the time limit of a ``ToolTimeoutMiddleware(on_timeout="error")``.

    Args:
        message: What happened: the middleware, the tool and the limit.
        tool_name: The tool whose call timed out.
        seconds: The time limit it ran past.
    """

    def __init__(self, message: str, *, tool_name: str, seconds: float) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.seconds = seconds


@refuse_unknown_arguments
class ToolTimeoutMiddleware(ToolScopedCore[AgentState[Any], ContextT, ResponseT]):
    """Give each call of the covered tools ``timeout`` seconds; a call still running then is
    answered with an error ``ToolMessage`` (``status="error"``) saying it timed out and after
    how long, and the run goes on.

    What happens to the call itself depends on the tool. An async tool is cancelled (its next
    ``await`` raises ``CancelledError``). A sync tool cannot be stopped: in a sync run
    (``invoke``/``stream``) each covered call runs in one of graphagent's own threads, which the
    call's task stops waiting for; in an async run it runs in the event loop's executor, as
    every sync tool does. Either way the thread runs the tool to its end, unobserved, and its
    result is dropped, so a tool with side effects may still have them after the model was told
    it timed out. Give such tools their own time limits (a client timeout) where they have one.

    The time limit covers what runs beneath this middleware: the tool, and the ``wrap_tool_call``
    hooks listed after it. List it after ``ToolRetryMiddleware`` to limit each attempt, before
    it to limit all attempts together.

    Args:
        timeout: Seconds each call may take, a number > 0.
        tools: The tools to limit, as names or tools; ``None`` covers every tool. A name the
            agent does not have fails when the agent is built.
        on_timeout: ``"continue"`` (the default) answers the call with an error ``ToolMessage``
            the model can read; ``"error"`` raises :class:`ToolTimeoutError` instead (a
            ``TimeoutError``), for a ``ToolRetryMiddleware`` or ``ToolErrorMiddleware`` listed
            before this one, or the caller, to handle.

    Raises:
        MiddlewareError: A ``timeout`` that is not a number > 0, an empty ``tools`` list, or an
            ``on_timeout`` other than ``"continue"`` and ``"error"``.
    """

    def __init__(
        self,
        timeout: float,
        *,
        tools: Sequence[BaseTool | str] | None = None,
        on_timeout: Literal["continue", "error"] = "continue",
    ) -> None:
        owner = type(self).__name__
        self.timeout = _check_timeout(owner, timeout)
        if on_timeout not in _ON_TIMEOUT:
            raise MiddlewareError(
                f"{owner}(on_timeout={on_timeout!r}): on_timeout must be 'continue' (answer the "
                "call with an error ToolMessage) or 'error' (raise ToolTimeoutError)."
            )
        self.on_timeout = on_timeout
        # Not `self.tools`: on a middleware that attribute registers tools with the agent.
        self._covered = tool_names(owner, tools, empty_ok=False)

    async def _wrap_tool_call(
        self, mode: Mode, request: ToolCallRequest, handler: Callable[..., Any]
    ) -> ToolResult:
        """Run ``handler`` within the time limit; answer the call when it runs past it."""
        result: ToolResult
        name = request.tool_call["name"]
        if not covers(self._covered, name):
            result = await mode.call(handler, request)
            return result
        try:
            result = await mode.call_within(self.timeout, handler, request)
        except TimedOut:
            what = f"Tool '{name}' timed out after {_seconds(self.timeout)}"
            if self.on_timeout == "error":
                raise ToolTimeoutError(
                    f"{self.name}: {what}", tool_name=name, seconds=self.timeout
                ) from None
            return ToolMessage(
                content=f"{what}, and its result was discarded. Try a smaller request, or a "
                "different approach.",
                name=name,
                tool_call_id=request.tool_call["id"],
                status="error",
            )
        return result


def _check_timeout(owner: str, timeout: Any) -> float:
    number = isinstance(timeout, int | float) and not isinstance(timeout, bool)
    if number and timeout > 0 and math.isfinite(timeout):
        return float(timeout)
    error = MiddlewareError if number else MiddlewareTypeError
    raise error(
        f"{owner}(timeout={timeout!r}): timeout must be a finite number of seconds > 0, e.g. "
        f"{owner}(timeout=30); to leave a tool without a limit, leave it out of tools=[...]."
    )


def _seconds(seconds: float) -> str:
    return "1 second" if seconds == 1 else f"{seconds:g} seconds"
