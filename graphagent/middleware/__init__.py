"""Middleware: the base class, hook decorators, the types hooks receive and return, built-ins.

``OtelTracingMiddleware`` needs the optional ``otel`` extra, so it is imported on first use.
"""

from typing import TYPE_CHECKING

from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.typing import ContextT

from graphagent.middleware.base import AgentFacts, AgentMiddleware, hook_config
from graphagent.middleware.budget import (
    BudgetAccount,
    BudgetExceededError,
    BudgetLine,
    BudgetMiddleware,
    BudgetState,
    Spend,
)
from graphagent.middleware.context_editing import ClearToolUsesEdit, ContextEditingMiddleware
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
from graphagent.middleware.final_answer_filter import FinalAnswerFilterMiddleware
from graphagent.middleware.human_in_the_loop import (
    Action,
    ActionRequest,
    ApproveDecision,
    Decision,
    DecisionType,
    EditDecision,
    HITLRequest,
    HITLResponse,
    HumanInTheLoopMiddleware,
    HumanInTheLoopState,
    InterruptOnConfig,
    InvalidDecisionError,
    RejectDecision,
    RespondDecision,
    ReviewConfig,
)
from graphagent.middleware.model_call_limit import (
    ModelCallLimitExceededError,
    ModelCallLimitMiddleware,
    ModelCallLimitState,
)
from graphagent.middleware.model_fallback import ModelFallbackMiddleware
from graphagent.middleware.model_refusal import ModelRefusalMiddleware
from graphagent.middleware.model_retry import ModelRetryMiddleware
from graphagent.middleware.pii import (
    PIIDetectionError,
    PIIMatch,
    PIIMiddleware,
    detect_credit_card,
    detect_email,
    detect_ip,
    detect_mac_address,
    detect_url,
)
from graphagent.middleware.summarization import ContextSize, SummarizationMiddleware, TriggerClause
from graphagent.middleware.todo import (
    WRITE_TODOS_SYSTEM_PROMPT,
    WRITE_TODOS_TOOL_DESCRIPTION,
    PlanningState,
    Todo,
    TodoListMiddleware,
    write_todos,
)
from graphagent.middleware.tool_call_limit import (
    ExitBehavior,
    ToolCallLimitExceededError,
    ToolCallLimitMiddleware,
    ToolCallLimitState,
)
from graphagent.middleware.tool_emulator import LLMToolEmulator
from graphagent.middleware.tool_error import ToolErrorMiddleware
from graphagent.middleware.tool_retry import ToolRetryMiddleware
from graphagent.middleware.tool_selection import LLMToolSelectorMiddleware
from graphagent.requests import (
    ExtendedModelResponse,
    ModelCallResult,
    ModelRequest,
    ModelResponse,
)
from graphagent.state import (
    AgentState,
    InputAgentState,
    OmitFromInput,
    OmitFromOutput,
    OutputAgentState,
    PrivateStateAttr,
    ResponseT,
)

__all__ = [
    "WRITE_TODOS_SYSTEM_PROMPT",
    "WRITE_TODOS_TOOL_DESCRIPTION",
    "Action",
    "ActionRequest",
    "AgentFacts",
    "AgentMiddleware",
    "AgentState",
    "ApproveDecision",
    "BudgetAccount",
    "BudgetExceededError",
    "BudgetLine",
    "BudgetMiddleware",
    "BudgetState",
    "ClearToolUsesEdit",
    "ContextEditingMiddleware",
    "ContextSize",
    "ContextT",
    "Decision",
    "DecisionType",
    "EditDecision",
    "ExitBehavior",
    "ExtendedModelResponse",
    "FinalAnswerFilterMiddleware",
    "HITLRequest",
    "HITLResponse",
    "HumanInTheLoopMiddleware",
    "HumanInTheLoopState",
    "InputAgentState",
    "InterruptOnConfig",
    "InvalidDecisionError",
    "LLMToolEmulator",
    "LLMToolSelectorMiddleware",
    "ModelCallLimitExceededError",
    "ModelCallLimitMiddleware",
    "ModelCallLimitState",
    "ModelCallResult",
    "ModelFallbackMiddleware",
    "ModelRefusalMiddleware",
    "ModelRequest",
    "ModelResponse",
    "ModelRetryMiddleware",
    "OmitFromInput",
    "OmitFromOutput",
    "OutputAgentState",
    "PIIDetectionError",
    "PIIMatch",
    "PIIMiddleware",
    "PlanningState",
    "PrivateStateAttr",
    "RejectDecision",
    "RespondDecision",
    "ResponseT",
    "ReviewConfig",
    "Spend",
    "SummarizationMiddleware",
    "Todo",
    "TodoListMiddleware",
    "ToolCallLimitExceededError",
    "ToolCallLimitMiddleware",
    "ToolCallLimitState",
    "ToolCallRequest",
    "ToolErrorMiddleware",
    "ToolRetryMiddleware",
    "TriggerClause",
    "after_agent",
    "after_model",
    "before_agent",
    "before_model",
    "detect_credit_card",
    "detect_email",
    "detect_ip",
    "detect_mac_address",
    "detect_url",
    "dynamic_prompt",
    "hook_config",
    "wrap_agent",
    "wrap_model_call",
    "wrap_tool_call",
    "write_todos",
]

if TYPE_CHECKING:
    from graphagent.middleware.otel import OtelTracingMiddleware as OtelTracingMiddleware


def __getattr__(name: str) -> object:
    if name == "OtelTracingMiddleware":
        from graphagent.middleware.otel import OtelTracingMiddleware

        return OtelTracingMiddleware
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
