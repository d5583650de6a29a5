"""``ToolErrorMiddleware``: hand tool exceptions back to the model as error ToolMessages."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeAlias

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.typing import ContextT

from graphagent._core.bridge import Mode
from graphagent._core.langgraph_internals import is_control_flow
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import (
    AsyncOnlyHookError,
    HookReturnError,
    MiddlewareError,
    MiddlewareTypeError,
)
from graphagent.middleware._kit.cores import ToolScopedCore
from graphagent.middleware._kit.tool_option import covers, note_unknown, tool_names
from graphagent.middleware.base import AgentFacts, ToolResult
from graphagent.middleware.trace_policy import TracePolicy, omit_payload
from graphagent.state import AgentState, ResponseT

__all__ = ["AOnError", "ErrorContent", "OnError", "ToolErrorMiddleware", "error_type_message"]

logger = logging.getLogger(__name__)

ErrorContent: TypeAlias = str | list[str | dict[str, Any]]
"""What a handler returns to report an error: text, or a list of content blocks."""

OnError: TypeAlias = Callable[[Exception, ToolCallRequest], ErrorContent | None]
"""``on_error(exc, request)``: content for an error ToolMessage, or ``None`` to re-raise."""

AOnError: TypeAlias = Callable[[Exception, ToolCallRequest], Awaitable[ErrorContent | None]]
"""Async twin of :data:`OnError`, used by ``ainvoke``/``astream`` runs."""


@refuse_unknown_arguments
class ToolErrorMiddleware(ToolScopedCore[AgentState[Any], ContextT, ResponseT]):
    """Turn exceptions raised by tools into error ToolMessages the model can react to.

    Interrupts and other LangGraph control-flow exceptions always pass through untouched.

    Args:
        on_error: ``on_error(exc, request)`` decides: return text (or content blocks) and the
            model receives it as ``ToolMessage(status="error")``; return ``None`` and the
            exception propagates. :func:`error_type_message` is a safe choice: it names the
            tool and the exception *type* only, never the exception's text, which may carry
            secrets or internal detail.
        aon_error: The async handler, used by ``ainvoke``/``astream`` runs (which fall back to
            ``on_error`` without one). Given alone, a tool failing in a sync run raises
            ``AsyncOnlyHookError`` (a ``RuntimeError``).
        tools: The tools whose errors are handled, as names or tools; ``None`` covers every
            tool. A name the agent does not have never applies (noted on the ``graphagent``
            logger at ``INFO`` when the agent is built).

    Raises:
        MiddlewareError: Neither handler is given (a ``ValueError``, as in LangChain).
        MiddlewareTypeError: A handler that is not callable.
    """

    trace_policy = TracePolicy(process_inputs=omit_payload)
    """Hook traces keep their timing but not the request (its messages are on the call's span)."""

    def __init__(
        self,
        on_error: OnError | None = None,
        *,
        aon_error: AOnError | None = None,
        tools: Sequence[BaseTool | str] | None = None,
    ) -> None:
        _check_callable("on_error", on_error)
        _check_callable("aon_error", aon_error)
        if on_error is None and aon_error is None:
            raise MiddlewareError(
                "ToolErrorMiddleware requires on_error and/or aon_error: pass a function "
                "on_error(exc, request) returning the text the model reads, e.g. "
                "on_error=error_type_message (the tool's name and the exception type only)."
            )
        self.on_error = on_error
        self.aon_error = aon_error
        # Not `self.tools`: on a middleware that attribute registers tools with the agent.
        self._covered = tool_names("ToolErrorMiddleware", tools)
        if self._covered == frozenset():
            logger.info("ToolErrorMiddleware: tools=[] covers no tool, so it handles no error")

    def validate_agent(self, agent: AgentFacts) -> None:
        """Note names in ``tools`` that are not tools the agent executes: they never apply."""
        note_unknown(self.name, "tools", self._covered, agent)

    async def _wrap_tool_call(
        self, mode: Mode, request: ToolCallRequest, handler: Callable[..., Any]
    ) -> ToolResult:
        """Run the tool; report an exception to the model when the error handler gives content
        (``aon_error`` in async runs if given, else ``on_error``)."""
        result: ToolResult
        if not covers(self._covered, _called_name(request)):
            result = await mode.call(handler, request)
            return result
        try:
            result = await mode.call(handler, request)
        except Exception as exc:
            if is_control_flow(exc):
                raise
            if mode.asynchronous and self.aon_error is not None:
                content = await self.aon_error(exc, request)
            elif self.on_error is not None:
                content = self.on_error(exc, request)
            else:
                raise AsyncOnlyHookError(
                    "ToolErrorMiddleware has no sync `on_error`: it was given only aon_error, "
                    "which cannot run under invoke()/stream(); also pass on_error=..., or run "
                    "the agent with ainvoke()/astream()."
                ) from exc
            reply = self._reply(exc, request, content)
            if reply is None:
                raise
            return reply
        return result

    def _reply(
        self, exc: Exception, request: ToolCallRequest, content: ErrorContent | None
    ) -> ToolMessage | None:
        """The error ToolMessage for ``content``, or ``None`` (re-raise) when there is none."""
        if content is None:
            return None
        if not isinstance(content, str | list):
            raise HookReturnError(
                f"{self.name}'s error handler returned {type(content).__name__}; return a str "
                "(or a list of content blocks) to send the error to the model, or None to "
                "re-raise it."
            ) from exc
        name = _called_name(request)
        logger.debug(
            "Tool %r raised; the model receives an error message instead", name, exc_info=exc
        )
        return ToolMessage(
            content=content, tool_call_id=request.tool_call["id"], name=name, status="error"
        )


def error_type_message(exc: Exception, request: ToolCallRequest) -> str:
    """An ``on_error`` handler that tells the model which tool failed and the exception's type,
    never its text (which may carry secrets or internal detail); the exception is logged at
    ``DEBUG`` for developers."""
    return (
        f"Tool '{_called_name(request)}' failed with {type(exc).__name__}. Check the arguments "
        "and call it again with corrected ones, or try a different approach."
    )


def _called_name(request: ToolCallRequest) -> str:
    return request.tool.name if request.tool is not None else request.tool_call["name"]


def _check_callable(parameter: str, value: object) -> None:
    if value is not None and not callable(value):
        raise MiddlewareTypeError(
            f"ToolErrorMiddleware({parameter}=...) got {value!r} ({type(value).__name__}), which "
            f"is not callable; pass a function {parameter}(exc, request) returning a str, or None "
            "to re-raise."
        )
