"""One bash process of the shell tool, driven through its pipes.

A command goes in on stdin, followed by a line that prints a unique marker and the command's
status. Output is read in chunks of at most ``CHUNK`` bytes and kept only up to the policy's
caps (``_shell_output``). Where the shell shares this host's files, each command writes to
channels of its own (``_shell_channels``), so what a background job prints later is dropped,
with a count, instead of landing in another command's answer; elsewhere, what arrives between
two commands is dropped the same way.

Everything here blocks; :class:`~graphagent.middleware._shell.session.ShellSession` calls it
under its lock.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
import uuid
from typing import Any

from graphagent.errors import ShellToolError
from graphagent.middleware._shell.channels import Channels, CommandPipes
from graphagent.middleware._shell.launch import ReapingPopen
from graphagent.middleware._shell.output import CHUNK, CommandResult, MarkerScanner, OutputLog

__all__ = ["ShellProcess"]

_DRAIN_READS = 16
_REAP_GRACE = 15.0  # seconds the reaper gets to end everything (it gives up after 10)


class ShellProcess:
    """One bash process: a command goes in on stdin, followed by a line that prints a unique
    marker and the command's status; the output is whatever the command wrote before the marker
    came (to its own channels, when there are any)."""

    def __init__(self, process: subprocess.Popen[Any], *, own_channels: bool) -> None:
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
        self._channels = Channels() if own_channels else None

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def execute(self, command: str, timeout: float, output: OutputLog) -> CommandResult:
        marker = f"__graphagent_shell_done_{uuid.uuid4().hex}__"
        deadline = time.monotonic() + timeout
        self._drop_stale(output)
        pipes = self._channels.open() if self._channels is not None else None
        redirection = pipes.redirection if pipes is not None else ""
        # The group keeps cd/export effects; /dev/null keeps commands from reading (and
        # swallowing) the marker line.
        script = f"{{ {command}\n}} </dev/null{redirection}\nprintf '{marker} %s\\n' \"$?\"\n"
        scanner = MarkerScanner(marker.encode())
        try:
            self._write(script.encode())
        except OSError:  # the shell has exited already
            return self._after_exit(deadline, output, pipes)
        return self._read_until(scanner, deadline, output, pipes)

    def stop(self, grace: float) -> None:
        """Ask the shell to exit; kill it (and everything it started) if it has not within
        ``grace`` seconds."""
        if self.alive:
            with contextlib.suppress(OSError):
                self._write(b"exit\n")
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(grace)
        self.kill()

    def kill(self) -> None:
        """Kill the shell and every process it started: through the reaper when it runs under
        one; otherwise the shell's process group, when it leads one of its own."""
        if isinstance(self.process, ReapingPopen):
            if self.alive:
                with contextlib.suppress(ProcessLookupError):
                    self.process.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(_REAP_GRACE)
            if not self.alive:  # the reaper is done: nothing it started is left
                return
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
        if self._channels is not None:
            self._channels.close()

    def _write(self, data: bytes) -> None:
        fd = self._stdin.fileno()
        while data:
            data = data[os.write(fd, data) :]

    def _read_until(
        self,
        scanner: MarkerScanner,
        deadline: float,
        output: OutputLog,
        pipes: CommandPipes | None,
    ) -> CommandResult:
        out, err = self._stdout.fileno(), self._stderr.fileno()
        streams = {err: True, **_streams(pipes)}  # fd -> whether it is stderr
        lingering = set(self._channels.lingering) if self._channels is not None else set()
        with selectors.DefaultSelector() as selector:
            for fd in (out, *streams, *lingering):
                selector.register(fd, selectors.EVENT_READ)
            while (remaining := deadline - time.monotonic()) > 0:
                for key, _ in selector.select(remaining):
                    try:
                        chunk = os.read(key.fd, CHUNK)
                    except BlockingIOError:  # a FIFO with nothing in it after all
                        continue
                    if key.fd == out and not chunk:  # the shell exited before the marker
                        output.write(scanner.rest(), stderr=False)
                        return self._after_exit(deadline, output, pipes)
                    if key.fd == out:
                        output.write(scanner.feed(chunk), stderr=False)
                        if scanner.done:
                            output.drop(scanner.after)
                            self._finish(selector, err, output, pipes)
                            return output.result(scanner.status)
                    elif not chunk:
                        selector.unregister(key.fd)
                        if key.fd in lingering:
                            self._forget(key.fd)
                    elif key.fd in lingering:
                        output.drop(len(chunk))
                    else:
                        output.write(chunk, stderr=streams[key.fd])
        if pipes is not None:  # the session kills the shell next
            pipes.abandon()
        return output.result(None, timed_out=True)

    def _finish(
        self, selector: Any, err: int, output: OutputLog, pipes: CommandPipes | None
    ) -> None:
        """Take what the command wrote before the marker but is still unread: on the shell's
        stderr (a bounded number of reads: a background job may write to it without end), and
        in the command's own channels, which then linger if a background job holds them."""
        for _ in range(_DRAIN_READS):
            if not any(key.fd == err for key, _ in selector.select(0)):
                break
            chunk = os.read(err, CHUNK)
            if not chunk:
                break
            output.write(chunk, stderr=True)
        self._drain_channels(output, pipes)
        output.end()

    def _drain_channels(self, output: OutputLog, pipes: CommandPipes | None) -> None:
        if pipes is None or self._channels is None:
            return
        pipes.release()
        for fd, stderr in _streams(pipes).items():
            ended = False
            for _ in range(_DRAIN_READS):
                try:
                    chunk = os.read(fd, CHUNK)
                except BlockingIOError:  # empty, and a background job still holds it
                    break
                if not chunk:
                    ended = True
                    break
                output.write(chunk, stderr=stderr)
            if ended:
                os.close(fd)
            else:
                self._channels.linger(fd)

    def _drop_stale(self, output: OutputLog) -> None:
        """Drop what arrived since the last command ended: background jobs' output, counted."""
        if self._channels is not None:
            for fd in list(self._channels.lingering):
                self._drain_stale(fd, output, forget=True)
        else:
            for fd in (self._stdout.fileno(), self._stderr.fileno()):
                self._drain_stale(fd, output, forget=False)

    def _drain_stale(self, fd: int, output: OutputLog, *, forget: bool) -> None:
        """Read what is waiting in ``fd`` (boundedly) and count it as dropped; at its end, close
        it if it is a lingering channel (a shell's own pipes are left to the next read)."""
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            for _ in range(_DRAIN_READS):
                if not selector.select(0):
                    return
                try:
                    chunk = os.read(fd, CHUNK)
                except BlockingIOError:
                    return
                if not chunk:
                    break
                output.drop(len(chunk))
            else:
                return
        if forget:
            self._forget(fd)

    def _forget(self, fd: int) -> None:
        if self._channels is not None and fd in self._channels.lingering:
            self._channels.forget(fd)

    def _after_exit(
        self, deadline: float, output: OutputLog, pipes: CommandPipes | None
    ) -> CommandResult:
        """The shell ended (``exit``): the rest of the command's output, and its exit status."""
        err = self._stderr.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(err, selectors.EVENT_READ)
            while selector.select(max(0.0, deadline - time.monotonic())):
                chunk = os.read(err, CHUNK)
                if not chunk:
                    break
                output.write(chunk, stderr=True)
        self._drain_channels(output, pipes)
        output.end()
        try:
            code = self.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return output.result(None, timed_out=True)
        return output.result(code)


def _streams(pipes: CommandPipes | None) -> dict[int, bool]:
    """A command's own channels: fd -> whether it is stderr."""
    if pipes is None:
        return {}
    out, err = pipes.readers
    return {out: False, err: True}


def _own_group(pid: int) -> int | None:
    """The shell's process group, when it leads one of its own (killing it then ends every
    process the shell started); ``None`` when it shares ours."""
    try:
        group = os.getpgid(pid)
    except ProcessLookupError:
        return None
    return group if group == pid and group != os.getpgrp() else None
