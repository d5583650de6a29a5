"""A model's reply, made safe to act on: tool calls that cannot run become malformed calls the
model is told about, and a call that nothing could answer is refused.

A broken model (or integration) may send a call whose ``args`` are not an object (a string, a
list, ``None``), one without an id, or two calls with one id. Left alone they fail deep in the
tools node with Python's own errors, or run twice and get two answers with one id, which
providers reject.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, InvalidToolCall

from graphagent._core.log import log
from graphagent.errors import MalformedToolCallError


def checked_reply(reply: AIMessage) -> AIMessage:
    """``reply`` with every tool call runnable: calls whose arguments are not an object moved to
    its invalid calls (answered with an error, never run), and a repeated id run once."""
    if not reply.tool_calls:
        return reply
    valid: list[Any] = []
    invalid: list[InvalidToolCall] = list(reply.invalid_tool_calls)
    seen: set[str] = set()
    for call in reply.tool_calls:
        call_id = call.get("id")
        if not isinstance(call_id, str):  # "" is an id: LangChain answers it
            raise MalformedToolCallError(_no_id(call))
        if call_id in seen:
            log.warning("The model sent two tool calls with the id %r; the first runs.", call_id)
            continue
        seen.add(call_id)
        problem = _problem(call)
        if problem is None:
            valid.append(call)
        else:
            invalid.append(_invalid(call, call_id, problem))
    if len(valid) == len(reply.tool_calls):
        return reply
    return reply.model_copy(update={"tool_calls": valid, "invalid_tool_calls": invalid})


def _problem(call: Mapping[str, Any]) -> str | None:
    name, args = call.get("name"), call.get("args")
    if not isinstance(name, str) or not name:
        return f"the call names no tool (name={name!r})"
    if not isinstance(args, Mapping):
        return f"its arguments must be a JSON object, got {type(args).__name__} {args!r}"
    return None


def _invalid(call: Mapping[str, Any], call_id: str, problem: str) -> InvalidToolCall:
    name = call.get("name")
    return InvalidToolCall(
        name=name if isinstance(name, str) else None,
        args=repr(call.get("args")),
        id=call_id,
        error=problem,
        type="invalid_tool_call",
    )


def _no_id(call: Mapping[str, Any]) -> str:
    """LangChain's words for the check its human-in-the-loop middleware makes, then ours."""
    name = call.get("name")
    return (
        f"Tool call `{name}` has no ID, so its result can't be matched to it. The model "
        f"returned a tool call to {name!r} without an id ({dict(call)!r}), so no answer can be "
        "paired with it: providers match each tool result to its call by id. The model's "
        "integration must give every tool call an id; a wrap_model_call hook can add one "
        "(reply.model_copy(update={'tool_calls': [...]}))."
    )
