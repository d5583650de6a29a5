"""The tools an agent executes, as the model call checks what hooks offer the model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.tools import BaseTool

from graphagent.errors import UnregisteredToolError


class ToolRegistry:
    """The tools the agent executes, and the check on unregistered ones hooks offer the model.

    A ``wrap_model_call`` hook may offer the model a tool the agent does not have; only a
    ``wrap_tool_call`` hook can execute it (``request.override(tool=...)``). A call to it that no
    hook executes is answered, like a call to any unknown tool, with an error ``ToolMessage``
    naming the tools the agent has, as in LangChain.
    """

    def __init__(self, tools: Sequence[BaseTool], wrapped: bool) -> None:
        self.names = frozenset(t.name for t in tools)
        self.wrapped = wrapped

    def check_offered(self, tools: Sequence[Any]) -> None:
        """Refuse unregistered tools among ``tools`` when no hook could execute them."""
        if self.wrapped:
            return
        offered = [t.name for t in tools if isinstance(t, BaseTool) and t.name not in self.names]
        if offered:
            raise UnregisteredToolError(_unregistered(offered, sorted(self.names)))


def _unregistered(unknown: list[str], registered: list[str]) -> str:
    # LangChain's opening lines, then what happened and the fix.
    return (
        "Middleware added tools that the agent doesn't know how to execute. "
        f"Unknown tools: {unknown}. Registered tools: {registered}. A wrap_model_call hook "
        "offered them to the model, but the agent cannot execute them and has no wrap_tool_call "
        "hook; register them (create_agent(tools=...) or a middleware's `tools`), or execute "
        "them in a wrap_tool_call hook with request.override(tool=...)."
    )
