"""graphagent served by LangGraph's own API server (``langgraph dev``), driven with langgraph-sdk:
the example deployment in ``examples/server`` as a user would run it.

The server runs with its blocking-call detector on, as ``langgraph dev`` always does, so every
run here also shows that graphagent never blocks the server's event loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client, get_sync_client

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "server"
START_LIMIT = 120.0  # seconds for the server to answer /ok
RUN_LIMIT = 120.0  # seconds for any one scenario


@dataclass
class Server:
    url: str
    run_log: Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _langgraph_cli() -> str:
    cli = Path(sys.executable).parent / "langgraph"
    return str(cli) if cli.exists() else shutil.which("langgraph") or "langgraph"


@contextmanager
def _serving(folder: Path, log: Path, env: dict[str, str]) -> Iterator[tuple[str, bool]]:
    """``langgraph dev`` serving ``folder``: its URL, and whether it became ready."""
    port = _free_port()
    command = [_langgraph_cli(), "dev", "--no-browser", "--no-reload", "--port", str(port)]
    command += ["--n-jobs-per-worker", "32"]
    url = f"http://127.0.0.1:{port}"
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=folder,
            env={**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1", **env},
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, stopped as one below
        )
        try:
            yield url, _wait_until_ready(process, url)
        finally:
            _stop(process)


def _wait_until_ready(process: subprocess.Popen[bytes], url: str) -> bool:
    deadline = time.monotonic() + START_LIMIT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as answer:
                if answer.status == 200:
                    return True
        except OSError:
            time.sleep(0.25)
    return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=20)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("server")
    deployment = folder / "deployment"  # a copy: the server keeps its state in the folder
    shutil.copytree(EXAMPLE, deployment, ignore=shutil.ignore_patterns(".langgraph_api"))
    run_log, log = folder / "runs.jsonl", folder / "server.log"
    with _serving(deployment, log, {"GRAPHAGENT_RUN_LOG": str(run_log)}) as (url, ready):
        if not ready:
            pytest.fail(f"langgraph dev did not start:\n{log.read_text()[-4000:]}")
        yield Server(url, run_log)


@pytest.fixture
def client(server: Server) -> Iterator[Any]:
    with get_sync_client(url=server.url) as sync_client:
        yield sync_client


def _user(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def _texts(values: dict[str, Any]) -> list[str]:
    return [m["content"] for m in values["messages"]]


def test_runs_wait(client: Any) -> None:
    thread = client.threads.create()

    values = client.runs.wait(thread["thread_id"], "agent", input=_user("add 2 and 3"))

    assert _texts(values) == ["add 2 and 3", "", "5", "Done: 5"]  # type: ignore[arg-type]


def test_a_thread_of_several_turns_reads_back_whole_and_forks_from_an_old_checkpoint(
    client: Any,
) -> None:
    """The server's checkpointer stores messages as deltas, as any other does."""
    thread_id = client.threads.create()["thread_id"]
    for request in ("add 1 and 2", "add 3 and 4", "hello"):
        client.runs.wait(thread_id, "agent", input=_user(request))
    whole = ["add 1 and 2", "", "3", "Done: 3", "add 3 and 4", "", "7", "Done: 3; 7"]
    whole += ["hello", "You said: hello"]

    assert _texts(client.threads.get_state(thread_id)["values"]) == whole
    history = client.threads.get_history(thread_id, limit=100)
    after_first = next(s for s in history if not s["next"] and len(s["values"]["messages"]) == 4)
    assert _texts(after_first["values"]) == whole[:4]

    fork = client.threads.update_state(
        thread_id, _user("a note"), checkpoint_id=after_first["checkpoint"]["checkpoint_id"]
    )
    values = client.runs.wait(
        thread_id, "agent", input=_user("add 5 and 6"), checkpoint=fork["checkpoint"]
    )

    assert _texts(values) == [*whole[:4], "a note", "add 5 and 6", "", "11", "Done: 3; 11"]
    assert _texts(client.threads.get_state(thread_id)["values"]) == _texts(values)


def test_token_streaming(client: Any) -> None:
    thread = client.threads.create()

    tokens = [
        part.data[0]["content"]
        for part in client.runs.stream(
            thread["thread_id"], "agent", input=_user("hello there"), stream_mode="messages-tuple"
        )
        if part.event == "messages" and part.data[0]["type"] == "AIMessageChunk"
    ]

    assert len(tokens) > 1  # token by token, not one message
    assert "".join(tokens) == "You said: hello there"


def _paused_transfer(client: Any) -> str:
    thread_id: str = client.threads.create()["thread_id"]
    values = client.runs.wait(thread_id, "agent", input=_user("transfer 5 to bob"))
    (pause,) = values["__interrupt__"]
    assert pause["value"]["action_requests"][0]["args"] == {"amount": 5, "to": "bob"}
    return thread_id


def test_a_review_is_readable_from_the_thread(client: Any) -> None:
    thread_id = _paused_transfer(client)

    state = client.threads.get_state(thread_id)
    (task,) = state["tasks"]
    (from_state,) = task["interrupts"]
    (from_thread,) = next(iter(client.threads.get(thread_id)["interrupts"].values()))
    # docs/serving.md's way for any server (Aegra leaves the thread's "interrupts" empty)
    assert next(i["value"] for t in state["tasks"] for i in t["interrupts"]) == from_state["value"]

    for review in (from_state["value"], from_thread["value"]):
        (request,) = review["action_requests"]
        assert (request["name"], request["args"]) == ("transfer", {"amount": 5, "to": "bob"})
        assert review["review_configs"][0]["allowed_decisions"] == [
            "approve",
            "edit",
            "reject",
            "respond",
        ]


@pytest.mark.parametrize(
    ("decision", "answer"),
    [
        ({"type": "approve"}, "moved 5 to bob"),
        (
            {
                "type": "edit",
                "edited_action": {"name": "transfer", "args": {"amount": 7, "to": "ann"}},
            },
            "moved 7 to ann",
        ),
        ({"type": "reject", "message": "not today"}, "not today"),
    ],
)
def test_a_review_is_answered_through_the_api(
    client: Any, decision: dict[str, Any], answer: str
) -> None:
    thread_id = _paused_transfer(client)

    values = client.runs.wait(thread_id, "agent", command={"resume": {"decisions": [decision]}})

    assert answer in _texts(values)[2]  # type: ignore[arg-type]
    assert _texts(values)[-1] == f"Done: {_texts(values)[2]}"  # type: ignore[arg-type]


def test_a_malformed_resume_is_refused_and_the_review_stays_open(client: Any) -> None:
    thread_id = _paused_transfer(client)

    with pytest.raises(Exception, match="InvalidDecisionError"):
        client.runs.wait(thread_id, "agent", command={"resume": {"decisions": "yes please"}})
    values = client.runs.wait(
        thread_id, "agent", command={"resume": {"decisions": [{"type": "approve"}]}}
    )

    assert _texts(values)[2:] == ["moved 5 to bob", "Done: moved 5 to bob"]  # type: ignore[arg-type]


def test_wrap_agent_runs_for_every_run(server: Server, client: Any) -> None:
    before = _run_records(server)

    for text in ("add 1 and 1", "hello", "add 2 and 2"):
        client.runs.wait(client.threads.create()["thread_id"], "agent", input=_user(text))

    new = _run_records(server)[len(before) :]
    assert new == [{"agent": "graphagent-example", "outcome": "finished"}] * 3


def _run_records(server: Server) -> list[dict[str, str]]:
    if not server.run_log.exists():
        return []
    return [json.loads(line) for line in server.run_log.read_text().splitlines()]


def test_concurrent_runs_fan_out_to_sync_tools_under_sync_wrappers(server: Server) -> None:
    """24 runs at once, each with 8 parallel sync tool calls under sync-only wrappers: more
    waiting wrappers than the event loop's default executor has threads."""

    async def one(client: Any, i: int) -> dict[str, Any]:
        thread = await client.threads.create()
        return await client.runs.wait(thread["thread_id"], "agent", input=_user(f"fan out {i}"))  # type: ignore[return-value]

    async def all_at_once() -> list[dict[str, Any]]:
        async with get_client(url=server.url) as client:
            runs = asyncio.gather(*(one(client, i) for i in range(24)))
            return await asyncio.wait_for(runs, RUN_LIMIT)

    results = asyncio.run(all_at_once())

    for i, values in enumerate(results):
        tools = [m for m in values["messages"] if m["type"] == "tool"]
        assert sorted(m["content"] for m in tools) == [
            f"shard {shard}: fan out {i}" for shard in range(8)
        ]


def test_the_published_state_schema_has_the_public_fields_only(client: Any) -> None:
    (assistant,) = client.assistants.search(graph_id="agent")

    schemas = client.assistants.get_schemas(assistant["assistant_id"])

    assert set(schemas["state_schema"]["properties"]) == {"messages", "structured_response"}
    assert set(schemas["input_schema"]["properties"]) == {"messages"}
    assert set(schemas["output_schema"]["properties"]) == {"messages", "structured_response"}


def test_an_agent_with_its_own_checkpointer_is_refused(tmp_path: Path) -> None:
    (tmp_path / "langgraph.json").write_text(
        json.dumps({"dependencies": ["."], "graphs": {"agent": "./agent.py:agent"}})
    )
    (tmp_path / "agent.py").write_text(
        "from langgraph.checkpoint.memory import InMemorySaver\n"
        "from graphagent import create_agent\n"
        "from graphagent.testing import ScriptedChatModel\n"
        "agent = create_agent(ScriptedChatModel(['hi']), checkpointer=InMemorySaver())\n"
    )
    log = tmp_path / "server.log"
    with _serving(tmp_path, log, {}) as (_url, ready):
        assert not ready
    assert "includes a custom checkpointer" in log.read_text()
