"""The shell tool's session: one persistent bash process per run.

Everything here blocks (it waits on a process), and is thread-safe: a sync run calls it
directly, an async run offloads each call to a thread. :class:`ShellSession` owns a workspace
and its :class:`~graphagent.middleware._shell.process.ShellProcess`, restarts the process after
a timeout, and ends it when closed; :class:`RunSlot` holds the session of one run.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from graphagent.errors import ShellToolError
from graphagent.middleware._shell.execution import SHELL_TEMP_PREFIX, BaseExecutionPolicy
from graphagent.middleware._shell.output import CommandResult, OutputLog
from graphagent.middleware._shell.process import ShellProcess

__all__ = ["CommandResult", "RunSlot", "SessionConfig", "ShellSession"]

LOGGER = logging.getLogger("graphagent.middleware.shell_tool")


@dataclass(frozen=True, slots=True)
class SessionConfig:
    """What every session of one ``ShellToolMiddleware`` starts from."""

    policy: BaseExecutionPolicy
    workspace_root: Path | None
    shell_command: tuple[str, ...]
    env: Mapping[str, str] | None
    startup_commands: tuple[str, ...]
    shutdown_commands: tuple[str, ...]
    inherit_env: tuple[str, ...] = ()
    """Names of this process's variables the shell gets as well (those that are set)."""

    def environment(self, workspace: Path) -> dict[str, str]:
        """The shell's environment: the policy's reading of ``env``, then the inherited names
        that ``env`` does not set."""
        inherited = {name: os.environ[name] for name in self.inherit_env if name in os.environ}
        return {**inherited, **self.policy.shell_environment(self.env, workspace=workspace)}

    def open(self) -> ShellSession:
        """A started session in the workspace (a new temporary directory without a
        ``workspace_root``), its startup commands run; nothing is left behind if that fails."""
        tempdir: tempfile.TemporaryDirectory[str] | None = None
        if self.workspace_root is None:
            tempdir = tempfile.TemporaryDirectory(prefix=SHELL_TEMP_PREFIX)
            workspace = Path(tempdir.name)
        else:
            workspace = self.workspace_root
            workspace.mkdir(parents=True, exist_ok=True)
        session = ShellSession(
            workspace,
            self.policy,
            self.shell_command,
            self.environment(workspace),
            startup_commands=self.startup_commands,
            shutdown_commands=self.shutdown_commands,
            tempdir=tempdir,
        )
        try:
            session.start()
        except BaseException:
            session.close()
            raise
        return session


class ShellSession:
    """One persistent shell: its workspace and its bash process, until it is closed.

    It is built as LangChain's is, from the workspace, the execution policy, the shell's command
    and its environment, and starts nothing until :meth:`start`. Commands run one at a time
    (parallel tool calls wait their turn). A command that times out gets the process killed and
    a fresh one started with the next command; so does the next command after the shell exited.
    ``startup_commands`` run on every start; ``shutdown_commands`` when it is closed while idle.
    A ``tempdir`` given is the workspace's, and is removed on close.
    """

    def __init__(
        self,
        workspace: Path,
        policy: BaseExecutionPolicy,
        command: Sequence[str],
        environment: Mapping[str, str],
        *,
        startup_commands: Sequence[str] = (),
        shutdown_commands: Sequence[str] = (),
        tempdir: tempfile.TemporaryDirectory[str] | None = None,
    ) -> None:
        self.workspace = Path(workspace)
        self._policy = policy
        self._command = tuple(command)
        self._environment = dict(environment)
        self._startup_commands = tuple(startup_commands)
        self._shutdown_commands = tuple(shutdown_commands)
        self._tempdir = tempdir
        self._lock = threading.Lock()
        self._process: ShellProcess | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def start(self) -> None:
        """Start the shell and run the startup commands, unless it is running already."""
        with self._lock:
            self._running()

    def execute(self, command: str, *, timeout: float | None = None) -> CommandResult:
        """Run ``command``, for at most ``timeout`` seconds (the policy's ``command_timeout``
        when ``None``)."""
        with self._lock:
            process = self._running()
            seconds = self._policy.command_timeout if timeout is None else timeout
            result = process.execute(command, seconds, _output_for(self._policy))
            if result.timed_out:
                LOGGER.warning(
                    "Shell command timed out after %.1f seconds; the next command gets a new "
                    "shell.",
                    seconds,
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
                self._process.stop(self._policy.termination_timeout)
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
        policy = self._policy
        env = self._environment
        popen = policy.spawn(workspace=self.workspace, env=env, command=self._command)
        process = ShellProcess(popen, own_channels=policy.shares_filesystem)
        try:
            for command in self._startup_commands:
                result = process.execute(command, policy.startup_timeout, _output_for(policy))
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
        policy = self._policy
        for command in self._shutdown_commands:
            if not process.alive:
                return
            result = process.execute(command, policy.command_timeout, _output_for(policy))
            if result.timed_out or result.exit_code not in (0, None):
                LOGGER.warning("Shutdown command %r failed (result: %s).", command, result)


class RunSlot:
    """The session of one run: opened by the first that needs it (``before_agent``, or a command
    of a run resumed after an interrupt), closed once when the run ends, whichever way."""

    def __init__(self, config: SessionConfig) -> None:
        self._config = config
        self._lock = threading.Lock()
        self._session: ShellSession | None = None
        self._ended = False

    def session(self) -> ShellSession:
        """The run's session, opened now if it is not yet."""
        with self._lock:
            if self._ended:
                raise ShellToolError(
                    "The shell session has ended with its run; the shell tool only runs during "
                    "a run of the agent that has the ShellToolMiddleware."
                )
            if self._session is None:
                self._session = self._config.open()
            return self._session

    def release(self) -> None:
        """Close the run's session, if one is open (``after_agent``); a later :meth:`session`
        opens a new one."""
        self._close(ended=False)

    def close(self) -> None:
        """Close the run's session, if one is open, as the run ends: a later :meth:`session` is
        an error."""
        self._close(ended=True)

    def _close(self, *, ended: bool) -> None:
        with self._lock:
            session, self._session = self._session, None
            self._ended = self._ended or ended
        if session is not None:
            session.close()


def _output_for(policy: BaseExecutionPolicy) -> OutputLog:
    return OutputLog(policy.max_output_lines, policy.max_output_bytes)
