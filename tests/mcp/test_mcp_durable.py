"""An MCP server's question outlives the process that asked it: with a durable checkpointer
(SQLite, PostgreSQL) another process answers it, and one that answers it badly is refused while
the question stays open for a third. ``how_call`` runs the SQLite tests once with the sync
checkpointer and ``invoke``, once with the async one and ``ainvoke``."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.durable.postgres_server import (
    PostgresUnavailable,
    find_bin_dir,
    running_server,
    server_user,
)
from tests.mcp import servers
from tests.mcp.durable import Turn, in_worker, take_turn
from tests.mcp.processes import HttpServer, http_server

NewTurn = Any  # partial(Turn, ...): takes the remaining Turn fields
BOOKED = [["tool", "Booked a table for 3."], ["ai", "done: Booked a table for 3."]]


@pytest.fixture
def booking_server(tmp_path: Path) -> Iterator[tuple[HttpServer, servers.Counts]]:
    log = tmp_path / "server.log"
    with http_server(log) as server:
        yield server, servers.Counts(log)


def answer(question: dict[str, Any], guests: Any) -> dict[str, Any]:
    content = {"guests": guests}
    return {"responses": {question["key"]: {"action": "accept", "content": content}}}


def the_question(summary: dict[str, Any]) -> dict[str, Any]:
    [pause] = summary["interrupts"]
    assert pause["type"] == "mcp_elicitation"
    [question] = pause["requests"]
    return question  # type: ignore[no-any-return]


@pytest.fixture
def sqlite_turn(
    tmp_path: Path, how_call: str, booking_server: tuple[HttpServer, servers.Counts]
) -> NewTurn:
    return partial(
        Turn,
        store=f"sqlite:{tmp_path / 'checkpoints.sqlite'}",
        url=booking_server[0].url,
        thread_id=f"thread-{uuid.uuid4().hex}",
        is_async=how_call == "ainvoke",
    )


def test_a_question_asked_here_is_answered_by_another_process(
    sqlite_turn: NewTurn, booking_server: tuple[HttpServer, servers.Counts]
) -> None:
    _, counts = booking_server

    paused = take_turn(sqlite_turn())
    question = the_question(paused)
    assert question["message"] == "How many guests are dining?"

    resumed = in_worker(sqlite_turn(resume=answer(question, 3)))

    assert resumed["interrupts"] == []
    assert resumed["messages"][-2:] == BOOKED
    assert counts["booked"] == 1


def test_a_bad_answer_from_one_process_leaves_the_question_to_the_next(
    sqlite_turn: NewTurn, booking_server: tuple[HttpServer, servers.Counts]
) -> None:
    _, counts = booking_server
    question = the_question(in_worker(sqlite_turn()))

    refused = in_worker(sqlite_turn(resume=answer(question, "three")))

    assert "'three' is not of type 'integer'" in refused["refused"]
    assert the_question(refused) == question
    assert counts["booked"] == 0

    resumed = take_turn(sqlite_turn(resume=answer(question, 3)))

    assert resumed["messages"][-2:] == BOOKED
    assert counts["booked"] == 1


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A fresh server with the checkpoint tables, as tests/test_durable_postgres.py has one."""
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


def test_on_postgres_workers_ask_refuse_and_answer_in_turn(
    postgres_url: str, booking_server: tuple[HttpServer, servers.Counts]
) -> None:
    server, counts = booking_server
    turn = partial(
        Turn, store=f"postgres:{postgres_url}", url=server.url, thread_id=uuid.uuid4().hex
    )

    question = the_question(in_worker(turn(is_async=True)))
    refused = in_worker(turn(resume={"responses": {}}))
    resumed = in_worker(turn(resume=answer(question, 3), is_async=True))

    assert "these had none: party" in refused["refused"]
    assert the_question(refused) == question
    assert resumed["messages"][-2:] == BOOKED
    assert counts["booked"] == 1
