"""What ``OtelTracingMiddleware`` puts on its spans: the attribute names of the GenAI semantic
conventions, and their values read off model requests, model replies and tool calls.

Plain Python, no OpenTelemetry: ``otel.py`` decides when spans start and end, this module only
what they say.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage

from graphagent.limits import RATE_LIMIT_WAIT
from graphagent.requests import ModelRequest

if TYPE_CHECKING:
    from langgraph.prebuilt.tool_node import ToolCallRequest

# Attribute names of the GenAI semantic conventions (spelled out: the semconv package's GenAI
# module is "incubating" and may move).
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
OUTPUT_TYPE = "gen_ai.output.type"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"
EXCEPTION_EVENT = "exception"
EXCEPTION_TYPE = "exception.type"
EXCEPTION_STACKTRACE = "exception.stacktrace"
# graphagent's own attributes and events.
INTERRUPTED = "graphagent.interrupted"
CLOSED_EARLY = "graphagent.closed_early"
INTERRUPT_EVENT = "graphagent.interrupt"
INTERRUPT_ID = "graphagent.interrupt.id"
INTERRUPT_VALUE = "graphagent.interrupt.value"
MIDDLEWARE_NAME = "graphagent.middleware.name"
HOOK_NAME = "graphagent.hook.name"
RATE_LIMIT_WAIT_SECONDS = "graphagent.rate_limit.wait_seconds"
"""Seconds the model call waited for its provider key's limits (set when it waited)."""
HOOK_INPUT = "graphagent.hook.input"
HOOK_OUTPUT = "graphagent.hook.output"
TOOL_ERROR = "tool_error"
"""``error.type`` of a tool call answered with an error ToolMessage (the exception, if any, was
turned into that message by a wrapper inside this one)."""

_SETTINGS = (
    ("ls_temperature", "gen_ai.request.temperature"),
    ("ls_max_tokens", "gen_ai.request.max_tokens"),
    ("ls_stop", "gen_ai.request.stop_sequences"),
)
# langchain's provider ids that differ from the semantic conventions' well-known values.
_PROVIDERS = {
    "azure": "azure.ai.openai",
    "google_genai": "gcp.gen_ai",
    "google_vertexai": "gcp.vertex_ai",
    "amazon_bedrock": "aws.bedrock",
    "mistral": "mistral_ai",
    "mistralai": "mistral_ai",
    "xai": "x_ai",
}

# -- at span start (samplers may read these) ------------------------------------------------------


def chat_attributes(request: ModelRequest[Any]) -> dict[str, Any]:
    """A ``chat`` span's attributes; ``REQUEST_MODEL`` is always there (it names the span)."""
    model = request.model
    params = _model_params(model, request.model_settings)
    attributes: dict[str, Any] = {OPERATION: "chat", REQUEST_MODEL: _model_name(model, params)}
    provider = params.get("ls_provider")
    if isinstance(provider, str):
        attributes[PROVIDER] = _PROVIDERS.get(provider, provider)
    for param, key in _SETTINGS:
        value = params.get(param)
        if value is not None:
            attributes[key] = list(value) if isinstance(value, list | tuple) else value
    if request.response_format is not None:
        attributes[OUTPUT_TYPE] = "json"
    info = getattr(request.runtime, "execution_info", None)
    if info is not None and info.thread_id:
        attributes[CONVERSATION] = info.thread_id
    return attributes


def tool_attributes(request: ToolCallRequest) -> dict[str, Any]:
    """An ``execute_tool`` span's attributes."""
    call = request.tool_call
    attributes = {OPERATION: "execute_tool", TOOL_NAME: call["name"], TOOL_TYPE: "function"}
    call_id = call.get("id")
    if call_id:
        attributes[TOOL_CALL_ID] = call_id
    if request.tool is not None and request.tool.description:
        attributes[TOOL_DESCRIPTION] = request.tool.description
    return attributes


def hook_attributes(middleware: str, hook: str) -> dict[str, str]:
    """A hook span's attributes: whose hook it is, and which."""
    return {MIDDLEWARE_NAME: middleware, HOOK_NAME: hook}


def _model_params(model: Any, settings: Mapping[str, Any]) -> Mapping[str, Any]:
    """langchain's tracing parameters of a chat model (provider, model, temperature, ...)."""
    try:
        params = model._get_ls_params(**settings)
    except Exception:  # telemetry never fails a run: a model without them is just less described
        return {}
    return params if isinstance(params, Mapping) else {}


def _model_name(model: Any, params: Mapping[str, Any]) -> str:
    for value in (
        getattr(model, "model_name", None),
        getattr(model, "model", None),
        params.get("ls_model_name"),
    ):
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


# -- at span end ----------------------------------------------------------------------------------


def reply_attributes(replies: list[AIMessage]) -> dict[str, Any]:
    """Why the model stopped, and which model answered (the first reply that says)."""
    attributes: dict[str, Any] = {}
    reasons = [r for r in map(finish_reason, replies) if r is not None]
    if reasons:
        attributes[FINISH_REASONS] = reasons
    for reply in replies:
        model = reply.response_metadata.get("model_name") or reply.response_metadata.get("model")
        if isinstance(model, str) and model:
            attributes[RESPONSE_MODEL] = model
            break
    waits = [w for r in replies if isinstance(w := r.response_metadata.get(RATE_LIMIT_WAIT), float)]
    if waits:
        attributes[RATE_LIMIT_WAIT_SECONDS] = sum(waits)
    return attributes


def finish_reason(message: AIMessage) -> str | None:
    metadata = message.response_metadata
    reason = metadata.get("finish_reason") or metadata.get("stop_reason")
    return reason if isinstance(reason, str) else None


def reply_usage(replies: list[AIMessage]) -> tuple[int | None, int | None]:
    """The input and output tokens of the replies; ``None`` where no reply reports them."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    for reply in replies:
        usage = reply.usage_metadata
        if usage is not None:
            input_tokens = add_tokens(input_tokens, usage.get("input_tokens"))
            output_tokens = add_tokens(output_tokens, usage.get("output_tokens"))
    return input_tokens, output_tokens


def usage_attributes(input_tokens: int | None, output_tokens: int | None) -> dict[str, int]:
    attributes: dict[str, int] = {}
    if input_tokens is not None:
        attributes[INPUT_TOKENS] = input_tokens
    if output_tokens is not None:
        attributes[OUTPUT_TOKENS] = output_tokens
    return attributes


def add_tokens(total: int | None, value: int | None) -> int | None:
    if value is None:
        return total
    return value if total is None else total + value


def error_type(cls: type) -> str:
    """``error.type``: the exception's class, with its module unless it is a builtin."""
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def exception_attributes(error: BaseException) -> dict[str, str]:
    """The ``exception`` event of an error without its message (which may quote personal
    data): the type, and a traceback of the frames it passed, ending in the bare type."""
    kind = error_type(type(error))
    frames = "".join(traceback.format_tb(error.__traceback__))
    stacktrace = f"Traceback (most recent call last):\n{frames}{kind}\n"
    return {EXCEPTION_TYPE: kind, EXCEPTION_STACKTRACE: stacktrace}
