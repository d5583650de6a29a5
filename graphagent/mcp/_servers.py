"""Which MCP server a client talks to, in words, and whether a failure means it is gone.

Errors and tool messages name the server so a person can tell which of several is down: by its
URL, the command that runs it, its in-process name, or the names an ``MCPConfig`` gives it.
"""

from __future__ import annotations

import logging
import shlex
from typing import Any

from fastmcp.client import Client
from fastmcp.client.group import ClientGroup
from fastmcp.client.transports import (
    FastMCPTransport,
    SSETransport,
    StdioTransport,
    StreamableHttpTransport,
)
from fastmcp.client.transports.config import MCPConfigTransport
from mcp import MCPError
from mcp.types import CONNECTION_CLOSED

logger = logging.getLogger(__name__)


def describe(client: Client[Any], name: str | None = None) -> str:
    """``'calc' (at http://127.0.0.1:8000/mcp)``, ``the MCP server run as `python server.py```..."""
    where = _where(client.transport)
    return f"the MCP server {name!r} ({where})" if name else f"the MCP server {where}"


def _where(transport: Any) -> str:
    if isinstance(transport, StreamableHttpTransport | SSETransport):
        return f"at {transport.url}"
    if isinstance(transport, StdioTransport):
        return f"run as `{shlex.join([transport.command, *transport.args])}`"
    if isinstance(transport, FastMCPTransport):
        return f"in process, named {getattr(transport.server, 'name', None)!r}"
    if isinstance(transport, MCPConfigTransport):
        names = ", ".join(repr(name) for name in transport.config.mcpServers)
        return f"configured as {names}"
    return f"reached through {type(transport).__name__}"


def connection_lost(client: Client[Any], error: BaseException) -> bool:
    """Whether ``error``, raised by a request through ``client``, means the connection is gone
    (the server exited, or closed it) rather than a failure of the request itself."""
    if isinstance(error, MCPError) and error.code == CONNECTION_CLOSED:
        return True
    return not client.is_connected()


async def enter(client: Client[Any] | ClientGroup) -> None:
    """Take a hold on ``client``'s connection (connecting if it has none)."""
    await client.__aenter__()


async def leave(client: Client[Any] | ClientGroup) -> None:
    """Release a hold taken by :func:`enter` (the last one closes the connection). FastMCP
    raises a connection's failure again when its last hold is released; by then the failure has
    been reported to whoever was using the connection, or did not concern them, so it is only
    logged here."""
    try:
        await client.__aexit__(None, None, None)
    except Exception:
        logger.debug("closing a failed MCP connection raised", exc_info=True)
