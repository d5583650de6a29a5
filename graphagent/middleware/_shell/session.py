"""The shell tool's session: one persistent bash process per run.

Everything here blocks (it waits on a process), and is thread-safe: a sync run calls it
directly, an async run offloads each call to a thread. :class:`ShellSession` owns a run's
workspace and its :class:`~graphagent.middleware._shell.process.ShellProcess`, restarts the
process after a timeout, and ends it when the run ends.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from graphagent.errors import ShellToolError
from graphagent.middleware._shell.execution import SHELL_TEMP_PREFIX, BaseExecutionPolicy
from graphagent.middleware._shell.output import CommandResult, OutputLog
from graphagent.middleware._shell.process import ShellProcess

__all__ = ["CommandResult", "SessionConfig", "ShellSession"]

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
        env = config.environment(self.workspace)
        popen = config.policy.spawn(workspace=self.workspace, env=env, command=config.shell_command)
        process = ShellProcess(popen, own_channels=config.policy.shares_filesystem)
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


def _output_for(policy: BaseExecutionPolicy) -> OutputLog:
    return OutputLog(policy.max_output_lines, policy.max_output_bytes)
