"""``AgentRuntime``: what a ``wrap_agent`` hook gets as ``runtime``, and the default agent name."""

from __future__ import annotations

from dataclasses import dataclass

from langgraph.runtime import Runtime
from langgraph.typing import ContextT

DEFAULT_AGENT_NAME = "LangGraph"
"""The name of an agent built without ``create_agent(name=...)``."""


# Runtime is a frozen dataclass too, declared through a kwargs dict mypy cannot read.
@dataclass(kw_only=True, slots=True, frozen=True)
class AgentRuntime(Runtime[ContextT]):  # type: ignore[misc]
    """What a ``wrap_agent`` hook gets as ``runtime``: LangGraph's ``Runtime`` (the run's
    ``context``, the agent's ``store``) plus the name of the agent being run."""

    agent_name: str = DEFAULT_AGENT_NAME
    """The ``name`` given to ``create_agent``, or ``"LangGraph"`` (as in LangChain) without one."""
