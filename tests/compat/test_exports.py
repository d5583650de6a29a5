"""LangChain 1.5's public names: everything ``langchain.agents``,
``langchain.agents.middleware`` and ``langchain.agents.middleware.types`` (their ``__all__``),
``langchain.agents.structured_output`` and ``langchain.chat_models`` export exists in graphagent
where the migration guide says, and is of the same kind (function, class generic in as many type
parameters, type variable, alias), so code moves over by changing its imports. The lists are
LangChain 1.5.2's (the same as 1.5.0's), and ``langchain.mcp``'s (with its ``adapter``, ``tools``
and ``elicitation`` modules) LangChain 1.5.2's, written out: graphagent never imports
``langchain``."""

from __future__ import annotations

import importlib
from typing import TypeVar, get_origin

import pytest

AGENTS = ("create_agent", "AgentState")

MIDDLEWARE = (
    *("AgentMiddleware", "AgentState", "InputAgentState", "OutputAgentState", "Runtime"),
    *("ModelRequest", "ModelResponse", "ModelCallResult", "ExtendedModelResponse"),
    *("ToolCallRequest", "hook_config", "dynamic_prompt"),
    *("before_agent", "before_model", "after_model", "after_agent"),
    *("wrap_model_call", "wrap_tool_call"),
    *("TracePolicy", "configure_trace_policy", "omit_payload"),
    *("ModelRetryMiddleware", "ToolRetryMiddleware", "ModelFallbackMiddleware"),
    *("ModelCallLimitMiddleware", "ToolCallLimitMiddleware", "ToolErrorMiddleware"),
    *("SummarizationMiddleware", "TriggerClause", "ContextEditingMiddleware", "ClearToolUsesEdit"),
    *("TodoListMiddleware", "LLMToolSelectorMiddleware", "LLMToolEmulator"),
    *("PIIMiddleware", "PIIMatch", "PIIDetectionError", "RedactionRule"),
    *("HumanInTheLoopMiddleware", "InterruptOnConfig", "ModelRefusalMiddleware"),
    *("ShellToolMiddleware", "HostExecutionPolicy", "DockerExecutionPolicy"),
    *("CodexSandboxExecutionPolicy", "FilesystemFileSearchMiddleware"),
    *("ModelRouterMiddleware", "ModelChoice", "AutoModeMiddleware"),
    "ProviderToolSearchMiddleware",
)

TYPES = (
    *("AgentMiddleware", "AgentState", "ContextT", "ExtendedModelResponse", "InputAgentState"),
    *("ModelCallResult", "ModelRequest", "ModelResponse", "OmitFromSchema", "OutputAgentState"),
    *("ResponseT", "StateT_co", "ToolCallRequest", "ToolCallWrapper", "TracePolicy"),
    *("after_agent", "after_model", "before_agent", "before_model", "dynamic_prompt"),
    *("hook_config", "omit_payload", "wrap_tool_call"),
)

STRUCTURED_OUTPUT = (
    *("ToolStrategy", "ProviderStrategy", "AutoStrategy", "ResponseFormat"),
    *("StructuredOutputError", "StructuredOutputValidationError"),
    *("MultipleStructuredOutputsError", "OutputToolBinding", "ProviderStrategyBinding"),
)

INTERNAL_CALLS = ("INTERNAL_CALL_METADATA_KEY", "InternalCallTransformer", "internal_call_metadata")

MCP = ("MCPAdapter", "MCPToolArtifact", "as_langchain_tool")
MCP_ADAPTER = ("MCPAdapter", "MCPAdapterTarget")
MCP_TOOLS = ("MCPToolArtifact", "as_langchain_tool")
MCP_ELICITATION = (
    *("ELICITATION_INTERRUPT_TYPE", "MCPElicitationAccept", "MCPElicitationCancel"),
    *("MCPElicitationDecline", "MCPElicitationFormRequest", "MCPElicitationInterrupt"),
    *("MCPElicitationRequest", "MCPElicitationResponse", "MCPElicitationResume"),
    *("MCPElicitationUrlRequest", "MCPFormContent"),
)

WHERE = [
    *(("graphagent", name) for name in AGENTS),
    *(("graphagent.middleware", name) for name in MIDDLEWARE),
    *(("graphagent.middleware", name) for name in TYPES),
    *(("graphagent.middleware.types", name) for name in TYPES),
    *(("graphagent.structured_output", name) for name in STRUCTURED_OUTPUT),
    ("graphagent", "init_chat_model"),
    *(("graphagent.middleware.internal_call_transformer", name) for name in INTERNAL_CALLS),
    *(("graphagent.mcp", name) for name in MCP),
    *(("graphagent.mcp.adapter", name) for name in MCP_ADAPTER),
    *(("graphagent.mcp.tools", name) for name in MCP_TOOLS),
    *(("graphagent.mcp.elicitation", name) for name in MCP_ELICITATION),
]


def test_the_lists_hold_all_fifty_names_of_langchains_middleware_all() -> None:
    assert len(set(MIDDLEWARE)) == len(MIDDLEWARE) == 50
    assert len(set(TYPES)) == len(TYPES) == 23


@pytest.mark.parametrize(("module", "name"), WHERE)
def test_each_langchain_name_is_exported(module: str, name: str) -> None:
    exported = importlib.import_module(module)

    assert name in exported.__all__
    assert getattr(exported, name) is not None


def test_graphagent_mcp_exports_langchain_mcps_names_and_no_more() -> None:
    mcp = importlib.import_module("graphagent.mcp")
    elicitation = importlib.import_module("graphagent.mcp.elicitation")

    assert sorted(mcp.__all__) == sorted(MCP)
    assert sorted(elicitation.__all__) == sorted(MCP_ELICITATION)


def test_import_star_brings_every_middleware_name() -> None:
    namespace: dict[str, object] = {}
    exec("from graphagent.middleware import *", namespace)  # the line LangChain users write

    assert set(MIDDLEWARE) - set(namespace) == set()


def _kind(value: object) -> str:
    """What a name is, as code that uses it sees: a function, a class (generic in how many type
    parameters), a type variable, a type alias."""
    if isinstance(value, TypeVar):
        return "TypeVar"
    if isinstance(value, type):
        parameters = getattr(value, "__parameters__", ())
        return (
            f"generic[{len(parameters)}]"
            if isinstance(parameters, tuple) and parameters
            else "class"
        )
    if get_origin(value) is not None:
        return "alias"
    return "function" if callable(value) else "constant"


def _kinds(kind: str, names: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), kind)


# What each name is in LangChain 1.5.2, written out (graphagent never imports langchain).
MIDDLEWARE_KINDS = {
    **_kinds("generic[3]", "AgentMiddleware HumanInTheLoopMiddleware"),
    **_kinds(
        "generic[1]",
        "AgentState ExtendedModelResponse LLMToolEmulator ModelRequest ModelResponse "
        "OutputAgentState Runtime",
    ),
    **_kinds(
        "generic[2]",
        "AutoModeMiddleware ContextEditingMiddleware FilesystemFileSearchMiddleware "
        "LLMToolSelectorMiddleware ModelCallLimitMiddleware ModelFallbackMiddleware "
        "ModelRefusalMiddleware ModelRetryMiddleware PIIMiddleware ProviderToolSearchMiddleware "
        "ShellToolMiddleware SummarizationMiddleware TodoListMiddleware ToolCallLimitMiddleware "
        "ToolErrorMiddleware ToolRetryMiddleware",
    ),
    **_kinds(
        "class",
        "ClearToolUsesEdit CodexSandboxExecutionPolicy DockerExecutionPolicy HostExecutionPolicy "
        "InputAgentState InterruptOnConfig ModelChoice ModelRouterMiddleware PIIDetectionError "
        "PIIMatch RedactionRule ToolCallRequest TracePolicy TriggerClause",
    ),
    **_kinds("alias", "ModelCallResult"),
    **_kinds(
        "function",
        "after_agent after_model before_agent before_model configure_trace_policy dynamic_prompt "
        "hook_config omit_payload wrap_model_call wrap_tool_call",
    ),
}
TYPES_KINDS = {
    **{name: MIDDLEWARE_KINDS[name] for name in TYPES if name in MIDDLEWARE_KINDS},
    **_kinds("TypeVar", "ContextT ResponseT StateT_co"),
    **_kinds("class", "OmitFromSchema"),
    **_kinds("alias", "ToolCallWrapper"),
}
STRUCTURED_OUTPUT_KINDS = {
    **_kinds(
        "generic[1]",
        "AutoStrategy OutputToolBinding ProviderStrategy ProviderStrategyBinding ToolStrategy",
    ),
    **_kinds(
        "class",
        "MultipleStructuredOutputsError StructuredOutputError StructuredOutputValidationError",
    ),
    **_kinds("alias", "ResponseFormat SchemaKind"),
    **_kinds("TypeVar", "SchemaT"),
}
KINDS = [
    ("graphagent", {"AgentState": "generic[1]", "create_agent": "function"}),
    ("graphagent.middleware", MIDDLEWARE_KINDS),
    ("graphagent.middleware.types", TYPES_KINDS),
    ("graphagent.structured_output", STRUCTURED_OUTPUT_KINDS),
    ("graphagent.models", {"BaseChatModel": "class", "init_chat_model": "function"}),
]


def test_the_kind_tables_cover_every_listed_name() -> None:
    assert set(MIDDLEWARE_KINDS) == set(MIDDLEWARE)
    assert set(TYPES_KINDS) == set(TYPES)
    assert set(STRUCTURED_OUTPUT_KINDS) >= set(STRUCTURED_OUTPUT)


@pytest.mark.parametrize(
    ("module", "name", "kind"),
    [(module, name, kind) for module, table in KINDS for name, kind in table.items()],
)
def test_each_name_is_of_the_kind_it_is_in_langchain(module: str, name: str, kind: str) -> None:
    assert _kind(getattr(importlib.import_module(module), name)) == kind
