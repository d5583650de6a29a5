"""``langchain.tools`` without LangChain: langchain-core's tool types and langgraph's injected
arguments."""

from langchain_core.tools import (
    BaseTool,
    InjectedToolArg,
    InjectedToolCallId,
    ToolException,
    tool,
)
from langgraph.prebuilt import InjectedState, InjectedStore, ToolRuntime

__all__ = [
    "BaseTool",
    "InjectedState",
    "InjectedStore",
    "InjectedToolArg",
    "InjectedToolCallId",
    "ToolException",
    "ToolRuntime",
    "tool",
]
