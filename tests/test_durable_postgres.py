"""Durable runs on PostgreSQL: several worker processes serve the turns of one thread.

The suite starts its own PostgreSQL server on 127.0.0.1 (``tests/durable/postgres_server.py``)
once per session, creates the checkpoint tables once (``setup()``, as a deployment would), and
stops the server at the end whatever happened. Every turn here runs in a fresh worker process
that shares nothing with the others but the database; each test has one worker use the sync
checkpointer (``PostgresSaver``, ``invoke``) and the other the async one (``AsyncPostgresSaver``,
``ainvoke``) on the same thread; a review is paused and decided by different workers in both
hook modes, and a thread long enough to store messages as deltas and as a snapshot is read whole
by another worker. Without PostgreSQL's server binaries the
tests are skipped locally; under CI (``CI`` set) that is a failure, since ``.ci/run`` installs them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.durable.agent import Turn, stored_histories, take_turn, tool_log
from tests.durable.compaction import check_compaction_keeps_the_thread
from tests.durable.double_submit import (
    LAYOUTS,
    ids_in_two_threads,
    layout_fields,
    submit_twice,
)
from tests.durable.harness import die_in_worker, finish_worker, run_in_worker, start_worker
from tests.durable.postgres_server import (
    PostgresUnavailable,
    find_bin_dir,
    running_server,
    server_user,
)

NewTurn = Any  # partial(Turn, ...): takes the remaining Turn fields


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A connection string to a fresh server whose checkpoint tables exist."""
    try:
        bin_dir, user = find_bin_dir(), server_user()
    except PostgresUnavailable as reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the PostgreSQL tests: {reason}")
        pytest.skip(str(reason))
    from langgraph.checkpoint.postgres import PostgresSaver

    with running_server(bin_dir, user) as url:
        with PostgresSaver.from_conn_string(url) as saver:
            saver.setup()
        yield url


@pytest.fixture
def turn(postgres_url: str, tmp_path: Path) -> NewTurn:
    """Turns on one new thread of the session's server."""
    return partial(
        Turn,
        store=f"postgres:{postgres_url}",
        workdir=str(tmp_path),
        thread_id=f"thread-{uuid.uuid4().hex}",
    )


def modes(how_call: str) -> tuple[bool, bool]:
    """Process A and process B run opposite modes: sync then async, or async then sync."""
    first_is_async = how_call == "ainvoke"
    return first_is_async, not first_is_async


def test_a_second_worker_serves_the_next_turn_and_sees_the_first(
    turn: NewTurn, how_call: str
) -> None:
    a_async, b_async = modes(how_call)

    first = run_in_worker(turn(action="say", value="Hello, I am Ada", is_async=a_async))
    second = run_in_worker(turn(action="say", value="history", is_async=b_async))

    assert first["messages"] == [["human", "Hello, I am Ada"], ["ai", "echo: Hello, I am Ada"]]
    assert second["messages"][:2] == first["messages"]
    assert second["messages"][-1] == ["ai", "Hello, I am Ada | history"]
    assert second["model_calls"] == 1


def test_an_interrupt_in_one_worker_is_answered_through_another(
    turn: NewTurn, tmp_path: Path
) -> None:
    a_async, b_async = False, True
    question = "Publish the report?"

    paused = run_in_worker(turn(action="say", value=f"ask: {question}", is_async=a_async))
    resumed = run_in_worker(turn(action="resume", value="go ahead", is_async=b_async))

    assert paused["interrupts"] == [{"question": question}]
    assert resumed["interrupts"] == []
    assert resumed["messages"][-1] == ["ai", "done: the person said go ahead"]
    assert resumed["model_calls"] == 1
    assert tool_log(tmp_path, "ask_human") == [question, question]


def test_a_killed_worker_is_continued_by_another_without_rerunning_the_tool(
    turn: NewTurn, tmp_path: Path
) -> None:
    a_async, b_async = True, False

    die_in_worker(
        turn(
            action="say",
            value="record: shipment 7",
            die_after_tool="kill",
            durability="sync",
            is_async=a_async,
        )
    )
    finished = run_in_worker(turn(action="continue", is_async=b_async))

    assert finished["messages"][-2:] == [
        ["tool", "recorded shipment 7"],
        ["ai", "done: recorded shipment 7"],
    ]
    assert finished["model_calls"] == 1
    assert tool_log(tmp_path, "record_step") == ["shipment 7"]


def test_workers_running_at_the_same_time_keep_their_threads_apart(turn: NewTurn) -> None:
    on_ada = partial(turn, thread_id=f"ada-{uuid.uuid4().hex}")
    on_bob = partial(turn, thread_id=f"bob-{uuid.uuid4().hex}")

    started = [
        start_worker(on_ada(action="say", value="I am Ada")),
        start_worker(on_bob(action="say", value="I am Bob", is_async=True)),
    ]
    for process in started:
        finish_worker(process)

    # A third process (this one) reads both threads back, each with its own history only.
    assert last_message(take_turn(on_bob(action="say", value="history"))) == [
        "ai",
        "I am Bob | history",
    ]
    assert last_message(take_turn(on_ada(action="say", value="history", is_async=True))) == [
        "ai",
        "I am Ada | history",
    ]


def last_message(summary: dict[str, Any]) -> list[str]:
    return summary["messages"][-1]  # type: ignore[no-any-return]


REVIEW_NODE = {False: "HumanInTheLoopMiddleware.after_model", True: "after_model"}


@pytest.mark.parametrize("fuse_hooks", [False, True], ids=["nodes", "fused"])
def test_a_review_paused_in_one_worker_is_decided_in_another(
    turn: NewTurn, tmp_path: Path, how_call: str, fuse_hooks: bool
) -> None:
    a_async, b_async = modes(how_call)
    reviewed = partial(turn, fuse_hooks=fuse_hooks)

    paused = run_in_worker(reviewed(action="say", value="publish: the report", is_async=a_async))
    approved = run_in_worker(reviewed(action="review", value="approve", is_async=b_async))

    assert paused["next"] == [REVIEW_NODE[fuse_hooks]]
    assert [r["name"] for r in paused["interrupts"][0]["action_requests"]] == ["publish"]
    assert approved["interrupts"] == []
    assert approved["messages"][-2:] == [
        ["tool", "published the report"],
        ["ai", "done: published the report"],
    ]
    assert tool_log(tmp_path, "publish") == ["the report"]


def test_a_thread_past_its_first_snapshot_is_read_whole_by_another_worker(
    turn: NewTurn, how_call: str
) -> None:
    a_async, b_async = modes(how_call)
    notes = [f"record: step {n}" for n in range(26)]  # 4 updates of messages a turn: 104
    for note in notes:
        take_turn(turn(action="say", value=note, is_async=a_async))

    asked = turn(action="say", value="history", is_async=b_async)
    read = run_in_worker(asked)

    assert read["messages"][-1] == ["ai", " | ".join([*notes, "history"])]
    assert len(read["messages"]) == 4 * len(notes) + 2
    assert stored_histories(asked.store, asked.thread_id) == 1, "one snapshot, deltas since"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_double_submit_leaves_each_run_its_own_messages(
    turn: NewTurn, tmp_path: Path, how_call: str, layout: str
) -> None:
    """Process B submits a turn while process A's model call runs (A sync and B async, then the
    reverse): neither run's messages reach the other's checkpoints (tests/durable/double_submit)."""
    a_async, b_async = modes(how_call)
    submit_twice(partial(turn, **layout_fields(layout)), tmp_path, a_async, b_async)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_messages_sent_without_ids_get_ids_unique_across_threads(
    turn: NewTurn, how_call: str, layout: str
) -> None:
    """Two processes send the same plain strings to two threads: no id in common, and the ids
    read back are the ones written (tests/durable/double_submit)."""
    a_async, b_async = modes(how_call)
    ids_in_two_threads(partial(turn, **layout_fields(layout)), a_async, b_async)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("layout", ["deltas", "fused"])
def test_a_compacted_thread_survives_keep_latest_pruning(turn: NewTurn, layout: str) -> None:
    """100 turns and a paused review, compacted, then every checkpoint but the latest deleted
    by plain SQL: the thread reads back whole elsewhere and goes on (tests/durable/compaction)."""
    check_compaction_keeps_the_thread(partial(turn, **layout_fields(layout)), turns=100)
