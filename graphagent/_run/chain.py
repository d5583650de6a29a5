"""The onion: one builder nests wrap hooks around a base handler, for sync and async alike.

A layer is ``layer(request, handler) -> result``. Async layers return awaitables and async handlers
return awaitables, so the same nesting serves both: ``lambda request: layer(request, inner)``.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeAlias, TypeVar

from graphagent._core.bridge import SYNC, Mode, bridge_to_async, in_mode
from graphagent._core.records import Hook, async_only_hook_error

RequestT = TypeVar("RequestT")
"""What one call takes: a ``ModelRequest``, a ``ToolCallRequest``."""
ResultT = TypeVar("ResultT")
"""What one call gives back: the model call's ``Outcome``, a ``ToolCallResult``."""
ReturnT = TypeVar("ReturnT")
"""What a handler returns: the result in a sync run, an awaitable of it in an async one."""

Handler: TypeAlias = Callable[[RequestT], ReturnT]
"""``handler(request)``: the inner layers and the call itself."""
Layer: TypeAlias = Callable[[RequestT, Handler[RequestT, ReturnT]], ReturnT]
"""``layer(request, handler)``: one wrap hook around the handler, in the calling convention of
the run (its result, or an awaitable of it)."""
LayerCore: TypeAlias = Callable[[RequestT, Handler[RequestT, Any]], Coroutine[Any, Any, ResultT]]
"""A layer written once as an ``async def``; its handler follows the run's convention."""
MakeLayer: TypeAlias = Callable[[Hook, Callable[..., Any], Mode], LayerCore[RequestT, ResultT]]
"""``make(hook, implementation, mode)``: the layer of one wrap hook, an ``async def`` written
once; ``implementation`` is the hook's sync or async method, as ``mode`` calls for."""


def build_onion(
    layers: Sequence[Layer[RequestT, ReturnT]], base: Handler[RequestT, ReturnT]
) -> Handler[RequestT, ReturnT]:
    """Nest ``layers`` around ``base``; the first layer is outermost."""
    handler = base
    for layer in reversed(layers):
        handler = _nest(layer, handler)
    return handler


def _nest(
    layer: Layer[RequestT, ReturnT], inner: Handler[RequestT, ReturnT]
) -> Handler[RequestT, ReturnT]:
    return lambda request: layer(request, inner)


def hook_layers(
    hooks: Sequence[Hook], mode: Mode, make: MakeLayer[RequestT, ResultT]
) -> list[Layer[RequestT, Any]]:
    """One layer per hook for a run of ``mode``, outermost first. Under an async run a sync-only
    hook runs in a bridge thread; under a sync run an async-only hook is an error (see
    :func:`async_only_error`, which callers check first)."""
    return [_hook_layer(hook, mode, make) for hook in hooks]


def _hook_layer(hook: Hook, mode: Mode, make: MakeLayer[RequestT, ResultT]) -> Layer[RequestT, Any]:
    own = hook.asynchronous if mode.asynchronous else hook.sync
    if own is not None:
        return in_mode(make(hook, own, mode), mode, hook.label)
    if mode.asynchronous and hook.sync is not None:
        return bridge_to_async(in_mode(make(hook, hook.sync, SYNC), SYNC, hook.label))
    raise async_only_hook_error(hook)
