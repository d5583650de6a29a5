"""One MCP tool as a LangChain tool that the agent runs like any other.

The tool calls its server on each invocation, through the FastMCP client it was made with,
connecting for the call if nothing holds the connection open (FastMCP's clients are reentrant).
What comes back:

- a result: a ``ToolMessage`` whose content is the result's content blocks as LangChain blocks,
  and whose artifact is an :class:`MCPToolArtifact` with the structured content (``None`` when
  the result has none);
- a result marked ``isError``, a JSON-RPC error answer, or a server that cannot be reached or
  goes away during the call: a ``ToolMessage(status="error")`` the model can read, and the run
  goes on (the next call connects again);
- questions from the server (elicitation): an interrupt, see :mod:`graphagent.mcp.elicitation`.

Other failures (content with no LangChain counterpart, questions of a kind that cannot be put
to a person) raise, as a tool's exceptions do, into the ``wrap_tool_call`` layers around it.

The tool has both entry points: ``ainvoke`` runs on the caller's event loop, ``invoke`` on a loop
of its own (``invoke``/``stream`` runs of an agent use it). Cancelling an ``ainvoke`` cancels the
request, and the server is told.
"""

from __future__ import annotations

import asyncio
import copy
import threading
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final

from fastmcp.client import Client
from fastmcp.client.group import ClientGroup
from fastmcp.client.transports import StdioTransport
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.errors import GraphBubbleUp
from mcp import MCPError
from mcp.types import Tool

from graphagent.mcp import _loop
from graphagent.mcp._content import (
    Block,
    MCPToolArtifact,
    ServerCallResult,
    ToolFailed,
    failed_call_content,
    split,
)
from graphagent.mcp._rounds import call_asking
from graphagent.mcp._servers import (
    ERROR_TEXT_LIMIT,
    connection_lost,
    cut,
    describe,
    held_for_call,
    refused,
)
from graphagent.mcp.elicitation import arm, asks_by_interrupt, is_armed

__all__ = ["DEFAULT_CALL_TIMEOUT", "MCPToolArtifact", "as_langchain_tool"]

Output = tuple[list[Block], MCPToolArtifact | None]


DEFAULT_CALL_TIMEOUT: Final = 300.0
"""Seconds an MCP tool call may take by default, after which the model is told it did not
answer and the request is cancelled at the server."""


async def as_langchain_tool(
    tool: Tool,
    client: Client[Any] | ClientGroup,
    *,
    call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
) -> BaseTool:
    """The LangChain tool that calls the MCP ``tool`` through ``client``.

    ``client`` is the FastMCP client (or ``ClientGroup``) that listed the tool. A group's tool
    keeps its group name (``"calc_add"``) and calls the group's client that serves it, by that
    client's name for it. Convert while the client is connected to keep its server's identity in
    the tool's metadata (``MCPAdapter.list_tools`` does).

    A client armed by :class:`~graphagent.mcp.MCPAdapter` answers its server's questions with an
    interrupt; a client with an elicitation handler of its own answers with that handler.

    Args:
        tool: The tool, as the client listed it.
        client: The client (or group) that listed it.
        call_timeout: Seconds each call may take (:data:`DEFAULT_CALL_TIMEOUT` unless given); a call
            still running then is cancelled at the server and answered with an error
            ``ToolMessage`` the model can read. ``None`` waits as long as the server takes.

    Raises:
        ValueError: ``call_timeout`` is neither a number > 0 nor ``None``.

    Example:
        ```python
        from fastmcp import Client

        from graphagent.mcp import as_langchain_tool

        client = Client("https://example.com/mcp")
        async with client:
            tools = [await as_langchain_tool(tool, client) for tool in await client.list_tools()]
        ```
    """
    seconds = checked_timeout(f"the MCP tool {tool.name!r}", call_timeout)
    if isinstance(client, ClientGroup):
        route = await client.resolve_tool(tool.name)
        call = _Call(route.client, route.upstream_name, tool.name, route.server_name, seconds)
    else:
        call = _Call(client, tool.name, tool.name, timeout=seconds)
    return StructuredTool(
        name=tool.name,
        description=tool.description or "",
        args_schema=normalized_schema(tool.input_schema),
        func=call.run,
        coroutine=call.arun,
        response_format="content_and_artifact",
        metadata=_metadata(tool, call.client),
        handle_tool_error=failed_call_content,
    )


@dataclass(frozen=True, slots=True)
class _Call:
    """How the tool reaches its server: ``client``, which knows the tool as ``upstream_name``;
    ``server_name`` is the client's name in its group, if it has one."""

    client: Client[Any]
    upstream_name: str
    tool_name: str
    server_name: str | None = None
    timeout: float | None = DEFAULT_CALL_TIMEOUT

    async def arun(self, **arguments: Any) -> Output:
        return await self._call(self.client, arguments)

    def run(self, **arguments: Any) -> Output:
        return _loop.run(self._call(_for_sync_calls(self.client), arguments))

    async def _call(self, client: Client[Any], arguments: dict[str, Any]) -> Output:
        result: ServerCallResult
        async with self._reaching(client):
            try:
                async with asyncio.timeout(self.timeout) as limit:
                    result = await self._request(client, arguments)
            except TimeoutError:
                if not limit.expired():
                    raise
                raise ToolFailed(
                    f"The tool {self.tool_name!r} did not answer within {self.timeout:g} s: "
                    f"the request was cancelled at {describe(client, self.server_name)}, and "
                    "whether it took effect is unknown. Try a smaller request, or later."
                ) from None
        return split(result)

    async def _request(self, client: Client[Any], arguments: dict[str, Any]) -> ServerCallResult:
        if asks_by_interrupt(client):
            return await call_asking(
                client,
                self.upstream_name,
                self.tool_name,
                arguments,
                describe(client, self.server_name),
            )
        return await client.call_tool(self.upstream_name, arguments, raise_on_error=False)

    @asynccontextmanager
    async def _reaching(self, client: Client[Any]) -> AsyncIterator[None]:
        """``client`` connected for the call; a server that cannot be reached, or goes away
        during the call, fails the call as the model's to read."""
        server = describe(client, self.server_name)
        holding = held_for_call(client, move_holds=self.server_name is None)
        try:
            await holding.__aenter__()
        except Exception as error:
            raise ToolFailed(
                f"The tool {self.tool_name!r} could not run: {server} cannot be reached ({error})."
            ) from error
        try:
            yield
        except GraphBubbleUp:
            raise
        except Exception as error:
            if not connection_lost(client, error):
                failure = _server_failure(self.tool_name, server, error)
                if failure is error:
                    raise
                raise failure from error
            raise ToolFailed(
                f"The tool {self.tool_name!r} did not finish: the connection to {server} was "
                f"lost during the call ({error}); whether the call took effect is unknown."
            ) from error
        finally:
            await holding.__aexit__(None, None, None)


def checked_timeout(what: str, timeout: Any) -> float | None:
    """``timeout`` as seconds, or a ``ValueError`` naming ``what`` it is for."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise ValueError(
            f"The timeout of {what} must be a number of seconds > 0, or None to wait as long as "
            f"the server takes; got {timeout!r}."
        )
    return float(timeout)


def _server_failure(tool_name: str, server: str, error: Exception) -> Exception:
    """What the model reads for a call the server answered badly while the connection held:
    a JSON-RPC error, or a result the MCP SDK refused (structured content that does not fit the
    tool's output schema, or none where the schema asks for it; the SDK raises a bare
    ``RuntimeError`` for those). Any other error is raised as it is."""
    if isinstance(error, MCPError):
        return ToolFailed(refused(tool_name, server, error))
    if type(error) is RuntimeError:
        return ToolFailed(
            f"The tool {tool_name!r} failed: {server} sent a result that cannot be used "
            f"({cut(str(error), ERROR_TEXT_LIMIT)})."
        )
    return error


_sync_clients: weakref.WeakKeyDictionary[Client[Any], Client[Any]] = weakref.WeakKeyDictionary()
_sync_clients_lock = threading.Lock()  # sync calls of one run come from several threads


def _for_sync_calls(client: Client[Any]) -> Client[Any]:
    """The copy of ``client`` that sync calls use, on the MCP loop: the caller may hold
    ``client`` connected on a loop of their own, which another loop cannot use."""
    with _sync_clients_lock:
        twin = _sync_clients.get(client)
        if twin is None:
            twin = client.new()
            if isinstance(twin.transport, StdioTransport):
                twin.transport = _own_process(twin.transport)
            if is_armed(client):
                arm(twin)
            _sync_clients[client] = twin
        return twin


def _own_process(transport: StdioTransport) -> StdioTransport:
    """A copy of ``transport`` that runs a server process of its own: a stdio transport keeps
    one process for the event loop that started it, and refuses a second loop meanwhile."""
    fresh = copy.copy(transport)
    StdioTransport.__init__(  # the base's state only: the subclass's settings are copied
        fresh,
        transport.command,
        transport.args,
        env=transport.env,
        cwd=transport.cwd,
        keep_alive=transport.keep_alive,
        log_file=transport.log_file,
    )
    return fresh


def normalized_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each object argument that lists no properties marked as open
    (``additionalProperties: true``): provider conversions would otherwise close it, and the
    model could pass nothing in it. Explicit constraints are kept; ``schema`` is not changed."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return dict(schema)
    return {**schema, "properties": {name: _opened(value) for name, value in properties.items()}}


def _opened(argument: Any) -> Any:
    if not isinstance(argument, dict):
        return argument
    kinds = argument.get("type")
    is_object = kinds == "object" or (isinstance(kinds, list) and "object" in kinds)
    constrained = "additionalProperties" in argument or "unevaluatedProperties" in argument
    if is_object and not argument.get("properties") and not constrained:
        return {**argument, "additionalProperties": True}
    return argument


def _metadata(tool: Tool, client: Client[Any]) -> dict[str, Any] | None:
    """The tool's MCP metadata under one ``"mcp"`` key, as LangChain's ``langchain.mcp`` keeps
    it: ``{"mcp": {"tool": {"annotations": ..., "_meta": ...}, "server": <server info>}}``."""
    described: dict[str, Any] = {}
    if tool.annotations is not None:
        described["annotations"] = tool.annotations.model_dump(exclude_none=True)
    if tool.meta is not None:
        described["_meta"] = tool.meta
    mcp: dict[str, Any] = {"tool": described} if described else {}
    if client.server_info is not None:  # known while connected
        mcp["server"] = client.server_info.model_dump(exclude_none=True)
    return {"mcp": mcp} if mcp else None
