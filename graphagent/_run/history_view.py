"""``get_state_history`` over a thread whose messages are stored as deltas: one walk for all.

langgraph rebuilds the messages of each checkpoint it lists on their own: from the last snapshot
before the checkpoint, replaying the writes stored on every checkpoint in between, which it reads
again from the saver, one checkpoint at a time. Over a whole thread that is a walk of up to a
snapshot's worth of checkpoints for every checkpoint listed: the history of a 100-turn thread
took longer than with the whole history in every checkpoint, and a 500-turn one did not finish.

The checkpoints listed come with their writes, and a checkpoint's value is its parent's with the
parent's writes applied: here they are taken oldest first, each value is made once from its
parent's, and langgraph is handed each checkpoint as if it stored the value whole. Only a
checkpoint whose parent is not listed (the oldest one, with ``before`` or ``limit``, or a fork of
an unlisted checkpoint) is rebuilt by the saver's own walk.

The values are computed before the first snapshot is given out (the newest comes first, and it
is made from all the older ones). Snapshots share the message objects they have in common, where
langgraph's own reads give each its own copies.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any

from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.constants import CONF
from langgraph.types import StateSnapshot

from graphagent._core.bridge import ASYNC, SYNC, Mode, run_sync
from graphagent._core.langgraph_internals import (
    asnapshot_of,
    history_source,
    replayed,
    snapshot_of,
    stored_whole,
)

Values = dict[str, Any]
"""The value of each ``DeltaChannel`` at one checkpoint."""


def history(
    graph: Any, config: Any, options: Mapping[str, Any], own: Callable[..., Iterator[Any]]
) -> Iterator[StateSnapshot]:
    """``graph.get_state_history(config, **options)``; ``own`` is langgraph's, for a graph
    with no ``DeltaChannel`` or a subgraph's namespace."""
    source = history_source(graph, config) if delta_channels(graph) else None
    if source is None:
        yield from own(config, **options)
        return
    saver, listing = source
    listed = list(saver.list(listing, **options))
    for saved in run_sync(filled(SYNC, graph, saver, listed), "get_state_history"):
        yield snapshot_of(graph, saver, saved)


async def ahistory(
    graph: Any, config: Any, options: Mapping[str, Any], own: Callable[..., AsyncIterator[Any]]
) -> AsyncIterator[StateSnapshot]:
    """Async twin of :func:`history`."""
    source = history_source(graph, config) if delta_channels(graph) else None
    if source is None:
        async for snapshot in own(config, **options):
            yield snapshot
        return
    saver, listing = source
    listed = [saved async for saved in saver.alist(listing, **options)]
    for saved in await filled(ASYNC, graph, saver, listed):
        yield await asnapshot_of(graph, saver, saved)


def delta_channels(graph: Any) -> list[str]:
    return [name for name, spec in graph.channels.items() if isinstance(spec, DeltaChannel)]


async def filled(
    mode: Mode, graph: Any, saver: BaseCheckpointSaver[Any], listed: Sequence[CheckpointTuple]
) -> list[CheckpointTuple]:
    """``listed`` (newest first), each checkpoint holding its ``DeltaChannel`` values whole."""
    names = delta_channels(graph)
    by_id = {saved.checkpoint["id"]: saved for saved in listed}
    known: dict[str, Values] = {}
    for saved in reversed(listed):
        values = _from_parent(graph, saved, names, by_id, known)
        missing = [name for name in names if name not in values]
        if missing:
            read: Any = saver.get_delta_channel_history
            if mode.asynchronous:
                read = saver.aget_delta_channel_history
            histories = await mode.call(partial(read, config=saved.config, channels=missing))
            values.update({k: replayed(graph.channels[k], histories[k]) for k in missing})
        known[saved.checkpoint["id"]] = values
    return [_holding(saved, known[saved.checkpoint["id"]]) for saved in listed]


def _from_parent(
    graph: Any,
    saved: CheckpointTuple,
    names: list[str],
    by_id: Mapping[str, CheckpointTuple],
    known: Mapping[str, Values],
) -> Values:
    """The values of ``saved`` that it stores, that are empty, or that its parent's (already
    known) give with the parent's writes applied."""
    stored, versions = saved.checkpoint["channel_values"], saved.checkpoint["channel_versions"]
    parent_id = ((saved.parent_config or {}).get(CONF) or {}).get("checkpoint_id")
    parent, before = by_id.get(parent_id or ""), known.get(parent_id or "")
    values: Values = {}
    for name in names:
        spec = graph.channels[name]
        if name in stored or name not in versions:
            values[name] = spec.from_checkpoint(stored.get(name)).get()
        elif parent is not None and before is not None:
            writes = [w for w in parent.pending_writes or () if w[1] == name]
            if not writes:
                values[name] = copy.copy(before[name])
            else:
                seeded = {"seed": stored_whole(before[name]), "writes": writes}
                values[name] = replayed(spec, seeded)
    return values


def _holding(saved: CheckpointTuple, values: Values) -> CheckpointTuple:
    checkpoint = saved.checkpoint
    stored, versions = checkpoint["channel_values"], checkpoint["channel_versions"]
    added = {k: stored_whole(v) for k, v in values.items() if k in versions and k not in stored}
    if not added:
        return saved
    whole = {**checkpoint, "channel_values": {**stored, **added}}
    return saved._replace(checkpoint=whole)  # type: ignore[arg-type]
