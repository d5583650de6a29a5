"""Output channels of its own for each command of a shell on this host.

A shell's stdout is shared by everything it ever started: a background job of one command
(``(sleep 1; echo LATE) &``) writes into the answer of whichever command runs when it prints.
So each command writes to FIFOs of its own instead (``{ command; } >N.out 2>N.err``), in a
private directory, and the shell's own stdout carries only the end-of-command marker. Once the
command has ended, its FIFOs are drained; if a background job still holds one, it *lingers*:
the session goes on reading it, so the job never blocks, and drops (and counts) what it prints.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import tempfile

_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
_WRITE = os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC


class CommandPipes:
    """One command's stdout and stderr FIFOs: their paths, our read ends, and write ends held
    until the command has ended (so no read sees an end before the shell opens them)."""

    def __init__(self, directory: str, number: int) -> None:
        self.paths: list[str] = []
        self.readers: list[int] = []
        self._writers: list[int] = []
        try:
            for stream in ("out", "err"):
                path = os.path.join(directory, f"{number}.{stream}")
                os.mkfifo(path, 0o600)
                self.paths.append(path)
                self.readers.append(os.open(path, _READ))
                self._writers.append(os.open(path, _WRITE))
        except OSError:
            self.release()
            for fd in self.readers:
                os.close(fd)
            raise

    @property
    def redirection(self) -> str:
        out, err = (shlex.quote(path) for path in self.paths)
        return f" >{out} 2>{err}"

    def release(self) -> None:
        """The command has ended: let go of our write ends and of the names."""
        for fd in self._writers:
            os.close(fd)
        self._writers = []
        for path in self.paths:
            with contextlib.suppress(OSError):
                os.unlink(path)

    def abandon(self) -> None:
        """The command is being killed: close everything, read ends included."""
        self.release()
        for fd in self.readers:
            os.close(fd)
        self.readers = []


class Channels:
    """The FIFOs of one shell's commands, in a directory only this user can enter."""

    def __init__(self) -> None:
        self._directory = tempfile.mkdtemp(prefix="graphagent-shell-io-")
        self._count = 0
        self.lingering: list[int] = []
        """Read ends still held open by a background job of an ended command."""

    def open(self) -> CommandPipes:
        self._count += 1
        return CommandPipes(self._directory, self._count)

    def linger(self, fd: int) -> None:
        self.lingering.append(fd)

    def forget(self, fd: int) -> None:
        """A lingering FIFO has no writer left: close it."""
        self.lingering.remove(fd)
        os.close(fd)

    def close(self) -> None:
        for fd in self.lingering:
            os.close(fd)
        self.lingering = []
        shutil.rmtree(self._directory, ignore_errors=True)
