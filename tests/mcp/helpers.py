"""Helpers of the MCP tests: an agent over some tools, and what its tool answers say."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver

from graphagent import create_agent
from graphagent.agent import CompiledAgent
from graphagent.testing import ScriptedChatModel, calls

THREAD = {"configurable": {"thread_id": "t"}}


Call = tuple[str, dict[str, Any]]


def calling(tools: Sequence[BaseTool], *called: Call | list[Call], **options: Any) -> CompiledAgent:
    """An agent whose model makes each of ``called`` in turn (a list: those calls at once),
    then answers "done"."""
    replies: list[str | AIMessage] = [
        calls(*call) if isinstance(call, list) else calls(call) for call in called
    ]
    model = ScriptedChatModel([*replies, "done"])
    return create_agent(model, list(tools), **options)


def with_memory(
    tools: Sequence[BaseTool], *called: Call | list[Call], **options: Any
) -> CompiledAgent:
    """:func:`calling`, with a checkpointer (interrupts need one); run it with ``THREAD``."""
    return calling(tools, *called, checkpointer=InMemorySaver(), **options)


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def texts(message: ToolMessage) -> list[str]:
    """The text of each text block of ``message``."""
    assert isinstance(message.content, list), message.content
    return [b["text"] for b in message.content if isinstance(b, dict) and b["type"] == "text"]
