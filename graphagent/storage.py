"""Compacting a thread: its latest checkpoint made self-sufficient, so that the older ones can go.

Messages stored as deltas (the default) are rebuilt, at every read, from the last snapshot before
the checkpoint read and the writes stored on each checkpoint since. Deleting older checkpoints
therefore loses messages: a server's ``keep_latest`` pruning (every checkpoint of a thread but
the latest deleted, with its writes) leaves a delta thread with the messages of its last few
steps, or none. :func:`compact_thread` stores every ``DeltaChannel`` value of the thread's
latest checkpoint whole in that checkpoint (its id, its pending writes and what runs next are
kept), after which the latest checkpoint needs no other: run it on a thread before pruning it
(docs/deployment.md, "Pruning old checkpoints").
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config, merge_configs
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.constants import CONF, CONFIG_KEY_CHECKPOINTER
from langgraph.pregel import Pregel

from graphagent._core.bridge import ASYNC, SYNC, Mode, run_sync
from graphagent._core.langgraph_internals import replayed, with_snapshots

__all__ = ["acompact_thread", "compact_thread"]

COUNTERS = "counters_since_delta_snapshot"
"""Where langgraph counts, in a checkpoint's metadata, the updates since each channel's
snapshot."""


def compact_thread(graph: Pregel[Any, Any, Any, Any], config: RunnableConfig) -> bool:
    """Store the whole value of every ``DeltaChannel`` (the messages, by default) in the latest
    checkpoint of the thread ``config`` names, so that reading that checkpoint needs no older
    one. Returns whether anything had to be stored (not for a thread whose latest checkpoint
    holds the values already, nor for ``FullHistoryState``, which stores them in every one).

    The checkpoint keeps its id, its parent, its pending writes and what would run next, so a
    paused or unfinished run continues from it as before. Every checkpoint and write of the
    thread but the latest may then be deleted (a server's ``keep_latest`` pruning) and the
    thread still reads back, and continues, whole. Run it while no run is in progress on the
    thread; the namespaces of agents paused behind tools are not compacted.

    Args:
        graph: The agent (or any compiled langgraph graph) whose thread it is, with its
            checkpointer.
        config: The thread: ``{"configurable": {"thread_id": ...}}``.
    """
    return run_sync(_compact(SYNC, graph, config), "compact_thread")


async def acompact_thread(graph: Pregel[Any, Any, Any, Any], config: RunnableConfig) -> bool:
    """:func:`compact_thread` with the checkpointer's async methods (``AsyncSqliteSaver``,
    ``AsyncPostgresSaver``).

    Args:
        graph: The agent (or any compiled langgraph graph) whose thread it is, with its
            checkpointer.
        config: The thread: ``{"configurable": {"thread_id": ...}}``.
    """
    return await _compact(ASYNC, graph, config)


async def _compact(mode: Mode, graph: Pregel[Any, Any, Any, Any], config: RunnableConfig) -> bool:
    saver, thread = _saver_and_thread(graph, config)
    latest: CheckpointTuple | None = await mode.call(
        saver.aget_tuple if mode.asynchronous else saver.get_tuple, thread
    )
    if latest is None:
        return False
    checkpoint = latest.checkpoint
    names = [
        name
        for name, spec in graph.channels.items()
        if isinstance(spec, DeltaChannel)
        and name in checkpoint["channel_versions"]
        and name not in checkpoint["channel_values"]
    ]
    if not names:
        return False
    history = saver.get_delta_channel_history
    if mode.asynchronous:
        history = saver.aget_delta_channel_history  # type: ignore[assignment]
    histories = await mode.call(partial(history, config=latest.config, channels=names))
    values = {name: replayed(graph.channels[name], histories[name]) for name in names}  # type: ignore[arg-type]
    versions = {
        name: saver.get_next_version(checkpoint["channel_versions"][name], None) for name in names
    }
    compacted = with_snapshots(checkpoint, values, versions, graph.trigger_to_nodes)
    parent = latest.parent_config or {CONF: {**latest.config[CONF], "checkpoint_id": None}}
    put = saver.aput if mode.asynchronous else saver.put
    await mode.call(put, parent, compacted, _reset_counters(latest.metadata, names), versions)
    return True


def _saver_and_thread(
    graph: Pregel[Any, Any, Any, Any], config: RunnableConfig
) -> tuple[BaseCheckpointSaver[Any], RunnableConfig]:
    merged = merge_configs(graph.config, ensure_config(config))
    configurable = merged.get(CONF) or {}
    saver = configurable.get(CONFIG_KEY_CHECKPOINTER, graph.checkpointer)
    if not isinstance(saver, BaseCheckpointSaver):
        raise ValueError(
            f"compact_thread: the graph '{graph.name}' has no checkpointer to compact a thread "
            "of; build it with one (create_agent(..., checkpointer=...))."
        )
    if configurable.get("thread_id") is None:
        raise ValueError(
            "compact_thread: the config names no thread; pass {'configurable': {'thread_id': ...}}."
        )
    thread = {CONF: {"thread_id": configurable["thread_id"], "checkpoint_ns": ""}}
    return saver, thread  # type: ignore[return-value]


def _reset_counters(metadata: Mapping[str, Any], names: list[str]) -> dict[str, Any]:
    """``metadata`` with no updates counted since the snapshots just stored."""
    counters = {k: v for k, v in (metadata.get(COUNTERS) or {}).items() if k not in names}
    kept = {k: v for k, v in metadata.items() if k != COUNTERS}
    return {**kept, COUNTERS: counters} if counters else kept
