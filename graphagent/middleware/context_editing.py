"""``ContextEditingMiddleware``: hide old tool results from the model once the context is large.

Each model call's messages pass through a list of edits before the model sees them. The built-in
edit, :class:`ClearToolUsesEdit`, replaces the content of older ToolMessages with a short
placeholder once the input passes a token threshold, keeping the most recent results intact.

Only the request changes: the agent state keeps every tool result, so the edits are worked out
afresh for each call, and a later middleware or the final output still sees the full history.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NoReturn, Protocol, TypeAlias

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.typing import ContextT

from graphagent._core.bridge import Mode
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import MiddlewareError, MiddlewareTypeError
from graphagent.middleware._kit.context_size import TokenCounter
from graphagent.middleware._kit.cores import ModelCallCore
from graphagent.requests import ModelRequest, ModelResponse
from graphagent.state import AgentState, ResponseT

__all__ = [
    "DEFAULT_TOOL_PLACEHOLDER",
    "ClearToolUsesEdit",
    "ContextEdit",
    "ContextEditingMiddleware",
    "TokenCounter",
]

DEFAULT_TOOL_PLACEHOLDER = "[cleared]"
"""What a cleared tool result says instead of its content."""

TokenCountMethod: TypeAlias = Literal["approximate", "model"]
_METHODS = ("approximate", "model")
_MARKER = "context_editing"  # response_metadata key recording what an edit did


class ContextEdit(Protocol):
    """An edit of the messages a model call is about to receive."""

    def apply(self, messages: list[AnyMessage], *, count_tokens: TokenCounter) -> None:
        """Change ``messages`` in place; ``count_tokens`` counts a list of them."""
        ...


@refuse_unknown_arguments
@dataclass(frozen=True, slots=True)
class ClearToolUsesEdit:
    """Replace older tool results with ``placeholder`` once the input exceeds ``trigger`` tokens.

    The ``keep`` most recent tool results stay, as do results of tools named in
    ``exclude_tools``. Older results are cleared oldest first: all of them, or with
    ``clear_at_least`` above 0, only as many as it takes to free that many tokens.
    ``clear_tool_inputs`` also empties the arguments of the cleared calls in the AI messages.
    """

    trigger: int = 100_000
    """Tokens the input must exceed before anything is cleared."""
    clear_at_least: int = 0
    """Stop clearing once this many tokens are freed; 0 clears every older result."""
    keep: int = 3
    """How many of the most recent tool results are never cleared."""
    clear_tool_inputs: bool = False
    """Also replace the arguments of each cleared call with ``{}``."""
    exclude_tools: Sequence[str] = ()
    """Names of tools whose results are never cleared."""
    placeholder: str = DEFAULT_TOOL_PLACEHOLDER
    """The content a cleared tool result gets."""

    def __post_init__(self) -> None:
        for name in ("trigger", "clear_at_least", "keep"):
            _check_count(name, getattr(self, name))
        _check_type("clear_tool_inputs", self.clear_tool_inputs, bool)
        _check_type("placeholder", self.placeholder, str)
        object.__setattr__(self, "exclude_tools", _tool_names(self.exclude_tools))

    def apply(self, messages: list[AnyMessage], *, count_tokens: TokenCounter) -> None:
        """Clear older tool results in ``messages`` when they exceed the trigger."""
        before = count_tokens(messages)
        if before <= self.trigger:
            return
        answers = [i for i, message in enumerate(messages) if isinstance(message, ToolMessage)]
        for index in answers[: max(0, len(answers) - self.keep)]:
            if not self._clear(messages, index) or not self.clear_at_least:
                continue
            # What was freed is recounted over the whole conversation: a counter may need all
            # of it (one reading the provider's reported usage, say).
            if before - count_tokens(messages) >= self.clear_at_least:
                return

    def _clear(self, messages: list[AnyMessage], index: int) -> bool:
        """Clear the tool result at ``index``, unless it stays: already cleared, excluded (by
        its own name, else by its call's), or answering no call of the nearest AI message
        before it."""
        answer = messages[index]
        assert isinstance(answer, ToolMessage)
        if answer.response_metadata.get(_MARKER, {}).get("cleared"):
            return False
        caller = _nearest_ai(messages, index)
        if caller is None:
            return False
        ai = messages[caller]
        assert isinstance(ai, AIMessage)
        call = next((c for c in ai.tool_calls if c["id"] == answer.tool_call_id), None)
        if call is None or (answer.name or call["name"]) in self.exclude_tools:
            return False
        messages[index] = _cleared_answer(answer, self.placeholder)
        if self.clear_tool_inputs:
            messages[caller] = _without_arguments(ai, answer.tool_call_id)
        return True


@refuse_unknown_arguments
class ContextEditingMiddleware(ModelCallCore[AgentState[ResponseT], ContextT, ResponseT]):
    """Apply ``edits`` to the messages of every model call. The agent state is never changed.

    Tokens are counted over what the model receives: the system message, the messages and (for
    the built-in methods) the tools.

    Args:
        edits: The edits, applied in order; ``None`` applies one ``ClearToolUsesEdit()``.
        token_count_method: ``"approximate"`` estimates tokens from the text; ``"model"`` asks
            the model (``get_num_tokens_from_messages``), which may be slower.
        token_counter: A function counting the tokens of a list of messages, used instead of
            either method.

    Raises:
        MiddlewareError: An edit without an ``apply`` method, an unknown
            ``token_count_method``, or a ``token_counter`` that is not callable.
    """

    cache_volatile = ("earlier messages",)
    """What of a prompt's cached prefix this middleware may change (docs/prompt-caching.md)."""

    def __init__(
        self,
        *,
        edits: Iterable[ContextEdit] | None = None,
        token_count_method: TokenCountMethod = "approximate",
        token_counter: TokenCounter | None = None,
    ) -> None:
        super().__init__()
        owner = type(self).__name__
        self.edits: list[ContextEdit] = list(edits or (ClearToolUsesEdit(),))
        for position, edit in enumerate(self.edits):
            if not callable(getattr(edit, "apply", None)):
                raise MiddlewareError(
                    f"{owner}: edits[{position}] is {type(edit).__name__}, which has no "
                    "apply(messages, *, count_tokens) method; use ClearToolUsesEdit(...)."
                )
        if token_count_method not in _METHODS:
            raise MiddlewareError(
                f"{owner}: token_count_method must be 'approximate' or 'model', got "
                f"{token_count_method!r}."
            )
        if token_counter is not None and not callable(token_counter):
            raise MiddlewareTypeError(
                f"{owner}: token_counter must be a function of a list of messages returning "
                f"an int, got {type(token_counter).__name__}."
            )
        self.token_count_method: TokenCountMethod = token_count_method
        self.token_counter = token_counter

    async def _wrap_model_call(
        self, mode: Mode, request: ModelRequest[ContextT], handler: Callable[..., Any]
    ) -> ModelResponse:
        """Call the model with the edited messages. Counting by the model or by a function of
        yours (either may call a service) runs through ``mode.offload``, off the event loop;
        the approximate count is quick arithmetic on text and runs inline."""
        if self.token_counter is None and self.token_count_method == "approximate":
            edited = self._edited(request)
        else:
            edited = await mode.offload(self._edited, request)
        response: ModelResponse = await mode.call(handler, edited)
        return response

    def _edited(self, request: ModelRequest[ContextT]) -> ModelRequest[ContextT]:
        if not request.messages or not self.edits:
            return request
        # The built-in edit replaces messages instead of changing them; an edit of yours may
        # change them in place, so it gets copies the state does not share.
        builtin = all(isinstance(edit, ClearToolUsesEdit) for edit in self.edits)
        messages = list(request.messages) if builtin else copy.deepcopy(request.messages)
        count_tokens = self._counter(request)
        for edit in self.edits:
            edit.apply(messages, count_tokens=count_tokens)
        return request.override(messages=messages)

    def _counter(self, request: ModelRequest[ContextT]) -> TokenCounter:
        system = [request.system_message] if request.system_message is not None else []
        tools = request.tools
        custom = self.token_counter
        if custom is not None:
            return lambda messages: custom([*system, *messages])
        if self.token_count_method == "model":
            model = request.model
            return lambda messages: model.get_num_tokens_from_messages(
                [*system, *messages], tools=tools or None
            )
        return lambda messages: count_tokens_approximately(
            [*system, *messages], tools=tools or None
        )


def _check_count(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        _fail(name, f"must be a whole number, 0 or more, got {value!r}")


def _check_type(name: str, value: object, expected: type) -> None:
    if not isinstance(value, expected):
        _fail(name, f"must be a {expected.__name__}, got {type(value).__name__} {value!r}")


def _tool_names(value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        _fail("exclude_tools", f"must be a list of tool names, got {value!r}")
    names = tuple(value)
    if not all(isinstance(name, str) for name in names):
        _fail("exclude_tools", f"must be a list of tool names, got {value!r}")
    return names


def _fail(parameter: str, problem: str) -> NoReturn:
    raise MiddlewareError(f"ClearToolUsesEdit: {parameter} {problem}.")


def _nearest_ai(messages: list[AnyMessage], index: int) -> int | None:
    return next((i for i in range(index - 1, -1, -1) if isinstance(messages[i], AIMessage)), None)


def _cleared_answer(answer: ToolMessage, placeholder: str) -> ToolMessage:
    marker = {"cleared": True, "strategy": "clear_tool_uses"}
    metadata = {**answer.response_metadata, _MARKER: marker}
    return answer.model_copy(
        update={"content": placeholder, "artifact": None, "response_metadata": metadata}
    )


def _without_arguments(ai: AIMessage, call_id: str) -> AIMessage:
    calls = [{**call, "args": {}} if call["id"] == call_id else call for call in ai.tool_calls]
    entry = dict(ai.response_metadata.get(_MARKER, {}))
    entry["cleared_tool_inputs"] = sorted({*entry.get("cleared_tool_inputs", ()), call_id})
    metadata = {**ai.response_metadata, _MARKER: entry}
    return ai.model_copy(update={"tool_calls": calls, "response_metadata": metadata})
