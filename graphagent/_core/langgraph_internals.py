"""The one place that reaches into langgraph internals, because no public way exists.

- ``RunnableCallable`` lets a node carry a sync and an async function without the per-call
  tracing overhead of ``RunnableLambda``; langgraph's own nodes are built from it.
- ``InlineToolNode`` is ``ToolNode`` without a thread pool per single tool call (see below).
- ``stop_subgraphs_when_closed`` makes closing a sync stream stop the subgraphs still running.
- ``update_pairs`` reads a state update the way langgraph does (``Command._update_as_tuples``).
- ``overwritten`` / ``is_overwrite`` read an ``Overwrite`` in any of the forms langgraph accepts.
- ``is_control_flow``: what a retry or an error handler must let through untouched.
- ``is_interrupt_id``: how LangGraph tells a resume map (answers keyed by interrupt id) from a
  plain resume value.
- ``REDUCER_CHANNELS``: the channel kinds that apply a reducer to each write (``DeltaChannel``
  is newer than the oldest langgraph graphagent supports).
- ``INTERRUPT``: the key of interrupts in langgraph's outputs (langgraph keeps its constant
  private).
- ``child_mux``: the event pipeline of a nested run, for the ``run.subagents`` handles
  (``_core/subagents.py`` extends langgraph's ``SubgraphTransformer`` through the hooks it
  documents for subclasses; building a child pipeline has no public way).
- ``parent_channels`` / ``sends_to``: what a graph running as a task of a parent can see of it
  (the parent's channels, the ``Send`` packets of its step), which langgraph passes in the task's
  config but does not publish.
- ``lent_checkpointer``: the config under which a graph reads its state from a checkpointer its
  parent lends it, as langgraph's own ``get_state(..., subgraphs=True)`` does.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Mapping, Sequence
from functools import partial
from types import TracebackType
from typing import Any, cast

from langchain_core.messages import ToolCall
from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CALL,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_CHECKPOINTER,
    CONFIG_KEY_READ,
    CONFIG_KEY_READ_STATE,
    PUSH,
    TASKS,
)
from langgraph._internal._runnable import RunnableCallable
from langgraph.channels import BaseChannel, BinaryOperatorAggregate
from langgraph.errors import (
    EmptyChannelError,
    GraphBubbleUp,
    GraphDrained,
    GraphRecursionError,
    is_invalid_resume,
)
from langgraph.prebuilt import ToolNode, ToolRuntime
from langgraph.pregel._algo import local_read
from langgraph.pregel._loop import SyncPregelLoop
from langgraph.pregel._utils import is_xxh3_128_hexdigest as is_interrupt_id
from langgraph.runtime import Runtime
from langgraph.types import Command, Overwrite, Send

from graphagent.errors import AgentInputError

__all__ = [
    "REDUCER_CHANNELS",
    "STREAM_CLOSED",
    "InlineToolNode",
    "RunnableCallable",
    "child_mux",
    "closed_stream",
    "is_control_flow",
    "is_interrupt_id",
    "is_overwrite",
    "lending",
    "lent_checkpointer",
    "overwritten",
    "parent_channels",
    "sends_to",
    "task_runnable",
    "update_pairs",
]

STREAM_CLOSED = "graphagent: the stream of the run was closed"
"""The drain reason of a run whose sync stream its consumer closed."""

_OWN_FIELDS = ("state", "tool_call_id", "config", "tools")
_SHARED_FIELDS = tuple(f.name for f in dataclasses.fields(ToolRuntime) if f.name not in _OWN_FIELDS)
_PRIVATE_API = (
    "_func",
    "_afunc",
    "_run_one",
    "_arun_one",
    "_combine_tool_outputs",
    "_extract_state",
)

INTERRUPT = "__interrupt__"


class InlineToolNode(ToolNode):
    """``ToolNode`` that runs a single tool call right in the node's task.

    graphagent dispatches each tool call as a task of its own (one ``Send`` each), and
    ``ToolNode`` starts a new thread pool (sync) or gathers a new asyncio task (async) for every
    task even when it holds one call — a new OS thread per tool step. With one call there is
    nothing to run in parallel, so it runs here; any other input takes ``ToolNode``'s own path.
    Parallel calls still run in parallel: they are separate tasks, which langgraph runs
    concurrently.
    """

    def _func(self, input: Any, config: RunnableConfig, runtime: Runtime[Any]) -> Any:
        call = _single_call(input)
        if call is None:
            return super()._func(input, config, runtime)
        output = self._run_one(call, "tool_calls", self._runtime(call, input, config, runtime))
        return self._combine_tool_outputs([output], "tool_calls")

    async def _afunc(self, input: Any, config: RunnableConfig, runtime: Runtime[Any]) -> Any:
        call = _single_call(input)
        if call is None:
            return await super()._afunc(input, config, runtime)
        tool_runtime = self._runtime(call, input, config, runtime)
        output = await self._arun_one(call, "tool_calls", tool_runtime)
        return self._combine_tool_outputs([output], "tool_calls")

    def _runtime(
        self, call: ToolCall, input: Any, config: RunnableConfig, runtime: Runtime[Any]
    ) -> ToolRuntime:
        state: Any = self._extract_state(input, config)  # a dict, or the schema's model
        return ToolRuntime(
            state=state,
            tool_call_id=call["id"],
            config=config,
            tools=list(self.tools_by_name.values()),
            **{name: getattr(runtime, name) for name in _SHARED_FIELDS if hasattr(runtime, name)},
        )


def update_pairs(update: Any) -> Sequence[tuple[str, Any]]:
    """A state update — a dict, ``(key, value)`` pairs, or an object such as a pydantic state —
    as the ``(key, value)`` pairs langgraph writes for it."""
    return Command(update=update)._update_as_tuples()


def _single_call(input: Any) -> ToolCall | None:
    """The task's one tool call, if its input is what graphagent sends: one bare call in a list
    (``ToolNode`` reads the state itself). Any other input takes ``ToolNode``'s own path."""
    if isinstance(input, list) and len(input) == 1 and input[0].get("type") == "tool_call":
        return cast("ToolCall", input[0])
    return None


if not all(hasattr(ToolNode, name) for name in _PRIVATE_API):  # pragma: no cover
    # A langgraph whose ToolNode changed shape: stay correct, give up the optimisation.
    InlineToolNode = ToolNode  # type: ignore[misc,assignment]


def stop_subgraphs_when_closed() -> None:
    """Closing a sync stream stops the subgraphs its run is still running.

    Closing an async stream cancels the tasks running nodes, and with them any subgraph (an agent
    added as a node). A sync stream cannot cancel a thread: langgraph waits for every running
    node to finish, so an agent running as a node would go on calling its model and tools for
    nobody. Subgraphs share the run's ``RunControl``, and a drained control stops each graph
    before its next step, so the root loop requests a drain when it is left by ``GeneratorExit``.
    """
    if hasattr(SyncPregelLoop, "_graphagent_drains_on_close"):
        return
    leave = SyncPregelLoop.__exit__

    def __exit__(
        self: SyncPregelLoop,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        control = getattr(self, "control", None)
        if exc_type is GeneratorExit and control is not None and not self.is_nested:
            control.request_drain(STREAM_CLOSED)
        return leave(self, exc_type, exc_value, traceback)

    SyncPregelLoop.__exit__ = __exit__  # type: ignore[method-assign]
    SyncPregelLoop._graphagent_drains_on_close = True  # type: ignore[attr-defined]


def closed_stream(error: BaseException) -> bool:
    """Whether ``error`` stopped a subgraph because the stream of its run was closed."""
    return isinstance(error, GraphDrained) and error.reason == STREAM_CLOSED


stop_subgraphs_when_closed()


def overwritten(value: Any) -> Any:
    """The value an update writes: what an ``Overwrite`` wraps (the class, or the dict forms
    langgraph also reads), or ``value`` itself."""
    is_overwrite, wrapped = _get_overwrite(value)
    return wrapped if is_overwrite else value


def is_overwrite(value: Any) -> bool:
    """Whether an update writes ``value`` over a reducer field rather than through its reducer."""
    return _get_overwrite(value)[0]


try:
    from langgraph.channels.binop import _get_overwrite
except ImportError:  # pragma: no cover - a langgraph that moved it: the class alone

    def _get_overwrite(value: Any) -> tuple[bool, Any]:
        return isinstance(value, Overwrite), getattr(value, "value", None)


REDUCER_CHANNELS: tuple[type[BaseChannel[Any, Any, Any]], ...]
try:
    from langgraph.channels import DeltaChannel
except ImportError:  # pragma: no cover - a langgraph older than DeltaChannel
    REDUCER_CHANNELS = (BinaryOperatorAggregate,)
else:
    REDUCER_CHANNELS = (BinaryOperatorAggregate, DeltaChannel)


def is_control_flow(error: BaseException) -> bool:
    """Whether ``error`` is LangGraph's business, not a failure to retry or report: an interrupt
    and the rest of its control flow, a resume answer that does not fit the interrupt's
    ``response_schema`` (the interrupt must stay open and take another answer), a run stopped
    for looping (the ceiling on model calls, the recursion limit: retrying would loop on), or
    input that cannot reach the model (retrying sends it again)."""
    never_retried = GraphBubbleUp | GraphRecursionError | AgentInputError
    return isinstance(error, never_retried) or is_invalid_resume(error)


def child_mux(mux: Any, scope: tuple[str, ...]) -> Any:
    """A new event pipeline for the nested run at ``scope`` under ``mux``, as langgraph builds
    one for each ``run.subgraphs`` handle; ``None`` when ``mux`` cannot make one."""
    if mux is None:
        return None
    try:
        return mux._make_child(scope)
    except RuntimeError:  # a mux built from ready transformers, not factories
        return None


def parent_channels(config: Mapping[str, Any]) -> Mapping[str, BaseChannel[Any, Any, Any]] | None:
    """The channels of the parent graph whose task is running now (``config`` is the task's, as a
    subgraph receives it), or ``None`` outside a task, or where langgraph does not show them."""
    read = (config.get("configurable") or {}).get(CONFIG_KEY_READ)
    if isinstance(read, partial) and read.func is local_read and len(read.args) > 1:
        channels = read.args[1]
        if isinstance(channels, Mapping):
            return channels
    return None


def task_runnable(config: Mapping[str, Any]) -> Any:
    """The runnable of the parent's node whose task is running now: for a task a ``Send``
    started, from its state reader; for one an edge started, from the task its call function
    holds (its ``proc`` is the node's runnable followed by the channel writers). ``None`` where
    langgraph shows neither."""
    configurable = config.get("configurable") or {}
    read_state = configurable.get(CONFIG_KEY_READ_STATE)
    if isinstance(read_state, partial) and read_state.args:
        return getattr(read_state.args[0], "bound", None)
    call = configurable.get(CONFIG_KEY_CALL)
    held = call.args[0] if isinstance(call, partial) and call.args else None
    proc = getattr(held() if isinstance(held, weakref.ref) else None, "proc", None)
    steps = getattr(proc, "steps", None)
    return steps[0] if steps else proc


def sends_to(config: Mapping[str, Any]) -> list[Send] | None:
    """The ``Send`` packets of the parent's step addressed to the node whose task is running now,
    when that task is one of them; ``None`` when it was not started by a ``Send``."""
    metadata = config.get("metadata") or {}
    path = metadata.get("langgraph_path")
    if not (isinstance(path, tuple) and path and path[0] == PUSH and len(path) == 3):
        return None
    channels = parent_channels(config)
    if channels is None or TASKS not in channels:
        return None
    try:
        packets = channels[TASKS].get()
    except EmptyChannelError:
        return None
    node = metadata.get("langgraph_node")
    return [p for p in packets if isinstance(p, Send) and p.node == node]


def lent_checkpointer(config: Mapping[str, Any]) -> Any:
    """The checkpointer a parent lends the graph reading ``config``, if any."""
    return (config.get(CONF) or {}).get(CONFIG_KEY_CHECKPOINTER)


def lending(config: Mapping[str, Any], checkpointer: Any, namespace: str) -> dict[str, Any]:
    """A config reading the state at ``namespace`` of ``config``'s thread from ``checkpointer``
    (a parent's, lent to the graph that saved there)."""
    configurable = {**(config.get(CONF) or {})}
    configurable.pop("checkpoint_id", None)
    configurable[CONFIG_KEY_CHECKPOINT_NS] = namespace
    configurable[CONFIG_KEY_CHECKPOINTER] = checkpointer
    return {**config, CONF: configurable}
