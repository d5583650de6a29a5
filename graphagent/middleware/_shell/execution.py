"""Execution policies of the shell tool: how its bash process is launched, and within what limits.

A policy is configuration plus one method, :meth:`BaseExecutionPolicy.spawn`, which starts the
process with its three pipes. Everything else (sending commands, reading output, timeouts,
shutting down) is the session's, whatever the policy.

On Linux, the host and Codex policies start the shell under ``reaper.py`` (see
``_shell_launch``), which kills every process the session started when the shell ends.
"""

from __future__ import annotations

import abc
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import MiddlewareError, MiddlewareTypeError, ShellToolError
from graphagent.middleware._shell.launch import (
    check_limits,
    launch,
    limit_running,
    limiter,
    reaper_available,
)

__all__ = [
    "DEFAULT_MAX_OUTPUT_BYTES",
    "SHELL_TEMP_PREFIX",
    "BaseExecutionPolicy",
    "CodexSandboxExecutionPolicy",
    "DockerExecutionPolicy",
    "HostExecutionPolicy",
]

SHELL_TEMP_PREFIX = "graphagent-shell-"
"""The name prefix of the temporary workspaces the shell tool creates (and removes)."""

DEFAULT_MAX_OUTPUT_BYTES = 32 * 1024
"""The bytes of one command's output the model sees unless a policy says otherwise."""

MINIMAL_ENVIRONMENT = ("PATH", "HOME", "LANG")
"""What a shell on this host gets of this process's environment when ``env`` is not given (with
``PWD``, its working directory)."""


@dataclass
class BaseExecutionPolicy(abc.ABC):
    """How the shell tool's persistent bash session runs.

    Args:
        command_timeout: Seconds a command may run before the session is killed and restarted.
        startup_timeout: Seconds each startup command may run.
        termination_timeout: Seconds the shell gets to exit at the end of a run before it is
            killed.
        max_output_lines: Lines of a command's output (stdout and stderr) the model sees.
        max_output_bytes: Bytes of a command's output the model sees (32 KiB by default). The
            session reads output in bounded chunks and keeps only this much, so memory stays
            flat whatever a command prints; ``None`` lifts the cap (and that bound).

    Raises:
        MiddlewareError: A timeout, ``max_output_lines`` or ``max_output_bytes`` that is not a
            positive number.

    Every policy takes these options; a subclass implements :meth:`spawn`.
    """

    command_timeout: float = 30.0
    startup_timeout: float = 30.0
    termination_timeout: float = 10.0
    max_output_lines: int = 100
    max_output_bytes: int | None = DEFAULT_MAX_OUTPUT_BYTES

    shares_filesystem: ClassVar[bool] = False
    """Whether the shell sees this process's files at the same paths. The session then gives
    each command output channels of its own (FIFOs in a private directory), so what a
    background job prints later never lands in another command's answer."""

    def __post_init__(self) -> None:
        _check_positive(self, "max_output_lines", self.max_output_lines)
        for name in ("command_timeout", "startup_timeout", "termination_timeout"):
            _check_positive(self, name, getattr(self, name))
        if self.max_output_bytes is not None:
            _check_positive(self, "max_output_bytes", self.max_output_bytes)

    @abc.abstractmethod
    def spawn(
        self, *, workspace: Path, env: Mapping[str, str], command: Sequence[str]
    ) -> subprocess.Popen[Any]:
        """Start ``command`` (the shell) in ``workspace`` with piped stdin, stdout and stderr."""

    def shell_environment(
        self, env: Mapping[str, str] | None, *, workspace: Path
    ) -> dict[str, str]:
        """The ``env`` handed to :meth:`spawn`: the middleware's ``env``, or, when it has none,
        a minimal one: ``PATH``, ``HOME`` and ``LANG`` from this process (those it has), and
        ``PWD``. Never the rest of this process's environment, where secrets live."""
        if env is not None:
            return dict(env)
        minimal = {name: os.environ[name] for name in MINIMAL_ENVIRONMENT if name in os.environ}
        minimal.setdefault("PATH", os.defpath)
        return {**minimal, "PWD": str(workspace)}


@refuse_unknown_arguments
@dataclass
class HostExecutionPolicy(BaseExecutionPolicy):
    """Run bash directly on this host, as the user running the agent.

    No isolation: commands read and change whatever that user can, network included. Use it
    where the agent already runs in a container or VM that is the sandbox, or in trusted
    development and CI settings. What it does bound: the shell's environment (see
    :meth:`shell_environment`), its processes (on Linux, everything the session started is
    killed when its shell ends, ``setsid`` and double forks included), and its output.

    It takes the timeouts and output caps of every policy (:class:`BaseExecutionPolicy`), and:

    Args:
        cpu_time_seconds: CPU seconds each process of the session may use (``RLIMIT_CPU``;
            ``None``, the default: no limit).
        memory_bytes: Address space each process of the session may use (``RLIMIT_AS``;
            ``None``, the default: no limit).
        create_process_group: Run the shell in its own process group, so a timeout or the end
            of the run kills everything it started. Keep it on unless something else must own
            the group.

    Raises:
        MiddlewareError: An option that must be positive is not (those of every policy,
            ``cpu_time_seconds``, ``memory_bytes``).
        ShellToolError: ``cpu_time_seconds`` or ``memory_bytes`` on a platform without
            Python's ``resource`` module.
    """

    cpu_time_seconds: int | None = None
    memory_bytes: int | None = None
    create_process_group: bool = True

    shares_filesystem: ClassVar[bool] = True

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("cpu_time_seconds", "memory_bytes"):
            value = getattr(self, name)
            if value is not None:
                _check_positive(self, name, value, "if provided")
        if self._limits() and importlib.util.find_spec("resource") is None:
            raise ShellToolError(
                "HostExecutionPolicy cpu/memory limits require the Python 'resource' module, "
                "which this platform lacks; remove cpu_time_seconds and memory_bytes, or run on "
                "a POSIX system."
            )

    def spawn(
        self, *, workspace: Path, env: Mapping[str, str], command: Sequence[str]
    ) -> subprocess.Popen[Any]:
        limits = self._limits()
        if reaper_available():  # the reaper sets the limits in the shell's process only
            check_limits(limits)
            return launch(
                command,
                workspace=workspace,
                env=env,
                new_group=self.create_process_group,
                reap=True,
                limits=limits,
            )
        on_linux = sys.platform.startswith("linux")
        # Linux sets the limits on the running shell (prlimit), before any command is sent;
        # elsewhere they are set in the child before exec.
        before_exec = limiter(limits) if limits and not on_linux else None
        process = launch(
            command,
            workspace=workspace,
            env=env,
            new_group=self.create_process_group,
            before_exec=before_exec,
        )
        if limits and on_linux:
            limit_running(process, limits)
        return process

    def _limits(self) -> list[tuple[str, int]]:
        wanted = (("RLIMIT_CPU", self.cpu_time_seconds), ("RLIMIT_AS", self.memory_bytes))
        return [(name, value) for name, value in wanted if value is not None]


@refuse_unknown_arguments
@dataclass
class CodexSandboxExecutionPolicy(BaseExecutionPolicy):
    """Run bash inside the Codex CLI's sandbox (``codex sandbox <platform> -- bash``).

    Commands still run on this host, confined by the sandbox the CLI sets up (Seatbelt on macOS,
    Landlock and seccomp on Linux). Starting the session fails with :class:`ShellToolError` when
    the CLI is not installed; a kernel without those features makes the CLI itself fail.

    It takes the timeouts and output caps of every policy (:class:`BaseExecutionPolicy`), and:

    Args:
        binary: The Codex CLI (default ``"codex"``), found on ``PATH``, or its full path.
        platform: ``"linux"``, ``"macos"``, or ``"auto"`` (the default: this system's).
        config_overrides: ``-c key=value`` options for the CLI; values are written as JSON.

    Raises:
        MiddlewareError: A timeout or output cap that is not a positive number.
    """

    binary: str = "codex"
    platform: Literal["auto", "macos", "linux"] = "auto"
    config_overrides: Mapping[str, Any] = field(default_factory=dict)

    def spawn(
        self, *, workspace: Path, env: Mapping[str, str], command: Sequence[str]
    ) -> subprocess.Popen[Any]:
        argv = self.command_line(command)
        return launch(argv, workspace=workspace, env=env, new_group=True, reap=reaper_available())

    def command_line(self, command: Sequence[str]) -> list[str]:
        """The full command that starts ``command`` (the shell) in the sandbox."""
        argv = [_installed(self, self.binary, "Codex sandbox policy"), "sandbox", self._platform()]
        for key, value in sorted(self.config_overrides.items()):
            argv += ["-c", f"{key}={_as_json(value)}"]
        return [*argv, "--", *command]

    def _platform(self) -> str:
        if self.platform != "auto":
            return self.platform
        if sys.platform.startswith("linux"):
            return "linux"
        if sys.platform == "darwin":  # type: ignore[unreachable, unused-ignore]
            return "macos"
        raise ShellToolError(
            f"Codex sandbox policy could not determine a supported platform ({sys.platform}); "
            "set platform='linux' or platform='macos'."
        )


@refuse_unknown_arguments
@dataclass
class DockerExecutionPolicy(BaseExecutionPolicy):
    """Run bash in a new Docker container for each run (``docker run -i ... image bash``).

    The container has no network unless ``network_enabled``. A ``workspace_root`` you give is
    mounted at the same path and is the working directory; a temporary workspace is not
    mounted, and the shell starts in ``/``. Only the middleware's ``env`` is passed in (never
    this process's environment). Isolation is Docker's: rootless mode and a locked-down daemon
    are yours to set up, and so are the risks of volumes or capabilities in ``extra_run_args``.

    It takes the timeouts and output caps of every policy (:class:`BaseExecutionPolicy`), and:

    Args:
        binary: The Docker CLI (default ``"docker"``), found on ``PATH``, or its full path.
        image: The image the shell runs in (default ``"python:3.12-alpine3.19"``).
        remove_container_on_exit: ``--rm`` (on by default).
        network_enabled: Leave out ``--network none`` (off by default: no network).
        extra_run_args: More ``docker run`` options, placed before the image.
        memory_bytes: ``--memory``.
        cpu_time_seconds: Not supported (Docker has no CPU-time limit); use ``cpus``.
        cpus: ``--cpus``, e.g. ``"1.5"``.
        read_only_rootfs: ``--read-only``.
        user: ``--user``.

    Raises:
        MiddlewareError: An option that must be positive is not (those of every policy,
            ``memory_bytes``), or ``cpus`` or ``user`` is an empty string.
        ShellToolError: ``cpu_time_seconds`` is given.
    """

    binary: str = "docker"
    image: str = "python:3.12-alpine3.19"
    remove_container_on_exit: bool = True
    network_enabled: bool = False
    extra_run_args: Sequence[str] | None = None
    memory_bytes: int | None = None
    cpu_time_seconds: Any | None = None
    cpus: str | None = None
    read_only_rootfs: bool = False
    user: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.memory_bytes is not None:
            _check_positive(self, "memory_bytes", self.memory_bytes, "if provided")
        if self.cpu_time_seconds is not None:
            raise ShellToolError(
                "DockerExecutionPolicy does not support cpu_time_seconds; limit CPU with "
                "cpus='1' (docker run --cpus) instead."
            )
        for name in ("cpus", "user"):
            value = getattr(self, name)
            if value is not None and not value.strip():
                raise MiddlewareError(
                    f"{name} must be a non-empty string when provided; DockerExecutionPolicy "
                    f"got {name}={value!r}. Leave it out (None) to use Docker's default."
                )
        self.extra_run_args = tuple(self.extra_run_args or ())

    def shell_environment(
        self, env: Mapping[str, str] | None, *, workspace: Path
    ) -> dict[str, str]:
        """Only what the middleware was given: the container never sees this host's variables
        (nor its ``PATH`` or ``HOME``, which mean nothing in the image)."""
        return dict(env or {})

    def spawn(
        self, *, workspace: Path, env: Mapping[str, str], command: Sequence[str]
    ) -> subprocess.Popen[Any]:
        argv = self.command_line(workspace, env, command)
        # The CLI itself needs this host's environment (DOCKER_HOST, PATH, ...).
        return launch(argv, workspace=workspace, env=os.environ, new_group=True)

    def command_line(
        self, workspace: Path, env: Mapping[str, str], command: Sequence[str]
    ) -> list[str]:
        """The ``docker run`` command that starts ``command`` (the shell) in a container."""
        argv = [_installed(self, self.binary, "Docker execution policy"), "run", "-i"]
        if self.remove_container_on_exit:
            argv.append("--rm")
        if not self.network_enabled:
            argv += ["--network", "none"]
        if self.memory_bytes is not None:
            argv += ["--memory", str(self.memory_bytes)]
        if workspace.name.startswith(SHELL_TEMP_PREFIX):
            argv += ["-w", "/"]
        else:
            argv += ["-v", f"{workspace}:{workspace}", "-w", str(workspace)]
        if self.read_only_rootfs:
            argv.append("--read-only")
        for key, value in env.items():
            argv += ["-e", f"{key}={value}"]
        if self.cpus is not None:
            argv += ["--cpus", self.cpus]
        if self.user is not None:
            argv += ["--user", self.user]
        return [*argv, *(self.extra_run_args or ()), self.image, *command]


def _installed(policy: BaseExecutionPolicy, binary: str, what: str) -> str:
    path = shutil.which(binary)
    if path is None:
        raise ShellToolError(
            f"{what} requires the '{binary}' CLI to be installed and available on PATH; install "
            f"it, or pass {type(policy).__name__}(binary=...) with its full path."
        )
    return path


def _as_json(value: Any) -> str:
    try:
        return json.dumps(value)
    except TypeError:
        return str(value)


def _check_positive(policy: object, name: str, value: Any, when: str = "") -> None:
    number_ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not number_ok or value <= 0:
        qualifier = f" {when}" if when else ""
        # Not a number at all: also the TypeError LangChain's comparison with 0 raises.
        raise (MiddlewareError if number_ok else MiddlewareTypeError)(
            f"{name} must be positive{qualifier}; {type(policy).__name__} got {name}={value!r}. "
            f"Pass a number above 0."
        )
