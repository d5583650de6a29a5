"""Attacks on ``ShellToolMiddleware``: the model's commands are hostile. Each test passes only when
no secret leaks into the shell, no process outlives its session, and no output grows without
bound or lands in the answer of a command that did not print it.

Every test runs under a hard time limit (``pytest-timeout``, which ends the whole run if it must);
each run is bounded as well (``asyncio.wait_for``, and command timeouts far above a healthy
command's time), so a regression fails instead of hanging CI. Nothing here waits on a clock:
where the shell must act in a given order, the commands hand over through files.
"""

from __future__ import annotations

import asyncio
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from graphagent import create_agent
from graphagent.middleware import (
    CodexSandboxExecutionPolicy,
    DockerExecutionPolicy,
    HostExecutionPolicy,
    ShellToolMiddleware,
)
from graphagent.testing import ScriptedChatModel, calls

LIMIT = 120.0  # seconds: far beyond any healthy run
pytestmark = pytest.mark.timeout(3 * LIMIT, method="thread")


def shell(command: str) -> tuple[str, dict[str, Any]]:
    return ("shell", {"command": command})


def answers(middleware: ShellToolMiddleware, how: str, *commands: str) -> list[ToolMessage]:
    """The shell's answers to ``commands``, one model turn each, in a run through ``how``."""
    model = ScriptedChatModel([*(calls(shell(command)) for command in commands), "done"])
    agent = create_agent(model, middleware=[middleware])
    inputs = {"messages": [("user", "go")]}
    if how == "invoke":
        result = agent.invoke(inputs)
    else:
        result = asyncio.run(asyncio.wait_for(agent.ainvoke(inputs), LIMIT))
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its parent counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


# -- the parent's environment ----------------------------------------------------------------


def test_the_shell_never_sees_the_secrets_in_this_processs_environment(
    how_call: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FAKE_SECRET", "sk-FAKE-0123456789")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI-FAKE")
    monkeypatch.setenv("AWS_PROFILE", "sandbox")
    default = ShellToolMiddleware(tmp_path)
    allowed = ShellToolMiddleware(tmp_path, inherit_env=["AWS_PROFILE"])

    (plain,) = answers(default, how_call, "env")
    (listed,) = answers(allowed, how_call, "env")

    for answer in (plain, listed):
        assert "sk-FAKE" not in answer.content
        assert "FAKE" not in answer.content
    names = {line.partition("=")[0] for line in str(plain.content).splitlines()}
    assert names <= {"PATH", "HOME", "LANG", "PWD", "SHLVL", "_", "OLDPWD"}
    assert {"PATH", "PWD"} <= names
    assert f"PWD={tmp_path}" in str(plain.content).splitlines()
    assert "AWS_PROFILE=sandbox" in str(listed.content).splitlines()
    for policy in (HostExecutionPolicy(), CodexSandboxExecutionPolicy()):
        assert set(policy.shell_environment(None, workspace=tmp_path)) <= {
            "PATH",
            "HOME",
            "LANG",
            "PWD",
        }
    assert DockerExecutionPolicy().shell_environment(None, workspace=tmp_path) == {}


# -- processes that leave the shell's group or tree ------------------------------------------

ESCAPES = (
    # a new session: out of the shell's process group
    "setsid sleep 301 & echo $! >> pids; "
    # a double fork: the subshell exits at once, and its job is orphaned
    "( sleep 302 & echo $! >> pids ); "
    # both: a new session whose own job is orphaned
    "setsid bash -c 'sleep 303 & echo $! >> pids'; "
    "nohup sleep 304 >/dev/null 2>&1 & echo $! >> pids; disown -a"
)


@pytest.mark.parametrize("ending", ["the run ends", "the command times out"])
def test_processes_that_left_the_group_or_the_tree_end_with_their_shell(
    how_call: str, tmp_path: Path, ending: str
) -> None:
    timing_out = ending == "the command times out"
    policy = HostExecutionPolicy(command_timeout=3.0 if timing_out else LIMIT)
    middleware = ShellToolMiddleware(tmp_path, execution_policy=policy)
    command = f"{ESCAPES}; sleep 300" if timing_out else ESCAPES

    (answer,) = answers(middleware, how_call, command)

    assert answer.artifact["timed_out"] is timing_out
    pids = [int(line) for line in (tmp_path / "pids").read_text().split()]
    assert len(pids) == 4
    assert [pid for pid in pids if running(pid)] == []


# -- output without bounds ---------------------------------------------------------------------


def test_one_endless_line_is_cut_at_the_byte_cap_with_a_note(how_call: str) -> None:
    (answer,) = answers(ShellToolMiddleware(), how_call, "head -c 20000000 /dev/zero | tr '\\0' x")

    text, note = str(answer.content).split("\n\n")
    assert text == "x" * 32768
    assert note == "... Output truncated at 32768 bytes (observed 20000000)."
    assert answer.artifact["truncated_by_bytes"] is True
    assert answer.artifact["total_bytes"] == 20_000_000
    for policy in (HostExecutionPolicy(), DockerExecutionPolicy(), CodexSandboxExecutionPolicy()):
        assert policy.max_output_bytes == 32768


@pytest.mark.timeout(300)
def test_a_flood_of_short_lines_is_counted_well_inside_the_command_timeout(how_call: str) -> None:
    # 100 million two-byte lines: each read chunk's lines are counted at once past the caps.
    middleware = ShellToolMiddleware(execution_policy=HostExecutionPolicy(command_timeout=30.0))

    (answer,) = answers(middleware, how_call, "yes | head -c 200000000")

    assert answer.artifact["timed_out"] is False
    assert answer.artifact["exit_code"] == 0
    assert answer.artifact["total_lines"] == 100_000_000
    assert answer.artifact["total_bytes"] == 200_000_000
    assert answer.artifact["truncated_by_lines"] is True
    assert str(answer.content).startswith("y\n" * 100)


def test_memory_stays_flat_whatever_a_command_prints() -> None:
    middleware = ShellToolMiddleware(execution_policy=HostExecutionPolicy(command_timeout=LIMIT))
    agent = create_agent(
        ScriptedChatModel(
            [calls(shell("true")), calls(shell("head -c 200000000 /dev/zero | tr '\\0' x")), "done"]
        ),
        middleware=[middleware],
    )

    tracemalloc.start()
    try:
        result = agent.invoke({"messages": [("user", "go")]})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    last = [m for m in result["messages"] if isinstance(m, ToolMessage)][-1]
    assert last.artifact["total_bytes"] == 200_000_000
    assert peak < 16 * 2**20, f"the run held {peak} bytes at its peak"


# -- output of background jobs -----------------------------------------------------------------


def test_what_a_background_job_prints_later_lands_in_no_other_answer(
    how_call: str, tmp_path: Path
) -> None:
    middleware = ShellToolMiddleware(tmp_path)
    first, second, third = answers(
        middleware,
        how_call,
        # The job waits for the next command to start, prints, then says it has.
        "( until [ -e go ]; do sleep 0.01; done; echo LATE; echo LATE-ERR >&2; touch said ) & "
        "echo started",
        "touch go; until [ -e said ]; do sleep 0.01; done; echo NEXT",
        "echo THIRD",
    )

    assert first.content == "started\n"
    assert str(second.content).startswith("NEXT\n")
    assert str(third.content).startswith("THIRD\n")
    assert not [answer for answer in (first, second, third) if "LATE" in answer.content]
    dropped = [answer.artifact["dropped_background_bytes"] for answer in (second, third)]
    assert sum(dropped) == len("LATE\nLATE-ERR\n")
    for answer, count in zip((second, third), dropped, strict=True):
        note = (
            f"... Dropped {count} bytes that background jobs of earlier commands printed "
            "(redirect a job's output to a file to read it)."
        )
        assert (note in answer.content) is (count > 0)
