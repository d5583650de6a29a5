"""The shell tool's session: one persistent bash process per run, driven through its pipes.

Everything here blocks (it waits on a process), and is thread-safe: a sync run calls it
directly, an async run offloads each call to a thread. :class:`ShellProcess` speaks to one bash
process; :class:`ShellSession` owns a run's workspace and process, restarts the process after a
timeout, and ends it when the run ends.
"""

from __future__ import annotations

import contextlib
import logging
import os
import selectors
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphagent.errors import ShellToolError
from graphagent.middleware._execution import SHELL_TEMP_PREFIX, BaseExecutionPolicy

LOGGER = logging.getLogger("graphagent.middleware.shell_tool")
_CHUNK = 65536
_DRAIN_READS = 16


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What one command did: its output (capped), its status, and how much it really wrote."""

    output: str
    exit_code: int | None
    timed_out: bool
    truncated_by_lines: bool
    truncated_by_bytes: bool
    total_lines: int
    total_bytes: int


class _Output:
    """A command's output lines in arrival order, stderr lines marked, kept up to the caps."""

    def __init__(self, max_lines: int, max_bytes: int | None) -> None:
        self.max_lines, self.max_bytes = max_lines, max_bytes
        self.kept: list[str] = []
        self.lines = self.bytes = 0
        self.over_lines = self.over_bytes = False

    def add(self, line: bytes, *, stderr: bool) -> None:
        self.lines += 1
        self.bytes += len(line)
        if self.lines > self.max_lines:
            self.over_lines = True
        elif self.max_bytes is not None and self.bytes > self.max_bytes:
            self.over_bytes = True
        else:
            text = line.decode("utf-8", "replace")
            self.kept.append(f"[stderr] {text}" if stderr else text)

    def result(self, exit_code: int | None, *, timed_out: bool = False) -> CommandResult:
        output = "" if timed_out else "".join(self.kept)
        return CommandResult(
            output, exit_code, timed_out, self.over_lines, self.over_bytes, self.lines, self.bytes
        )


class ShellProcess:
    """One bash process: a command goes in on stdin, followed by a line that prints a unique
    marker and the command's status; the output is whatever arrives before the marker."""

    def __init__(self, process: subprocess.Popen[Any]) -> None:
        if process.stdin is None or process.stdout is None or process.stderr is None:
            process.kill()
            process.wait()
            raise ShellToolError(
                "Failed to initialize shell session pipes: the execution policy started the "
                "shell without them; its spawn() must pass stdin, stdout and stderr as "
                "subprocess.PIPE."
            )
        self.process = process
        self._stdin, self._stdout, self._stderr = process.stdin, process.stdout, process.stderr
        self._group = _own_group(process.pid)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def execute(self, command: str, timeout: float, output: _Output) -> CommandResult:
        marker = f"__graphagent_shell_done_{uuid.uuid4().hex}__"
        # The group keeps cd/export effects; /dev/null keeps commands from reading (and
        # swallowing) the marker line.
        script = f"{{ {command}\n}} </dev/null\nprintf '{marker} %s\\n' \"$?\"\n"
        deadline = time.monotonic() + timeout
        try:
            self._write(script.encode())
        except OSError:  # the shell has exited already
            return self._after_exit(deadline, output)
        return self._read_until(marker.encode(), deadline, output)

    def stop(self, grace: float) -> None:
        """Ask the shell to exit; kill it (and its process group) if it has not within
        ``grace`` seconds."""
        if self.alive:
            with contextlib.suppress(OSError):
                self._write(b"exit\n")
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(grace)
        self.kill()

    def kill(self) -> None:
        """Kill the shell and, when it leads its own process group, every process it started."""
        if self._group is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._group, signal.SIGKILL)
        if self.alive:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
        self.process.wait()

    def close_pipes(self) -> None:
        for pipe in (self._stdin, self._stdout, self._stderr):
            with contextlib.suppress(OSError):
                pipe.close()

    def _write(self, data: bytes) -> None:
        fd = self._stdin.fileno()
        while data:
            data = data[os.write(fd, data) :]

    def _read_until(self, marker: bytes, deadline: float, output: _Output) -> CommandResult:
        out, err = self._stdout.fileno(), self._stderr.fileno()
        pending = {out: b"", err: b""}
        with selectors.DefaultSelector() as selector:
            for fd in pending:
                selector.register(fd, selectors.EVENT_READ)
            while (remaining := deadline - time.monotonic()) > 0:
                for key, _ in selector.select(remaining):
                    chunk = os.read(key.fd, _CHUNK)
                    if not chunk and key.fd == out:  # the shell exited before the marker
                        self._flush(pending, out, err, output)
                        return self._after_exit(deadline, output)
                    if not chunk:
                        selector.unregister(key.fd)
                        continue
                    lines = (pending[key.fd] + chunk).split(b"\n")
                    pending[key.fd] = lines.pop()
                    for line in lines:
                        before, found, status = line.partition(marker)
                        if found:
                            self._drain(selector, err, pending, output)
                            if before:
                                output.add(before, stderr=False)
                            return output.result(_status(status))
                        output.add(line + b"\n", stderr=key.fd == err)
        return output.result(None, timed_out=True)

    def _drain(self, selector: Any, err: int, pending: dict[int, bytes], output: _Output) -> None:
        """Take the stderr written before the marker, which may still sit unread in its pipe
        (a bounded number of reads: a background job may write to stderr without end)."""
        for _ in range(_DRAIN_READS):
            if not any(key.fd == err for key, _ in selector.select(0)):
                break
            chunk = os.read(err, _CHUNK)
            if not chunk:
                break
            pending[err] += chunk
        lines = pending[err].split(b"\n")
        pending[err] = lines.pop()
        for line in lines:
            output.add(line + b"\n", stderr=True)

    def _flush(self, pending: dict[int, bytes], out: int, err: int, output: _Output) -> None:
        for fd in (out, err):
            if pending[fd]:
                output.add(pending[fd], stderr=fd == err)

    def _after_exit(self, deadline: float, output: _Output) -> CommandResult:
        """The shell ended (``exit``): the rest of its stderr, and its exit status."""
        err = self._stderr.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(err, selectors.EVENT_READ)
            rest = b""
            while selector.select(max(0.0, deadline - time.monotonic())):
                chunk = os.read(err, _CHUNK)
                if not chunk:
                    break
                rest += chunk
        for line in rest.splitlines(keepends=True):
            output.add(line, stderr=True)
        try:
            code = self.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return output.result(None, timed_out=True)
        return output.result(code)


@dataclass(frozen=True, slots=True)
class SessionConfig:
    """What every session of one ``ShellToolMiddleware`` starts from."""

    policy: BaseExecutionPolicy
    workspace_root: Path | None
    shell_command: tuple[str, ...]
    env: Mapping[str, str] | None
    startup_commands: tuple[str, ...]
    shutdown_commands: tuple[str, ...]


class ShellSession:
    """A run's shell: its workspace and its bash process, from the run's start to its end.

    Commands run one at a time (parallel tool calls wait their turn). A command that times out
    gets the process killed and a fresh one started; so does the next command after the shell
    exited. Startup commands run on every start.
    """

    def __init__(self, config: SessionConfig) -> None:
        self._config = config
        self._lock = threading.Lock()
        self._process: ShellProcess | None = None
        self._closed = False
        self._tempdir: tempfile.TemporaryDirectory[str] | None = None
        if config.workspace_root is None:
            self._tempdir = tempfile.TemporaryDirectory(prefix=SHELL_TEMP_PREFIX)
            self.workspace = Path(self._tempdir.name)
        else:
            self.workspace = config.workspace_root
            self.workspace.mkdir(parents=True, exist_ok=True)

    @classmethod
    def open(cls, config: SessionConfig) -> ShellSession:
        """A started session, its startup commands run; nothing is left behind if that fails."""
        session = cls(config)
        try:
            with session._lock:
                session._process = session._start()
        except BaseException:
            session.close()
            raise
        return session

    def run(self, command: str) -> CommandResult:
        with self._lock:
            process = self._running()
            policy = self._config.policy
            result = process.execute(command, policy.command_timeout, _output_for(policy))
            if result.timed_out:
                LOGGER.warning(
                    "Shell command timed out after %.1f seconds; the next command gets a new "
                    "shell.",
                    policy.command_timeout,
                )
                self._end_process()
            return result

    def restart(self) -> None:
        with self._lock:
            self._check_open()
            self._end_process()
            self._process = self._start()

    def close(self) -> None:
        """End the session: shutdown commands and a clean exit when it is idle; when a command
        is still running (the run was cancelled or failed meanwhile), kill it at once."""
        busy = not self._lock.acquire(blocking=False)
        if busy and self._process is not None:
            self._process.kill()  # the running command sees the end of its output and returns
        if busy:
            self._lock.acquire()
        try:
            self._closed = True
            if self._process is not None:
                if not busy:
                    self._run_shutdown_commands(self._process)
                self._process.stop(self._config.policy.termination_timeout)
                self._process.close_pipes()
                self._process = None
        finally:
            self._lock.release()
            if self._tempdir is not None:
                self._tempdir.cleanup()

    # -- under the lock -------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ShellToolError(
                "The shell session has ended with its run; the shell tool only runs during a run "
                "of the agent that has the ShellToolMiddleware."
            )

    def _running(self) -> ShellProcess:
        """The shell, a new one when the last timed out or exited."""
        self._check_open()
        if self._process is not None and not self._process.alive:
            self._end_process()
        if self._process is None:
            self._process = self._start()
        return self._process

    def _start(self) -> ShellProcess:
        config = self._config
        env = config.policy.shell_environment(config.env)
        popen = config.policy.spawn(workspace=self.workspace, env=env, command=config.shell_command)
        process = ShellProcess(popen)
        try:
            for command in config.startup_commands:
                output = _output_for(config.policy)
                result = process.execute(command, config.policy.startup_timeout, output)
                if result.timed_out or result.exit_code not in (0, None):
                    failure = "timed out" if result.timed_out else f"exit code {result.exit_code}"
                    raise ShellToolError(
                        f"Startup command {command!r} failed with {failure}; fix the command, "
                        "or raise the policy's startup_timeout if it needs longer."
                    )
        except BaseException:
            process.kill()
            process.close_pipes()
            raise
        LOGGER.info("Started a shell session in %s", self.workspace)
        return process

    def _end_process(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.close_pipes()
            self._process = None

    def _run_shutdown_commands(self, process: ShellProcess) -> None:
        policy = self._config.policy
        for command in self._config.shutdown_commands:
            if not process.alive:
                return
            result = process.execute(command, policy.command_timeout, _output_for(policy))
            if result.timed_out or result.exit_code not in (0, None):
                LOGGER.warning("Shutdown command %r failed (result: %s).", command, result)


def _output_for(policy: BaseExecutionPolicy) -> _Output:
    return _Output(policy.max_output_lines, policy.max_output_bytes)


def _status(text: bytes) -> int | None:
    try:
        return int(text.strip())
    except ValueError:
        return None


def _own_group(pid: int) -> int | None:
    """The shell's process group, when it leads one of its own (killing it then ends every
    process the shell started); ``None`` when it shares ours."""
    try:
        group = os.getpgid(pid)
    except ProcessLookupError:
        return None
    return group if group == pid and group != os.getpgrp() else None
