"""graphagent: LLM agents compiled to LangGraph graphs, extended by middleware."""

from graphagent import _version
from graphagent._langchain.install import install_as_langchain
from graphagent.agent import AgentRuntime, CompiledAgent
from graphagent.composition import add_agent, as_tool, handoff_tool
from graphagent.errors import (
    AgentInputError,
    AsyncOnlyHookError,
    CompositionError,
    DuplicateMiddlewareError,
    GraphAgentError,
    HookReturnError,
    LangChainImportedError,
    MalformedToolCallError,
    MiddlewareError,
    MisnamedHookWarning,
    RateLimitWaitError,
    ResumeError,
    RunawayRunError,
    StateSchemaConflictError,
    ToolSelectionError,
    UnregisteredToolError,
    deprecated_name as _deprecated_name,
)
from graphagent.explain import explain
from graphagent.factory import create_agent
from graphagent.limits import RateLimits, ToolLimits
from graphagent.models import ConfigurableChatModel, MissingIntegrationError, init_chat_model
from graphagent.state import AgentState

__version__ = _version.installed_version()

__all__ = [
    "AgentInputError",
    "AgentRuntime",
    "AgentState",
    "AsyncOnlyHookError",
    "CompiledAgent",
    "CompositionError",
    "ConfigurableChatModel",
    "DuplicateMiddlewareError",
    "GraphAgentError",
    "HookReturnError",
    "LangChainImportedError",
    "MalformedToolCallError",
    "MiddlewareError",
    "MisnamedHookWarning",
    "MissingIntegrationError",
    "RateLimitWaitError",
    "RateLimits",
    "ResumeError",
    "RunawayRunError",
    "StateSchemaConflictError",
    "ToolLimits",
    "ToolSelectionError",
    "UnregisteredToolError",
    "add_agent",
    "as_tool",
    "create_agent",
    "explain",
    "handoff_tool",
    "init_chat_model",
    "install_as_langchain",
]


def __getattr__(name: str) -> type[Warning]:
    """Deprecated names, which still import with a ``DeprecationWarning``."""
    return _deprecated_name(__name__, name, stacklevel=2)
