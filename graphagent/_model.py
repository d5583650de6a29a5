"""The model node: build the request, run the ``wrap_model_call`` onion, return the updates."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, SystemMessage
from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime
from langgraph.types import Command

from graphagent._chain import Layer, async_only_error, bridge_to_async, build_onion
from graphagent._compat import RunnableCallable
from graphagent._history import answer_malformed_calls, pair_tool_calls
from graphagent._plan import MODEL_NODE, Hook
from graphagent._tools import ToolRegistry
from graphagent.errors import HookReturnError
from graphagent.requests import ExtendedModelResponse, ModelRequest, ModelResponse

_BIND_CACHE_SIZE = 64


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one handler call produced: the response and the commands of the layers it passed."""

    response: ModelResponse
    commands: tuple[Command[Any], ...] = ()


@dataclass(frozen=True, slots=True)
class ModelSetup:
    """The agent-level inputs of every model request."""

    model: BaseChatModel
    system_message: SystemMessage | None
    tools: tuple[Any, ...]
    name: str | None
    state_keys: frozenset[str]
    plain_keys: frozenset[str]
    registry: ToolRegistry


def model_node(setup: ModelSetup, hooks: Sequence[Hook]) -> RunnableCallable:
    """The ``"model"`` node, with the wrap hooks nested around the model call."""
    call = _ModelCall(setup)
    sync_error = async_only_error(hooks)
    sync_chain = None if sync_error else build_onion([_layer(h, setup) for h in hooks], call.sync)
    async_chain = build_onion([_alayer(h, setup) for h in hooks], call.asynchronous)

    def model(state: dict[str, Any], runtime: Runtime[Any]) -> Any:
        if sync_chain is None:
            raise sync_error  # type: ignore[misc]
        return _update(sync_chain(_request(setup, state, runtime)), setup.plain_keys)

    async def amodel(state: dict[str, Any], runtime: Runtime[Any]) -> Any:
        outcome = await async_chain(_request(setup, state, runtime))
        return _update(outcome, setup.plain_keys)

    return RunnableCallable(model, amodel, name=MODEL_NODE, trace=False)


def _request(setup: ModelSetup, state: dict[str, Any], runtime: Runtime[Any]) -> ModelRequest:
    return ModelRequest(
        model=setup.model,
        messages=state["messages"],
        system_message=setup.system_message,
        tools=list(setup.tools),
        state=state,
        runtime=runtime,
    )


class _ModelCall:
    """The innermost handler: bind tools (cached per model and tool set) and call the model."""

    def __init__(self, setup: ModelSetup) -> None:
        self._name = setup.name
        self._registry = setup.registry
        self._bound: dict[tuple[Any, ...], tuple[Any, Runnable[Any, Any]]] = {}

    def sync(self, request: ModelRequest) -> Outcome:
        self._registry.check_offered(request.tools)
        message = self._bind(request).invoke(_messages(request))
        return self._outcome(message)

    async def asynchronous(self, request: ModelRequest) -> Outcome:
        self._registry.check_offered(request.tools)
        message = await self._bind(request).ainvoke(_messages(request))
        return self._outcome(message)

    def _outcome(self, message: Any) -> Outcome:
        if self._name and isinstance(message, AIMessage) and not message.name:
            message.name = self._name
        return Outcome(ModelResponse(result=[message]))

    def _bind(self, request: ModelRequest) -> Runnable[Any, Any]:
        model, tools, choice, settings = (
            request.model,
            request.tools,
            request.tool_choice,
            request.model_settings,
        )
        if not tools and choice is None and not settings:
            return model
        try:
            key = (id(model), tuple(map(id, tools)), choice, tuple(sorted(settings.items())))
            hit = self._bound.get(key)
        except TypeError:  # unhashable settings: bind afresh each time
            return _bind(request)
        if hit is not None:
            return hit[1]
        if len(self._bound) >= _BIND_CACHE_SIZE:
            self._bound.clear()
        bound = _bind(request)
        # Keeping the model and tools referenced keeps their ids from being reused.
        self._bound[key] = ((model, tuple(tools)), bound)
        return bound


def _bind(request: ModelRequest) -> Runnable[Any, Any]:
    settings = dict(request.model_settings)
    if request.tool_choice is not None:
        settings["tool_choice"] = request.tool_choice
    if not request.tools:
        return request.model.bind(**settings)
    try:
        return request.model.bind_tools(request.tools, **settings)
    except NotImplementedError:
        raise TypeError(
            f"The model {type(request.model).__name__} does not implement bind_tools(), so it "
            "cannot be given tools; use a chat model with tool calling, or pass no tools."
        ) from None


def _messages(request: ModelRequest) -> list[Any]:
    messages = pair_tool_calls(request.messages)
    if request.system_message is None:
        return messages
    return [request.system_message, *messages]


def _layer(hook: Hook, setup: ModelSetup) -> Layer:
    if hook.sync is None:
        return _unreachable
    fn = hook.sync

    def layer(request: ModelRequest, inner: Callable[[ModelRequest], Outcome]) -> Outcome:
        calls: list[Outcome] = []

        def handler(req: ModelRequest) -> ModelResponse:
            outcome = inner(req)
            calls.append(outcome)
            return outcome.response

        return _settle(hook, fn(request, handler), calls, setup.state_keys)

    return layer


def _alayer(hook: Hook, setup: ModelSetup) -> Layer:
    if hook.asynchronous is None:
        return bridge_to_async(_layer(hook, setup))
    fn = hook.asynchronous

    async def layer(request: ModelRequest, inner: Callable[[ModelRequest], Any]) -> Outcome:
        calls: list[Outcome] = []

        async def handler(req: ModelRequest) -> ModelResponse:
            outcome: Outcome = await inner(req)
            calls.append(outcome)
            return outcome.response

        return _settle(hook, await fn(request, handler), calls, setup.state_keys)

    return layer


def _unreachable(request: Any, inner: Any) -> Any:  # pragma: no cover - guarded by async_only_error
    raise AssertionError("an async-only layer was used in a sync chain")


def _settle(
    hook: Hook, result: Any, calls: Sequence[Outcome], state_keys: Collection[str]
) -> Outcome:
    """Normalise what a layer returned; keep the commands of the handler call it returned."""
    command: Command[Any] | None = None
    if isinstance(result, ExtendedModelResponse):
        response, command = result.model_response, result.command
    elif isinstance(result, ModelResponse):
        response = result
    elif isinstance(result, AIMessage):
        response = ModelResponse(result=[result])
    else:
        raise HookReturnError(
            f"{hook.label} returned {type(result).__name__}; return the handler's ModelResponse, "
            "an AIMessage, or an ExtendedModelResponse."
        )
    kept = next((c for c in calls if c.response is response), calls[-1] if calls else None)
    if command is None:
        if kept is not None and kept.response is response:
            return kept
        return Outcome(response, kept.commands if kept else ())
    _check_command(hook, command, state_keys)
    return Outcome(response, (*(kept.commands if kept else ()), command))


def _check_command(hook: Hook, command: Command[Any], state_keys: Collection[str]) -> None:
    if command.goto or command.graph is not None or command.resume is not None:
        raise HookReturnError(
            f"{hook.label} returned an ExtendedModelResponse whose Command sets goto, graph or "
            "resume; only Command(update=...) applies here. Route with jump_to from a "
            "before_model/after_model hook instead."
        )
    unknown = [k for k in _items(command.update) if k[0] not in state_keys or k[0] == "jump_to"]
    if unknown:
        raise HookReturnError(
            f"{hook.label} returned a Command updating {[k for k, _ in unknown]}, which are not "
            "fields of the agent state (jump_to cannot be set here); declare them in the "
            "middleware's state_schema."
        )


def _items(update: Any) -> list[tuple[str, Any]]:
    if update is None:
        return []
    if isinstance(update, dict):
        return list(update.items())
    return list(update)


def _update(outcome: Outcome, plain_keys: frozenset[str]) -> dict[str, Any] | list[Command[Any]]:
    """The model node's writes: the response's messages, then each command's updates.

    Plain fields are merged into one write (inner first, outer wins); fields with a reducer get
    one write per command, applied in the same order.
    """
    messages = outcome.response.result
    malformed = answer_malformed_calls(messages)
    first: dict[str, Any] = {"messages": messages + malformed if malformed else messages}
    if outcome.response.structured_response is not None:
        first["structured_response"] = outcome.response.structured_response
    if not outcome.commands:
        return first
    reduced: list[Command[Any]] = []
    for command in outcome.commands:
        for key, value in _items(command.update):
            if key in plain_keys:
                first[key] = value
            else:
                reduced.append(Command(update={key: value}))
    return [Command(update=first), *reduced]
