"""Fixtures for the MCP tests: servers in other processes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

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
