"""The innermost model handler: bind tools once per model and tool set, call, shape the reply."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable
from langgraph.types import Command

from graphagent._bridge import Mode
from graphagent._history import pair_tool_calls
from graphagent._structured import Strategy, provider_rejections, resolve, to_response
from graphagent._tool_node import ToolRegistry
from graphagent.errors import note_origin
from graphagent.requests import ModelRequest, ModelResponse
from graphagent.structured_output import ProviderStrategy, ToolStrategy

_BIND_CACHE_SIZE = 64


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one handler call produced: the response, and the commands of the layers it passed."""

    response: ModelResponse
    commands: tuple[Command[Any], ...] = ()


class ModelCall:
    """Call the model of a request, as a sync or an async run does (``mode``)."""

    def __init__(self, name: str | None, registry: ToolRegistry) -> None:
        self._name = name
        self._registry = registry
        self._bound: dict[tuple[Any, ...], tuple[Any, Runnable[Any, Any]]] = {}

    async def __call__(self, request: ModelRequest, mode: Mode) -> Outcome:
        bound, messages, strategy = self._prepare(request)
        with provider_rejections(strategy), _origin(request):
            reply = await mode.invoke(bound, messages)
        return self._outcome(reply, strategy)

    def _prepare(
        self, request: ModelRequest
    ) -> tuple[Runnable[Any, Any], list[Any], Strategy | None]:
        self._registry.check_offered(request.tools)
        strategy = (
            resolve(request.response_format, request.model) if request.response_format else None
        )
        messages = pair_tool_calls(request.messages)
        if request.system_message is not None:
            messages = [request.system_message, *messages]
        return self._bind(request, strategy), messages, strategy

    def _outcome(self, reply: Any, strategy: Strategy | None) -> Outcome:
        if self._name and isinstance(reply, AIMessage) and not reply.name:
            reply.name = self._name
        return Outcome(to_response(reply, strategy))

    def _bind(self, request: ModelRequest, strategy: Strategy | None) -> Runnable[Any, Any]:
        model, tools, choice, settings = (
            request.model,
            request.tools,
            request.tool_choice,
            request.model_settings,
        )
        if not tools and choice is None and not settings and strategy is None:
            return model
        try:
            items = tuple(sorted(settings.items()))
            key = (id(model), tuple(map(id, tools)), choice, items, id(request.response_format))
            hit = self._bound.get(key)
        except TypeError:  # unhashable settings: bind afresh each time
            return _bind(request, strategy)
        if hit is not None:
            return hit[1]
        if len(self._bound) >= _BIND_CACHE_SIZE:
            self._bound.clear()
        bound = _bind(request, strategy)
        # Referencing what the key names by id keeps those ids from being reused.
        self._bound[key] = ((model, tuple(tools), request.response_format), bound)
        return bound


@contextmanager
def _origin(request: ModelRequest) -> Iterator[None]:
    try:
        yield
    except Exception as error:
        note_origin(error, f"the model call ({type(request.model).__name__})")
        raise


def _bind(request: ModelRequest, strategy: Strategy | None) -> Runnable[Any, Any]:
    tools: list[Any] = list(request.tools)
    settings = dict(request.model_settings)
    choice = request.tool_choice
    if isinstance(strategy, ToolStrategy):
        tools += [schema.as_tool() for schema in strategy.schemas]
        choice = choice or "any"
    elif isinstance(strategy, ProviderStrategy):
        settings.update(strategy.model_settings())
    if choice is not None:
        settings["tool_choice"] = choice
    if not tools:
        return request.model.bind(**settings)
    try:
        return request.model.bind_tools(tools, **settings)
    except NotImplementedError:
        raise TypeError(
            f"The model {type(request.model).__name__} does not implement bind_tools(), so it "
            "cannot be given tools; use a chat model with tool calling, or pass no tools."
        ) from None
