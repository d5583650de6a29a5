"""What each hook looks like (its name, parameters, sync or async) and the checks that a function
fits, run when a decorator is applied and when an agent is built."""

from __future__ import annotations

import inspect
import re
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from langgraph.config import get_config

from graphagent.errors import MiddlewareError

JumpTo = Literal["end", "tools", "model"]
"""Where a node hook may send the run with ``jump_to``: the end, the tools or the model."""
JUMP_TARGETS: tuple[JumpTo, ...] = get_args(JumpTo)

Position = Literal[
    "transform_input",
    "wrap_agent",
    "before_agent",
    "before_model",
    "wrap_model_call",
    "after_model",
    "wrap_tool_call",
    "after_agent",
]
"""Every hook, in the order a run meets them: the one list the others derive from."""
POSITIONS: tuple[Position, ...] = get_args(Position)
INPUT_HOOK: Position = "transform_input"
"""Sync only: it runs when a run is called, before anything could await."""
NODE_HOOKS: tuple[Position, ...] = tuple(
    p for p in POSITIONS if p.startswith(("before_", "after_"))
)
"""The hooks that become graph nodes, in run order."""
WRAP_HOOKS: tuple[Position, ...] = tuple(p for p in POSITIONS if p.startswith("wrap_"))
"""The hooks that wrap a run or a call, outermost first."""
CALL_WRAPPERS: tuple[Position, ...] = tuple(p for p in WRAP_HOOKS if p.endswith("_call"))
"""The wrap hooks around one model or tool call (``wrap_agent`` wraps the whole run)."""
ALL_HOOKS: tuple[Position, ...] = (*NODE_HOOKS, *WRAP_HOOKS, INPUT_HOOK)
"""Every hook, node hooks first: the order hooks are discovered and reported in."""

# Every hook method name -> (the hook it implements, whether it is the async twin).
_METHODS = {kind: (kind, False) for kind in ALL_HOOKS} | {
    "a" + kind: (kind, True) for kind in (*NODE_HOOKS, *WRAP_HOOKS)
}


def _arguments(kind: str) -> tuple[str, ...]:
    """The arguments a hook is called with."""
    if kind == INPUT_HOOK:
        return ("values",)
    if kind in ("wrap_model_call", "wrap_tool_call"):
        return ("request", "handler")
    return ("state", "runtime")


def checked_hook(label: str, method: str, func: Callable[..., Any], *, bound: bool) -> Any:
    """``func``, to be called with the arguments of the hook method ``method``.

    Raises ``MiddlewareError`` when ``func`` is sync where the hook is async (or the reverse) or
    cannot take the hook's arguments. A node hook may, as in LangChain (where langgraph calls
    them), take only ``state``, and may name any of ``config``, ``writer`` and ``store``, which
    it then gets by keyword: the run's config, its stream writer and the agent's store. Such a
    hook comes back wrapped, to be called as every node hook is: with state and runtime.
    ``bound``: ``func`` is a method (the fix shown includes ``self``).
    """
    function = getattr(func, "__func__", func)  # what a class's methods share
    fit = _FITTING.get(function, {}).get(method)
    if fit is None:
        fit = _fit(label, method, func, bound=bound)
        _FITTING.setdefault(function, {})[method] = fit
    return func if fit == _PLAIN_FIT else Adapted(func, fit.runtime, fit.extras)


@dataclass(frozen=True, slots=True)
class _Fit:
    """How a function takes a hook's arguments."""

    runtime: bool = True
    """It takes the runtime after the state (node hooks may take the state alone)."""
    extras: tuple[str, ...] = ()
    """The keyword arguments of :data:`NODE_EXTRAS` it names."""


_PLAIN_FIT = _Fit()

NODE_EXTRAS = ("config", "writer", "store")
"""What a node hook gets by keyword when its signature names it, as langgraph gives a node."""

# How the functions found take their arguments, by hook method: every agent built from one
# middleware class checks its methods once (signatures are slow to read; 20 middleware have 80
# methods).
_FITTING: weakref.WeakKeyDictionary[Any, dict[str, _Fit]] = weakref.WeakKeyDictionary()


def _fit(label: str, method: str, func: Callable[..., Any], *, bound: bool) -> _Fit:
    kind, asynchronous = _METHODS[method]
    _check_flavor(label, method, func, kind, asynchronous)
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):  # a callable Python cannot introspect: trust it
        return _PLAIN_FIT
    arguments = _arguments(kind)
    if kind not in NODE_HOOKS:
        if _takes(signature, len(arguments)):
            return _PLAIN_FIT
    else:
        extras = _named_extras(signature)
        for fit in (_Fit(True, extras), _Fit(False, extras)):
            if _takes(signature, 2 if fit.runtime else 1, extras):
                return fit
    called_with = ", ".join(arguments)
    args = f"self, {called_with}" if bound else called_with
    name = method if bound else getattr(func, "__name__", method)
    prefix = "async " if asynchronous else ""
    may = " (it may also take config, writer and store by name)" if kind in NODE_HOOKS else ""
    raise MiddlewareError(
        f"{label} takes {_shown(signature)}, but {kind} is called with ({called_with}); "
        f"define it as `{prefix}def {name}({args})`{may}."
    )


def _named_extras(signature: inspect.Signature) -> tuple[str, ...]:
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    parameters = signature.parameters
    return tuple(n for n in NODE_EXTRAS if n in parameters and parameters[n].kind in keyword)


class Adapted:
    """A node hook that takes other arguments than ``(state, runtime)``, called as every node
    hook is: with state and runtime. It gets the runtime only if it takes it, and by keyword
    the ``config``, ``writer`` and ``store`` it names."""

    __slots__ = ("extras", "func", "runtime")

    def __init__(self, func: Callable[..., Any], runtime: bool, extras: tuple[str, ...]) -> None:
        self.func, self.runtime, self.extras = func, runtime, extras

    def __call__(self, state: Any, runtime: Any) -> Any:
        named = {name: _extra(name, runtime) for name in self.extras}
        if self.runtime:
            return self.func(state, runtime, **named)
        return self.func(state, **named)


def _extra(name: str, runtime: Any) -> Any:
    if name == "config":
        return get_config()
    if name == "writer":
        return runtime.stream_writer
    return runtime.store


def near_hook(name: str) -> str | None:
    """The hook method ``name`` is one typo away from (a letter added, dropped, changed or two
    swapped), if any; hook names themselves and ``_private`` names are never near."""
    if name in _METHODS or name.startswith("_"):
        return None
    return next((hook for hook in _METHODS if _one_edit_apart(name, hook)), None)


_HOOKISH = re.compile(r"a?(?:before|after|on|wrap)_\w*?(?:agent|model|llm|tool|call)\w*")


def hook_like(name: str) -> str | None:
    """The hook a method named like one but none (``before_tool``, ``on_model_end``) was
    probably meant to be; ``None`` for hooks, ``_private`` names, names not shaped like a hook,
    and helpers named after the hook that calls them (``after_agent_cleanup``)."""
    if name in _METHODS or name.startswith("_") or not _HOOKISH.fullmatch(name):
        return None
    if any(name.startswith(f"{method}_") for method in _METHODS):
        return None
    if "tool" in name:
        return "wrap_tool_call"
    noun = "agent" if "agent" in name else "model"
    if "after" in name or "end" in name:
        return f"after_{noun}"
    if "before" in name or "start" in name:
        return f"before_{noun}"
    return "wrap_agent" if noun == "agent" else "wrap_model_call"


def _check_flavor(
    label: str, method: str, func: Callable[..., Any], kind: str, asynchronous: bool
) -> None:
    actual, wanted = _flavor(func), _expected(kind, asynchronous)
    if asynchronous:
        # A sync wrapper (functools.wraps) around an async function is async enough.
        fits = wanted in (actual, _flavor(inspect.unwrap(func)))
    else:
        # A plain def may return a generator, so only a definite mismatch is refused.
        fits = actual == wanted or (kind == "wrap_agent" and actual == _PLAIN)
    if fits:
        return
    fix = f"make it {wanted}"
    if actual == _expected(kind, not asynchronous):  # the other twin, misnamed
        twin = kind if asynchronous else "a" + kind
        fix = f"{fix}, or rename it to {twin}" if asynchronous else f"rename it to {twin}, or {fix}"
    yields = " that yields once" if kind == "wrap_agent" else ""
    raise MiddlewareError(f"{label} is {actual}, but {method} must be {wanted}{yields}; {fix}.")


_PLAIN, _ASYNC = "a plain def", "an async def"
_GENERATOR, _ASYNC_GENERATOR = "a generator", "an async generator"


def _expected(kind: str, asynchronous: bool) -> str:
    if kind == "wrap_agent":
        return _ASYNC_GENERATOR if asynchronous else _GENERATOR
    return _ASYNC if asynchronous else _PLAIN


def _flavor(func: Callable[..., Any]) -> str:
    if inspect.isasyncgenfunction(func):
        return _ASYNC_GENERATOR
    if inspect.iscoroutinefunction(func):
        return _ASYNC
    if inspect.isgeneratorfunction(func):
        return _GENERATOR
    return _PLAIN


def _takes(signature: inspect.Signature, count: int, keywords: Iterable[str] = ()) -> bool:
    try:
        signature.bind(*range(count), **dict.fromkeys(keywords))
    except TypeError:
        return False
    return True


def _shown(signature: inspect.Signature) -> str:
    """``(state, *, runtime)``: the parameters without their annotations."""
    bare = [p.replace(annotation=p.empty) for p in signature.parameters.values()]
    return str(signature.replace(parameters=bare, return_annotation=signature.empty))


def _one_edit_apart(a: str, b: str) -> bool:
    if len(a) < len(b):
        a, b = b, a
    if len(a) == len(b) + 1:  # a letter added or dropped
        return any(a[:i] + a[i + 1 :] == b for i in range(len(a)))
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y]
    if len(a) != len(b) or len(diff) not in (1, 2):
        return False
    first, last = diff[0], diff[-1]  # one letter changed, or two neighbours swapped
    return len(diff) == 1 or (last == first + 1 and a[first] == b[last] and a[last] == b[first])


def jump_targets(where: str, can_jump_to: Any, hook: str | None = None) -> tuple[JumpTo, ...]:
    """The targets a ``can_jump_to`` declaration of ``where`` names, checked: the one rule for
    ``hook_config``, the decorators and the build. ``hook`` is the hook it declares them on,
    when known (only node hooks can jump)."""
    if can_jump_to is None:
        return ()
    if isinstance(can_jump_to, str) or not isinstance(can_jump_to, Iterable):
        got = "a str" if isinstance(can_jump_to, str) else type(can_jump_to).__name__
        example = can_jump_to if isinstance(can_jump_to, str) else "end"
        raise TypeError(
            f"{where}(can_jump_to={can_jump_to!r}) got {got}; pass a list of targets, "
            f"e.g. can_jump_to=[{example!r}]."
        )
    targets = tuple(dict.fromkeys(can_jump_to))
    unknown = [t for t in targets if t not in JUMP_TARGETS]
    if unknown:
        raise MiddlewareError(
            f"{where}(can_jump_to=...) got unknown target(s) {unknown}; "
            f"the targets are {list(JUMP_TARGETS)}."
        )
    if targets and hook is not None and hook not in NODE_HOOKS:
        raise MiddlewareError(
            f"{where} does not take can_jump_to: only node hooks ({', '.join(NODE_HOOKS)}) can "
            "jump; move the decision into a before_model or after_model hook."
        )
    return targets
