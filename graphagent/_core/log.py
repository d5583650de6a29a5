"""The ``graphagent`` logger: silent unless the application configures logging.

At DEBUG it logs the plan of each agent ``create_agent`` builds, and every step of a run: each
node hook and what it returned, each model step and its reply, each tool call and its answer.
With DEBUG off a step costs one call and ``isEnabledFor``, which the logging module caches;
nothing is formatted.
"""

from __future__ import annotations

import logging
import reprlib
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage

from graphagent._core.records import Hook

T = TypeVar("T")

log = logging.getLogger("graphagent")
log.addHandler(logging.NullHandler())  # a library never prints unless its user configures logging

_short = reprlib.Repr()
_short.maxstring = _short.maxother = 80


def hook_step(hook: Hook, update: Any) -> None:
    """A node hook ran and returned ``update``."""
    if log.isEnabledFor(logging.DEBUG):
        log.debug("hook %s: %s", hook.node, _update(update))


def model_step(messages: list[BaseMessage]) -> None:
    """The model node answered with ``messages`` (after every ``wrap_model_call``)."""
    if log.isEnabledFor(logging.DEBUG):
        log.debug("model: %s", "; ".join(map(_message, messages)))


def tool_step(call: ToolCall, result: T) -> T:
    """A tool call was answered (after every ``wrap_tool_call``); returns ``result``."""
    if log.isEnabledFor(logging.DEBUG):
        answer = _message(result) if isinstance(result, ToolMessage) else type(result).__name__
        log.debug("tool %s(%s): %s", call["name"], _short.repr(call["args"]), answer)
    return result


def _update(update: Any) -> str:
    if update is None:
        return "no update"
    if not isinstance(update, dict):
        return f"returned {type(update).__name__}"
    return "updates " + ", ".join(
        f"jump_to={value!r}" if key == "jump_to" else key for key, value in update.items()
    )


def _message(message: BaseMessage) -> str:
    if isinstance(message, AIMessage) and message.tool_calls:
        return "calls " + ", ".join(
            f"{call['name']}({_short.repr(call['args'])})" for call in message.tool_calls
        )
    return _short.repr(str(message.text))
