"""``FinalAnswerFilterMiddleware``: stream only the text of the model's final answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.typing import ContextT

from graphagent._core.bridge import Mode
from graphagent._core.options import refuse_unknown_arguments
from graphagent.middleware._kit.cores import ModelCallCore
from graphagent.middleware._kit.replay import hold_back
from graphagent.requests import ModelRequest, ModelResponse
from graphagent.state import AgentState, ResponseT

__all__ = ["FinalAnswerFilterMiddleware"]


@refuse_unknown_arguments
class FinalAnswerFilterMiddleware(ModelCallCore[AgentState[ResponseT], ContextT, ResponseT]):
    """In ``stream_mode="messages"``, show only the text of the round that answers.

    A model round that calls tools is not the final one, so its text ("Let me check...") is
    held back; the round's tool calls still stream, as one chunk with empty text, and tool
    messages and every other stream mode are untouched. Because a round is only known to be
    final once the model has finished, each reply is held until it is complete and then
    streamed as one chunk. The agent's state, and so ``invoke``'s result, keeps every message
    whole.
    """

    async def _wrap_model_call(
        self, mode: Mode, request: ModelRequest[ContextT], handler: Callable[..., Any]
    ) -> ModelResponse:
        """Call the model with its tokens held back, then stream the final-answer view."""
        with hold_back(final_answer_view) as replay:
            response = await mode.call(handler, request)
        return await replay.play(mode, response)


def final_answer_view(message: AIMessage) -> AIMessage:
    """``message`` as streamed: without its text when it calls tools (valid or not)."""
    if not message.tool_calls and not message.invalid_tool_calls:
        return message
    return message.model_copy(update={"content": _without_text(message.content)})


def _without_text(content: str | list[str | dict[str, Any]]) -> str | list[str | dict[str, Any]]:
    if isinstance(content, str):
        return ""
    return [b for b in content if isinstance(b, dict) and b.get("type") not in _TEXT_BLOCKS]


_TEXT_BLOCKS = frozenset({"text", "reasoning", "thinking"})
