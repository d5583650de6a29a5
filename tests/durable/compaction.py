"""A thread compacted, then pruned as a server's ``keep_latest`` strategy prunes it: plain SQL
deletes every checkpoint of the thread but the latest, and every write of those (on PostgreSQL
also the stored values no remaining checkpoint refers to). The thread then reads back whole in
another process and continues, a paused review included."""

from __future__ import annotations

import sqlite3
from typing import Any

from graphagent.storage import compact_thread
from tests.durable.agent import build_agent, open_saver, take_turn, thread_config
from tests.durable.harness import run_in_worker

NewTurn = Any  # partial(Turn, ...): takes the remaining Turn fields

PRUNE_SQLITE = (
    "DELETE FROM checkpoints WHERE thread_id = :thread AND checkpoint_id != :latest",
    "DELETE FROM writes WHERE thread_id = :thread AND checkpoint_id != :latest",
)
PRUNE_POSTGRES = (
    "DELETE FROM checkpoints WHERE thread_id = %(thread)s AND checkpoint_id != %(latest)s",
    "DELETE FROM checkpoint_writes WHERE thread_id = %(thread)s AND checkpoint_id != %(latest)s",
    """DELETE FROM checkpoint_blobs b WHERE b.thread_id = %(thread)s AND NOT EXISTS (
        SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id
        AND c.checkpoint_ns = b.checkpoint_ns
        AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)""",
)


def hold_turns(turn: NewTurn, turns: int) -> None:
    """``turns`` turns on the thread, each calling a tool, in this process."""
    probe = turn(action="inspect")
    with open_saver(probe.store) as saver:
        agent, _ = build_agent(saver, _workdir(probe), fuse_hooks=probe.fuse_hooks)
        config = thread_config(probe.thread_id)
        for n in range(turns):
            agent.invoke({"messages": [("user", f"record: step {n}")]}, config)


def compact(turn: NewTurn) -> bool:
    probe = turn(action="inspect")
    with open_saver(probe.store) as saver:
        agent, _ = build_agent(saver, _workdir(probe), fuse_hooks=probe.fuse_hooks)
        return compact_thread(agent, thread_config(probe.thread_id))


def keep_latest(turn: NewTurn) -> int:
    """Prune the thread by plain SQL, keeping its latest checkpoint; how many are left."""
    probe = turn(action="inspect")
    with open_saver(probe.store) as saver:
        latest = saver.get_tuple(thread_config(probe.thread_id))
    assert latest is not None
    ids = {"thread": probe.thread_id, "latest": latest.checkpoint["id"]}
    kind, _, target = probe.store.partition(":")
    if kind == "sqlite":
        with sqlite3.connect(target) as connection:
            for sql in PRUNE_SQLITE:
                connection.execute(sql, ids)
    else:
        import psycopg

        with psycopg.connect(target, autocommit=True) as connection:
            for sql in PRUNE_POSTGRES:
                connection.execute(sql, ids)
    with open_saver(probe.store) as saver:
        return len(list(saver.list(thread_config(probe.thread_id))))


def check_compaction_keeps_the_thread(turn: NewTurn, turns: int) -> None:
    """A ``turns``-turn thread, then a paused review on it; compacted and pruned, it reads back
    whole in another process, where the review is decided and the thread goes on."""
    hold_turns(turn, turns)
    paused = take_turn(turn(action="say", value="publish: the report"))
    before = paused["detail"]
    assert paused["interrupts"], "the review waits"

    assert compact(turn)
    assert not compact(turn), "a compacted thread has nothing left to compact"
    assert keep_latest(turn) == 1

    read = run_in_worker(turn(action="inspect"))
    assert read["detail"] == before
    assert len(before) == 4 * turns + 2
    assert read["interrupts"] == paused["interrupts"]
    approved = run_in_worker(turn(action="review", value="approve"))
    assert approved["messages"][-2:] == [
        ["tool", "published the report"],
        ["ai", "done: published the report"],
    ]
    later = take_turn(turn(action="say", value="history"))
    humans = [f"record: step {n}" for n in range(turns)] + ["publish: the report", "history"]
    assert later["messages"][-1] == ["ai", " | ".join(humans)]


def _workdir(turn: Any) -> Any:
    from pathlib import Path

    return Path(turn.workdir)
