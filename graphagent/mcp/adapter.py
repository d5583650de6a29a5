"""``MCPAdapter``: the tools of one or several MCP servers, for ``create_agent``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self, TypeAlias

from fastmcp import FastMCP
from fastmcp.client import Client
from fastmcp.client.group import ClientGroup
from fastmcp.client.transports import ClientTransport
from fastmcp.mcp_config import MCPConfig
from langchain_core.tools import BaseTool
from mcp.client.caching import CacheMode
from mcp.server.mcpserver import MCPServer
from mcp.types import Tool
from pydantic import AnyUrl, TypeAdapter, ValidationError

from graphagent.mcp._listing import drop, unusable
from graphagent.mcp._servers import describe, enter, leave
from graphagent.mcp.elicitation import arm, has_own_handler
from graphagent.mcp.errors import MCPConnectionError
from graphagent.mcp.tools import DEFAULT_CALL_TIMEOUT, as_langchain_tool, checked_timeout

__all__ = ["MCPAdapter", "MCPAdapterTarget"]

MCPAdapterTarget: TypeAlias = (
    Client[Any]
    | ClientGroup
    | ClientTransport
    | FastMCP[Any]
    | MCPServer
    | AnyUrl
    | Path
    | MCPConfig
    | dict[str, Any]
    | str
)
"""What ``MCPAdapter`` takes: whatever ``fastmcp.Client`` takes (a URL, a server script's
``Path``, a transport, an in-process server, an ``MCPConfig`` or its dict), a ready client, or a
``ClientGroup``. A ``str`` must be an http(s) URL."""

_URL: Final = TypeAdapter(AnyUrl)
_LOCAL_SERVER_HINT: Final = (
    "A string is read as the URL of a server, never as a local script (FastMCP would run an "
    "existing .py or .js file of that name); to run a local server over stdio, say so: "
    "MCPAdapter(Path('server.py')), a fastmcp transport, or an MCPConfig."
)


class MCPAdapter:
    """The tools of the MCP servers behind ``target``, as LangChain tools an agent runs.

    An async context manager: inside ``async with``, the connection to every server stays open
    and the tools' calls share it; outside, each call connects for itself. ``list_tools()``
    connects as needed either way, and the tools it returns keep working after the context ends.

    A server that asks the person a question in the middle of a call pauses the run with an
    interrupt (:mod:`graphagent.mcp.elicitation`). For that, the adapter gives each client it
    makes an elicitation handler, which makes FastMCP tell servers the client can be asked. A
    ready client (or a group's) without one gets it on a copy (``client.new()``), leaving the
    caller's object as it was; a client with an elicitation handler of its own keeps it, and it
    answers instead of an interrupt.

    Each call has ``call_timeout`` seconds (:data:`~graphagent.mcp.tools.DEFAULT_CALL_TIMEOUT`,
    300, unless given); a call still running then is cancelled at the server and answered with
    an error ``ToolMessage`` the model can read, and the run goes on.

    Args:
        target: See :data:`MCPAdapterTarget`.
        call_timeout: Seconds each tool call may take; ``None`` waits as long as the server
            takes. One adapter per server gives each server its own.
        tool_timeouts: Seconds for the calls of particular tools, by the tool's name as
            ``list_tools`` returns it (a group's ``"calc_add"``); ``None`` for no limit.

    Raises:
        ValueError: ``target`` is a string that is not an http or https URL; a timeout that is
            neither a number > 0 nor ``None``.

    Example:
        ```python
        from graphagent import create_agent
        from graphagent.mcp import MCPAdapter

        async with MCPAdapter("https://example.com/mcp") as adapter:
            agent = create_agent("openai:gpt-4o", await adapter.list_tools())
            result = await agent.ainvoke({"messages": [("user", "...")]})
        ```
    """

    def __init__(
        self,
        target: MCPAdapterTarget,
        *,
        call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
        tool_timeouts: Mapping[str, float | None] | None = None,
    ) -> None:
        self._call_timeout = checked_timeout("MCPAdapter(call_timeout=...)", call_timeout)
        self._tool_timeouts = {
            name: checked_timeout(f"the MCP tool {name!r} in tool_timeouts", seconds)
            for name, seconds in (tool_timeouts or {}).items()
        }
        if isinstance(target, ClientGroup):
            members = {name: _armed(client) for name, client in target.clients.items()}
            self._client: Client[Any] | ClientGroup = ClientGroup(members)
        elif isinstance(target, Client):
            self._client = _armed(target)
        else:
            if isinstance(target, str):
                _check_url(target)
            client: Client[Any] = Client(target)
            arm(client)
            self._client = client

    @property
    def client(self) -> Client[Any] | ClientGroup:
        """The FastMCP client (or group) the tools call through, for anything else MCP offers."""
        return self._client

    async def __aenter__(self) -> Self:
        """Connect to every server, or raise ``MCPConnectionError`` naming those that cannot
        be reached."""
        try:
            await enter(self._client)
        except Exception as error:
            raise await self._unreachable(error) from error
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Release this context's hold on the connections (the last one closes them)."""
        await leave(self._client)

    async def list_tools(self, *, cache_mode: CacheMode = "use") -> list[BaseTool]:
        """The servers' tools as LangChain tools, which call their server on each invocation.

        Args:
            cache_mode: How the listing uses the client's response cache, if it was built with
                one (``Client(cache=...)``): ``"use"`` serves a fresh cached listing,
                ``"refresh"`` asks the server and caches the answer, ``"bypass"`` skips the
                cache. ``"use"`` also for a ``ClientGroup``, whose own default is ``"refresh"``.

        Raises:
            MCPConnectionError: A server cannot be reached; the message names it.
            ValueError: ``tool_timeouts`` names a tool the servers do not have.
        """
        async with self:
            listed = await self._client.list_tools(cache_mode=cache_mode)
            self._check_tool_timeouts({tool.name for tool in listed})
            return [
                await as_langchain_tool(tool, self._client, call_timeout=self._timeout(tool.name))
                for tool in listed
                if await self._usable(tool)
            ]

    async def _usable(self, tool: Tool) -> bool:
        """Whether the agent can use ``tool``; if not, a warning says which and why."""
        reason = unusable(tool)
        if reason is None:
            return True
        if isinstance(self._client, ClientGroup):
            route = await self._client.resolve_tool(tool.name)
            drop(tool, describe(route.client, route.server_name), reason)
        else:
            drop(tool, describe(self._client), reason)
        return False

    def _timeout(self, tool_name: str) -> float | None:
        return self._tool_timeouts.get(tool_name, self._call_timeout)

    def _check_tool_timeouts(self, names: set[str]) -> None:
        unknown = sorted(set(self._tool_timeouts) - names)
        if unknown:
            raise ValueError(
                f"MCPAdapter(tool_timeouts=...) names tools its servers do not have: "
                f"{', '.join(map(repr, unknown))}. Their tools: "
                f"{', '.join(map(repr, sorted(names)))}."
            )

    async def _unreachable(self, error: Exception) -> MCPConnectionError:
        """The error naming the servers that cannot be reached. A group reports only its first
        failure, so each of its clients is tried alone to find them all."""
        if isinstance(self._client, Client):
            return _connection_error({describe(self._client): error})
        failures: dict[str, Exception] = {}
        for name, member in self._client.clients.items():
            try:
                await enter(member)
            except Exception as member_error:
                failures[describe(member, name)] = member_error
            else:
                await leave(member)
        return _connection_error(failures or {"a server of the group": error})


def _armed(client: Client[Any]) -> Client[Any]:
    """``client``, or an armed copy of it if it has no elicitation handler of its own."""
    if has_own_handler(client):
        return client
    copy = client.new()
    arm(copy)
    return copy


def _connection_error(failures: dict[str, Exception]) -> MCPConnectionError:
    reasons = "; ".join(f"{server}: {error}" for server, error in failures.items())
    return MCPConnectionError(
        f"Could not connect to {reasons}. Check that the server is running and reachable "
        "(its URL, or the command that starts it), then try again.",
        servers=tuple(failures),
    )


def _check_url(target: str) -> None:
    """Refuse a string that is not an http(s) URL: it must never turn into a local subprocess."""
    try:
        url = _URL.validate_python(target)
    except ValidationError:
        raise ValueError(
            f"MCP target {target!r} is not a valid URL. {_LOCAL_SERVER_HINT}"
        ) from None
    # AnyUrl takes `C:\server.py` (or a file named `a:b.py`) for a URL with scheme `c` (`a`),
    # which FastMCP would run as a local script when the file exists.
    if url.scheme not in ("http", "https"):
        raise ValueError(
            f"MCP target {target!r} has scheme {url.scheme!r}, but a string target must be an "
            f"http or https URL. {_LOCAL_SERVER_HINT}"
        )
