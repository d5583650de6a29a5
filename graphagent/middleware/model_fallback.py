"""``ModelFallbackMiddleware``: when the model call fails, try other models in turn."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.tools import BaseTool
from langgraph.typing import ContextT

from graphagent._core.bridge import Mode
from graphagent._core.langgraph_internals import is_control_flow
from graphagent._core.options import refuse_unknown_arguments
from graphagent.middleware._kit.cores import ModelCallCore
from graphagent.models import HelperModel, init_chat_model
from graphagent.requests import ModelRequest, ModelResponse
from graphagent.state import AgentState, ResponseT

__all__ = ["ModelFallbackMiddleware"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
M = TypeVar("M", bound=BaseMessage)


@refuse_unknown_arguments
class ModelFallbackMiddleware(ModelCallCore[AgentState[ResponseT], ContextT, ResponseT]):
    """Retry a failed model call with each fallback model in order, until one answers.

    The agent's own model is tried first, then ``first_model``, then ``additional_models``. Any
    exception counts as a failure except LangGraph's control-flow exceptions (interrupts), which
    pass straight through. When every model fails, the last model's exception is raised.

    Args:
        first_model: The first fallback: a chat model or a model id such as
            ``"anthropic:claude-sonnet-4-5"``, built with ``init_chat_model`` when the
            middleware is built.
        *additional_models: More fallbacks, tried in order after ``first_model``.

    Raises:
        MiddlewareError: A fallback that is neither a chat model nor a model id.
        ValueError: A model id naming no known provider (from ``init_chat_model``).
        MissingIntegrationError: A model id whose provider package is not installed.
    """

    def __init__(
        self, first_model: str | BaseChatModel, *additional_models: str | BaseChatModel
    ) -> None:
        """Fallbacks in the order they are tried; each a chat model or a model id."""
        super().__init__()
        given = (first_model, *additional_models)
        self.models: list[BaseChatModel] = [
            init_chat_model(model) if isinstance(model, str) else model for model in given
        ]
        self._fallbacks = tuple(
            HelperModel("ModelFallbackMiddleware", label, model)
            for model, label in zip(self.models, _labels(len(given)), strict=True)
        )

    async def _wrap_model_call(
        self, mode: Mode, request: ModelRequest[ContextT], handler: Callable[..., Any]
    ) -> ModelResponse:
        """Call the handler with the request's model, then with each fallback on failure."""
        attempt, index = request, 0
        while True:
            try:
                response: ModelResponse = await mode.call(handler, attempt)
                return response
            except Exception as error:
                if is_control_flow(error) or index == len(self._fallbacks):
                    raise
                model = await self._fallbacks[index].get(mode)
                self._log_fallback(index, error)
                # Outside the guarded call: a failing sanitizer is a bug to see, not an outage.
                attempt = _sanitize_request_for_fallback(request, model).override(model=model)
                index += 1

    def _log_fallback(self, index: int, error: Exception) -> None:
        logger.warning(
            "%s: model call failed (%s); trying fallback %d of %d (%s)",
            self.name,
            type(error).__name__,
            index + 1,
            len(self._fallbacks),
            _describe(self.models[index]),
        )


def _describe(choice: BaseChatModel) -> str:
    name = getattr(choice, "model_name", None) or getattr(choice, "model", None)
    return f"{type(choice).__name__}({name!r})" if isinstance(name, str) else type(choice).__name__


def _labels(count: int) -> Sequence[str]:
    return ["first_model", *(f"additional_models[{i}]" for i in range(count - 1))]


# -- provider-specific settings a fallback model would reject -------------------------------
# A caching middleware outside this one adds these once, before the fallback loop, so only
# this middleware can take them back out for a model of another provider.

_ANTHROPIC_TYPES = frozenset(
    {"anthropic-chat", "anthropic-bedrock-chat", "anthropic-chat-vertexai"}
)
_FIREWORKS_TYPE = "fireworks-chat"
_PROMPT_CACHE_KEY_TYPES = frozenset({"openai-chat", "azure-openai-chat", _FIREWORKS_TYPE})
_CACHE_CONTROL = "cache_control"
_AFFINITY_HEADER = "x-session-affinity"


def _sanitize_request_for_fallback(
    request: ModelRequest[ContextT], model: BaseChatModel | None = None
) -> ModelRequest[ContextT]:
    """``request`` without the settings ``model``'s provider would reject (``None``: a model of
    no known provider, which gets none of them); ``request`` itself when there are none.
    LangChain's name: its tests call it, and replace it to see its errors are not masked."""
    changes = _unsupported_removed(request, model)
    return request.override(**changes) if changes else request


def _unsupported_removed(request: ModelRequest[Any], model: BaseChatModel | None) -> dict[str, Any]:
    """The request fields to replace so that ``model`` gets no settings it cannot accept."""
    llm_type = getattr(model, "_llm_type", None)
    settings = request.model_settings
    if llm_type != _FIREWORKS_TYPE:
        settings = _without_affinity_header(settings)
    if llm_type not in _PROMPT_CACHE_KEY_TYPES:
        settings = _without(settings, "prompt_cache_key")
    changes: dict[str, Any] = {}
    if llm_type not in _ANTHROPIC_TYPES:
        settings = _without(settings, _CACHE_CONTROL)
        changes = {
            "system_message": _uncached_system_message(request.system_message),
            "messages": _same_or_new(request.messages, _uncached_message),
            "tools": _same_or_new(request.tools, _uncached_tool),
        }
    changes["model_settings"] = settings
    original = {name: getattr(request, name) for name in changes}
    return {name: value for name, value in changes.items() if value is not original[name]}


def _without(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    if key not in mapping:
        return mapping
    return {k: v for k, v in mapping.items() if k != key}


def _without_affinity_header(settings: dict[str, Any]) -> dict[str, Any]:
    headers = settings.get("extra_headers")
    if not isinstance(headers, Mapping):
        return settings
    kept = {k: v for k, v in headers.items() if str(k).lower() != _AFFINITY_HEADER}
    if len(kept) == len(headers):
        return settings
    trimmed = _without(settings, "extra_headers")
    return {**trimmed, "extra_headers": kept} if kept else trimmed


def _same_or_new(items: list[T], clean: Callable[[T], T]) -> list[T]:
    """``items`` itself when ``clean`` changed none of them, so nothing is copied needlessly."""
    cleaned = [clean(item) for item in items]
    return items if all(a is b for a, b in zip(items, cleaned, strict=True)) else cleaned


def _uncached_block(block: Any) -> Any:
    if not isinstance(block, dict):
        return block
    cleaned = _without(block, _CACHE_CONTROL)
    for nested in ("extras", "metadata"):
        inner = cleaned.get(nested)
        if isinstance(inner, dict) and _CACHE_CONTROL in inner:
            cleaned = {**cleaned, nested: _without(inner, _CACHE_CONTROL)}
    return cleaned


def _uncached_system_message(message: SystemMessage | None) -> SystemMessage | None:
    return None if message is None else _uncached_message(message)


def _uncached_message(message: M) -> M:
    if isinstance(message.content, str):
        return message
    content = _same_or_new(message.content, _uncached_block)
    return (
        message if content is message.content else message.model_copy(update={"content": content})
    )


def _uncached_tool(tool: BaseTool | dict[str, Any]) -> BaseTool | dict[str, Any]:
    if isinstance(tool, BaseTool):
        if not tool.extras or _CACHE_CONTROL not in tool.extras:
            return tool
        return tool.model_copy(update={"extras": _without(tool.extras, _CACHE_CONTROL) or None})
    cleaned = _without(tool, _CACHE_CONTROL)
    extras = cleaned.get("extras")
    if isinstance(extras, dict) and _CACHE_CONTROL in extras:
        cleaned = {**cleaned, "extras": _without(extras, _CACHE_CONTROL) or None}
    return cleaned
