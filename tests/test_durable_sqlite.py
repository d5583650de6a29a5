"""Durable runs on SQLite: a thread outlives the process that started it.

Each test does part of a conversation in this process and part in a fresh Python process (a
worker, ``tests/durable/worker.py``) that builds the same agent and only shares the SQLite file:
an interrupt answered by another process, a review paused in one process and decided in
another (in both hook modes), a process killed between a tool and the next model call, a thread
long enough to store its messages both as deltas and as a snapshot, and the state of middleware
(thread call counts, the to-do list) across restarts.
``how_call`` runs every test once with SqliteSaver + ``invoke`` and once with AsyncSqliteSaver
+ ``ainvoke``, in this process and in the workers alike.
"""

from __future__ import annotations

import uuid
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from langgraph.errors import EmptyInputError

from tests.durable.agent import Turn, stored_histories, take_turn, tool_log
from tests.durable.compaction import check_compaction_keeps_the_thread
from tests.durable.double_submit import (
    LAYOUTS,
    ids_in_two_threads,
    layout_fields,
    submit_twice,
)
from tests.durable.harness import die_in_worker, run_in_worker

NewTurn = Any  # partial(Turn, ...): takes the remaining Turn fields


@pytest.fixture
def turn(tmp_path: Path, how_call: str) -> NewTurn:
    """Turns on one new thread of a SQLite file in ``tmp_path``, sync or async per ``how_call``."""
    return partial(
        Turn,
        store=f"sqlite:{tmp_path / 'checkpoints.sqlite'}",
        workdir=str(tmp_path),
        thread_id=f"thread-{uuid.uuid4().hex}",
        is_async=how_call == "ainvoke",
    )


def last_message(summary: dict[str, Any]) -> list[str]:
    return summary["messages"][-1]  # type: ignore[no-any-return]


def test_a_run_interrupted_here_is_resumed_by_another_process(
    turn: NewTurn, tmp_path: Path
) -> None:
    question = "May I book the 9:40 train?"

    paused = take_turn(turn(action="say", value=f"ask: {question}"))

    assert paused["interrupts"] == [{"question": question}]
    assert paused["next"] == ["tools"]

    resumed = run_in_worker(turn(action="resume", value="yes"))

    assert resumed["interrupts"] == []
    assert resumed["next"] == []
    assert resumed["messages"][-2:] == [
        ["tool", "the person said yes"],
        ["ai", "done: the person said yes"],
    ]
    assert resumed["model_calls"] == 1, "the model call before the interrupt was not repeated"
    # A node resumes from its start: the tool's code before interrupt() ran once per process.
    assert tool_log(tmp_path, "ask_human") == [question, question]


def test_a_killed_run_resumes_from_its_last_checkpoint_without_rerunning_the_tool(
    turn: NewTurn, tmp_path: Path
) -> None:
    die_in_worker(
        turn(action="say", value="record: invoice 42", die_after_tool="kill", durability="sync")
    )

    assert tool_log(tmp_path, "record_step") == ["invoice 42"]
    left = take_turn(turn(action="inspect"))
    assert left["next"] == ["model"], "the checkpoint after the tool step was saved"
    assert last_message(left) == ["tool", "recorded invoice 42"]

    finished = take_turn(turn(action="continue"))

    assert last_message(finished) == ["ai", "done: recorded invoice 42"]
    assert finished["next"] == []
    assert finished["model_calls"] == 1
    assert tool_log(tmp_path, "record_step") == ["invoice 42"], "the finished tool ran again"


def test_with_durability_exit_a_killed_run_leaves_no_trace_and_must_be_resent(
    turn: NewTurn, tmp_path: Path
) -> None:
    take_turn(turn(action="say", value="hello", durability="exit"))
    die_in_worker(
        turn(action="say", value="record: invoice 42", die_after_tool="kill", durability="exit")
    )

    left = take_turn(turn(action="continue"))

    assert left["messages"] == [["human", "hello"], ["ai", "echo: hello"]]
    assert left["next"] == []
    assert left["model_calls"] == 0, "nothing was left to continue"
    resent = take_turn(turn(action="say", value="record: invoice 42", durability="exit"))
    assert last_message(resent) == ["ai", "done: recorded invoice 42"]
    assert tool_log(tmp_path, "record_step") == ["invoice 42", "invoice 42"]


def test_with_durability_exit_a_killed_first_run_leaves_no_checkpoint_to_continue(
    turn: NewTurn, tmp_path: Path
) -> None:
    die_in_worker(
        turn(action="say", value="record: invoice 42", die_after_tool="kill", durability="exit")
    )

    assert take_turn(turn(action="inspect"))["messages"] == []
    with pytest.raises(EmptyInputError):
        take_turn(turn(action="continue"))
    resent = take_turn(turn(action="say", value="record: invoice 42", durability="exit"))
    assert last_message(resent) == ["ai", "done: recorded invoice 42"]
    assert tool_log(tmp_path, "record_step") == ["invoice 42", "invoice 42"]


def test_with_durability_exit_a_run_that_raised_is_saved_and_continued_elsewhere(
    turn: NewTurn, tmp_path: Path
) -> None:
    die_in_worker(
        turn(action="say", value="record: invoice 42", die_after_tool="raise", durability="exit")
    )

    finished = take_turn(turn(action="continue", durability="exit"))

    assert finished["messages"][-2:] == [
        ["tool", "recorded invoice 42"],
        ["ai", "done: recorded invoice 42"],
    ]
    assert finished["model_calls"] == 1
    assert tool_log(tmp_path, "record_step") == ["invoice 42"]


def test_the_thread_model_call_limit_survives_a_restart(turn: NewTurn) -> None:
    limited = partial(turn, thread_limit=2)
    take_turn(limited(action="say", value="first"))
    before = take_turn(limited(action="say", value="second"))
    assert before["thread_model_call_count"] == 2

    after = run_in_worker(limited(action="say", value="third"))

    assert after["model_calls"] == 0
    assert last_message(after) == ["ai", "Model call limits exceeded: thread limit (2/2)"]
    assert after["thread_model_call_count"] == 2


def test_the_todo_list_survives_a_restart(turn: NewTurn) -> None:
    planned = take_turn(turn(action="say", value="plan: book the train; reserve a hotel"))
    todos = [
        {"content": "book the train", "status": "pending"},
        {"content": "reserve a hotel", "status": "pending"},
    ]
    assert planned["todos"] == todos

    recalled = run_in_worker(turn(action="say", value="recall"))

    assert recalled["todos"] == todos
    # The new process's model was shown the list, rebuilt from the checkpoint.
    assert last_message(recalled) == [
        "ai",
        "1. [pending] book the train\n2. [pending] reserve a hotel",
    ]


REVIEW_NODE = {False: "HumanInTheLoopMiddleware.after_model", True: "after_model"}


@pytest.mark.parametrize("fuse_hooks", [False, True], ids=["nodes", "fused"])
def test_a_review_paused_here_is_decided_in_another_process(
    turn: NewTurn, tmp_path: Path, fuse_hooks: bool
) -> None:
    reviewed = partial(turn, fuse_hooks=fuse_hooks)

    paused = take_turn(reviewed(action="say", value="publish: the report"))

    assert paused["next"] == [REVIEW_NODE[fuse_hooks]]
    (review,) = paused["interrupts"]
    assert [r["name"] for r in review["action_requests"]] == ["publish"]
    approved = run_in_worker(reviewed(action="review", value="approve"))
    assert approved["interrupts"] == []
    assert approved["messages"][-2:] == [
        ["tool", "published the report"],
        ["ai", "done: published the report"],
    ]
    assert tool_log(tmp_path, "publish") == ["the report"]

    run_in_worker(reviewed(action="say", value="publish: the draft"))
    rejected = take_turn(reviewed(action="review", value="reject"))
    assert rejected["messages"][-2][0] == "tool"
    assert "not now" in rejected["messages"][-2][1]
    assert tool_log(tmp_path, "publish") == ["the report"], "the rejected call never ran"
    assert [m for m in rejected["messages"] if m[0] == "human"] == [
        ["human", "publish: the report"],
        ["human", "publish: the draft"],
    ]


def test_a_thread_past_its_first_snapshot_is_read_whole_by_another_process(turn: NewTurn) -> None:
    notes = [f"record: step {n}" for n in range(26)]  # 4 updates of messages a turn: 104
    for note in notes:
        take_turn(turn(action="say", value=note))

    asked = turn(action="say", value="history")
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
    a_async = how_call == "ainvoke"
    submit_twice(partial(turn, **layout_fields(layout)), tmp_path, a_async, not a_async)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_messages_sent_without_ids_get_ids_unique_across_threads(
    turn: NewTurn, how_call: str, layout: str
) -> None:
    """Two processes send the same plain strings to two threads: no id in common, and the ids
    read back are the ones written (tests/durable/double_submit)."""
    a_async = how_call == "ainvoke"
    ids_in_two_threads(partial(turn, **layout_fields(layout)), a_async, not a_async)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("layout", ["deltas", "fused"])
def test_a_compacted_thread_survives_keep_latest_pruning(turn: NewTurn, layout: str) -> None:
    """100 turns and a paused review, compacted, then every checkpoint but the latest deleted
    by plain SQL: the thread reads back whole elsewhere and goes on (tests/durable/compaction)."""
    check_compaction_keeps_the_thread(partial(turn, **layout_fields(layout)), turns=100)
