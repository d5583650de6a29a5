"""Hook observers: a middleware that watches every call of the other middleware's hooks.

``OtelTracingMiddleware(trace_hooks=True)`` is one: it opens a span per call. When an agent is
compiled, ``compile_plan`` asks each middleware for its observer
(``AgentMiddleware._hook_observer``); the node hooks and the ``wrap_model_call``/``wrap_tool_call``
hooks of every other middleware then run inside it, and the finished plan holds them so.
Without an observer the hooks are left as they are, so watching costs nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from graphagent._core.bridge import EntryPoints, Mode
from graphagent._core.hooks import CALL_WRAPPERS, NODE_HOOKS, Position

WATCHED: frozenset[Position] = frozenset((*NODE_HOOKS, *CALL_WRAPPERS))
"""The hooks an observer surrounds: every node hook and the model and tool call wrappers."""

if TYPE_CHECKING:
    from graphagent._core.agent_facts import Middleware
    from graphagent._core.records import Hook, Plan

Watched = tuple["Middleware", "HookObserver"]


class HookObserver(Protocol):
    def __call__(
        self, middleware: Middleware, hook: str, payload: Any
    ) -> AbstractContextManager[Callable[[Any], None]]:
        """Surround one call of ``middleware``'s ``hook`` (``payload``: the state a node hook
        gets, or the request a wrap hook gets); the value entered is called with what the hook
        returned. An exception the hook raised passes through the context manager."""


def observed(plan: Plan) -> Plan:
    """``plan`` with the hooks its observers watch run inside them."""
    observers = [(m, o) for m in plan.middleware if (o := m._hook_observer()) is not None]
    if not observers:
        return plan

    hooks = {
        position: tuple(_watched(hook, observers) for hook in hooks)
        if position in WATCHED
        else hooks
        for position, hooks in plan.hooks.items()
    }
    return dataclasses.replace(plan, hooks=MappingProxyType(hooks))


def _watched(hook: Hook, observers: Sequence[Watched]) -> Hook:
    """``hook`` run inside every observer but its own middleware's; the first is outermost."""
    sync, asynchronous = hook.sync, hook.asynchronous
    for owner, observer in reversed(observers):
        if owner is hook.middleware:
            continue
        if sync is not None:
            sync = EntryPoints(partial(_call, hook, observer, sync), hook.label)
        if asynchronous is not None:
            asynchronous = EntryPoints(
                partial(_call, hook, observer, asynchronous), hook.label
            ).arun
    return dataclasses.replace(hook, sync=sync, asynchronous=asynchronous)


async def _call(
    hook: Hook,
    observer: HookObserver,
    fn: Callable[..., Any],
    mode: Mode,
    payload: Any,
    second: Any,
) -> Any:
    """``fn(payload, second)``: a hook called with the state and the runtime, or with the request
    and the handler."""
    with observer(hook.middleware, hook.position, payload) as returned:
        result = await mode.call(fn, payload, second)
        returned(result)
    return result
