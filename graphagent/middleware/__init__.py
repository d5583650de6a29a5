"""Middleware: the base class, hook decorators, the types hooks receive and return, built-ins.

The built-ins are imported on first use, each from its own module: ``import graphagent`` stays
light, and a built-in that fails to import (``OtelTracingMiddleware`` without the ``otel`` extra)
fails only where it is used.
"""

import importlib
from typing import TYPE_CHECKING

from langgraph.prebuilt.tool_node import ToolCallRequest, ToolCallWrapper
from langgraph.runtime import Runtime
from langgraph.typing import ContextT

from graphagent.middleware.base import AgentFacts, AgentMiddleware, StateT, StateT_co, hook_config
from graphagent.middleware.decorators import (
    after_agent,
    after_model,
    before_agent,
    before_model,
    dynamic_prompt,
    wrap_agent,
    wrap_model_call,
    wrap_tool_call,
)
from graphagent.requests import (
    ExtendedModelResponse,
    ModelCallResult,
    ModelRequest,
    ModelResponse,
)
from graphagent.state import (
    AgentState,
    InputAgentState,
    JumpTo,
    OmitFromInput,
    OmitFromOutput,
    OmitFromSchema,
    OutputAgentState,
    PrivateStateAttr,
    ResponseT,
)

if TYPE_CHECKING:
    from graphagent.middleware.auto_mode import (
        AutoModeMiddleware as AutoModeMiddleware,
    )
    from graphagent.middleware.budget import (
        BudgetAccount as BudgetAccount,
    )
    from graphagent.middleware.budget import (
        BudgetExceededError as BudgetExceededError,
    )
    from graphagent.middleware.budget import (
        BudgetLine as BudgetLine,
    )
    from graphagent.middleware.budget import (
        BudgetMiddleware as BudgetMiddleware,
    )
    from graphagent.middleware.budget import (
        BudgetState as BudgetState,
    )
    from graphagent.middleware.budget import (
        Spend as Spend,
    )
    from graphagent.middleware.context_editing import (
        ClearToolUsesEdit as ClearToolUsesEdit,
    )
    from graphagent.middleware.context_editing import (
        ContextEditingMiddleware as ContextEditingMiddleware,
    )
    from graphagent.middleware.file_search import (
        FilesystemFileSearchMiddleware as FilesystemFileSearchMiddleware,
    )
    from graphagent.middleware.final_answer_filter import (
        FinalAnswerFilterMiddleware as FinalAnswerFilterMiddleware,
    )
    from graphagent.middleware.human_in_the_loop import (
        Action as Action,
    )
    from graphagent.middleware.human_in_the_loop import (
        ActionRequest as ActionRequest,
    )
    from graphagent.middleware.human_in_the_loop import (
        ApproveDecision as ApproveDecision,
    )
    from graphagent.middleware.human_in_the_loop import (
        Decision as Decision,
    )
    from graphagent.middleware.human_in_the_loop import (
        DecisionType as DecisionType,
    )
    from graphagent.middleware.human_in_the_loop import (
        EditDecision as EditDecision,
    )
    from graphagent.middleware.human_in_the_loop import (
        HITLRequest as HITLRequest,
    )
    from graphagent.middleware.human_in_the_loop import (
        HITLResponse as HITLResponse,
    )
    from graphagent.middleware.human_in_the_loop import (
        HumanInTheLoopMiddleware as HumanInTheLoopMiddleware,
    )
    from graphagent.middleware.human_in_the_loop import (
        HumanInTheLoopState as HumanInTheLoopState,
    )
    from graphagent.middleware.human_in_the_loop import (
        InterruptMode as InterruptMode,
    )
    from graphagent.middleware.human_in_the_loop import (
        InterruptOnConfig as InterruptOnConfig,
    )
    from graphagent.middleware.human_in_the_loop import (
        InvalidDecisionError as InvalidDecisionError,
    )
    from graphagent.middleware.human_in_the_loop import (
        RejectDecision as RejectDecision,
    )
    from graphagent.middleware.human_in_the_loop import (
        RespondDecision as RespondDecision,
    )
    from graphagent.middleware.human_in_the_loop import (
        ReviewConfig as ReviewConfig,
    )
    from graphagent.middleware.human_in_the_loop import (
        ToolApprovalRequest as ToolApprovalRequest,
    )
    from graphagent.middleware.model_call_limit import (
        ModelCallLimitExceededError as ModelCallLimitExceededError,
    )
    from graphagent.middleware.model_call_limit import (
        ModelCallLimitMiddleware as ModelCallLimitMiddleware,
    )
    from graphagent.middleware.model_call_limit import (
        ModelCallLimitState as ModelCallLimitState,
    )
    from graphagent.middleware.model_fallback import (
        ModelFallbackMiddleware as ModelFallbackMiddleware,
    )
    from graphagent.middleware.model_refusal import (
        ModelRefusalMiddleware as ModelRefusalMiddleware,
    )
    from graphagent.middleware.model_retry import (
        ModelRetryMiddleware as ModelRetryMiddleware,
    )
    from graphagent.middleware.model_router import (
        ModelChoice as ModelChoice,
    )
    from graphagent.middleware.model_router import (
        ModelRouterMiddleware as ModelRouterMiddleware,
    )
    from graphagent.middleware.otel import OtelTracingMiddleware as OtelTracingMiddleware
    from graphagent.middleware.pii import (
        PIIDetectionError as PIIDetectionError,
    )
    from graphagent.middleware.pii import (
        PIIMatch as PIIMatch,
    )
    from graphagent.middleware.pii import (
        PIIMiddleware as PIIMiddleware,
    )
    from graphagent.middleware.pii import (
        RedactionRule as RedactionRule,
    )
    from graphagent.middleware.pii import (
        detect_credit_card as detect_credit_card,
    )
    from graphagent.middleware.pii import (
        detect_email as detect_email,
    )
    from graphagent.middleware.pii import (
        detect_ip as detect_ip,
    )
    from graphagent.middleware.pii import (
        detect_mac_address as detect_mac_address,
    )
    from graphagent.middleware.pii import (
        detect_url as detect_url,
    )
    from graphagent.middleware.provider_tool_search import (
        ProviderToolSearchMiddleware as ProviderToolSearchMiddleware,
    )
    from graphagent.middleware.shell_tool import (
        CodexSandboxExecutionPolicy as CodexSandboxExecutionPolicy,
    )
    from graphagent.middleware.shell_tool import (
        DockerExecutionPolicy as DockerExecutionPolicy,
    )
    from graphagent.middleware.shell_tool import (
        HostExecutionPolicy as HostExecutionPolicy,
    )
    from graphagent.middleware.shell_tool import (
        ShellToolMiddleware as ShellToolMiddleware,
    )
    from graphagent.middleware.summarization import (
        ContextSize as ContextSize,
    )
    from graphagent.middleware.summarization import (
        SummarizationMiddleware as SummarizationMiddleware,
    )
    from graphagent.middleware.summarization import (
        TriggerClause as TriggerClause,
    )
    from graphagent.middleware.todo import (
        WRITE_TODOS_SYSTEM_PROMPT as WRITE_TODOS_SYSTEM_PROMPT,
    )
    from graphagent.middleware.todo import (
        WRITE_TODOS_TOOL_DESCRIPTION as WRITE_TODOS_TOOL_DESCRIPTION,
    )
    from graphagent.middleware.todo import (
        PlanningState as PlanningState,
    )
    from graphagent.middleware.todo import (
        Todo as Todo,
    )
    from graphagent.middleware.todo import (
        TodoListMiddleware as TodoListMiddleware,
    )
    from graphagent.middleware.todo import (
        write_todos as write_todos,
    )
    from graphagent.middleware.tool_call_limit import (
        ExitBehavior as ExitBehavior,
    )
    from graphagent.middleware.tool_call_limit import (
        ToolCallLimitExceededError as ToolCallLimitExceededError,
    )
    from graphagent.middleware.tool_call_limit import (
        ToolCallLimitMiddleware as ToolCallLimitMiddleware,
    )
    from graphagent.middleware.tool_call_limit import (
        ToolCallLimitState as ToolCallLimitState,
    )
    from graphagent.middleware.tool_emulator import (
        LLMToolEmulator as LLMToolEmulator,
    )
    from graphagent.middleware.tool_error import (
        ToolErrorMiddleware as ToolErrorMiddleware,
    )
    from graphagent.middleware.tool_retry import (
        ToolRetryMiddleware as ToolRetryMiddleware,
    )
    from graphagent.middleware.tool_selection import (
        LLMToolSelectorMiddleware as LLMToolSelectorMiddleware,
    )
    from graphagent.middleware.trace_policy import (
        TracePolicy as TracePolicy,
    )
    from graphagent.middleware.trace_policy import (
        configure_trace_policy as configure_trace_policy,
    )
    from graphagent.middleware.trace_policy import (
        omit_payload as omit_payload,
    )

# Each built-in module and the public names it gives this package.
_BUILT_INS: dict[str, tuple[str, ...]] = {
    "auto_mode": ("AutoModeMiddleware",),
    "budget": (
        "BudgetAccount",
        "BudgetExceededError",
        "BudgetLine",
        "BudgetMiddleware",
        "BudgetState",
        "Spend",
    ),
    "context_editing": ("ClearToolUsesEdit", "ContextEditingMiddleware"),
    "file_search": ("FilesystemFileSearchMiddleware",),
    "final_answer_filter": ("FinalAnswerFilterMiddleware",),
    "human_in_the_loop": (
        "Action",
        "ActionRequest",
        "ApproveDecision",
        "Decision",
        "DecisionType",
        "EditDecision",
        "HITLRequest",
        "HITLResponse",
        "HumanInTheLoopMiddleware",
        "HumanInTheLoopState",
        "InterruptMode",
        "InterruptOnConfig",
        "InvalidDecisionError",
        "RejectDecision",
        "RespondDecision",
        "ReviewConfig",
        "ToolApprovalRequest",
    ),
    "model_call_limit": (
        "ModelCallLimitExceededError",
        "ModelCallLimitMiddleware",
        "ModelCallLimitState",
    ),
    "model_fallback": ("ModelFallbackMiddleware",),
    "model_refusal": ("ModelRefusalMiddleware",),
    "model_retry": ("ModelRetryMiddleware",),
    "model_router": ("ModelChoice", "ModelRouterMiddleware"),
    "pii": (
        "PIIDetectionError",
        "PIIMatch",
        "PIIMiddleware",
        "RedactionRule",
        "detect_credit_card",
        "detect_email",
        "detect_ip",
        "detect_mac_address",
        "detect_url",
    ),
    "provider_tool_search": ("ProviderToolSearchMiddleware",),
    "shell_tool": (
        "CodexSandboxExecutionPolicy",
        "DockerExecutionPolicy",
        "HostExecutionPolicy",
        "ShellToolMiddleware",
    ),
    "summarization": ("ContextSize", "SummarizationMiddleware", "TriggerClause"),
    "todo": (
        "WRITE_TODOS_SYSTEM_PROMPT",
        "WRITE_TODOS_TOOL_DESCRIPTION",
        "PlanningState",
        "Todo",
        "TodoListMiddleware",
        "write_todos",
    ),
    "tool_call_limit": (
        "ExitBehavior",
        "ToolCallLimitExceededError",
        "ToolCallLimitMiddleware",
        "ToolCallLimitState",
    ),
    "trace_policy": ("TracePolicy", "configure_trace_policy", "omit_payload"),
    "tool_emulator": ("LLMToolEmulator",),
    "tool_error": ("ToolErrorMiddleware",),
    "tool_retry": ("ToolRetryMiddleware",),
    "tool_selection": ("LLMToolSelectorMiddleware",),
    "otel": ("OtelTracingMiddleware",),
}
_HOME = {name: module for module, names in _BUILT_INS.items() for name in names}

__all__ = [
    "WRITE_TODOS_SYSTEM_PROMPT",
    "WRITE_TODOS_TOOL_DESCRIPTION",
    "Action",
    "ActionRequest",
    "AgentFacts",
    "AgentMiddleware",
    "AgentState",
    "ApproveDecision",
    "AutoModeMiddleware",
    "BudgetAccount",
    "BudgetExceededError",
    "BudgetLine",
    "BudgetMiddleware",
    "BudgetState",
    "ClearToolUsesEdit",
    "CodexSandboxExecutionPolicy",
    "ContextEditingMiddleware",
    "ContextSize",
    "ContextT",
    "Decision",
    "DecisionType",
    "DockerExecutionPolicy",
    "EditDecision",
    "ExitBehavior",
    "ExtendedModelResponse",
    "FilesystemFileSearchMiddleware",
    "FinalAnswerFilterMiddleware",
    "HITLRequest",
    "HITLResponse",
    "HostExecutionPolicy",
    "HumanInTheLoopMiddleware",
    "HumanInTheLoopState",
    "InputAgentState",
    "InterruptMode",
    "InterruptOnConfig",
    "InvalidDecisionError",
    "JumpTo",
    "LLMToolEmulator",
    "LLMToolSelectorMiddleware",
    "ModelCallLimitExceededError",
    "ModelCallLimitMiddleware",
    "ModelCallLimitState",
    "ModelCallResult",
    "ModelChoice",
    "ModelFallbackMiddleware",
    "ModelRefusalMiddleware",
    "ModelRequest",
    "ModelResponse",
    "ModelRetryMiddleware",
    "ModelRouterMiddleware",
    "OmitFromInput",
    "OmitFromOutput",
    "OmitFromSchema",
    "OtelTracingMiddleware",
    "OutputAgentState",
    "PIIDetectionError",
    "PIIMatch",
    "PIIMiddleware",
    "PlanningState",
    "PrivateStateAttr",
    "ProviderToolSearchMiddleware",
    "RedactionRule",
    "RejectDecision",
    "RespondDecision",
    "ResponseT",
    "ReviewConfig",
    "Runtime",
    "ShellToolMiddleware",
    "Spend",
    "StateT",
    "StateT_co",
    "SummarizationMiddleware",
    "Todo",
    "TodoListMiddleware",
    "ToolApprovalRequest",
    "ToolCallLimitExceededError",
    "ToolCallLimitMiddleware",
    "ToolCallLimitState",
    "ToolCallRequest",
    "ToolCallWrapper",
    "ToolErrorMiddleware",
    "ToolRetryMiddleware",
    "TracePolicy",
    "TriggerClause",
    "after_agent",
    "after_model",
    "before_agent",
    "before_model",
    "configure_trace_policy",
    "detect_credit_card",
    "detect_email",
    "detect_ip",
    "detect_mac_address",
    "detect_url",
    "dynamic_prompt",
    "hook_config",
    "omit_payload",
    "wrap_agent",
    "wrap_model_call",
    "wrap_tool_call",
    "write_todos",
]


def __getattr__(name: str) -> object:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
