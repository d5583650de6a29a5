"""Hold a model call's tokens back from ``stream_mode="messages"``, then replay a view of the reply.

LangGraph sends a chat model's tokens to ``"messages"`` consumers from its callbacks, except for
model runs tagged ``nostream``. A holding ``wrap_model_call`` layer runs its handler with that tag
on the config in context (so it reaches every model call below, whichever model an inner layer
picks), turns the finished reply into what the caller may see, and streams that through a tiny
chat model that plays a message back, inside the same node, so consumers get it with the node's
usual metadata. The played-back chunks carry the reply's id, so LangGraph does not send the
finished message a second time when the node ends.

Holding layers nest (several PII middleware, PII and the final-answer filter): only the outermost
replays, once, through the views of every holding layer it contains.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.constants import TAG_NOSTREAM

from graphagent._core.chunks import HAS_CHUNK_POSITION, tool_call_chunks
from graphagent.requests import ModelResponse

if TYPE_CHECKING:
    from graphagent._core.bridge import Mode

StreamView = Callable[[AIMessage], AIMessage]
"""What of a finished reply the caller may see streamed (the state keeps the reply itself)."""

# Raw tool-call payloads a provider may keep beside ``tool_calls``; the chunk's
# ``tool_call_chunks`` carry the calls, already through every view.
_RAW_TOOL_CALL_KEYS = frozenset({"tool_calls", "function_call"})


@dataclass(frozen=True, slots=True)
class _Hold:
    """The views of the holding layers inside one outermost holding layer."""

    views: list[StreamView] = field(default_factory=list)

    def add(self, view: StreamView) -> None:
        if view not in self.views:  # a retried inner layer registers once
            self.views.append(view)

    def apply(self, message: AIMessage) -> AIMessage:
        for view in self.views:
            message = view(message)
        return message


_active_hold: ContextVar[_Hold | None] = ContextVar("graphagent_active_hold", default=None)


@dataclass(frozen=True, slots=True)
class Replay:
    """Streams a holding layer's final response; a no-op unless the layer is the outermost."""

    hold: _Hold | None

    def prepare(self, response: ModelResponse) -> tuple[ModelResponse, list[AIMessage]]:
        """The response to return (every AI message given an id) and the messages to stream."""
        if self.hold is None:
            return response, []
        result = [_with_id(m) if isinstance(m, AIMessage) else m for m in response.result]
        shown = [self.hold.apply(m) for m in result if isinstance(m, AIMessage)]
        return ModelResponse(result, response.structured_response), shown

    async def play(self, mode: Mode, response: ModelResponse) -> ModelResponse:
        """Stream the response's view (outermost layer only); return the response to return."""
        returned, shown = self.prepare(response)
        for message in shown:
            await mode.invoke(_PLAYER, [message])
        return returned


@contextmanager
def hold_back(view: StreamView) -> Iterator[Replay]:
    """Keep every model call made inside the block out of the ``"messages"`` stream.

    After the block, ``await replay.play(mode, response)`` with the response the layer returns.
    """
    outer = _active_hold.get()
    if outer is not None:
        outer.add(view)
        yield Replay(None)
        return
    hold = _Hold([view])
    hold_token = _active_hold.set(hold)
    with _no_streaming():
        try:
            yield Replay(hold)
        finally:
            _active_hold.reset(hold_token)


@contextmanager
def _no_streaming() -> Iterator[None]:
    """Tag every run started inside the block ``nostream``."""
    token = var_child_runnable_config.set(_tagged(var_child_runnable_config.get()))
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)


def _tagged(config: RunnableConfig | None) -> RunnableConfig:
    tags = list((config or {}).get("tags") or [])
    if TAG_NOSTREAM not in tags:
        tags.append(TAG_NOSTREAM)
    return {**(config or {}), "tags": tags}


def _with_id(message: AIMessage) -> AIMessage:
    if message.id is not None:
        return message
    return message.model_copy(update={"id": f"lc_run-{uuid.uuid4()}"})


def as_chunk(message: AIMessage) -> AIMessageChunk:
    """One stream chunk equal to ``message``: its content, tool calls as chunks, and metadata."""
    calls = tool_call_chunks(message)
    extra = {k: v for k, v in message.additional_kwargs.items() if k not in _RAW_TOOL_CALL_KEYS}
    fields: dict[str, Any] = {
        "content": message.content,
        "id": message.id,
        "name": message.name,
        "tool_call_chunks": calls,
        "usage_metadata": message.usage_metadata,
        "response_metadata": dict(message.response_metadata),
        "additional_kwargs": extra,
    }
    if HAS_CHUNK_POSITION:
        fields["chunk_position"] = "last"
    return AIMessageChunk(**fields)


class ChatReplay(BaseChatModel):
    """Plays back the last message it is given: one chunk when streaming, else the message."""

    cache: Any = False  # never answer from (or fill) an LLM cache a user configured

    @property
    def _llm_type(self) -> str:
        return "graphagent-replay"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=_last_ai(messages))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        # BaseChatModel reports each yielded chunk to the callbacks itself.
        yield ChatGenerationChunk(message=as_chunk(_last_ai(messages)))

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        yield ChatGenerationChunk(message=as_chunk(_last_ai(messages)))


def _last_ai(messages: list[BaseMessage]) -> AIMessage:
    message = messages[-1]
    if not isinstance(message, AIMessage):  # pragma: no cover - only ever given AI messages
        raise TypeError(f"ChatReplay plays back AI messages, got {type(message).__name__}")
    return message.model_copy()


_PLAYER = ChatReplay()
