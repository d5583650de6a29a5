"""Decorators that turn one function into a middleware: ``@before_model``, ``@wrap_model_call``, …

Each decorator works bare (``@before_model``) or with options
(``@before_model(name=..., state_schema=..., tools=..., can_jump_to=...)``) and accepts a sync or an
async function; an async function becomes the hook's async twin.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast, overload

from langchain_core.messages import SystemMessage

from graphagent._core.hooks import checked_hook, jump_targets
from graphagent._core.options import refuse_unknown_options
from graphagent.errors import hook_label
from graphagent.middleware.base import AgentMiddleware
from graphagent.requests import ModelCallResult, ModelRequest, ModelResponse
from graphagent.state import AgentState, JumpTo

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool


_OPTIONS = """
Args:
    func: The function to turn into a middleware (given when the decorator is used bare, as
        ``@{hook}``). A plain function gives the sync hook, an ``async def`` the async one.
    name: The middleware's name, unique within one agent; defaults to the function's name.
    state_schema: A TypedDict extending ``AgentState`` with the state fields the hook reads or
        writes.
    tools: Tools the middleware registers with the agent, alongside the agent's own.
    can_jump_to: The ``jump_to`` targets the hook may return (``"end"``, ``"tools"``,
        ``"model"``). Node hooks only: the wrap decorators refuse it.
    order: Higher is outer: earlier for ``before_*`` and wrap hooks, later for ``after_*``.

Returns:
    A middleware instance, or, when called with options only, a decorator that makes one.
"""


def _signature(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    state_schema: type[Any] | None = None,
    tools: Sequence[BaseTool] | None = None,
    can_jump_to: Sequence[JumpTo] | None = None,
    order: int = 0,
) -> Any:
    """What every hook decorator takes: its signature, shown by ``help()`` and the docs."""


_SIGNATURE = inspect.signature(_signature)
_DECORATOR_OPTIONS = tuple(_SIGNATURE.parameters)[1:]


class HookDecorator(Protocol):
    """What each hook decorator is: used bare (``@before_model``) or with options."""

    @overload
    def __call__(self, func: Callable[..., Any], /) -> AgentMiddleware: ...

    @overload
    def __call__(
        self,
        func: None = None,
        /,
        *,
        name: str | None = None,
        state_schema: type[Any] | None = None,
        tools: Sequence[BaseTool] | None = None,
        can_jump_to: Sequence[JumpTo] | None = None,
        order: int = 0,
    ) -> Callable[[Callable[..., Any]], AgentMiddleware]: ...


def _hook_decorator(hook: str, doc: str) -> HookDecorator:
    """The decorator of ``hook``: a plain function, as LangChain's decorators are."""

    def decorator(
        func: Callable[..., Any] | None = None, /, **options: Any
    ) -> AgentMiddleware | Callable[[Callable[..., Any]], AgentMiddleware]:
        refuse_unknown_options(f"@{hook}()", options, _DECORATOR_OPTIONS)
        name: str | None = options.get("name")
        state_schema: type[Any] | None = options.get("state_schema")
        tools: Sequence[BaseTool] | None = options.get("tools")
        order: int = options.get("order", 0)
        targets = jump_targets(f"@{hook}", options.get("can_jump_to"), hook)

        def build(fn: Callable[..., Any]) -> AgentMiddleware:
            method_name = ("a" if _is_async(fn) else "") + hook
            label = hook_label(name or fn.__name__, method_name)
            checked_hook(label, method_name, fn, bound=False)
            method = _as_method(fn)
            if targets:
                method.__can_jump_to__ = list(targets)  # type: ignore[attr-defined]
            return middleware_from_methods(
                name or fn.__name__,
                {method_name: method},
                state_schema=state_schema,
                tools=tools,
                order=order,
                doc=fn.__doc__,
                module=fn.__module__,
            )

        return build if func is None else build(func)

    decorator.__name__ = decorator.__qualname__ = hook
    decorator.__doc__ = doc + "\n" + _OPTIONS.format(hook=hook)
    decorator.__signature__ = _SIGNATURE  # type: ignore[attr-defined]
    return cast(HookDecorator, decorator)


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn)


def _as_method(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` as a method: called without ``self``, and showing ``fn``'s parameters after
    ``self`` to ``inspect.signature`` (so the agent's build checks what ``fn`` takes)."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def amethod(self: AgentMiddleware, *args: Any) -> Any:
            return await fn(*args)

        method: Callable[..., Any] = amethod
    else:

        @functools.wraps(fn)
        def method(self: AgentMiddleware, *args: Any) -> Any:
            return fn(*args)

    with contextlib.suppress(TypeError, ValueError):  # no signature: the build trusts it
        parameters = inspect.signature(fn).parameters.values()
        self = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
        method.__signature__ = inspect.Signature([self, *parameters])  # type: ignore[attr-defined]
    return method


def middleware_from_methods(
    name: str,
    methods: dict[str, Callable[..., Any]],
    *,
    state_schema: type[Any] | None = None,
    tools: Sequence[BaseTool] | None = None,
    order: int = 0,
    doc: str | None = None,
    module: str | None = None,
) -> AgentMiddleware:
    """A one-off ``AgentMiddleware`` subclass named ``name`` with the given hook methods."""
    namespace: dict[str, Any] = {
        **methods,
        "state_schema": state_schema or AgentState,
        "tools": list(tools or ()),
        "order": order,
        "__doc__": doc,
        "__module__": module or __name__,
    }
    cls = type(name, (AgentMiddleware,), namespace)
    return cls()  # type: ignore[no-any-return]


before_agent = _hook_decorator(
    "before_agent",
    "Run ``fn(state, runtime)`` once per invocation, first; it returns a state update or None.",
)
before_model = _hook_decorator(
    "before_model",
    "Run ``fn(state, runtime)`` before every model call; it returns a state update or None.",
)
after_model = _hook_decorator(
    "after_model",
    "Run ``fn(state, runtime)`` after every model call; it returns a state update or None.",
)
after_agent = _hook_decorator(
    "after_agent",
    "Run ``fn(state, runtime)`` once per invocation, last; it returns a state update or None.",
)
wrap_model_call = _hook_decorator(
    "wrap_model_call",
    "Wrap every model call: ``fn(request, handler)`` calls ``handler(request)`` zero, one or "
    "more times and returns the response.",
)
wrap_tool_call = _hook_decorator(
    "wrap_tool_call",
    "Wrap every tool call: ``fn(request, handler)`` returns a ``ToolMessage`` or a ``Command``.",
)
wrap_agent = _hook_decorator(
    "wrap_agent",
    "Wrap every run with a generator ``fn(state, runtime)`` that yields once, where the run "
    "happens; async generators too.",
)

PromptFn = Callable[[ModelRequest[Any]], "str | SystemMessage | Awaitable[str | SystemMessage]"]


@overload
def dynamic_prompt(func: PromptFn, /) -> AgentMiddleware: ...


@overload
def dynamic_prompt(
    func: None = None,
    /,
    *,
    name: str | None = None,
    state_schema: type[Any] | None = None,
    tools: Sequence[BaseTool] | None = None,
    order: int = 0,
) -> Callable[[PromptFn], AgentMiddleware]: ...


def dynamic_prompt(
    func: PromptFn | None = None,
    /,
    *,
    name: str | None = None,
    state_schema: type[Any] | None = None,
    tools: Sequence[BaseTool] | None = None,
    order: int = 0,
) -> AgentMiddleware | Callable[[PromptFn], AgentMiddleware]:
    """Set the system message of each model call from ``fn(request) -> str | SystemMessage``.

    A sync function serves sync and async runs alike; an async one serves async runs.

    Args:
        func: The function (given when the decorator is used bare, as ``@dynamic_prompt``).
        name: The middleware's name, unique within one agent; defaults to the function's name.
        state_schema: A TypedDict extending ``AgentState`` with the state fields it reads.
        tools: Tools the middleware registers with the agent, alongside the agent's own.
        order: Higher is outer among the ``wrap_model_call`` hooks.

    Returns:
        A middleware instance, or, when called with options only, a decorator that makes one.
    """

    def build(fn: PromptFn) -> AgentMiddleware:
        methods: dict[str, Any] = {}
        if inspect.iscoroutinefunction(fn):

            async def awrap(
                self: AgentMiddleware,
                request: ModelRequest[Any],
                handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse]],
            ) -> ModelCallResult:
                prompt = await fn(request)
                return await handler(_with_prompt(request, prompt))

            methods["awrap_model_call"] = awrap
        else:

            def wrap(
                self: AgentMiddleware,
                request: ModelRequest[Any],
                handler: Callable[[ModelRequest[Any]], ModelResponse],
            ) -> ModelCallResult:
                return handler(_with_prompt(request, fn(request)))

            async def awrap_sync(
                self: AgentMiddleware,
                request: ModelRequest[Any],
                handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse]],
            ) -> ModelCallResult:
                return await handler(_with_prompt(request, fn(request)))

            methods["wrap_model_call"] = wrap
            methods["awrap_model_call"] = awrap_sync
        methods["cache_volatile"] = ("system prompt",)  # explain(agent) names it
        return middleware_from_methods(
            name or fn.__name__,
            methods,
            state_schema=state_schema,
            tools=tools,
            order=order,
            doc=fn.__doc__,
            module=fn.__module__,
        )

    return build if func is None else build(func)


def _with_prompt(request: ModelRequest[Any], prompt: Any) -> ModelRequest[Any]:
    if isinstance(prompt, SystemMessage):
        return request.override(system_message=prompt)
    if isinstance(prompt, str):
        return request.override(system_message=SystemMessage(prompt))
    raise TypeError(
        f"A @dynamic_prompt function must return a str or a SystemMessage, got "
        f"{type(prompt).__name__}."
    )
