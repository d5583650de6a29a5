"""The errors ``graphagent.mcp`` raises itself."""

from __future__ import annotations

from typing import Any

from langgraph.errors import GraphBubbleUp

from graphagent.errors import GraphAgentError, ResumeError

__all__ = ["MCPConnectionError", "MCPElicitationAnswerError"]


class MCPConnectionError(GraphAgentError, RuntimeError):
    """An MCP server could not be reached: the message names the server (its name in a group,
    its URL, its command or the in-process server) and what went wrong. A ``RuntimeError``, as
    FastMCP's own connection failures are, so existing ``except RuntimeError`` clauses still
    catch it.

    Args:
        message: What failed, for which server, and what to check.
        servers: The servers that could not be reached, as the message describes them.
    """

    def __init__(self, message: str, *, servers: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.servers = servers

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (str(self),), self.__dict__


class MCPElicitationAnswerError(ResumeError):
    """A resume value that does not answer the open MCP elicitation: a request without an
    answer, an action other than accept, decline or cancel, or form content that does not fit the
    server's schema. Nothing was sent to the server and nothing was saved, so the same question
    can be answered again with another ``Command(resume=...)``.

    Args:
        message: What is wrong with the answer and how to fix it.
        tool_name: The MCP tool whose call waits for the answer.
    """

    def __init__(self, message: str, *, tool_name: str | None = None) -> None:
        super().__init__(message)
        self.tool_name = tool_name

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (str(self),), self.__dict__


class _RaisedInToolCall(MCPElicitationAnswerError, GraphBubbleUp):
    """The :class:`MCPElicitationAnswerError` raised inside the tool call. As LangGraph control
    flow it passes every ``wrap_tool_call`` layer untouched (a retry or an error handler cannot
    take a bad answer for a tool failure), and LangGraph saves nothing for the call, so its
    question stays open. It shows, and pickles, as :class:`MCPElicitationAnswerError`."""

    def __reduce__(self) -> tuple[Any, ...]:
        return MCPElicitationAnswerError, (str(self),), self.__dict__


_RaisedInToolCall.__name__ = _RaisedInToolCall.__qualname__ = "MCPElicitationAnswerError"


def answer_error(message: str, *, tool_name: str) -> MCPElicitationAnswerError:
    """The error for a bad answer to an open elicitation (see :class:`_RaisedInToolCall`)."""
    return _RaisedInToolCall(message, tool_name=tool_name)
