"""Turning a model reply into a structured response, per strategy (the innermost model step)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

from graphagent._core.history import FINAL_ANSWER
from graphagent.requests import ModelResponse
from graphagent.structured_output import (
    AutoStrategy,
    MissingStructuredOutputError,
    MultipleStructuredOutputsError,
    ProviderStrategy,
    StructuredOutputError,
    StructuredOutputValidationError,
    ToolStrategy,
    as_strategy,
)

Strategy = ToolStrategy[Any] | ProviderStrategy[Any]


def resolve(response_format: Any, model: Any, tools: Sequence[Any] = ()) -> Strategy | None:
    """The strategy for one model call: an ``AutoStrategy`` picks by the model and its tools."""
    strategy = as_strategy(response_format)
    return strategy.resolve(model, tools) if isinstance(strategy, AutoStrategy) else strategy


def to_response(message: Any, strategy: Strategy | None) -> ModelResponse:
    if isinstance(message, AIMessage):
        if isinstance(strategy, ToolStrategy) and message.tool_calls:
            return _from_tool_calls(message, strategy)
        if isinstance(strategy, ProviderStrategy) and not message.tool_calls:
            return ModelResponse([message], strategy.parse(message))
    return ModelResponse([message])


def ask_again(message: Any, strategy: Strategy | None, *, asked: bool) -> HumanMessage | None:
    """What a plain-text reply under ``ToolStrategy(on_plain_text=...)`` calls for: ``None``
    takes the reply as it is; a message asks the model once more (``asked``: it was asked
    already); ``"error"``, or a second plain-text reply, raises."""
    plain = isinstance(message, AIMessage) and not message.tool_calls
    if not (plain and isinstance(strategy, ToolStrategy)) or strategy.on_plain_text == "end":
        return None
    names = [schema.name for schema in strategy.schemas]
    if strategy.on_plain_text == "error" or asked:
        raise MissingStructuredOutputError(names, message)
    tools = f"the tool '{names[0]}'" if len(names) == 1 else f"one of the tools {names}"
    return HumanMessage(
        f"Your reply was plain text, but this answer must be structured: call {tools} with "
        "arguments that follow its schema."
    )


@contextmanager
def provider_rejections(strategy: Strategy | None) -> Iterator[None]:
    """Name the fix when a provider refuses its native structured-output mode."""
    try:
        yield
    except Exception as exc:
        if isinstance(strategy, ProviderStrategy) and _is_rejection(exc):
            raise StructuredOutputError(
                f"The provider rejected native structured output ({type(exc).__name__}: {exc}); "
                "use response_format=ToolStrategy(schema) instead."
            ) from exc
        raise


def _is_rejection(exc: Exception) -> bool:
    """A bad-request error about the output format (not, say, a too-long context)."""
    status = getattr(exc, "status_code", None) or getattr(exc, "code", None)
    name = type(exc).__name__
    bad_request = status == 400 or "BadRequest" in name or "InvalidRequest" in name
    text = str(exc).lower()
    return bad_request and any(word in text for word in _FORMAT_WORDS)


_FORMAT_WORDS = ("response_format", "json_schema", "structured output", "response format")


def _from_tool_calls(message: AIMessage, strategy: ToolStrategy[Any]) -> ModelResponse:
    schemas = {schema.name: schema for schema in strategy.schemas}
    chosen = [call for call in message.tool_calls if call["name"] in schemas]
    if not chosen:
        return ModelResponse([message])
    error: StructuredOutputError
    if len(chosen) > 1:
        error = MultipleStructuredOutputsError([c["name"] for c in chosen], message)
    else:
        call = chosen[0]
        try:
            parsed = schemas[call["name"]].parse(call["args"])
        except Exception as exc:
            error = StructuredOutputValidationError(call["name"], exc, message)
        else:
            return _final(message, call, parsed, strategy)
    text = strategy.error_message(error)
    if text is None:
        raise error
    errors = [_answer(call, text, status="error") for call in chosen]
    return ModelResponse([message, *errors])


def _final(
    message: AIMessage, call: ToolCall, parsed: Any, strategy: ToolStrategy[Any]
) -> ModelResponse:
    content = strategy.tool_message_content or f"Returning structured response: {parsed}"
    answer = _answer(call, content, status="success")
    answer.response_metadata[FINAL_ANSWER] = True
    # The reply's other calls stay pending: the tools run them, then the run ends (as in
    # LangChain).
    return ModelResponse([message, answer], parsed)


def _answer(call: ToolCall, content: str, *, status: str) -> ToolMessage:
    return ToolMessage(content, tool_call_id=call["id"], name=call["name"], status=status)
