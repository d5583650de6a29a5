"""Run a command as a Linux child subreaper, and end every process it starts when it ends.

``python -I -S reaper.py [--limit NAME=VALUE]... -- command [args...]``

The shell tool starts its bash session through this script (a file run on its own: it imports
nothing from graphagent, so it starts in milliseconds). A process group is not enough to end
what a command started: ``setsid`` leaves the group, and a double fork leaves the tree, so
killing the group misses both. A child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``) adopts
every orphan below it instead of letting it go to ``init``, so this process can find and kill
all of them.

- It forks the command, setting the ``--limit`` resource limits in the child only, and lets go
  of its own stdin, stdout and stderr, so the session sees the end of the shell's output when
  the shell and its jobs are gone.
- It reaps every orphan that comes to it while the command runs.
- When the command exits, or when this process gets ``SIGTERM``, ``SIGINT`` or ``SIGHUP``, it
  kills every descendant, and every other member of its process group when it leads one
  (``SIGKILL``, again until none is left), reaps them, and exits with the command's status
  (128 + the signal when it was killed).

Where the subreaper cannot be set (not Linux, or refused), orphans that left the process group
escape; everything else still ends.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
GIVE_UP_AFTER = 10.0  # seconds spent killing descendants before giving up on the last ones
_STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class _Stop(Exception):
    """Raised by the signal handler: the session asks for everything to end."""


def main(argv: list[str]) -> int:
    limits, command = _arguments(argv)
    _become_subreaper()  # without it, only the tree and the process group can be ended
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
    child = os.fork()
    if child == 0:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)
        _run(command, limits)
    for number in _STOPPING:
        signal.signal(number, _stop)
    _let_go_of_the_pipes()
    status = _wait_for(child)
    _end_descendants()
    if status is None or os.WIFSIGNALED(status):
        return 128 + (os.WTERMSIG(status) if status is not None else signal.SIGTERM)
    return os.WEXITSTATUS(status)


def _arguments(argv: list[str]) -> tuple[list[tuple[str, int]], list[str]]:
    limits: list[tuple[str, int]] = []
    while argv and argv[0] == "--limit":
        name, _, value = argv[1].partition("=")
        limits.append((name, int(value)))
        argv = argv[2:]
    if not argv or argv[0] != "--" or len(argv) < 2:
        sys.exit("usage: reaper.py [--limit NAME=VALUE]... -- command [args...]")
    return limits, argv[1:]


def _become_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _run(command: list[str], limits: list[tuple[str, int]]) -> None:
    """Become ``command`` (never returns)."""
    for number in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores them; commands must not
        signal.signal(number, signal.SIG_DFL)
    try:
        if limits:
            import resource

            for name, value in limits:
                resource.setrlimit(getattr(resource, name), (value, value))
        os.execvp(command[0], command)
    except (OSError, ValueError) as error:
        os.write(2, f"graphagent: cannot start {command[0]!r}: {error}\n".encode())
    os._exit(127)


def _stop(number: int, frame: object) -> None:
    raise _Stop


def _let_go_of_the_pipes() -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def _wait_for(child: int) -> int | None:
    """The command's wait status, reaping every orphan meanwhile; ``None`` when stopped."""
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == child:
                return status
    except (_Stop, ChildProcessError):
        return None
    finally:
        signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)


def _end_descendants() -> None:
    """Kill and reap every process below this one (and every other member of its process
    group, when it leads one), until none is left or time is up."""
    me = os.getpid()
    group = me if os.getpgrp() == me else None
    give_up = time.monotonic() + GIVE_UP_AFTER
    while time.monotonic() < give_up:
        for pid in _doomed(me, group):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:  # no child left, and none can come: every orphan is ours
            if not _doomed(me, group):
                return
        time.sleep(0.005)  # killed processes take a moment to become reapable


def _doomed(me: int, group: int | None) -> list[int]:
    """The processes below ``me``, and the others in process group ``group``."""
    children: dict[int, list[int]] = {}
    members: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as file:
                fields = file.read().rpartition(b")")[2].split()
        except OSError:  # ended meanwhile
            continue
        pid, state = int(name), fields[0]
        if state in (b"Z", b"X"):  # dead already, waiting to be reaped
            continue
        children.setdefault(int(fields[1]), []).append(pid)
        if group is not None and int(fields[2]) == group and pid != me:
            members.append(pid)
    found: list[int] = []
    pending = [me]
    while pending:
        below = children.get(pending.pop(), [])
        found += below
        pending += below
    return found + [pid for pid in members if pid not in found]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
