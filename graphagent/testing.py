"""A scripted chat model for testing agents without a real LLM.

``ScriptedChatModel`` answers each call with the next reply from a fixed script
and records every call it receives, so tests can assert both on what the agent
did and on what it sent to the model::

    model = ScriptedChatModel(
        [
            calls(("search", {"query": "weather"})),
            "It is sunny.",
        ]
    )
    ...
    assert model.calls[0].tool_names == ("search",)
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeAlias, cast

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import ToolCall
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field, PrivateAttr, SkipValidation
from typing_extensions import override

from graphagent._core.chunks import HAS_CHUNK_POSITION, tool_call_chunks
from graphagent._core.options import unknown_argument_message
from graphagent.errors import GraphAgentError, UnknownArgumentError

__all__ = [
    "ModelCall",
    "ScriptExhaustedError",
    "ScriptedChatModel",
    "calls",
    "tool_call",
]

Reply: TypeAlias = str | AIMessage | Callable[[list[BaseMessage]], str | AIMessage]
"""One scripted answer: plain text, a ready message, or a function of the input."""

_EMPTY_SETTINGS: Mapping[str, Any] = MappingProxyType({})
# Word-ish tokens: optional leading whitespace + a run of non-space, or trailing space.
_TOKEN_RE = re.compile(r"\s*\S+|\s+")
# Ids must stay unique when several processes write to one checkpointed thread (messages merge
# by id), so each process numbers them under a random prefix of its own.
_PROCESS = uuid.uuid4().hex[:8]
_tool_call_ids = itertools.count(1)
_message_ids = itertools.count(1)


def _message_id() -> str:
    return f"run-scripted-{_PROCESS}-{next(_message_ids)}"


class ScriptExhaustedError(GraphAgentError, RuntimeError):
    """Raised when a ``ScriptedChatModel`` is called more times than it has replies.

    The message says how many replies were scripted, how many calls came, and the last message
    the model received.
    """


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One recorded call to a ``ScriptedChatModel``."""

    messages: tuple[BaseMessage, ...]
    """The messages the model received."""
    tools: tuple[dict[str, Any], ...]
    """Tools bound for this call, in OpenAI tool format."""
    tool_choice: Any
    """The ``tool_choice`` bound for this call (``None`` if unset)."""
    settings: Mapping[str, Any]
    """All other call kwargs (e.g. ``temperature`` passed via ``bind``, ``stop``)."""

    @property
    def tool_names(self) -> tuple[str, ...]:
        """Names of the bound tools, in order."""
        return tuple(_tool_name(t) for t in self.tools)


def tool_call(
    name: str, args: Mapping[str, Any] | None = None, *, id: str | None = None
) -> ToolCall:
    """Build a ``ToolCall``, for a scripted ``AIMessage``.

    Args:
        name: The tool to call.
        args: Its arguments (``None``: none).
        id: The call's id; ``None`` makes a process-unique ``"call_..."`` id.
    """
    return ToolCall(
        name=name,
        args=dict(args) if args else {},
        id=id if id is not None else f"call_{_PROCESS}_{next(_tool_call_ids)}",
        type="tool_call",
    )


def calls(
    *tool_calls: ToolCall | Mapping[str, Any] | tuple[str, Mapping[str, Any] | None],
    text: str = "",
) -> AIMessage:
    """Build an ``AIMessage`` requesting the given tool calls, as a scripted reply.

    Args:
        *tool_calls: The calls: each a ``ToolCall`` or a dict with ``name`` and optionally
            ``args`` and ``id`` (``tool_call`` builds one), or a ``(name, args)`` tuple.
            Missing ids are filled in with process-unique ones.
        text: The text of the message, beside the calls.
    """
    built: list[ToolCall] = []
    for item in tool_calls:
        if isinstance(item, tuple):
            name, args = item
            built.append(tool_call(name, args))
        else:
            built.append(tool_call(item["name"], item.get("args"), id=item.get("id")))
    return AIMessage(content=text, tool_calls=built)


class _ScriptState:
    """Mutable per-model state; one object so a call pays for a single private lookup."""

    __slots__ = ("calls", "lock", "next_index")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.next_index = 0
        self.calls: list[ModelCall] = []


def _refuse_unknown_fields(model: type[BaseChatModel], kwargs: Mapping[str, Any]) -> None:
    """Refuse a keyword that is no field of ``model``: pydantic would drop it silently."""
    fields = model.model_fields
    names = {*fields, *(f.alias for f in fields.values() if f.alias)}
    for name in kwargs:
        if name not in names:
            valid = ["replies", "repeat_last", "usage", *sorted(names - _OWN_FIELDS)]
            raise UnknownArgumentError(unknown_argument_message(model.__name__, name, valid))


_OWN_FIELDS = frozenset({"replies", "repeat_last", "usage"})


class ScriptedChatModel(BaseChatModel):
    """Chat model that answers from a script of replies, one reply per call.

    Every call is recorded in :attr:`calls`; streamed replies come word by word. Tool calls
    and structured output are scripted as the replies a real model would give.

    Args:
        replies: The script, consumed in order. Each reply is a ``str`` (plain AI text), an
            ``AIMessage`` (returned as a copy), or a callable ``fn(messages) -> str |
            AIMessage`` that answers from what the model received.
        repeat_last: Keep answering with the last reply once the script runs out, instead of
            raising ``ScriptExhaustedError``.
        usage: Attach approximate ``usage_metadata`` to each reply (about 4 characters per
            token), for middleware that count tokens.
        **kwargs: Other ``BaseChatModel`` fields (``name``, ``tags``, ``profile``, ...).

    Raises:
        TypeError: A single reply instead of a list, or a reply of another type.
    """

    # Validated by hand in __init__: pydantic's union validation would run
    # AIMessage's validators on callables and copy messages needlessly.
    replies: SkipValidation[list[Reply]] = Field(default_factory=list)
    """The script, consumed in order."""
    repeat_last: bool = False
    """Keep answering with the last reply once the script runs out."""
    usage: bool = False
    """Attach approximate ``usage_metadata`` (about 4 characters per token)."""

    _state: _ScriptState = PrivateAttr(default_factory=_ScriptState)

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        repeat_last: bool = False,
        usage: bool = False,
        **kwargs: Any,
    ) -> None:
        if isinstance(replies, str | BaseMessage):
            msg = "replies must be a list of replies; wrap a single reply in a list"
            raise TypeError(msg)
        script: list[object] = list(replies)
        for i, reply in enumerate(script):
            if not isinstance(reply, str | AIMessage) and not callable(reply):
                msg = (
                    f"reply #{i + 1} is {type(reply).__name__}; expected str, AIMessage "
                    "or a callable taking the list of messages"
                )
                raise TypeError(msg)
        _refuse_unknown_fields(type(self), kwargs)
        kwargs.update(replies=script, repeat_last=repeat_last, usage=usage)
        super().__init__(**kwargs)

    @property
    @override
    def _llm_type(self) -> str:
        return "scripted-chat-model"

    @property
    def calls(self) -> list[ModelCall]:
        """Snapshot of all calls received so far, in order."""
        state = self._state
        with state.lock:
            return list(state.calls)

    @property
    def call_count(self) -> int:
        """Number of calls received so far (including a call that exhausted the script)."""
        return len(self._state.calls)

    @override
    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools (converted to OpenAI format); they are recorded on each call."""
        formatted = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)

    # -- core -----------------------------------------------------------------

    def _respond(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> AIMessage:
        """Record the call, take the next reply and turn it into a fresh ``AIMessage``."""
        if kwargs or stop is not None:
            settings = dict(kwargs)
            tools = settings.pop("tools", None)
            tool_choice = settings.pop("tool_choice", None)
            if stop is not None:
                settings["stop"] = stop
            record = ModelCall(
                messages=tuple(messages),
                tools=tuple(tools) if tools else (),
                tool_choice=tool_choice,
                settings=MappingProxyType(settings) if settings else _EMPTY_SETTINGS,
            )
        else:
            record = ModelCall(tuple(messages), (), None, _EMPTY_SETTINGS)

        state = self._state
        with state.lock:
            index = state.next_index
            state.next_index = index + 1
            state.calls.append(record)

        replies = self.replies
        if index < len(replies):
            reply = replies[index]
        elif self.repeat_last and replies:
            reply = replies[-1]
        else:
            raise ScriptExhaustedError(_exhausted_message(len(replies), index + 1, messages))

        produced: object = reply(messages) if callable(reply) else reply
        if isinstance(produced, str):
            message = AIMessage(content=produced, id=_message_id())
        elif isinstance(produced, AIMessage):
            # Shallow copy, plus fresh tool-call dicts: callers that patch tool calls
            # in place must not corrupt a reply that may be handed out again.
            update = {"tool_calls": [_copy_tool_call(tc) for tc in produced.tool_calls]}
            message = produced.model_copy(update=update if produced.tool_calls else None)
            if message.id is None:
                message.id = _message_id()
        else:
            msg = (
                f"scripted reply #{index + 1} produced {type(produced).__name__}; "
                "expected str or AIMessage"
            )
            raise TypeError(msg)

        if self.usage and message.usage_metadata is None:
            message.usage_metadata = _estimate_usage(messages, message)
        return message

    @override
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = self._respond(messages, stop, kwargs)
        return ChatResult(generations=[ChatGeneration(message=message)])

    @override
    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = self._respond(messages, stop, kwargs)
        return ChatResult(generations=[ChatGeneration(message=message)])

    @override
    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        message = self._respond(messages, stop, kwargs)
        for chunk in _to_chunks(message):
            generation = ChatGenerationChunk(message=chunk)
            if run_manager is not None:
                run_manager.on_llm_new_token(chunk.content, chunk=generation)
            yield generation

    @override
    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        message = self._respond(messages, stop, kwargs)
        for chunk in _to_chunks(message):
            generation = ChatGenerationChunk(message=chunk)
            if run_manager is not None:
                await run_manager.on_llm_new_token(chunk.content, chunk=generation)
            yield generation


# -- helpers ------------------------------------------------------------------


def _tool_name(tool: Mapping[str, Any]) -> str:
    function = tool.get("function")
    if isinstance(function, Mapping) and "name" in function:
        return str(function["name"])
    return str(tool.get("name", ""))


def _copy_tool_call(tc: ToolCall) -> ToolCall:
    """A fresh copy of ``tc``, as given: a scripted reply may stand for a broken model's, whose
    calls lack an id or carry arguments that are not an object."""
    args = tc.get("args")
    copied = {**tc, "args": dict(args) if isinstance(args, Mapping) else args}
    return cast("ToolCall", copied)


def _content_chars(content: str | list[str | dict[str, Any]]) -> int:
    return len(content) if isinstance(content, str) else len(str(content))


def _estimate_usage(messages: Sequence[BaseMessage], reply: AIMessage) -> UsageMetadata:
    input_tokens = max(1, sum(_content_chars(m.content) for m in messages) // 4)
    out_chars = _content_chars(reply.content) + sum(
        len(tc["name"]) + len(json.dumps(tc["args"], default=str)) for tc in reply.tool_calls
    )
    output_tokens = max(1, out_chars // 4)
    return UsageMetadata(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
    )


def _describe(message: BaseMessage) -> str:
    text = repr(message.content)
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{type(message).__name__}(content={text})"


def _exhausted_message(scripted: int, call_number: int, messages: Sequence[BaseMessage]) -> str:
    last = _describe(messages[-1]) if messages else "(no messages)"
    noun = "reply was" if scripted == 1 else "replies were"
    times = "once" if call_number == 1 else f"{call_number} times"
    return (
        f"ScriptedChatModel: {scripted} {noun} scripted, but the model was called "
        f"{times}. Last received message: {last}. "
        "Add more replies to the script (or pass repeat_last=True)."
    )


def _to_chunks(message: AIMessage) -> list[AIMessageChunk]:
    """Split ``message`` into stream chunks whose sum equals ``message``.

    Text is split into word-ish tokens; tool calls, usage and metadata go on
    the final chunk, which is marked ``chunk_position="last"``.
    """
    calls = tool_call_chunks(message)

    final: dict[str, Any] = {
        "id": message.id,
        "tool_call_chunks": calls,
        "usage_metadata": message.usage_metadata,
        "response_metadata": dict(message.response_metadata),
        "additional_kwargs": dict(message.additional_kwargs),
    }
    if HAS_CHUNK_POSITION:
        final["chunk_position"] = "last"

    content = message.content
    if not isinstance(content, str):
        # Structured (content-block) content is not split: one chunk carries it all.
        return [AIMessageChunk(content=content, **final)]
    tokens: list[str] = _TOKEN_RE.findall(content)
    if calls or not tokens:
        tokens.append("")
    chunks = [AIMessageChunk(content=token, id=message.id) for token in tokens[:-1]]
    chunks.append(AIMessageChunk(content=tokens[-1], **final))
    return chunks
