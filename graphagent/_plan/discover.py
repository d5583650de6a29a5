"""Hook discovery: the one place that inspects middleware classes for the hooks they implement."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from graphagent._core.hooks import (
    ALL_HOOKS,
    INPUT_HOOK,
    NODE_HOOKS,
    WRAP_HOOKS,
    Position,
    checked_hook,
    hook_like,
    jump_targets,
    near_hook,
)
from graphagent._core.log import log
from graphagent._core.records import Hook
from graphagent.errors import (
    MiddlewareError,
    MisnamedHookWarning,
    hook_label,
)
from graphagent.middleware.base import AgentMiddleware
from graphagent.state import AgentState


def discover_all(middleware: AgentMiddleware[Any, Any, Any]) -> list[Hook]:
    """Every hook ``middleware`` implements, each checked; a middleware that does nothing at
    all is noted on the ``graphagent`` logger (LangChain takes it: tests use such stubs)."""
    _check_method_names(middleware)
    found = [hook for p in ALL_HOOKS if (hook := discover(middleware, p))]
    if found:
        _warn_hook_like_names(middleware)
    if not found and _does_nothing(middleware):
        log.info(
            "'%s' defines no hook, no tools and no state_schema, so it does nothing; implement "
            "one of %s (or its async twin) or %s, or leave it out of the middleware list",
            middleware.name,
            ", ".join((*NODE_HOOKS, *WRAP_HOOKS)),
            INPUT_HOOK,
        )
    return found


def _check_method_names(middleware: AgentMiddleware[Any, Any, Any]) -> None:
    """Refuse a method named one typo away from a hook: it would silently never run."""
    for attr in _own_methods(middleware):
        hook = near_hook(attr)
        if hook:
            raise MiddlewareError(
                f"'{middleware.name}' defines {attr}(), which is not a hook and so never "
                f"runs; rename it to {hook} (or, for a helper of your own, to a name "
                "starting with an underscore)."
            )


def _warn_hook_like_names(middleware: AgentMiddleware[Any, Any, Any]) -> None:
    """Warn of a method named like a hook that is none, on a middleware that has hooks (one
    without them is a set of tools or state, free to name its methods as it likes)."""
    for attr in _own_methods(middleware):
        meant = hook_like(attr)
        if meant is not None:
            warnings.warn(
                f"'{middleware.name}' defines {attr}(), which is not a hook and so never runs; "
                f"the closest hook is {meant}. Rename it, or start a helper's name with an "
                "underscore.",
                MisnamedHookWarning,
                stacklevel=7,  # create_agent's caller, past its argument check
            )


def _own_methods(middleware: AgentMiddleware[Any, Any, Any]) -> tuple[str, ...]:
    cls: type = type(middleware)
    return _methods_of(cls)


@functools.lru_cache(maxsize=1024)
def _methods_of(cls: type) -> tuple[str, ...]:
    """The methods ``cls`` and its bases below ``AgentMiddleware`` define, read once a class."""
    mro = cls.__mro__
    return tuple(
        attr
        for klass in mro[: mro.index(AgentMiddleware)]
        for attr, value in vars(klass).items()
        if callable(value) or isinstance(value, staticmethod | classmethod)
    )


def _does_nothing(middleware: AgentMiddleware[Any, Any, Any]) -> bool:
    return (
        not middleware.tools
        and middleware.state_schema is AgentState
        and type(middleware).validate_agent is AgentMiddleware.validate_agent
    )


def discover(middleware: AgentMiddleware[Any, Any, Any], position: Position) -> Hook | None:
    """The hook ``position`` of ``middleware`` if its class overrides it (or its async twin) and
    the instance uses it."""
    if position in middleware._unused_hooks:
        return None
    cls = type(middleware)
    sync = _overridden(cls, position)
    asynchronous = None if position == INPUT_HOOK else _overridden(cls, "a" + position)
    if sync is None and asynchronous is None:
        return None
    declared: list[Any] = []
    for func in (sync, asynchronous):
        declared += getattr(func, "__can_jump_to__", None) or []
    targets = jump_targets(hook_label(middleware.name, position), declared or None, position)
    return Hook(
        middleware=middleware,
        position=position,
        sync=_checked(middleware, position) if sync else None,
        asynchronous=_checked(middleware, "a" + position) if asynchronous else None,
        can_jump_to=targets,
    )


def _checked(middleware: AgentMiddleware[Any, Any, Any], method: str) -> Any:
    label = hook_label(middleware.name, method)
    return checked_hook(label, method, getattr(middleware, method), bound=True)


def _overridden(cls: type, attr: str) -> Callable[..., Any] | None:
    func = getattr(cls, attr, None)
    if func is None or func is getattr(AgentMiddleware, attr):
        return None
    return func  # type: ignore[no-any-return]
