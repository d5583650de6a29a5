"""Middleware: the base class, hook decorators, the types hooks receive and return, built-ins.

The built-ins are imported on first use, each from its own module: ``import graphagent`` stays
light, and a built-in that fails to import (``OtelTracingMiddleware`` without the ``otel`` extra)
fails only where it is used.
"""

import ast as _ast
import importlib as _importlib
from functools import cache as _cache
from inspect import ismodule as _ismodule
from pathlib import Path as _Path
from typing import TYPE_CHECKING as _TYPE_CHECKING

from langgraph.prebuilt.tool_node import (
    ToolCallRequest as ToolCallRequest,
    ToolCallWrapper as ToolCallWrapper,
)
from langgraph.runtime import (
    Runtime as Runtime,
)
from langgraph.typing import (
    ContextT as ContextT,
)

from graphagent.middleware.base import (
    AgentFacts as AgentFacts,
    AgentMiddleware as AgentMiddleware,
    StateT as StateT,
    StateT_co as StateT_co,
    hook_config as hook_config,
)
from graphagent.middleware.decorators import (
    after_agent as after_agent,
    after_model as after_model,
    before_agent as before_agent,
    before_model as before_model,
    dynamic_prompt as dynamic_prompt,
    wrap_agent as wrap_agent,
    wrap_model_call as wrap_model_call,
    wrap_tool_call as wrap_tool_call,
)
from graphagent.requests import (
    ExtendedModelResponse as ExtendedModelResponse,
    ModelCallResult as ModelCallResult,
    ModelRequest as ModelRequest,
    ModelResponse as ModelResponse,
)
from graphagent.state import (
    AgentState as AgentState,
    InputAgentState as InputAgentState,
    JumpTo as JumpTo,
    OmitFromInput as OmitFromInput,
    OmitFromOutput as OmitFromOutput,
    OmitFromSchema as OmitFromSchema,
    OutputAgentState as OutputAgentState,
    PrivateStateAttr as PrivateStateAttr,
    ResponseT as ResponseT,
)

_EXPORTED_EAGERLY = tuple(  # what the imports above bring, not the submodules they load
    name for name, value in globals().items() if not name.startswith("_") and not _ismodule(value)
)


@_cache
def _built_ins() -> dict[str, str]:
    """Each built-in's public name and the module it comes from, as the type-checking imports at
    the end of this file list them: the one list of the built-ins, which type checkers and IDEs
    read as it is written and this package reads (once, on first use) to load them."""
    source = _Path(__file__).read_text(encoding="utf-8")
    listing = next(
        node
        for node in _ast.parse(source).body
        if isinstance(node, _ast.If) and _ast.unparse(node.test) == "_TYPE_CHECKING"
    )
    return {
        alias.asname or alias.name: node.module.rpartition(".")[2]
        for node in listing.body
        if isinstance(node, _ast.ImportFrom) and node.module
        for alias in node.names
    }


def _public() -> list[str]:
    return sorted((*_EXPORTED_EAGERLY, *_built_ins()))


def __getattr__(name: str) -> object:
    if name == "__all__":  # derived on first use, like the built-ins
        return _public()
    module = _built_ins().get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return _public()


# The built-ins, each from its own module: the one list of their public names. Type checkers and
# IDEs read these imports; at run time nothing is imported here, and ``_built_ins`` reads them.
if _TYPE_CHECKING:
    from graphagent.middleware.auto_mode import (
        AutoModeMiddleware as AutoModeMiddleware,
    )
    from graphagent.middleware.budget import (
        BudgetAccount as BudgetAccount,
        BudgetExceededError as BudgetExceededError,
        BudgetLine as BudgetLine,
        BudgetMiddleware as BudgetMiddleware,
        BudgetState as BudgetState,
        ModelPrice as ModelPrice,
        Spend as Spend,
    )
    from graphagent.middleware.context_editing import (
        ClearToolUsesEdit as ClearToolUsesEdit,
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
        ActionRequest as ActionRequest,
        ApproveDecision as ApproveDecision,
        Decision as Decision,
        DecisionType as DecisionType,
        EditDecision as EditDecision,
        HITLRequest as HITLRequest,
        HITLResponse as HITLResponse,
        HumanInTheLoopMiddleware as HumanInTheLoopMiddleware,
        HumanInTheLoopState as HumanInTheLoopState,
        InterruptMode as InterruptMode,
        InterruptOnConfig as InterruptOnConfig,
        InvalidDecisionError as InvalidDecisionError,
        RejectDecision as RejectDecision,
        RespondDecision as RespondDecision,
        ReviewConfig as ReviewConfig,
        ToolApprovalRequest as ToolApprovalRequest,
    )
    from graphagent.middleware.model_call_limit import (
        ModelCallLimitExceededError as ModelCallLimitExceededError,
        ModelCallLimitMiddleware as ModelCallLimitMiddleware,
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
        ModelRouterMiddleware as ModelRouterMiddleware,
    )
    from graphagent.middleware.otel import OtelTracingMiddleware as OtelTracingMiddleware
    from graphagent.middleware.pii import (
        PIIDetectionError as PIIDetectionError,
        PIIMatch as PIIMatch,
        PIIMiddleware as PIIMiddleware,
        RedactionRule as RedactionRule,
        detect_credit_card as detect_credit_card,
        detect_email as detect_email,
        detect_ip as detect_ip,
        detect_mac_address as detect_mac_address,
        detect_url as detect_url,
    )
    from graphagent.middleware.provider_tool_search import (
        ProviderToolSearchMiddleware as ProviderToolSearchMiddleware,
    )
    from graphagent.middleware.shell_tool import (
        CodexSandboxExecutionPolicy as CodexSandboxExecutionPolicy,
        DockerExecutionPolicy as DockerExecutionPolicy,
        HostExecutionPolicy as HostExecutionPolicy,
        ShellToolMiddleware as ShellToolMiddleware,
    )
    from graphagent.middleware.summarization import (
        ContextSize as ContextSize,
        SummarizationMiddleware as SummarizationMiddleware,
        TriggerClause as TriggerClause,
    )
    from graphagent.middleware.todo import (
        WRITE_TODOS_SYSTEM_PROMPT as WRITE_TODOS_SYSTEM_PROMPT,
        WRITE_TODOS_TOOL_DESCRIPTION as WRITE_TODOS_TOOL_DESCRIPTION,
        PlanningState as PlanningState,
        Todo as Todo,
        TodoListMiddleware as TodoListMiddleware,
        write_todos as write_todos,
    )
    from graphagent.middleware.tool_call_deduplication import (
        ToolCallDeduplicationMiddleware as ToolCallDeduplicationMiddleware,
    )
    from graphagent.middleware.tool_call_limit import (
        ExitBehavior as ExitBehavior,
        ToolCallLimitExceededError as ToolCallLimitExceededError,
        ToolCallLimitMiddleware as ToolCallLimitMiddleware,
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
    from graphagent.middleware.tool_timeout import (
        ToolTimeoutError as ToolTimeoutError,
        ToolTimeoutMiddleware as ToolTimeoutMiddleware,
    )
    from graphagent.middleware.trace_policy import (
        TracePolicy as TracePolicy,
        configure_trace_policy as configure_trace_policy,
        omit_payload as omit_payload,
    )
