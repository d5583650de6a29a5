"""The model node: build the request, run the ``wrap_model_call`` onion, return the updates."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, RemoveMessage, SystemMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime
from langgraph.types import Command

from graphagent._core.bridge import ASYNC, SYNC, EntryPoints, Mode, in_mode
from graphagent._core.history import answer_malformed_calls
from graphagent._core.langgraph_internals import RunnableCallable
from graphagent._core.log import model_step
from graphagent._core.records import MODEL_NODE, Hook, async_only_error
from graphagent._models.configurable import ConfigurableChatModel
from graphagent._run.chain import Handler, LayerCore, build_onion, hook_layers
from graphagent._run.handoff import handing_off
from graphagent._run.model_call import ModelCall, Outcome
from graphagent._run.tool_registry import ToolRegistry
from graphagent.errors import HookReturnError, UnsupportedCommandError, note_origin
from graphagent.limits import DEFAULT_LIMITS, RateLimits
from graphagent.requests import ExtendedModelResponse, ModelRequest, ModelResponse


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
    response_format: Any
    answer_malformed: bool = False
    """Answer the reply's malformed tool calls at once, so the run goes back to the model."""
    prompt_caching: bool = True
    cache_volatile: tuple[tuple[str, tuple[str, ...]], ...] = ()
    rate_limits: RateLimits | None = DEFAULT_LIMITS
    """The limits of the provider keys the model calls (``None``: the limiter is off)."""


def model_node(
    setup: ModelSetup, hooks: Sequence[Hook], *, after_tools: bool = False
) -> RunnableCallable:
    """The ``"model"`` node, with the wrap hooks nested around the model call. Right after the
    tools (``after_tools``), it first hands off when a tool of the turn did."""
    call = ModelCall(
        setup.name,
        setup.registry,
        setup.rate_limits,
        prompt_caching=setup.prompt_caching,
        cache_volatile=setup.cache_volatile,
    )
    sync_error = async_only_error(hooks)
    modes = (ASYNC,) if sync_error else (SYNC, ASYNC)
    chains = {mode: _chain(setup, hooks, call, mode) for mode in modes}

    # A configurable model is built off the event loop before the hooks, so that one reading
    # its attributes (a tracer reads model_name) finds the run's model built.
    chosen: Any = setup.model
    prebuild = chosen.model_for if isinstance(chosen, ConfigurableChatModel) else None

    async def run(
        mode: Mode, state: dict[str, Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | list[Command[Any]]:
        if mode.asynchronous and prebuild is not None:
            with suppress(Exception):  # the model call itself reports it, naming the call
                await mode.offload(prebuild)
        answered = answer_malformed_calls(state["messages"])
        messages = state["messages"] if answered is None else answered
        outcome = await mode.call(chains[mode], _request(setup, state, messages, runtime))
        return _update(outcome, setup, answered)

    entry = EntryPoints(handing_off(run) if after_tools else run, MODEL_NODE, sync_error)
    return RunnableCallable(entry, entry.arun, name=MODEL_NODE, trace=False)


def _chain(
    setup: ModelSetup, hooks: Sequence[Hook], call: ModelCall, mode: Mode
) -> Handler[ModelRequest, Any]:
    async def base(request: ModelRequest) -> Outcome:
        return await call(request, mode)

    def make(
        hook: Hook, implementation: Callable[..., Any], mode: Mode
    ) -> LayerCore[ModelRequest, Outcome]:
        return _layer(hook, implementation, mode, setup.state_keys)

    return build_onion(hook_layers(hooks, mode, make), in_mode(base, mode, MODEL_NODE))


def _request(
    setup: ModelSetup, state: dict[str, Any], messages: list[Any], runtime: Runtime[Any]
) -> ModelRequest:
    return ModelRequest(
        model=setup.model,
        messages=messages,
        system_message=setup.system_message,
        tools=list(setup.tools),
        response_format=setup.response_format,
        state=state,
        runtime=runtime,
    )


def _layer(
    hook: Hook, implementation: Callable[..., Any], mode: Mode, state_keys: Collection[str]
) -> LayerCore[ModelRequest, Outcome]:
    """One ``wrap_model_call`` layer: the hook gets a handler returning the ``ModelResponse``,
    and what it returns is settled against the handler calls it made."""

    async def layer(request: ModelRequest, inner: Handler[ModelRequest, Any]) -> Outcome:
        calls: list[Outcome] = []

        async def record(req: ModelRequest) -> ModelResponse:
            outcome: Outcome = await mode.call(inner, req)
            calls.append(outcome)
            return outcome.response

        try:
            result = await mode.call(implementation, request, in_mode(record, mode, hook.label))
        except Exception as error:
            note_origin(error, hook.label)
            raise
        return _settle(hook, result, calls, state_keys)

    return layer


def _settle(
    hook: Hook, result: Any, calls: Sequence[Outcome], state_keys: Collection[str]
) -> Outcome:
    """Normalise what a layer returned; keep the commands and offers of the handler call it
    returned (the last one if it built its own response)."""
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
    fallback = calls[-1] if calls else Outcome(response)
    kept = next((c for c in calls if c.response is response), fallback)
    if command is None and kept.response is response:
        return kept
    commands = kept.commands
    if command is not None:
        _check_command(hook, command, state_keys)
        commands = (*commands, command)
    return Outcome(response, commands)


def _check_command(hook: Hook, command: Command[Any], state_keys: Collection[str]) -> None:
    unsupported = _unsupported_field(command)
    if unsupported:
        raise UnsupportedCommandError(
            f"Command {unsupported} is not yet supported in wrap_model_call middleware: "
            f"{hook.label} returned an ExtendedModelResponse whose Command sets {unsupported}; "
            "only Command(update=...) applies here. Route with jump_to from a "
            "before_model/after_model hook instead."
        )
    unknown = [k for k in _items(command.update) if k[0] not in state_keys or k[0] == "jump_to"]
    if unknown:
        raise HookReturnError(
            f"{hook.label} returned a Command updating {[k for k, _ in unknown]}, which are not "
            "fields of the agent state (jump_to cannot be set here); declare them in the "
            "middleware's state_schema."
        )


def _unsupported_field(command: Command[Any]) -> str | None:
    if command.goto:
        return "goto"
    if command.resume is not None:
        return "resume"
    if command.graph is not None:
        return "graph"
    return None


def _items(update: Any) -> list[tuple[str, Any]]:
    if update is None:
        return []
    if isinstance(update, dict):
        return list(update.items())
    return list(update)


def _update(
    outcome: Outcome, setup: ModelSetup, answered: list[Any] | None
) -> dict[str, Any] | list[Command[Any]]:
    """The model node's writes: the response's messages (after the history with its malformed
    calls ``answered``, which replaces the stored one), then each command's updates.

    With ``setup.answer_malformed``, the reply's own malformed calls are answered right after it,
    so the routes send the run back to the model (or on to the tools for its valid calls).

    Plain fields are merged into one write (inner first, outer wins); fields with a reducer get
    one write per command, applied in the same order.
    """
    messages = outcome.response.result
    model_step(messages)
    if setup.answer_malformed:
        messages = answer_malformed_calls(messages) or messages
    if answered is not None:
        # The answers belong right after their calls, so the whole history is rewritten.
        messages = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *answered, *messages]
    first: dict[str, Any] = {"messages": messages}
    if outcome.response.structured_response is not None:
        first["structured_response"] = outcome.response.structured_response
    if not outcome.commands:
        return first
    reduced: list[Command[Any]] = []
    for command in outcome.commands:
        for key, value in _items(command.update):
            if key in setup.plain_keys:
                first[key] = value
            else:
                reduced.append(Command(update={key: value}))
    return [Command(update=first), *reduced]
