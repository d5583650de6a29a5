"""LangChain's ``shell_tool`` module: ``ShellToolMiddleware`` and its execution policies, through
``invoke`` and ``ainvoke``.

The Docker and Codex policies run a fake ``docker``/``codex`` (a script on ``PATH`` that records
its arguments, then starts bash), as no daemon runs here. Nothing is timed: the short command
timeouts only make a timeout happen, and every run is bounded so a hang fails the test.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from graphagent import create_agent
from graphagent.errors import MiddlewareError, ShellToolError, UnknownArgumentError
from graphagent.middleware import (
    CodexSandboxExecutionPolicy,
    DockerExecutionPolicy,
    HostExecutionPolicy,
    ShellToolMiddleware,
)
from graphagent.middleware.shell_tool import ShellSession
from graphagent.testing import ScriptedChatModel, calls

LIMIT = 120.0  # seconds: far beyond any healthy run


def shell(command: str) -> tuple[str, dict[str, Any]]:
    return ("shell", {"command": command})


def agent_for(middleware: ShellToolMiddleware, *turns: Any, tools: Any = (), **kw: Any) -> Any:
    model = ScriptedChatModel([*(calls(*t) if isinstance(t, list) else t for t in turns), "done"])
    return create_agent(model, list(tools), middleware=[middleware], **kw)


def run(agent: Any, how: str, inputs: Any = None, **kwargs: Any) -> dict[str, Any]:
    inputs = {"messages": [("user", "go")]} if inputs is None else inputs
    if how == "invoke":
        return agent.invoke(inputs, **kwargs)  # type: ignore[no-any-return]
    return asyncio.run(asyncio.wait_for(agent.ainvoke(inputs, **kwargs), LIMIT))  # type: ignore[no-any-return]


def replies(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def texts(result: dict[str, Any]) -> list[str]:
    return [str(m.content) for m in replies(result)]


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its parent counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def started_pids(tmp_path: Path) -> list[int]:
    return [int(line) for line in (tmp_path / "pids").read_text().split()]


def watched(tmp_path: Path) -> ShellToolMiddleware:
    """Each session writes its shell's pid to ``pids``, and leaves a background job behind."""
    return ShellToolMiddleware(
        tmp_path, startup_commands=["echo $$ >> pids; sleep 300 & echo $! >> pids"]
    )


def eventually(condition: Callable[[], bool]) -> bool:
    """Whether ``condition`` comes true within the limit (a killed process takes a moment to
    end; only a hang reaches the limit)."""
    deadline = time.monotonic() + LIMIT
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def assert_all_ended(tmp_path: Path) -> None:
    pids = started_pids(tmp_path)
    assert pids
    assert eventually(lambda: not any(running(pid) for pid in pids)), pids


# -- commands, state, output ---------------------------------------------------------------------


def test_commands_share_one_shell_within_a_run(how_call: str, tmp_path: Path) -> None:
    middleware = ShellToolMiddleware(tmp_path)
    agent = agent_for(
        middleware,
        [shell("mkdir sub && cd sub && export COLOUR=blue")],
        [shell("pwd; echo $COLOUR")],
    )

    result = run(agent, how_call)

    assert texts(result) == ["<no output>", f"{tmp_path / 'sub'}\nblue\n"]
    assert [m.status for m in replies(result)] == ["success", "success"]
    assert [m.name for m in replies(result)] == ["shell", "shell"]


def test_stderr_is_marked_and_a_failure_carries_its_exit_code(how_call: str) -> None:
    agent = agent_for(
        ShellToolMiddleware(),
        [shell("echo out; echo oops >&2; exit_code() { return 3; }; exit_code")],
    )

    (reply,) = replies(run(agent, how_call))

    assert reply.content == "out\n[stderr] oops\n\nExit code: 3"
    assert reply.status == "error"
    assert reply.artifact["exit_code"] == 3


def test_output_without_a_final_newline_and_commands_reading_stdin(how_call: str) -> None:
    agent = agent_for(ShellToolMiddleware(), [shell("printf partial")], [shell("cat; echo next")])

    assert texts(run(agent, how_call)) == ["partial", "next\n"]


def test_a_shell_that_exits_is_replaced_for_the_next_command(how_call: str) -> None:
    agent = agent_for(ShellToolMiddleware(), [shell("exit 4")], [shell("echo back")])

    assert texts(run(agent, how_call)) == ["<no output>\n\nExit code: 4", "back\n"]


def test_a_job_writing_without_end_does_not_hold_up_the_commands(
    how_call: str, tmp_path: Path
) -> None:
    agent = agent_for(
        watched(tmp_path), [shell("yes spam >&2 & echo $! >> pids")], [shell("echo next")]
    )

    first, second = replies(run(agent, how_call))

    assert first.artifact["exit_code"] == second.artifact["exit_code"] == 0
    assert_all_ended(tmp_path)


def test_parallel_calls_take_turns_in_the_one_shell(how_call: str) -> None:
    agent = agent_for(ShellToolMiddleware(), [shell("echo a"), shell("echo b")])

    assert sorted(texts(run(agent, how_call))) == ["a\n", "b\n"]


def test_output_is_capped_by_lines(how_call: str) -> None:
    policy = HostExecutionPolicy(max_output_lines=3)
    agent = agent_for(ShellToolMiddleware(execution_policy=policy), [shell("seq 1 10")])

    (reply,) = replies(run(agent, how_call))

    assert reply.content == "1\n2\n3\n\n... Output truncated at 3 lines (observed 10)."
    assert reply.artifact["truncated_by_lines"] is True
    assert reply.artifact["total_lines"] == 10


def test_output_is_capped_by_bytes(how_call: str) -> None:
    policy = HostExecutionPolicy(max_output_bytes=10)
    agent = agent_for(
        ShellToolMiddleware(execution_policy=policy), [shell("printf 'aaaa\\nbbbb\\ncccc\\n'")]
    )

    (reply,) = replies(run(agent, how_call))

    assert reply.content == "aaaa\nbbbb\n\n... Output truncated at 10 bytes (observed 15)."
    assert reply.artifact["truncated_by_bytes"] is True


def test_a_timeout_kills_the_command_and_the_next_one_gets_a_fresh_shell(
    how_call: str, tmp_path: Path
) -> None:
    policy = HostExecutionPolicy(command_timeout=1.0)
    middleware = ShellToolMiddleware(
        tmp_path, execution_policy=policy, startup_commands=["export FROM_STARTUP=yes"]
    )
    agent = agent_for(
        middleware,
        [shell("export MINE=1; echo $$ > first.pid")],
        [shell("sleep 300 & echo $! > sleeper.pid; wait")],
        [shell("echo ${MINE:-unset} $FROM_STARTUP $$")],
    )

    timed_out, after = replies(run(agent, how_call))[1:]

    assert timed_out.content == "Error: Command timed out after 1.0 seconds."
    assert timed_out.status == "error"
    assert timed_out.artifact == {"timed_out": True, "exit_code": None}
    first_pid = int((tmp_path / "first.pid").read_text())
    assert after.content == f"unset yes {after.content.split()[-1]}\n"
    assert int(str(after.content).split()[-1]) != first_pid
    assert not running(first_pid)
    assert not running(int((tmp_path / "sleeper.pid").read_text()))


def test_restart_on_request_runs_the_startup_commands_again(how_call: str) -> None:
    middleware = ShellToolMiddleware(startup_commands="export READY=1")
    agent = agent_for(
        middleware,
        [shell("export MINE=1; unset READY")],
        [("shell", {"restart": True})],
        [shell("echo ${MINE:-unset} ${READY:-unset}")],
    )

    assert texts(run(agent, how_call)) == ["<no output>", "Shell session restarted.", "unset 1\n"]


def test_a_call_must_give_a_command_or_ask_for_a_restart(how_call: str) -> None:
    agent = agent_for(
        ShellToolMiddleware(), [("shell", {})], [("shell", {"command": "ls", "restart": True})]
    )

    neither, both = replies(run(agent, how_call))

    assert str(neither.content).startswith("Shell tool requires either 'command' or 'restart'")
    assert str(both.content).startswith("Specify only one of 'command' or 'restart'")
    assert neither.status == both.status == "error"


# -- working directory, environment, startup and shutdown -----------------------------------------


def test_the_workspace_root_is_created_and_is_the_working_directory(
    how_call: str, tmp_path: Path
) -> None:
    root = tmp_path / "new" / "workspace"
    agent = agent_for(ShellToolMiddleware(str(root)), [shell("pwd; touch made-here")])

    assert texts(run(agent, how_call)) == [f"{root}\n"]
    assert (root / "made-here").exists()


def test_without_a_workspace_root_each_run_gets_a_temporary_one_removed_after(
    how_call: str,
) -> None:
    agent = agent_for(ShellToolMiddleware(), [shell("pwd")])

    workspace = Path(texts(run(agent, how_call))[0].strip())

    assert workspace.name.startswith("graphagent-shell-")
    assert not workspace.exists()


def test_env_is_the_shells_whole_environment(
    how_call: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FROM_PARENT", "inherited")
    given = ShellToolMiddleware(env={"GREETING": "hi", "COUNT": 3})
    omitted = ShellToolMiddleware()  # graphagent: a minimal environment, not this process's
    allowed = ShellToolMiddleware(env={"COUNT": 3}, inherit_env=["FROM_PARENT"])
    command = "echo ${GREETING:-none} ${COUNT:-none} ${FROM_PARENT:-none}"

    assert texts(run(agent_for(given, [shell(command)]), how_call)) == ["hi 3 none\n"]
    assert texts(run(agent_for(omitted, [shell(command)]), how_call)) == ["none none none\n"]
    assert texts(run(agent_for(allowed, [shell(command)]), how_call)) == ["none 3 inherited\n"]


def test_startup_and_shutdown_commands_run_at_the_ends_of_the_run(
    how_call: str, tmp_path: Path
) -> None:
    middleware = ShellToolMiddleware(
        tmp_path,
        startup_commands=["echo started > log"],
        shutdown_commands=["echo stopped >> log", "false", "echo after-a-failure >> log"],
    )
    agent = agent_for(middleware, [shell("echo working >> log")])

    run(agent, how_call)

    assert (tmp_path / "log").read_text() == "started\nworking\nstopped\nafter-a-failure\n"


def test_a_failing_startup_command_fails_the_run_and_leaves_nothing(
    how_call: str, tmp_path: Path
) -> None:
    middleware = ShellToolMiddleware(tmp_path, startup_commands=["echo $$ > pid", "exit 7"])

    with pytest.raises(ShellToolError, match="Startup command 'exit 7' failed with exit code 7"):
        run(agent_for(middleware, [shell("echo never")]), how_call)
    assert not running(int((tmp_path / "pid").read_text()))


def hand_driven(middleware: ShellToolMiddleware, how: str, hook: str, state: Any) -> Any:
    """``middleware.<hook>(state, runtime)`` called by hand, outside any run, sync or async."""
    if how == "invoke":
        return getattr(middleware, hook)(state, Runtime())
    coroutine = getattr(middleware, f"a{hook}")(state, Runtime())
    return asyncio.run(asyncio.wait_for(coroutine, LIMIT))


def test_before_and_after_agent_called_by_hand_start_and_end_a_session(
    how_call: str, tmp_path: Path
) -> None:
    middleware = ShellToolMiddleware(
        tmp_path / "work",
        startup_commands="echo $$ > pid; touch started",
        shutdown_commands=["touch stopped", "exit 3"],
    )
    state: dict[str, Any] = {"messages": []}

    update = hand_driven(middleware, how_call, "before_agent", state)
    state.update(update)
    shell_pid = int((tmp_path / "work" / "pid").read_text())
    assert (tmp_path / "work" / "started").exists()
    assert running(shell_pid)
    assert hand_driven(middleware, how_call, "before_agent", state) == update  # reused
    hand_driven(middleware, how_call, "after_agent", state)  # a failing one is only logged

    assert (tmp_path / "work" / "stopped").exists()
    assert not running(shell_pid)


def test_a_failing_startup_command_fails_before_agent_called_by_hand(
    how_call: str, tmp_path: Path
) -> None:
    middleware = ShellToolMiddleware(tmp_path, startup_commands=["echo $$ > pid", "exit 1"])

    with pytest.raises(RuntimeError, match="Startup command 'exit 1' failed with exit code 1"):
        hand_driven(middleware, how_call, "before_agent", {"messages": []})
    assert not running(int((tmp_path / "pid").read_text()))


def test_the_run_starts_and_ends_its_session_in_agent_hooks() -> None:
    agent = agent_for(ShellToolMiddleware())

    assert {"ShellToolMiddleware.before_agent", "ShellToolMiddleware.after_agent"} <= set(
        agent.get_graph().nodes
    )
    assert "shell_session_resources" not in run(agent, "invoke")


def test_the_session_is_built_as_langchains_and_starts_only_when_asked(tmp_path: Path) -> None:
    session = ShellSession(tmp_path, HostExecutionPolicy(), ("/bin/bash",), {"GREETING": "hi"})
    assert not session.closed
    session.close()  # never started: nothing to end

    session = ShellSession(tmp_path, HostExecutionPolicy(), ["/bin/bash"], {"GREETING": "hi"})
    session.start()
    try:
        result = session.execute("echo $GREETING; pwd", timeout=LIMIT)
    finally:
        session.close()

    assert (result.output, result.exit_code) == (f"hi\n{tmp_path}\n", 0)
    assert session.closed


def test_host_policy_limits_apply_to_the_shell(how_call: str) -> None:
    policy = HostExecutionPolicy(cpu_time_seconds=50, memory_bytes=2**32)
    agent = agent_for(ShellToolMiddleware(execution_policy=policy), [shell("ulimit -t; ulimit -v")])

    assert texts(run(agent, how_call)) == [f"50\n{2**32 // 1024}\n"]


def test_redaction_rules_rewrite_or_block_the_output(how_call: str) -> None:
    @dataclass(frozen=True)
    class Rule:  # the shape of LangChain's RedactionRule
        pii_type: str
        strategy: str = "redact"
        detector: Any = None

    redacting = ShellToolMiddleware(redaction_rules=[Rule("email")])
    blocking = ShellToolMiddleware(redaction_rules=[Rule("api_key", "block", r"sk-\w+")])

    (redacted,) = replies(run(agent_for(redacting, [shell("echo mail a@b.io")]), how_call))
    (blocked,) = replies(run(agent_for(blocking, [shell("echo sk-123")]), how_call))

    assert redacted.content == "mail [REDACTED_EMAIL]\n"
    assert redacted.artifact["redaction_matches"]["email"][0]["value"] == "a@b.io"
    assert blocked.content == "Output blocked: detected api_key."
    assert blocked.status == "error"


# -- the session ends with the run, on every path -------------------------------------------------


def test_a_finished_run_ends_the_shell_and_its_jobs(how_call: str, tmp_path: Path) -> None:
    run(agent_for(watched(tmp_path), [shell("echo hi")]), how_call)

    assert_all_ended(tmp_path)


def test_a_failed_run_ends_the_shell(how_call: str, tmp_path: Path) -> None:
    @tool
    def boom() -> str:
        """Fail."""
        raise ConnectionError("down")

    agent = agent_for(watched(tmp_path), [shell("echo hi")], [("boom", {})], tools=[boom])

    with pytest.raises(ConnectionError):
        run(agent, how_call)
    assert_all_ended(tmp_path)


def test_an_interrupted_run_ends_its_shell_and_the_resumed_run_gets_a_new_one(
    how_call: str, tmp_path: Path
) -> None:
    @tool
    def ask() -> str:
        """Ask the user."""
        return str(interrupt("ok?"))

    agent = agent_for(
        watched(tmp_path),
        [("ask", {})],
        [shell("echo resumed")],
        tools=[ask],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t"}}

    paused = run(agent, how_call, config=config)
    assert "__interrupt__" in paused
    assert_all_ended(tmp_path)
    resumed = run(agent, how_call, Command(resume="yes"), config=config)

    assert texts(resumed)[-1] == "resumed\n"
    assert len(started_pids(tmp_path)) == 4  # two sessions, each a shell and a job
    assert_all_ended(tmp_path)


@pytest.mark.parametrize("entry", ["stream", "astream"])
def test_a_stream_closed_early_ends_the_shell(entry: str, tmp_path: Path) -> None:
    agent = agent_for(watched(tmp_path), [shell("echo one")], [shell("echo two")])
    inputs = {"messages": [("user", "go")]}

    if entry == "stream":
        with contextlib.closing(agent.stream(inputs, stream_mode="updates")) as stream:
            next(stream)
    else:

        async def first_chunk() -> None:
            async with contextlib.aclosing(agent.astream(inputs, stream_mode="updates")) as stream:
                await anext(stream)

        asyncio.run(asyncio.wait_for(first_chunk(), LIMIT))

    assert_all_ended(tmp_path)


def test_a_cancelled_run_kills_the_running_command(tmp_path: Path) -> None:
    agent = agent_for(watched(tmp_path), [shell("touch running; sleep 300")])

    async def cancel_mid_command() -> None:
        task = asyncio.create_task(agent.ainvoke({"messages": [("user", "go")]}))
        await asyncio.to_thread(eventually, (tmp_path / "running").exists)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(cancel_mid_command(), LIMIT))

    assert_all_ended(tmp_path)


def test_a_checkpointed_thread_gets_a_new_shell_per_run(how_call: str, tmp_path: Path) -> None:
    agent = agent_for(
        watched(tmp_path),
        [shell("echo $$")],
        "first run done",
        [shell("echo $$")],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t"}}

    first = run(agent, how_call, config=config)
    second = run(agent, how_call, {"messages": [("user", "again")]}, config=config)

    assert texts(first)[0] != texts(second)[-1]
    assert_all_ended(tmp_path)


def test_the_tool_without_its_middleware_says_how_to_use_it(how_call: str) -> None:
    middleware = ShellToolMiddleware()
    model = ScriptedChatModel([calls(shell("echo hi")), "done"])
    agent = create_agent(model, [middleware.tools[0]])

    with pytest.raises(ShellToolError, match="pass the middleware to create_agent"):
        run(agent, how_call)


# -- the Docker and Codex policies, through fake runners ------------------------------------------

RECORD_ARGV = 'printf "%s\\0" "$0" "$@" > "$(dirname "$0")/$(basename "$0").argv"\n'
RUNNERS = {
    "docker": f'#!/bin/bash\n{RECORD_ARGV}exec "${{@: -1}}"\n',  # the image's shell: bash
    "codex": f'#!/bin/bash\n{RECORD_ARGV}while [ "$1" != "--" ]; do shift; done\nexec "${{@:2}}"\n',
}


@pytest.fixture
def runners(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake ``docker`` and ``codex`` first on PATH; each records its argv, then runs bash."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, script in RUNNERS.items():
        path = bin_dir / name
        path.write_text(script)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir


def argv_of(bin_dir: Path, runner: str) -> list[str]:
    return (bin_dir / f"{runner}.argv").read_text().split("\0")[:-1]


def test_docker_policy_command_line(how_call: str, runners: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    policy = DockerExecutionPolicy(
        image="tools:1",
        memory_bytes=1000,
        cpus="1.5",
        user="nobody",
        read_only_rootfs=True,
        extra_run_args=["--cap-drop", "ALL"],
    )
    middleware = ShellToolMiddleware(workspace, execution_policy=policy, env={"A": 1})

    assert texts(run(agent_for(middleware, [shell("echo through the runner")]), how_call)) == [
        "through the runner\n"
    ]
    assert argv_of(runners, "docker") == [
        str(runners / "docker"), "run", "-i", "--rm", "--network", "none", "--memory", "1000",
        "-v", f"{workspace}:{workspace}", "-w", str(workspace), "--read-only", "-e", "A=1",
        "--cpus", "1.5", "--user", "nobody", "--cap-drop", "ALL", "tools:1", "/bin/bash",
    ]  # fmt: skip


def test_docker_policy_never_mounts_a_temporary_workspace_nor_passes_the_host_env(
    how_call: str, runners: Path
) -> None:
    policy = DockerExecutionPolicy(network_enabled=True, remove_container_on_exit=False)
    middleware = ShellToolMiddleware(execution_policy=policy, shell_command=["/bin/bash", "-l"])

    run(agent_for(middleware, [shell("true")]), how_call)

    assert argv_of(runners, "docker") == [
        str(runners / "docker"), "run", "-i", "-w", "/", "python:3.12-alpine3.19", "/bin/bash",
        "-l",
    ]  # fmt: skip


def test_codex_policy_command_line(how_call: str, runners: Path) -> None:
    policy = CodexSandboxExecutionPolicy(platform="linux", config_overrides={"b": True, "a": "x"})
    middleware = ShellToolMiddleware(execution_policy=policy)

    assert texts(run(agent_for(middleware, [shell("echo sandboxed")]), how_call)) == ["sandboxed\n"]
    assert argv_of(runners, "codex") == [
        str(runners / "codex"), "sandbox", "linux", "-c", 'a="x"', "-c", "b=true", "--",
        "/bin/bash",
    ]  # fmt: skip


def test_a_missing_runner_fails_the_run_naming_it(how_call: str, runners: Path) -> None:
    policy = DockerExecutionPolicy(binary="no-such-docker")
    agent = agent_for(ShellToolMiddleware(execution_policy=policy), [shell("true")])

    with pytest.raises(ShellToolError, match="requires the 'no-such-docker' CLI"):
        run(agent, how_call)


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "names"),
    [
        (lambda: ShellToolMiddleware(workdir="/tmp"), ("workdir", "workspace_root")),
        (lambda: HostExecutionPolicy(comand_timeout=5), ("comand_timeout", "command_timeout")),
        (lambda: DockerExecutionPolicy(imag="x"), ("imag", "image")),
        (lambda: CodexSandboxExecutionPolicy(binar="x"), ("binar", "binary")),
    ],
    ids=[
        "ShellToolMiddleware",
        "HostExecutionPolicy",
        "DockerExecutionPolicy",
        "CodexSandboxExecutionPolicy",
    ],
)
def test_an_unknown_argument_names_the_class_and_the_closest_valid_name(
    build: Any, names: tuple[str, str], request: pytest.FixtureRequest
) -> None:
    with pytest.raises(TypeError) as caught:
        build()

    wrong, closest = names
    assert isinstance(caught.value, UnknownArgumentError)
    assert str(caught.value).startswith(
        f"{request.node.callspec.id}.__init__() got an unexpected keyword argument '{wrong}'; "
        f"did you mean '{closest}'?"
    )


def test_bad_options_raise_what_langchain_raises() -> None:
    with pytest.raises(ValueError, match="max_output_lines must be positive"):
        HostExecutionPolicy(max_output_lines=0)
    with pytest.raises(ValueError, match="memory_bytes must be positive"):
        HostExecutionPolicy(memory_bytes=-1)
    with pytest.raises(RuntimeError, match="does not support cpu_time_seconds"):
        DockerExecutionPolicy(cpu_time_seconds=5)
    with pytest.raises(ValueError, match="cpus must be a non-empty string"):
        DockerExecutionPolicy(cpus=" ")
    with pytest.raises(ValueError, match="Shell command must contain at least one argument"):
        ShellToolMiddleware(shell_command=[])
    with pytest.raises(TypeError, match="Environment variable names must be strings"):
        ShellToolMiddleware(env={1: "x"})
    with pytest.raises(MiddlewareError, match="execution_policy"):
        ShellToolMiddleware(execution_policy="host")  # type: ignore[arg-type]
