"""Turning a finished AI message back into stream chunks (scripted models, replayed replies)."""

from __future__ import annotations

import json

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages.tool import ToolCallChunk

HAS_CHUNK_POSITION = "chunk_position" in AIMessageChunk.model_fields
"""Whether this langchain-core marks a stream's last chunk (newer versions do)."""


def tool_call_chunks(message: AIMessage) -> list[ToolCallChunk]:
    """The message's tool calls, then its malformed ones, as chunks that add up to them."""
    chunks = [
        ToolCallChunk(
            name=call["name"],
            args=json.dumps(call["args"]),
            id=call["id"],
            index=index,
            type="tool_call_chunk",
        )
        for index, call in enumerate(message.tool_calls)
    ]
    chunks += [
        ToolCallChunk(
            name=call["name"],
            args=call["args"],
            id=call["id"],
            index=len(chunks) + index,
            type="tool_call_chunk",
        )
        for index, call in enumerate(message.invalid_tool_calls)
    ]
    return chunks
