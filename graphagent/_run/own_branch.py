"""A run that starts while another run's steps are still pending on its thread gets a branch of
its own, so that neither run's messages are ever replayed into the other's.

Messages on a ``DeltaChannel`` are not stored whole in each checkpoint: a checkpoint's history is
rebuilt from the last snapshot before it, replaying every write stored on each checkpoint in
between. A step's results are stored as writes on the checkpoint the step started from. Two runs
that both start from the thread's latest checkpoint X (a second submit while the first run's
model call is in flight) both make children of X, and every child of X replays every write on X:
the second run's thread gets the first run's tool call, which it never saw and never answers.

So before a run with new input starts, its entry point reads the thread's latest checkpoint.
When that checkpoint still has steps to run (a run in flight, or one that crashed or paused
there) or writes stored on it, the run starts from a copy of it instead (langgraph's
``update_state(..., as_node="__copy__")``: a sibling of X with X's values, the same parent and no
writes of its own) and names the copy as the checkpoint it starts from. Whatever another run
stores on X, nothing of it is on the path of the new run's checkpoints. A thread whose last run
ended, the usual case, costs one read of its latest checkpoint; a run that starts over pending
steps costs one more checkpoint, and a read of the thread's state to write it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

from langchain_core.runnables.config import ensure_config, merge_configs
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver, Checkpoint, CheckpointTuple
from langgraph.constants import CONF, CONFIG_KEY_CHECKPOINTER, TASKS
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from graphagent._core.bridge import SYNC, Mode, run_sync

Graph = CompiledStateGraph[Any, Any, Any, Any]


def needs_check(graph: Graph, input: Any, config: Mapping[str, Any]) -> bool:
    """Whether a run of ``graph`` with ``input`` must first look at its thread: new input (not a
    resume, not ``None``), a thread that stores something on a ``DeltaChannel``, a run that does
    not name its checkpoint already, and not a run inside a parent graph (whose loop decides)."""
    if input is None or isinstance(input, Command) or graph.checkpointer is False:
        return False
    configurable = config.get(CONF) or {}
    if configurable.get("checkpoint_id") or configurable.get("checkpoint_ns"):
        return False
    return any(isinstance(channel, DeltaChannel) for channel in graph.channels.values())


def checked(graph: Graph, config: Any, start: Callable[[Any], Iterator[Any]]) -> Iterator[Any]:
    """``start(config)``'s stream, ``config`` naming the thread's checkpoint when it must."""
    yield from start(run_sync(branch_config(SYNC, graph, config), "the run's start"))


async def achecked(
    graph: Graph, config: Any, start: Callable[[Any], AsyncIterator[Any]], mode: Mode
) -> AsyncIterator[Any]:
    """Async twin of :func:`checked` (``mode`` is ``ASYNC``)."""
    stream: Any = start(await branch_config(mode, graph, config))
    try:
        async for chunk in stream:
            yield chunk
    finally:
        await stream.aclose()


async def branch_config(mode: Mode, graph: Graph, config: Any) -> Any:
    """``config``, naming a copy of the thread's latest checkpoint when a run must not start
    from that checkpoint itself."""
    merged = merge_configs(graph.config, ensure_config(config))
    configurable = merged[CONF]
    saver = configurable.get(CONFIG_KEY_CHECKPOINTER, graph.checkpointer)
    if not isinstance(saver, BaseCheckpointSaver) or configurable.get("thread_id") is None:
        return config
    read = saver.aget_tuple if mode.asynchronous else saver.get_tuple
    latest: CheckpointTuple | None = await mode.call(read, merged)
    if latest is None or not busy(graph, latest):
        return config
    named = {**merged, CONF: {**configurable, "checkpoint_id": latest.checkpoint["id"]}}
    copy = graph.aupdate_state if mode.asynchronous else graph.update_state
    copied = await mode.call(copy, named, None, "__copy__")
    given = dict(config or {})
    own = {**(given.get(CONF) or {}), "checkpoint_id": copied[CONF]["checkpoint_id"]}
    return {**given, CONF: own}


def busy(graph: Graph, saved: CheckpointTuple) -> bool:
    """Whether ``saved`` has steps still to run, or writes stored on it: a run started from it
    would store its own writes beside another run's."""
    return bool(saved.pending_writes) or has_pending_tasks(graph, saved.checkpoint)


def has_pending_tasks(graph: Graph, checkpoint: Checkpoint) -> bool:
    """Whether a step is due at ``checkpoint``: a ``Send`` waits, or a node's trigger holds a
    value written since the node last ran (what langgraph reads to list the next tasks)."""
    values = checkpoint["channel_values"]
    versions: Mapping[str, Any] = checkpoint["channel_versions"]  # of one kind per saver
    if values.get(TASKS):
        return True
    for name, node in graph.nodes.items():
        seen = checkpoint["versions_seen"].get(name, {})
        for trigger in node.triggers:
            written = trigger in values and trigger in versions
            if written and (trigger not in seen or versions[trigger] > seen[trigger]):
                return True
    return False
