"""The onion: one builder nests wrap hooks around a base handler, for sync and async alike.

A layer is ``layer(request, handler) -> result``. Async layers return awaitables and async handlers
return awaitables, so the same nesting serves both: ``lambda request: layer(request, inner)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from graphagent._plan import Hook
from graphagent.errors import AsyncOnlyHookError

Req = TypeVar("Req")
Res = TypeVar("Res")
Handler = Callable[[Any], Any]
Layer = Callable[[Any, Handler], Any]


def build_onion(layers: Sequence[Layer], base: Handler) -> Handler:
    """Nest ``layers`` around ``base``; the first layer is outermost."""
    handler = base
    for layer in reversed(layers):
        handler = _nest(layer, handler)
    return handler


def _nest(layer: Layer, inner: Handler) -> Handler:
    return lambda request: layer(request, inner)


def async_only_error(hooks: Sequence[Hook]) -> AsyncOnlyHookError | None:
    """The error a synchronous run must raise because some of ``hooks`` are async-only."""
    async_only = [h for h in hooks if h.sync is None]
    return async_only_hook_error(async_only[0]) if async_only else None


def async_only_hook_error(hook: Hook) -> AsyncOnlyHookError:
    """The error for ``hook``, which has no sync implementation, met by a synchronous run."""
    return AsyncOnlyHookError(
        f"{hook.label} has only an async implementation (a{hook.kind}), so it cannot run under "
        f"invoke()/stream(); run the agent with ainvoke()/astream(), or also define {hook.kind}."
    )
