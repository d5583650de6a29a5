"""Hook observers: a middleware that watches every call of the other middleware's hooks.

``OtelTracingMiddleware(trace_hooks=True)`` is one: it opens a span per call. When an agent is
built, each middleware is asked for its observer (``AgentMiddleware._hook_observer``); the node
hooks and the ``wrap_model_call``/``wrap_tool_call`` hooks of every other middleware then run
inside it. Without an observer the hooks are left as they are, so watching costs nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from graphagent._bridge import ASYNC, SYNC, Mode, run_sync

if TYPE_CHECKING:
    from graphagent._plan import Hook, Plan
    from graphagent.middleware.base import AgentMiddleware

Watched = tuple["AgentMiddleware[Any, Any, Any]", "HookObserver"]


class HookObserver(Protocol):
    def __call__(
        self, middleware: AgentMiddleware[Any, Any, Any], hook: str, payload: Any
    ) -> AbstractContextManager[Callable[[Any], None]]:
        """Surround one call of ``middleware``'s ``hook`` (``payload``: the state a node hook
        gets, or the request a wrap hook gets); the value entered is called with what the hook
        returned. An exception the hook raised passes through the context manager."""


def observed(plan: Plan) -> Plan:
    """``plan`` with the hooks its observers watch run inside them."""
    observers = [(m, o) for m in plan.middleware if (o := m._hook_observer()) is not None]
    if not observers:
        return plan

    def watch(hooks: tuple[Hook, ...]) -> tuple[Hook, ...]:
        return tuple(_watched(hook, observers) for hook in hooks)

    return dataclasses.replace(
        plan,
        before_agent=watch(plan.before_agent),
        before_model=watch(plan.before_model),
        after_model=watch(plan.after_model),
        after_agent=watch(plan.after_agent),
        wrap_model_call=watch(plan.wrap_model_call),
        wrap_tool_call=watch(plan.wrap_tool_call),
    )


def _watched(hook: Hook, observers: Sequence[Watched]) -> Hook:
    """``hook`` run inside every observer but its own middleware's; the first is outermost."""
    sync, asynchronous = hook.sync, hook.asynchronous
    for owner, observer in reversed(observers):
        if owner is hook.middleware:
            continue
        if sync is not None:
            sync = _sync_call(hook, observer, sync)
        if asynchronous is not None:
            asynchronous = _async_call(hook, observer, asynchronous)
    return dataclasses.replace(hook, sync=sync, asynchronous=asynchronous)


def _sync_call(hook: Hook, observer: HookObserver, fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(payload: Any, second: Any) -> Any:
        return run_sync(_call(SYNC, hook, observer, fn, payload, second), hook.label)

    return call


def _async_call(hook: Hook, observer: HookObserver, fn: Callable[..., Any]) -> Callable[..., Any]:
    async def call(payload: Any, second: Any) -> Any:
        return await _call(ASYNC, hook, observer, fn, payload, second)

    return call


async def _call(
    mode: Mode,
    hook: Hook,
    observer: HookObserver,
    fn: Callable[..., Any],
    payload: Any,
    second: Any,
) -> Any:
    """``fn(payload, second)``: a hook called with the state and the runtime, or with the request
    and the handler."""
    with observer(hook.middleware, hook.position, payload) as returned:
        result = await mode.call(fn, payload, second)
        returned(result)
    return result
