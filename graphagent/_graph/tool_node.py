"""The tools node: langgraph's ToolNode, with the ``wrap_tool_call`` onion as its wrapper."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolInvocationError
from langgraph.types import Command

from graphagent._core.agent_facts import ToolCallResult
from graphagent._core.bridge import ASYNC, SYNC, EntryPoints, Mode, in_mode
from graphagent._core.langgraph_internals import InlineToolNode
from graphagent._core.log import tool_step
from graphagent._core.records import TOOLS_NODE, Hook, async_only_error
from graphagent._run.chain import Handler, LayerCore, build_onion, hook_layers
from graphagent._run.handoff import deferred, is_handoff
from graphagent._run.tool_gate import ToolGate
from graphagent.errors import HookReturnError, note_origin
from graphagent.limits import DEFAULT_TOOL_LIMITS, ToolLimits


def tools_node(
    tools: Sequence[BaseTool], hooks: Sequence[Hook], limits: ToolLimits = DEFAULT_TOOL_LIMITS
) -> ToolNode:
    """Tool exceptions propagate (``handle_tool_errors=False``), once the run's other calls in
    flight have ended; invalid arguments become an error ToolMessage the model can read, below
    every wrapper, so wrappers see a normal reply. Each call holds its places of ``limits``
    while the tool runs."""
    gate = ToolGate(limits)
    sync_error = async_only_error(hooks)
    modes = (ASYNC,) if sync_error else (SYNC, ASYNC)
    layers = {mode: hook_layers(hooks, mode, _layer) for mode in modes}

    async def run(
        mode: Mode, request: ToolCallRequest, execute: Handler[ToolCallRequest, Any]
    ) -> ToolCallResult:
        async def base(req: ToolCallRequest) -> ToolCallResult:
            try:
                answer: ToolCallResult = await gate.limited(
                    mode, req.tool_call["name"], lambda: mode.call(execute, req)
                )
            except ToolInvocationError as exc:
                return _invalid_arguments(req, exc)
            except Exception as error:
                note_origin(error, f"the tool '{req.tool_call['name']}'")
                raise
            return answer

        chain = build_onion(layers[mode], in_mode(base, mode, TOOLS_NODE))
        result: ToolCallResult = await gate.branch(mode, lambda: mode.call(chain, request))
        if is_handoff(result):  # answered now, handed off once the turn's other calls are done
            result = deferred(request.tool_call, result)
        return tool_step(request.tool_call, _with_ids(result))

    entry = EntryPoints(run, TOOLS_NODE, sync_error)
    return InlineToolNode(
        list(tools),
        name=TOOLS_NODE,
        handle_tool_errors=False,
        wrap_tool_call=entry,
        awrap_tool_call=entry.arun,
    )


def _with_ids(result: ToolCallResult) -> ToolCallResult:
    """``result`` with an id on each message it adds, as ``add_messages`` gives one.

    The calls of one turn run as parallel tasks, and the router after the tools reads each
    task's writes on its own: the messages reducer would give the answers of two tasks one id
    there (it numbers a message by its place in the history), and one answer would replace the
    other.
    """
    messages: Any = result
    if isinstance(result, Command) and isinstance(result.update, dict):
        messages = result.update.get("messages", ())
    for message in messages if isinstance(messages, list | tuple) else [messages]:
        if isinstance(message, BaseMessage) and not message.id:
            message.id = str(uuid.uuid4())
    return result


def _layer(
    hook: Hook, implementation: Callable[..., Any], mode: Mode
) -> LayerCore[ToolCallRequest, ToolCallResult]:
    """One ``wrap_tool_call`` layer; what the hook returns must answer the call it was given."""

    async def layer(
        request: ToolCallRequest, inner: Handler[ToolCallRequest, Any]
    ) -> ToolCallResult:
        try:
            result = await mode.call(implementation, request, inner)
        except Exception as error:
            note_origin(error, hook.label)
            raise
        return _answer(hook, request, result)

    return layer


def _answer(hook: Hook, request: ToolCallRequest, result: Any) -> ToolCallResult:
    """What a ``wrap_tool_call`` layer returned, if it answers this call: a ``ToolMessage`` with
    the call's id, or a ``Command``. Anything else would land in the conversation as is."""
    call_id = request.tool_call["id"]
    if isinstance(result, Command):
        return result
    if isinstance(result, ToolMessage) and result.tool_call_id == call_id:
        return result
    if isinstance(result, ToolMessage):
        what = f"a ToolMessage answering another call (tool_call_id={result.tool_call_id!r})"
    else:
        what = f"{type(result).__name__} ({_preview(result)})"
    raise HookReturnError(
        f"{hook.label} returned {what} for the call {call_id!r} to "
        f"'{request.tool_call['name']}'; return the handler's result, or a ToolMessage answering "
        f"this call (ToolMessage(content=..., tool_call_id=request.tool_call['id'])), or a "
        "Command."
    )


def _preview(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _invalid_arguments(request: ToolCallRequest, exc: ToolInvocationError) -> ToolMessage:
    call = request.tool_call
    return ToolMessage(
        content=exc.message, name=call["name"], tool_call_id=call["id"], status="error"
    )
