"""Starting the shell tool's process: its pipes, its resource limits, and the reaper.

On Linux, a shell on this host starts under ``reaper.py``, a child subreaper that kills every
process the session started when the shell ends, including those that left its process group
(``setsid``) or its tree (a double fork). The reaper sets the policy's resource limits in the
shell's process only, so that it keeps the means to end what the shell started.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from graphagent.errors import ShellToolError

_REAPER = str(Path(__file__).with_name("reaper.py"))


class ReapingPopen(subprocess.Popen[bytes]):
    """A shell started under ``reaper.py``: ``SIGTERM`` makes the reaper kill and reap every
    process below it, then exit."""


def reaper_available() -> bool:
    """Whether shells can be started under the reaper: on Linux, with a Python to run it."""
    return (
        sys.platform.startswith("linux")
        and bool(sys.executable)
        and os.access(sys.executable, os.X_OK)
    )


def launch(
    argv: Sequence[str],
    *,
    workspace: Path,
    env: Mapping[str, str],
    new_group: bool,
    before_exec: Callable[[], None] | None = None,
    reap: bool = False,
    limits: Sequence[tuple[str, int]] = (),
) -> subprocess.Popen[bytes]:
    """Start ``argv`` with its three pipes (bytes: the session reads and writes them raw); with
    ``reap``, under the reaper, which sets ``limits`` in ``argv``'s process."""
    popen: type[subprocess.Popen[bytes]] = subprocess.Popen
    if reap:
        options = [part for name, value in limits for part in ("--limit", f"{name}={value}")]
        argv = [sys.executable, "-I", "-S", _REAPER, *options, "--", *argv]
        popen = ReapingPopen
    return popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=workspace,
        env=dict(env),
        start_new_session=new_group,
        preexec_fn=before_exec,  # set only where prlimit is missing
    )


def check_limits(limits: Sequence[tuple[str, int]]) -> None:
    """Refuse, before the shell starts, a limit its process could not set on itself."""
    if not limits or os.geteuid() == 0:
        return
    import resource

    for name, value in limits:
        hard = resource.getrlimit(getattr(resource, name))[1]
        if hard != resource.RLIM_INFINITY and value > hard:
            raise ShellToolError(
                f"Failed to apply resource limits: {name}={value} is above this process's hard "
                f"limit ({hard}); lower it, or remove cpu_time_seconds and memory_bytes from "
                "HostExecutionPolicy."
            )


def limiter(limits: list[tuple[str, int]]) -> Callable[[], None]:
    def set_limits() -> None:  # in the child, before exec
        import resource

        for name, value in limits:
            resource.setrlimit(getattr(resource, name), (value, value))

    return set_limits


def limit_running(process: subprocess.Popen[Any], limits: list[tuple[str, int]]) -> None:
    import resource

    try:
        for name, value in limits:
            resource.prlimit(process.pid, getattr(resource, name), (value, value))
    except OSError as error:
        process.kill()
        process.wait()
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
        raise ShellToolError(
            f"Failed to apply resource limits via prlimit ({error}); remove cpu_time_seconds "
            "and memory_bytes from HostExecutionPolicy, or grant the process that permission."
        ) from error
