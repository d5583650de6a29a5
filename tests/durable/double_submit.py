"""Two things that must hold whichever processes write a thread: no phantom messages on a double
submit, and ids unique across threads.

A double submit, in real processes: process A starts a turn, and while A's model call is in
flight process B submits another turn to the same thread (a double click, or a client retrying
after a timeout). The test decides when A's model call ends: A's model waits for a file the test
creates once B is done.

Whatever the layout of the thread, each run's last checkpoint reads back exactly what that run
returned (B never gets A's tool call, which it never saw), and the thread's latest state is
coherent: A finished last, so it is A's, with every tool call answered once, after the call.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from tests.durable.agent import take_turn
from tests.durable.harness import WORKER_TIMEOUT, finish_worker, run_in_worker, start_worker

NewTurn = Any  # partial(Turn, ...): takes the remaining Turn fields
LAYOUTS = ("deltas", "fused", "full")
"""Messages as deltas with a node per hook (the default), the same with fused hooks, and
``FullHistoryState`` (the whole history in every checkpoint)."""


def layout_fields(layout: str) -> dict[str, bool]:
    return {"fuse_hooks": layout == "fused", "full_history": layout == "full"}


def submit_twice(turn: NewTurn, workdir: Path, a_async: bool, b_async: bool) -> None:
    """A's turn and B's on one thread, B's while A's model call runs; then check both runs and
    the thread."""
    take_turn(turn(action="say", value="Hello"))
    a = start_worker(turn(action="say", value="slow: alpha", tag="a", is_async=a_async))
    try:
        wait_for_file(workdir / "alpha.calling", a)
        b = run_in_worker(turn(action="say", value="second question", tag="b", is_async=b_async))
    finally:
        (workdir / "alpha.release").touch()
    a_summary = finish_worker(a)
    latest = take_turn(turn(action="inspect"))
    # read once both runs are over: what A stored after B's run must not reach B's checkpoints
    a_last = take_turn(turn(action="inspect", tag="a"))["run_last"]
    b_last = take_turn(turn(action="inspect", tag="b"))["run_last"]

    assert a_last == a_summary["returned"]
    assert b_last == b["returned"]
    assert [m[:2] for m in b["returned"]] == [
        ["human", "Hello"],
        ["ai", "echo: Hello"],
        ["human", "slow: alpha"],
        ["human", "second question"],
        ["ai", "echo: second question"],
    ], "B's run holds only what it saw and did"
    assert [m[:2] for m in a_summary["returned"]] == [
        ["human", "Hello"],
        ["ai", "echo: Hello"],
        ["human", "slow: alpha"],
        ["ai", ""],
        ["tool", "recorded alpha"],
        ["ai", "done: recorded alpha"],
    ], "A's run holds only what it saw and did"
    assert latest["detail"] == a_summary["returned"], "A finished last: the thread is A's"
    assert_coherent(latest["detail"])


def ids_in_two_threads(turn: NewTurn, a_async: bool, b_async: bool) -> None:
    """Two processes, each on a thread of its own, send the same plain strings (messages without
    ids): no id is shared by the two threads, and another process reads each thread back with
    the ids its writer returned."""
    threads = [
        turn(action="inspect", thread_id=f"{turn.keywords['thread_id']}-{n}") for n in (1, 2)
    ]
    written = []
    for thread, is_async in zip(threads, (a_async, b_async), strict=True):
        for text in ("hello", "hello again"):
            summary = run_in_worker(
                replace(thread, action="say-text", value=text, is_async=is_async)
            )
        written.append(summary["detail"])
    read = [take_turn(thread)["detail"] for thread in threads]

    assert read == written, "a replay gives the ids the writers returned"
    one, two = ({m[2] for m in messages} for messages in read)
    assert len(one) == len(read[0]) == 4
    assert len(two) == 4
    assert not one & two, "no id is shared by the two threads"


def assert_coherent(messages: list[list[Any]]) -> None:
    """Every tool call answered exactly once, after the call; every answer answers a call."""
    called: list[str] = []
    answered: list[str] = []
    for kind, _, _, call_ids in messages:
        if kind == "ai":
            called += call_ids
        elif kind == "tool":
            assert set(call_ids) <= set(called), f"an answer before its call: {messages}"
            answered += call_ids
    assert sorted(answered) == sorted(called), f"calls and answers differ: {messages}"


def wait_for_file(path: Path, process: subprocess.Popen[str]) -> None:
    """Wait until ``process`` creates ``path``; fail at once if it ended instead."""
    deadline = time.monotonic() + WORKER_TIMEOUT
    while not path.exists():
        if process.poll() is not None:
            finish_worker(process)  # fails with the worker's stderr
            raise AssertionError(f"the worker ended without creating {path}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"the worker never created {path}")
        time.sleep(0.01)
