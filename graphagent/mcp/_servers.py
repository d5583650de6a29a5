"""Which MCP server a client talks to, in words; whether a failure means it is gone; and a
call's hold on the connection, which connects again after a server went away.

Errors and tool messages name the server so a person can tell which of several is down: by its
URL, the command that runs it, its in-process name, or the names an ``MCPConfig`` gives it.

FastMCP's client counts the holds on its connection (``async with`` contexts and calls) and
cannot connect again while any is held; a connection lost under an ``async with`` would stay
lost for good. :func:`held_for_call` takes a call's hold itself, and when the held connection
is gone it starts a new one and moves the contexts' holds onto it (see :func:`_revive`). It
reads FastMCP's session state to do so, as FastMCP offers no public way.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
from fastmcp.client import Client
from fastmcp.client.group import ClientGroup
from fastmcp.client.transports import (
    FastMCPTransport,
    SSETransport,
    StdioTransport,
    StreamableHttpTransport,
)
from fastmcp.client.transports.config import MCPConfigTransport
from httpx2 import TransportError
from mcp import MCPError
from mcp.types import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
)

logger = logging.getLogger(__name__)

_TRANSPORT_ERRORS: Final = (
    TransportError,
    ConnectionError,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
)
_STOP_TIMEOUT: Final = 5.0  # seconds for a lost session to close its transport


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


_MEANINGS: Final = {
    PARSE_ERROR: "it could not parse the request",
    INVALID_REQUEST: "it found the request invalid",
    METHOD_NOT_FOUND: "it does not know the method",
    INVALID_PARAMS: "it refused the arguments",
    INTERNAL_ERROR: "it failed internally",
}
_CLOSED_MESSAGE: Final = "Connection closed"  # the MCP SDK's, for a connection that closed
ERROR_TEXT_LIMIT: Final = 4000
"""Characters of a server's error message that reach the model; the rest is cut."""


def _closed(client: Client[Any], error: MCPError) -> bool:
    """Whether ``error`` is the MCP SDK's own report of a closed connection. Its code, -32000,
    is also the one servers use for a generic error, so the SDK's message, or a connection
    that is indeed gone, tells them apart."""
    if error.code != CONNECTION_CLOSED:
        return False
    if error.error.message == _CLOSED_MESSAGE and error.error.data is None:
        return True
    return not client.is_connected() or _dead(client, client._session_state.session_task)


def refused(tool_name: str, server: str, error: MCPError) -> str:
    """The model's message for a JSON-RPC error ``server`` answered a call with: the call
    reached the server, which refused or failed it (the connection is fine)."""
    meaning = _MEANINGS.get(error.code, "a server error")
    return (
        f"The tool {tool_name!r} failed: {server} answered with JSON-RPC error {error.code} "
        f"({meaning}): {cut(str(error), ERROR_TEXT_LIMIT)}"
    )


def cut(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters and a note of how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [... {len(text) - limit} more characters cut]"


def connection_lost(client: Client[Any], error: BaseException) -> bool:
    """Whether ``error``, raised by a request through ``client``, means the connection is gone
    (the server exited, closed it, or cannot be reached) rather than an answer to the request:
    a JSON-RPC error the server sent is an answer, whatever its code."""
    if isinstance(error, MCPError):
        return _closed(client, error)
    if isinstance(error, _TRANSPORT_ERRORS):
        return True
    return not client.is_connected() or _dead(client, client._session_state.session_task)


_lost: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()
"""Sessions whose connection a call saw go (a stdio server's session outlives its process)."""


@asynccontextmanager
async def held_for_call(client: Client[Any], *, move_holds: bool = True) -> AsyncIterator[None]:
    """``client`` connected for one tool call: connecting if nothing holds it, and connecting
    again if its connection died while something held it (a server that crashed, exited or was
    restarted), so the call reaches the server that is back. The call's hold is released on
    the session it was taken on: a call that was in flight when its connection died releases
    nothing of the new one. ``move_holds``: see :func:`_revive`."""
    if not (_died_while_held(client) and await _revive(client, move_holds=move_holds)):
        await _connect(client)
    session = client._session_state.session_task
    try:
        yield
    except Exception as error:
        if session is not None and connection_lost(client, error):
            _lost.add(session)
        raise
    finally:
        await _released(client, session)


async def _released(client: Client[Any], session: asyncio.Task[Any] | None) -> None:
    """Release a call's hold (see :func:`leave` for why a failure here is only logged)."""
    try:
        await client._disconnect(held=session)
    except Exception:
        logger.debug("closing a failed MCP connection raised", exc_info=True)


async def _connect(client: Client[Any]) -> None:
    """Take a hold on ``client``'s connection, connecting if it has none. FastMCP's own step
    of ``async with client``, without tying the hold to the calling task: a call's hold is
    released on the session it was taken on (``_disconnect(held=...)``)."""
    await client._connect()  # type: ignore[no-untyped-call]


def _died_while_held(client: Client[Any]) -> bool:
    state = client._session_state
    return state.nesting_counter > 0 and _dead(client, state.session_task)


def _dead(client: Client[Any], task: asyncio.Task[Any] | None) -> bool:
    """Whether the session run by ``task`` has lost its connection: its task ended, a call saw
    the connection close, or the MCP SDK's dispatcher says so (looked up defensively)."""
    if task is None:
        return False
    if task.done() or task in _lost:
        return True
    dispatcher = getattr(client._session_state.session, "_dispatcher", None)
    return getattr(dispatcher, "_closed", False) is True


async def _revive(client: Client[Any], *, move_holds: bool) -> bool:
    """Connect ``client`` afresh after its connection died while held, for the calling tool
    call; ``False`` if another call did so first. With ``move_holds``, the holds of contexts
    (``async with`` an adapter, or the client) move to the new connection, which then stays
    open until they end. A ``ClientGroup`` releases its members with the connection it took,
    so a group's member is revived without them (``move_holds=False``): each call connects for
    itself. The holds of calls in flight on the dead connection are dropped: those calls have
    failed, and release nothing."""
    state = client._session_state
    async with state.lock:
        dead = state.session_task
        if dead is None or state.nesting_counter == 0 or not _dead(client, dead):
            return False
        contexts = [held for held in client._context_session_tasks.values() if dead in held]
        moved = sum(held.count(dead) for held in contexts) if move_holds else 0
        state.stop_event.set()
        client._reset_session_state(full=True)
    logger.info("The connection to %s was lost; connecting again.", describe(client))
    await _stopped(dead)
    await _connect(client)
    new = state.session_task
    if moved and new is not None:
        state.nesting_counter += moved
        for held in contexts:
            held[:] = [new if task is dead else task for task in held]
    return True


async def _stopped(task: asyncio.Task[Any]) -> None:
    """Let a dead session's task close its transport (bounded), else cancel it."""
    _, pending = await asyncio.wait([task], timeout=_STOP_TIMEOUT)
    if pending:
        task.cancel()
        await asyncio.wait([task], timeout=_STOP_TIMEOUT)
    if not task.cancelled() and task.exception() is not None:
        logger.debug("the lost MCP session ended with", exc_info=task.exception())


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
