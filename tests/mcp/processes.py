"""Test servers in other processes: the stdio script's path, and an HTTP server started on a
free port of 127.0.0.1 and stopped, whatever happened, when the test is done."""

from __future__ import annotations

import selectors
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

HERE = Path(__file__).resolve().parent
STDIO_SERVER = HERE / "stdio_server.py"
HTTP_SERVER = HERE / "http_server.py"
START_TIMEOUT = 60  # seconds; a bound for a server that never comes up, not a speed assertion


@dataclass(frozen=True, slots=True)
class HttpServer:
    url: str
    process: subprocess.Popen[str]


@contextmanager
def http_server(log: Path | None = None, port: int = 0) -> Iterator[HttpServer]:
    """An HTTP server of ``servers.process_server``, ready to serve when this yields; on
    ``port`` if given (to restart a server where it was), else on a free one."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen()
    port = listener.getsockname()[1]
    args = [sys.executable, str(HTTP_SERVER), str(listener.fileno())]
    # stderr to a file, which never fills up as an unread pipe would.
    with tempfile.TemporaryFile("w+", encoding="utf-8") as stderr:
        process = subprocess.Popen(
            [*args, *([str(log)] if log else [])],
            pass_fds=[listener.fileno()],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        listener.close()  # the server holds its own copy
        try:
            _wait_until_ready(process, stderr)
            yield HttpServer(f"http://127.0.0.1:{port}/mcp", process)
        finally:
            process.kill()
            process.communicate()


def _wait_until_ready(process: subprocess.Popen[str], stderr: IO[str]) -> None:
    """Wait for the server's ``ready`` line; fail with its stderr if it exits or never says."""
    assert process.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if not selector.select(timeout=left):
                break
            line = process.stdout.readline()
            if line.strip() == "ready":
                return
            if not line:  # the server exited
                break
    process.kill()
    process.communicate()
    stderr.seek(0)
    raise RuntimeError(
        f"the MCP HTTP server did not start (exit {process.returncode}):\n{stderr.read()}"
    )
