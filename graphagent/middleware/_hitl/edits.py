"""A reviewer's edit carried out, in either mode: the request pointed at the reviewer's call (and
tool), and its result opened with ``edit_notice``, since the model's message keeps the call the
model made."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest

from graphagent.errors import MiddlewareError
from graphagent.middleware._hitl.answers import unavailable_tool
from graphagent.middleware._hitl.settings import OWNER
from graphagent.middleware._hitl.types import EDITS_KEY, Action
from graphagent.middleware.base import ToolResult

DEFAULT_EDIT_NOTICE = (
    "A human reviewer changed this tool call before it ran, on purpose: your message shows the "
    "call as you made it, not as it ran. Do not make your original call again."
)
"""What the model reads before the result of a call a reviewer edited (``edit_notice``)."""


def recorded_edit(request: ToolCallRequest) -> Action | None:
    """The reviewer's call in place of this one, if the last batched review edited it."""
    call_id = request.tool_call.get("id")
    state = request.state if isinstance(request.state, Mapping) else {}
    edits = state.get(EDITS_KEY) or {}
    return cast("Action | None", edits.get(call_id)) if call_id else None


def apply_edit(
    request: ToolCallRequest, edited: Action, tools: Sequence[BaseTool] | None
) -> ToolCallRequest:
    """``request`` running the reviewer's call: its arguments and, when it names another tool,
    that tool, found among ``tools`` (the agent's)."""
    call: ToolCall = {**request.tool_call, "name": edited["name"], "args": dict(edited["args"])}
    if edited["name"] == request.tool_call["name"]:
        return request.override(tool_call=call)
    tool = next((t for t in tools or () if t.name == edited["name"]), None)
    if tool is None:
        names = [t.name for t in tools or ()]
        raise MiddlewareError(
            f"{unavailable_tool(request.tool_call, edited['name'], names)} {OWNER} cannot run "
            "the reviewer's call; the review that recorded it was taken for an agent with other "
            "tools."
        )
    return request.override(tool_call=call, tool=tool)


def with_notice(
    result: ToolResult, call_id: str | None, edited: Action, notice: str | None
) -> ToolResult:
    """``result`` of an edited call, its ``ToolMessage`` opening with ``notice`` and the call
    that ran: the model's message still shows the call it made."""
    if not notice:
        return result
    # The connecting words are LangChain's, so agents and tests written for it read the same.
    text = (
        f"{notice} Executed instead: {edited['name']} with arguments "
        f"{json.dumps(edited['args'], default=str)}."
    )
    if isinstance(result, ToolMessage):
        return _noticed(result, text)
    update = result.update
    messages = update.get("messages") if isinstance(update, dict) else None
    if not isinstance(messages, list):
        return result
    noticed = [
        _noticed(m, text) if isinstance(m, ToolMessage) and m.tool_call_id == call_id else m
        for m in messages
    ]
    return dataclasses.replace(
        result, update={**cast("dict[str, Any]", update), "messages": noticed}
    )


def _noticed(message: ToolMessage, text: str) -> ToolMessage:
    """``message`` opening with ``text``, once: a retried call's result may come back again."""
    content = message.content
    lead = f"{text}\n\nTool response:" if content else text
    if isinstance(content, str):
        if lead in content:
            return message
        return message.model_copy(update={"content": f"{lead}\n{content}" if content else lead})
    if any(lead in str(block) for block in content):
        return message
    # Keep the blocks' shape: some providers refuse a list mixing strings and blocks.
    block: Any = (
        lead
        if content and all(isinstance(b, str) for b in content)
        else {"type": "text", "text": lead}
    )
    return message.model_copy(update={"content": [block, *content]})
