"""The innermost model handler: bind tools once per model and tool set, call, shape the reply."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable, RunnableConfig, ensure_config
from langgraph.types import Command

from graphagent._core.bridge import Mode
from graphagent._core.ceiling import running_ledger
from graphagent._core.history import pair_tool_calls
from graphagent._core.runtime import DEFAULT_AGENT_NAME
from graphagent._models.configurable import ConfigurableChatModel, chat_model_for_agent
from graphagent._models.native_output import bind_native
from graphagent._run.cache_health import CacheHealth
from graphagent._run.limited_call import Gate
from graphagent._run.prompt_cache import thread_key, with_prompt_caching
from graphagent._run.reply import checked_reply
from graphagent._run.structured import (
    Strategy,
    ask_again,
    provider_rejections,
    resolve,
    to_response,
)
from graphagent._run.tool_registry import ToolRegistry
from graphagent.errors import note_origin
from graphagent.limits import RateLimits
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

    def __init__(
        self,
        name: str | None,
        registry: ToolRegistry,
        limits: RateLimits | None = None,
        *,
        prompt_caching: bool = True,
        cache_volatile: Sequence[tuple[str, tuple[str, ...]]] = (),
    ) -> None:
        self._name = name
        self._registry = registry
        self._gate = Gate(limits)
        self._prompt_caching = prompt_caching
        self._cache_health = CacheHealth(name or DEFAULT_AGENT_NAME, cache_volatile)
        self._bound: dict[tuple[Any, ...], tuple[Any, Runnable[Any, Any]]] = {}

    async def __call__(self, request: ModelRequest, mode: Mode) -> Outcome:
        if not isinstance(request.model, Runnable):
            raise _not_a_model(request.model)
        configs: tuple[RunnableConfig, ...] = ()
        configurable = isinstance(request.model, ConfigurableChatModel)
        if configurable:
            request, configs = await _chosen(request, mode)
        if self._prompt_caching:
            request = with_prompt_caching(request, self._name or DEFAULT_AGENT_NAME)
        bound, messages, strategy = self._prepare(request, cache=not configurable)
        for config in configs:
            bound = bound.with_config(config)
        ledger = running_ledger()
        if ledger is not None and not messages:  # not even a system message
            ledger.refuse_nothing_to_send()
        reply = await self._invoke(request, mode, bound, messages, strategy)
        again = ask_again(reply, strategy, asked=False)
        if again is None:
            return self._outcome(reply, strategy)
        asked = [*messages, self._named(reply), again]
        retry = await self._invoke(request, mode, bound, asked, strategy)
        ask_again(retry, strategy, asked=True)
        return self._outcome(retry, strategy, before=(reply, again))

    async def _invoke(
        self,
        request: ModelRequest,
        mode: Mode,
        bound: Runnable[Any, Any],
        messages: list[Any],
        strategy: Strategy | None,
    ) -> Any:
        """One call of the provider, counted against the run's ceiling."""
        ledger = running_ledger()
        if ledger is not None:
            ledger.count_model_call()
        with provider_rejections(strategy), _origin(request):
            reply = await self._gate.call(
                mode, request.model, messages, lambda c: mode.invoke(_with(bound, c), messages)
            )
        self._cache_health.observe(request, reply, thread_key)
        if ledger is not None and isinstance(reply, AIMessage):
            ledger.replied(reply.tool_calls)
        return reply

    def _prepare(
        self, request: ModelRequest, *, cache: bool
    ) -> tuple[Runnable[Any, Any], list[Any], Strategy | None]:
        self._registry.check_offered(request.tools)
        strategy = (
            resolve(request.response_format, request.model, request.tools)
            if request.response_format
            else None
        )
        messages = pair_tool_calls(request.messages)
        if request.system_message is not None:
            messages = [request.system_message, *messages]
        bound = self._bind(request, strategy) if cache else _bind(request, strategy)
        return bound, messages, strategy

    def _outcome(
        self, reply: Any, strategy: Strategy | None, before: tuple[Any, ...] = ()
    ) -> Outcome:
        """The response to ``reply``, after the messages ``before`` it (a plain-text reply and
        the request to answer again)."""
        if isinstance(reply, AIMessage):
            reply = checked_reply(reply)
        response = to_response(self._named(reply), strategy)
        if before:
            response = ModelResponse([*before, *response.result], response.structured_response)
        return Outcome(response)

    def _named(self, reply: Any) -> Any:
        if self._name and isinstance(reply, AIMessage) and not reply.name:
            reply.name = self._name
        return reply

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


async def _chosen(
    request: ModelRequest, mode: Mode
) -> tuple[ModelRequest, tuple[RunnableConfig, ...]]:
    """``request`` with the chat model its configurable model selects under the run's config
    (built off the event loop), and the configs to run it with. Built per call, it is bound
    afresh, and its own profile picks the structured-output strategy."""
    configurable = cast("ConfigurableChatModel", request.model)
    with _origin(request):
        chosen, configs = await mode.offload(chat_model_for_agent, configurable, ensure_config())
    return request.override(model=chosen), configs


def _with(bound: Runnable[Any, Any], config: RunnableConfig | None) -> Runnable[Any, Any]:
    return bound if config is None else bound.with_config(config)


def _not_a_model(model: object) -> TypeError:
    built = (
        f" (init_chat_model({model!r}) builds one from a model id)"
        if isinstance(model, str)
        else ""
    )
    return TypeError(
        f"request.model is {type(model).__name__}, not a chat model: a wrap_model_call hook "
        f"passed it with request.override(model=...); pass a chat model{built}."
    )


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
        if choice is not None:
            settings["tool_choice"] = choice
        return bind_native(request.model, tools, {**strategy.model_settings(), **settings})
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
