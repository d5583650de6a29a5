"""A throwaway PostgreSQL server for the tests: Debian's (or PATH's) binaries, a data directory
in a temporary folder, an ephemeral port on 127.0.0.1, trust authentication, no fsync.

The server refuses to run as root, so when the tests run as root (as CI does) ``initdb`` and
``pg_ctl`` run as the ``postgres`` system user that Debian's ``postgresql`` package creates.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INSTALL_HINT = "install them with `apt-get install postgresql` (Debian/Ubuntu)"


class PostgresUnavailable(RuntimeError):
    """This machine has no PostgreSQL to start; the message says why and what to do."""


class ServerCommandFailed(RuntimeError):
    """initdb or pg_ctl failed although PostgreSQL is installed: a real error, never a skip."""


@dataclass(frozen=True, slots=True)
class ServerUser:
    """Who runs the server: ``None`` ids mean the current (non-root) user."""

    uid: int | None = None
    gid: int | None = None

    def subprocess_kwargs(self) -> dict[str, Any]:
        if self.uid is None:
            return {}
        return {"user": self.uid, "group": self.gid, "extra_groups": []}


def find_bin_dir() -> Path:
    """The folder holding ``initdb`` and ``pg_ctl``: on PATH, else the newest Debian version."""
    on_path = shutil.which("initdb")
    if on_path and shutil.which("pg_ctl"):
        return Path(on_path).resolve().parent
    debian = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
    )
    if not debian:
        raise PostgresUnavailable(
            f"PostgreSQL server binaries (initdb, pg_ctl) were not found on PATH nor in "
            f"/usr/lib/postgresql/*/bin; {INSTALL_HINT}."
        )
    return Path(debian[-1]).parent


def server_user() -> ServerUser:
    """The current user, or the ``postgres`` system user when running as root."""
    if os.geteuid() != 0:
        return ServerUser()
    try:
        entry = pwd.getpwnam("postgres")
    except KeyError:
        raise PostgresUnavailable(
            "running as root, and PostgreSQL refuses to run as root, but there is no 'postgres' "
            f"user to run it as; {INSTALL_HINT}, which creates that user."
        ) from None
    return ServerUser(entry.pw_uid, entry.pw_gid)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running_server(bin_dir: Path, user: ServerUser) -> Iterator[str]:
    """Start a server, yield its connection string, and always stop it and delete its data."""
    root = Path(tempfile.mkdtemp(prefix="graphagent-pg-"))
    try:
        if user.uid is not None:
            os.chown(root, user.uid, user.gid or -1)
        data = root / "data"
        _run(user, root, bin_dir / "initdb", "-D", data, "-U", "postgres", "-A", "trust",
             "-E", "UTF8", "--no-locale", "--no-sync")  # fmt: skip
        port = free_port()
        settings = (
            f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={root} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        log = root / "server.log"
        try:
            _run(user, root, bin_dir / "pg_ctl", "-D", data, "-l", log, "-o", settings,
                 "-w", "-t", "60", "start")  # fmt: skip
        except ServerCommandFailed as error:
            server_log = log.read_text(errors="replace") if log.exists() else ""
            raise ServerCommandFailed(f"{error}\nserver log:\n{server_log}") from None
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            _run(user, root, bin_dir / "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _run(user: ServerUser, cwd: Path, *command: object) -> None:
    result = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        **user.subprocess_kwargs(),
    )
    if result.returncode != 0:
        raise ServerCommandFailed(
            f"`{' '.join(map(str, command))}` failed ({result.returncode}):\n"
            f"{result.stdout}{result.stderr}"
        )
