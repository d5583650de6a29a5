"""The one place that reaches into langgraph internals, because no public way exists.

- ``RunnableCallable`` lets a node carry a sync and an async function without the per-call
  tracing overhead of ``RunnableLambda``; langgraph's own nodes are built from it.
- ``InlineToolNode`` is ``ToolNode`` without a thread pool per single tool call (see below).
- ``stop_when_closed`` makes closing a sync stream stop the agents its run is still running.
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
from langchain_core.runnables import RunnableConfig, ensure_config
from langgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CALL,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_CHECKPOINTER,
    CONFIG_KEY_READ,
    CONFIG_KEY_READ_STATE,
    CONFIG_KEY_RUNTIME,
    CONFIG_KEY_TASK_ID,
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
from langgraph.runtime import RunControl, Runtime
from langgraph.types import Command, Overwrite, Send

from graphagent.errors import AgentInputError

__all__ = [
    "REDUCER_CHANNELS",
    "STREAM_CLOSED",
    "AgentControl",
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
    "stop_when_closed",
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


class AgentControl(RunControl):
    """The run control of an agent running inside another graph's run: drained when the agent's
    own run is (its sync parent's stream was closed, see ``stop_when_closed``) or when the
    control it was given is (the parent's, or the caller's). Draining it stops the agent and
    what runs inside it, and nothing else of the parent's run."""

    __slots__ = ("_outer",)

    def __init__(self, outer: RunControl | None) -> None:
        super().__init__()
        self._outer = outer

    @property
    def drain_requested(self) -> bool:
        return self.drain_reason is not None

    @property
    def drain_reason(self) -> str | None:
        own = self._drain_reason
        return own if own is not None or self._outer is None else self._outer.drain_reason


def stop_when_closed(config: RunnableConfig | None, kwargs: dict[str, Any]) -> RunControl | None:
    """Make closing a sync stream stop this run of an agent at its next step, with what it runs.

    Closing an async stream cancels the tasks running nodes, and with them any agent running
    inside them. A sync stream cannot cancel a thread: langgraph waits for every running node to
    finish, so an agent would go on calling its model and tools for nobody. A drained
    ``RunControl`` stops a graph before its next step, so the agent's run gets a control of its
    own (in ``kwargs``, which the run's ``stream`` receives):

    - run by the caller, its control (the caller's ``control=``, or a new one) is returned: the
      agent's own stream drains it when closed;
    - run inside another graph's sync run, an ``AgentControl``, drained when the stream at the
      root of that run is left by ``GeneratorExit``: the root loop's exit stack (which unwinds
      before it waits for the running nodes) gets a callback for this run alone. No class of
      langgraph's is changed: the graphs that hold no agent run exactly as without graphagent.
    """
    configurable = ensure_config(config).get(CONF) or {}
    given = kwargs.get("control")
    if CONFIG_KEY_TASK_ID not in configurable:
        control = given if isinstance(given, RunControl) else RunControl()
        kwargs["control"] = control
        return control
    root = _root_loop(configurable)
    if root is not None:
        runtime = configurable.get(CONFIG_KEY_RUNTIME)
        outer = given if given is not None else getattr(runtime, "control", None)
        own = kwargs["control"] = AgentControl(outer)
        root.stack.push(partial(_drain_on_close, own))
    return None


def _root_loop(configurable: Mapping[str, Any]) -> SyncPregelLoop | None:
    """The loop at the root of the sync run whose task has ``configurable``, or ``None`` (an async
    run, or a langgraph that no longer shows it: each task's ``CONFIG_KEY_CALL`` holds its loop's
    ``accept_push``)."""
    for _ in range(_DEEPEST):
        call = configurable.get(CONFIG_KEY_CALL)
        loop = getattr(getattr(call, "keywords", {}).get("schedule_task"), "__self__", None)
        if not isinstance(loop, SyncPregelLoop):
            return None
        if not loop.is_nested:
            return loop
        configurable = loop.config.get(CONF) or {}
    return None  # pragma: no cover - nested deeper than any graph


_DEEPEST = 100
"""How many graphs deep ``_root_loop`` looks for the root of a run."""


def _drain_on_close(
    control: RunControl,
    exc_type: type[BaseException] | None,
    exc_value: BaseException | None,
    traceback: TracebackType | None,
) -> None:
    if exc_type is GeneratorExit:
        control.request_drain(STREAM_CLOSED)


def closed_stream(error: BaseException) -> bool:
    """Whether ``error`` stopped a subgraph because the stream of its run was closed."""
    return isinstance(error, GraphDrained) and error.reason == STREAM_CLOSED


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


# -- compacting a thread: DeltaChannel values stored whole (graphagent.storage) ----------------


def replayed(spec: BaseChannel[Any, Any, Any], history: Any) -> Any:
    """The value of the ``DeltaChannel`` ``spec`` rebuilt from its ``history`` (what a saver's
    ``get_delta_channel_history`` returns), as langgraph rebuilds it when it loads a checkpoint."""
    from langgraph.pregel._checkpoint import _replay

    return _replay(spec, history).get()


def with_snapshots(
    checkpoint: Any,
    values: Mapping[str, Any],
    versions: Mapping[str, Any],
    trigger_to_nodes: Mapping[str, Sequence[str]],
) -> Any:
    """``checkpoint`` (same id) storing each of ``values`` whole, as langgraph stores a
    ``DeltaChannel``'s snapshot, under the new ``versions`` of those channels (a saver stores a
    value once per version), which whoever had seen the old version is marked as having seen
    (as langgraph marks the versions its own snapshots bump)."""
    from langgraph.checkpoint.serde.types import _DeltaSnapshot
    from langgraph.pregel._checkpoint import _mark_bumps_seen

    old = checkpoint["channel_versions"]
    bumped = {name: (old[name], versions[name]) for name in values}
    snapshots = {name: _DeltaSnapshot(value) for name, value in values.items()}
    return {
        **checkpoint,
        "channel_values": {**checkpoint["channel_values"], **snapshots},
        "channel_versions": {**old, **versions},
        "versions_seen": _mark_bumps_seen(checkpoint["versions_seen"], bumped, trigger_to_nodes),
    }


# -- get_state_history over a delta thread (graphagent._run.history_view) ----------------------


def history_source(graph: Any, config: Any) -> tuple[Any, Any] | None:
    """The checkpointer and the config with which langgraph's ``get_state_history`` lists the
    checkpoints of ``graph``'s thread, or ``None`` when ``config`` names a namespace (langgraph
    reads a subgraph's history through the subgraph)."""
    from langchain_core.runnables.config import ensure_config, merge_configs

    config = ensure_config(config)
    saver = graph._state_checkpointer(config)
    if (config.get(CONF) or {}).get(CONFIG_KEY_CHECKPOINT_NS):
        return None
    thread: Any = {
        CONF: {CONFIG_KEY_CHECKPOINT_NS: "", "thread_id": str(config[CONF]["thread_id"])}
    }
    return saver, graph._own_checkpoint_config(merge_configs(graph.config, config, thread))


def snapshot_of(graph: Any, saver: Any, saved: Any) -> Any:
    """The ``StateSnapshot`` langgraph's ``get_state_history`` makes of ``saved``."""
    return graph._prepare_state_snapshot(saved.config, saved, saver=saver)


async def asnapshot_of(graph: Any, saver: Any, saved: Any) -> Any:
    return await graph._aprepare_state_snapshot(saved.config, saved, saver=saver)


def stored_whole(value: Any) -> Any:
    """A channel value as a checkpoint stores it whole (a ``DeltaChannel`` snapshot)."""
    from langgraph.checkpoint.serde.types import _DeltaSnapshot

    return _DeltaSnapshot(value)
