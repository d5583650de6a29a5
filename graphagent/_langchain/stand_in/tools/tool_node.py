"""``langchain.tools.tool_node`` without LangChain: langgraph's tool-node types."""

from langgraph.prebuilt import InjectedState, InjectedStore, ToolRuntime
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolCallWithContext, ToolCallWrapper

__all__ = [
    "InjectedState",
    "InjectedStore",
    "ToolCallRequest",
    "ToolCallWithContext",
    "ToolCallWrapper",
    "ToolRuntime",
]
