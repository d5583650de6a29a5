"""What ``OtelTracingMiddleware(record_content=True)`` adds to its spans: messages in the GenAI
semantic conventions' shapes, tool arguments and results, as JSON strings (span attributes cannot
nest).

Plain Python, no OpenTelemetry: each function returns the attributes for ``otel.py`` to set.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage, convert_to_messages
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import BaseModel

from graphagent._core.trace_policy import Field, hook_inputs, recorded
from graphagent.middleware._otel.semconv import (
    HOOK_INPUT,
    HOOK_OUTPUT,
    INPUT_MESSAGES,
    INTERRUPT_VALUE,
    OUTPUT_MESSAGES,
    SYSTEM_INSTRUCTIONS,
    TOOL_ARGUMENTS,
    TOOL_RESULT,
    finish_reason,
)
from graphagent.requests import ModelRequest

if TYPE_CHECKING:
    from langgraph.prebuilt.tool_node import ToolCallRequest

    from graphagent._core.agent_facts import Middleware

logger = logging.getLogger(__name__)

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def run_input(state: Any) -> dict[str, str]:
    return {INPUT_MESSAGES: _json(_messages_json(_state_messages(state)))}


def run_output(result: Any) -> dict[str, str]:
    """The run's final answer, when its last message is the model's."""
    messages = result.get("messages") if isinstance(result, Mapping) else None
    if messages and isinstance(messages[-1], AIMessage):
        return {OUTPUT_MESSAGES: _json([_output_json(messages[-1])])}
    return {}


def chat_input(request: ModelRequest[Any]) -> dict[str, str]:
    attributes = {INPUT_MESSAGES: _json(_messages_json(request.messages))}
    if request.system_message is not None:
        text = request.system_message.text
        attributes[SYSTEM_INSTRUCTIONS] = _json([{"type": "text", "content": text}])
    return attributes


def chat_output(replies: list[AIMessage]) -> dict[str, str]:
    return {OUTPUT_MESSAGES: _json([_output_json(m) for m in replies])}


def tool_input(request: ToolCallRequest) -> dict[str, str]:
    return {TOOL_ARGUMENTS: _json(request.tool_call.get("args"))}


def tool_output(result: ToolMessage) -> dict[str, str]:
    """The tool's answer: its text as is, structured content as JSON."""
    value = result.content
    return {TOOL_RESULT: value if isinstance(value, str) else _json(value)}


def interrupt_value(interrupt: Any) -> dict[str, str]:
    """What an interrupt asked, for its ``graphagent.interrupt`` event."""
    return {INTERRUPT_VALUE: _json(getattr(interrupt, "value", None))}


def hook_input(middleware: Middleware, hook: str, payload: Any) -> dict[str, str]:
    """What a hook received (the state, or the request), as its trace policy records it."""
    return _hook_payload(HOOK_INPUT, middleware, "process_inputs", hook_inputs(hook, payload))


def hook_output(middleware: Middleware, result: Any) -> dict[str, str]:
    """What a hook returned, as its trace policy records it."""
    return _hook_payload(HOOK_OUTPUT, middleware, "process_outputs", result)


def _hook_payload(key: str, middleware: Middleware, field: Field, value: Any) -> dict[str, str]:
    try:
        shown = recorded(middleware, field, value)
        return {key: json.dumps(shown, ensure_ascii=False, default=_plain)}
    except Exception:  # telemetry never fails a run; nothing rather than more than asked for
        logger.warning(
            "The trace policy of '%s' (%s) failed; its hook span records no payload.",
            middleware.name,
            field,
            exc_info=True,
        )
        return {}


def _plain(value: Any) -> Any:
    """What ``json`` writes for a value it cannot write itself: a message in the conventions'
    shape, a tool or a model by its name, a record by its fields, anything else as text."""
    if isinstance(value, BaseMessage):
        return _message_json(value)
    if isinstance(value, BaseTool):
        return value.name
    if isinstance(value, Runnable):
        return type(value).__name__
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, set | frozenset):
        return list(value)
    return str(value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _state_messages(state: Any) -> list[BaseMessage]:
    messages = state.get("messages") if isinstance(state, Mapping) else None
    if not messages:
        return []
    try:
        return convert_to_messages(messages)
    except (ValueError, TypeError, NotImplementedError):  # the run itself will report it
        return []


def _messages_json(messages: list[Any]) -> list[dict[str, Any]]:
    """Messages in the conventions' input-message shape: a role and a list of parts."""
    return [_message_json(m) for m in messages if isinstance(m, BaseMessage)]


def _message_json(message: BaseMessage) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if isinstance(message, ToolMessage):
        response = {"type": "tool_call_response", "id": message.tool_call_id}
        parts.append({**response, "response": message.text})
    elif message.text:
        parts.append({"type": "text", "content": message.text})
    if isinstance(message, AIMessage):
        parts += [
            {"type": "tool_call", "id": c["id"], "name": c["name"], "arguments": c["args"]}
            for c in message.tool_calls
        ]
    return {"role": _ROLES.get(message.type, message.type), "parts": parts}


def _output_json(message: AIMessage) -> dict[str, Any]:
    """An output message: an input-shaped message plus why the model stopped."""
    reason = finish_reason(message) or ("tool_call" if message.tool_calls else "stop")
    return {**_message_json(message), "finish_reason": reason}
