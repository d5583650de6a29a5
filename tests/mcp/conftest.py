"""Fixtures for the MCP tests: servers in other processes, and a deadline for each test."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from tests.mcp.processes import HttpServer, http_server


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One HTTP server for a test module (a test that ends it starts its own)."""
    log = tmp_path_factory.mktemp("http") / "server.log"
    with http_server(log) as server:
        yield server


@pytest.fixture
def server_log(tmp_path: Path) -> Path:
    """Where a server in another process records what ran (``servers.Counts``)."""
    return tmp_path / "server.log"


TEST_DEADLINE = 300  # seconds; a bound for a test that hangs, not a speed assertion


@pytest.fixture(autouse=True)
def _a_hang_fails_the_test() -> Iterator[None]:
    """These tests wait on servers in other processes: one that never answers fails the test,
    with a ``TimeoutError`` raised where it waits, instead of hanging the suite."""

    def expired(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError(f"the test ran past its {TEST_DEADLINE} s deadline: something hangs")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(TEST_DEADLINE)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
