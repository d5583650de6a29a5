"""The names of LangChain's ``langchain.agents.middleware.types``, at the same path.

Everything here is also exported from :mod:`graphagent.middleware`; this module lets an import
written for LangChain move over by changing only its package:
``from langchain.agents.middleware.types import ModelRequest`` becomes
``from graphagent.middleware.types import ModelRequest``.
"""

from langgraph.prebuilt.tool_node import ToolCallRequest, ToolCallWrapper
from langgraph.runtime import Runtime
from langgraph.typing import ContextT

from graphagent.middleware.base import AgentMiddleware, StateT, StateT_co, hook_config
from graphagent.middleware.decorators import (
    after_agent,
    after_model,
    before_agent,
    before_model,
    dynamic_prompt,
    wrap_model_call,
    wrap_tool_call,
)
from graphagent.middleware.trace_policy import TracePolicy, omit_payload
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

__all__ = [
    "AgentMiddleware",
    "AgentState",
    "ContextT",
    "ExtendedModelResponse",
    "InputAgentState",
    "JumpTo",
    "ModelCallResult",
    "ModelRequest",
    "ModelResponse",
    "OmitFromInput",
    "OmitFromOutput",
    "OmitFromSchema",
    "OutputAgentState",
    "PrivateStateAttr",
    "ResponseT",
    "Runtime",
    "StateT",
    "StateT_co",
    "ToolCallRequest",
    "ToolCallWrapper",
    "TracePolicy",
    "after_agent",
    "after_model",
    "before_agent",
    "before_model",
    "dynamic_prompt",
    "hook_config",
    "omit_payload",
    "wrap_model_call",
    "wrap_tool_call",
]
