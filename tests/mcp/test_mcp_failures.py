"""When things go wrong: cancelling a run cancels its pending MCP call on the server; a server
that dies in the middle of a call, or is down when a call comes, gives the model an error
message naming it, and the run goes on."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from fastmcp import Client
from fastmcp.client.group import ClientGroup
from fastmcp.client.transports import StdioTransport

from graphagent.mcp import MCPAdapter
from tests.conftest import run_agent
from tests.mcp import servers
from tests.mcp.helpers import calling, texts, tool_messages
from tests.mcp.processes import STDIO_SERVER, http_server

T = TypeVar("T")
WAIT = 30  # seconds; a bound for what never happens, not a speed assertion
ASK = {"messages": [("user", "Go")]}


async def within(awaitable: Awaitable[T]) -> T:
    return await asyncio.wait_for(awaitable, timeout=WAIT)


async def run_until_cancelled(agent: Any, how: str, started: Awaitable[Any]) -> None:
    """Start ``agent`` with ``ainvoke`` or ``astream``, wait for ``started``, cancel the run."""

    async def consume() -> None:
        if how == "ainvoke":
            await agent.ainvoke(ASK)
        else:
            async for _ in agent.astream(ASK):
                pass

    task = asyncio.create_task(consume())
    await within(started)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await within(task)


@pytest.mark.parametrize("how", ["ainvoke", "astream"])
def test_cancelling_a_run_cancels_the_call_on_an_in_process_server(how: str) -> None:
    async def scenario() -> None:
        seen = servers.Waiting()
        tools = await MCPAdapter(servers.waiter(seen)).list_tools()
        agent = calling(tools, ("wait_forever", {}))

        await run_until_cancelled(agent, how, seen.started.wait())

        await within(seen.cancelled.wait())

    asyncio.run(scenario())


def test_cancelling_a_run_cancels_the_call_on_an_http_server() -> None:
    async def scenario(url: str) -> bool:
        tools = await MCPAdapter(url).list_tools()
        agent = calling(tools, ("wait_forever", {}))
        async with Client(url) as observer:

            async def waited(what: str) -> bool:
                result = await observer.call_tool("waited", {"what": what})
                return bool(result.data)

            await run_until_cancelled(agent, "ainvoke", waited("started"))
            return await within(waited("cancelled"))

    with http_server() as server:
        assert asyncio.run(scenario(server.url))


def test_a_stdio_server_that_dies_mid_call_is_an_error_and_the_next_call_restarts_it(
    how_call: str, server_log: Path
) -> None:
    transport = StdioTransport(sys.executable, [str(STDIO_SERVER), str(server_log)])
    tools = asyncio.run(MCPAdapter(transport).list_tools())
    agent = calling(tools, ("crash", {}), ("add", {"a": 1, "b": 1}))

    result = run_agent(agent, how_call, ASK)

    crashed, added = tool_messages(result)
    assert crashed.status == "error"
    [text] = texts(crashed)
    assert text.startswith(
        "The tool 'crash' did not finish: the connection to the MCP server run as "
    )
    assert "stdio_server.py" in text
    assert text.endswith(
        "was lost during the call (Connection closed); whether the call took effect is unknown."
    )
    assert texts(added) == ["2"]
    assert result["messages"][-1].content == "done"
    assert servers.Counts(server_log)["crashed"] == 1


def test_an_http_server_that_dies_mid_call_is_an_error_and_then_one_that_is_down(
    how_call: str,
) -> None:
    with http_server() as server:
        tools = asyncio.run(MCPAdapter(server.url).list_tools())
        agent = calling(tools, ("crash", {}), ("add", {"a": 1, "b": 1}))

        result = run_agent(agent, how_call, ASK)

    crashed, unreachable = tool_messages(result)
    assert crashed.status == unreachable.status == "error"
    assert texts(crashed) == [
        "The tool 'crash' did not finish: the connection to the MCP server at "
        f"{server.url} was lost during the call (Connection closed); whether the call took "
        "effect is unknown."
    ]
    [text] = texts(unreachable)
    assert text.startswith(
        f"The tool 'add' could not run: the MCP server at {server.url} cannot be reached ("
    )
    assert result["messages"][-1].content == "done"


def test_a_group_server_that_is_down_when_called_is_named_by_its_group_name(
    how_call: str,
) -> None:
    with http_server() as server:
        group = ClientGroup({"calc": Client(servers.calculator()), "remote": Client(server.url)})
        tools = asyncio.run(MCPAdapter(group).list_tools())
    # The HTTP server is gone now; the in-process one is not.
    agent = calling(tools, ("remote_add", {"a": 1, "b": 2}), ("calc_add", {"a": 1, "b": 2}))

    result = run_agent(agent, how_call, ASK)

    down, up = tool_messages(result)
    assert texts(down)[0].startswith(
        f"The tool 'remote_add' could not run: the MCP server 'remote' (at {server.url}) cannot "
        "be reached ("
    )
    assert texts(up) == ["3"]
