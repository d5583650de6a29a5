"""``AgentMiddleware``: the base class whose overridden hooks become graph nodes and wrappers."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from langchain_core.tools import BaseTool
from langgraph.types import TracePolicy
from langgraph.typing import ContextT
from typing_extensions import TypeVar as DefaultTypeVar

from graphagent._core.agent_facts import (
    RUNNING_AGENT as RUNNING_AGENT,
    AgentFacts as AgentFacts,
    ToolCallResult,
    running_agent as running_agent,
)
from graphagent._core.hooks import jump_targets
from graphagent._core.options import refuse_unknown_keywords
from graphagent.requests import ModelCallResult, ModelRequest, ModelResponse
from graphagent.state import AgentState, JumpTo, ResponseT

if TYPE_CHECKING:
    from langgraph.prebuilt.tool_node import ToolCallRequest
    from langgraph.runtime import Runtime

    from graphagent._core.observe import HookObserver
    from graphagent._core.runtime import AgentRuntime

StateT = DefaultTypeVar("StateT", default=AgentState[Any])
"""The state a middleware's hooks receive: its ``state_schema`` merged with the others'."""
StateT_co = DefaultTypeVar("StateT_co", default=AgentState[Any], covariant=True)
"""The state a middleware reads, where only reading it matters (LangChain's name)."""
F = TypeVar("F", bound=Callable[..., Any])


ToolResult = ToolCallResult
"""What a ``wrap_tool_call`` hook returns: a ``ToolMessage`` answering the call, or a
``Command``."""


class AgentMiddleware(Generic[StateT, ContextT, ResponseT]):
    """Extend an agent by overriding any of its hooks.

    Node hooks (``before_agent``, ``before_model``, ``after_model``, ``after_agent``) become graph
    nodes that read the state and return a partial update or ``None``. Wrap hooks
    (``wrap_model_call``, ``wrap_tool_call``) surround each model / tool call. Every hook has an
    async twin prefixed with ``a``. Hooks that are not overridden cost nothing.

    What the hooks take:

    - a node hook, ``(state, runtime)``: the agent state (a dict with the fields of every state
      schema) and LangGraph's ``Runtime`` (the run's ``context``, the ``store``, the
      ``stream_writer``). It returns a dict of state updates or ``None``; the update may hold
      ``jump_to`` when the hook declares its targets with ``hook_config``;
    - a wrap hook, ``(request, handler)``: ``handler(request)`` runs the inner layers and the
      call itself, and may be called zero, one or several times; the hook returns the result;
    - ``wrap_agent``, ``(state, runtime)``: the run's input and an ``AgentRuntime``; a generator
      that yields once, where the run happens.
    """

    state_schema: type[Any] = AgentState
    """Extra state fields this middleware reads or writes (a TypedDict extending AgentState)."""

    tools: Sequence[BaseTool] = ()
    """Tools registered with the agent alongside the agent's own."""

    trace_policy: TracePolicy | None = None
    """What the traces of this middleware's hook calls record (``None``: the process-wide default
    of ``configure_trace_policy``, else everything): e.g.
    ``TracePolicy(process_inputs=omit_payload)`` keeps the spans and their timing but drops the
    state or request each hook received. It shapes the callback (LangSmith) runs of the node
    hooks and the hook spans of ``OtelTracingMiddleware(trace_hooks=True)``; the model call's own
    span still records the messages."""

    transformers: Sequence[Callable[[tuple[str, ...]], Any]] = ()
    """Stream transformers this middleware adds to the agent's ``stream_events(version="v3")``
    runs: ``StreamTransformer`` classes, or factories called as ``factory(scope)``. Each one
    registered by several middleware (or also passed to ``create_agent``) is registered once."""

    _name: str | None = None

    _unused_hooks: frozenset[str] = frozenset()
    """Hooks the class defines that this instance does not use (a built-in whose options choose
    between hooks): the agent gets no node or layer for them."""

    @property
    def name(self) -> str:
        """Unique within one agent (nodes are ``"{name}.{hook}"``); defaults to the class name."""
        return self._name or type(self).__name__

    @name.setter
    def name(self, value: str) -> None:
        self._name = value

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r}>"

    order: int = 0
    """Higher is outer: earlier for ``before_*`` and wrap hooks, later for ``after_*``. Middleware
    with equal ``order`` keep their list order."""

    def _hook_observer(self) -> HookObserver | None:
        """graphagent-internal: what watches the hook calls of the agent's other middleware, if
        this middleware does (``OtelTracingMiddleware(trace_hooks=True)``)."""
        return None

    def validate_agent(self, agent: AgentFacts) -> None:
        """Called once when an agent is built with this middleware, before anything is built.

        Override it to reject a configuration that cannot work (raise ``MiddlewareError`` naming
        this middleware and the fix), e.g. an option naming a tool the agent does not have.

        Args:
            agent: What can be checked about the agent: its tools and its checkpointer.
        """

    # The input hook: what a caller writes into the state, before any of it is stored.

    def transform_input(self, values: dict[str, Any]) -> dict[str, Any]:
        """Rewrite what a caller writes into the state before the agent stores, streams or runs
        any of it: a run's input (``invoke``, ``stream``, a parent graph calling the agent),
        ``Command(update=...)``, and ``update_state`` values. Return the values to write (a new
        dict, or ``values`` as it came). Runs before every other hook, ``wrap_agent`` included,
        in middleware order; it is synchronous under every entry point, so it must not wait on
        I/O. A ``Command(resume=...)`` value is not passed here: it answers an interrupt."""
        return values

    # Node hooks. Return a partial state update, or None.

    def before_agent(self, state: StateT, runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        """Once per invocation, before anything else."""
        return None

    async def abefore_agent(
        self, state: StateT, runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`before_agent`."""
        return None

    def before_model(self, state: StateT, runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        """Before every model call."""
        return None

    async def abefore_model(
        self, state: StateT, runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`before_model`."""
        return None

    def after_model(self, state: StateT, runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        """After every model call (in reverse middleware order)."""
        return None

    async def aafter_model(
        self, state: StateT, runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`after_model`."""
        return None

    def after_agent(self, state: StateT, runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        """Once per invocation, at the end (in reverse middleware order)."""
        return None

    async def aafter_agent(
        self, state: StateT, runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`after_agent`."""
        return None

    # Wrap hooks. Call the handler zero, one or many times.

    def wrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], ModelResponse],
    ) -> ModelCallResult:
        """Surround each model call; the first middleware is outermost.

        Args:
            request: What the model is called with; change it with ``request.override(...)``.
            handler: Runs the inner layers and the model, and returns their ``ModelResponse``.

        Returns:
            The ``ModelResponse`` (usually the handler's), an ``AIMessage`` standing for one, or
            an ``ExtendedModelResponse`` that also updates the state.
        """
        return handler(request)

    async def awrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], Awaitable[ModelResponse]],
    ) -> ModelCallResult:
        """Async twin of :meth:`wrap_model_call`."""
        return await handler(request)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolResult],
    ) -> ToolResult:
        """Surround each tool call; the first middleware is outermost.

        Args:
            request: LangGraph's ``ToolCallRequest``: the ``tool_call``, the ``tool``, the
                agent ``state`` and the ``runtime``; change it with ``request.override(...)``.
            handler: Runs the inner layers and the tool, and returns their answer.

        Returns:
            A ``ToolMessage`` answering this call (usually the handler's), or a ``Command``.
        """
        return handler(request)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        """Async twin of :meth:`wrap_tool_call`."""
        return await handler(request)

    # The agent-level hook: a generator around the whole run, on every path out of it.

    def wrap_agent(self, state: Any, runtime: AgentRuntime[ContextT]) -> Generator[None, Any, None]:
        """Surround every run: the run happens at the single ``yield``, which returns the final
        output or raises what ended the run (including an interrupted stream or a cancellation).

        Args:
            state: The run's input as the caller gave it (a ``Command`` when resuming), after
                the ``transform_input`` hooks.
            runtime: The run's ``context``, the agent's ``store`` and its ``agent_name``.
        """
        yield

    async def awrap_agent(
        self, state: Any, runtime: AgentRuntime[ContextT]
    ) -> AsyncGenerator[None, Any]:
        """Async twin of :meth:`wrap_agent` (an async generator)."""
        yield


@refuse_unknown_keywords
def hook_config(*, can_jump_to: Sequence[JumpTo] | None = None) -> Callable[[F], F]:
    """Declare, on a node-hook method, the ``jump_to`` targets it may return.

    Args:
        can_jump_to: The targets: ``"end"``, ``"tools"`` and/or ``"model"``.

    Returns:
        A decorator that marks the method and returns it unchanged.

    Raises:
        TypeError: ``can_jump_to`` is not a list (a single target, for instance).
        MiddlewareError: A target that does not exist.
    """
    targets = jump_targets("hook_config", can_jump_to)

    def mark(func: F) -> F:
        func.__can_jump_to__ = list(targets)  # type: ignore[attr-defined]
        return func

    return mark
