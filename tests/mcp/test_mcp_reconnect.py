"""Servers that go away and come back while ``async with MCPAdapter(...)`` holds the connection:
calls in flight are answered as errors, and the next call connects again, to the server that is
back, which the context then keeps connected."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from fastmcp.client.transports import StdioTransport
from langchain_core.messages import ToolMessage

from graphagent.mcp import MCPAdapter
from tests.mcp import servers
from tests.mcp.helpers import calling, texts, tool_messages
from tests.mcp.processes import STDIO_SERVER, http_server

pytestmark = pytest.mark.timeout(240)
ASK = {"messages": [("user", "Go")]}
LOST = "was lost during the call"


def stdio(log: Path) -> StdioTransport:
    return StdioTransport(sys.executable, [str(STDIO_SERVER), str(log)])


async def run(agent: Any, how: str) -> dict[str, Any]:
    """``ainvoke``, or ``invoke`` in a thread while the caller's loop holds the connection."""
    if how == "invoke":
        return await asyncio.to_thread(agent.invoke, ASK)  # type: ignore[no-any-return]
    return await agent.ainvoke(ASK)  # type: ignore[no-any-return]


def pid(message: ToolMessage) -> int:
    [text] = texts(message)
    return int(text)


@pytest.mark.parametrize("kill", [False, True], ids=["exits", "killed"])
def test_a_stdio_server_that_dies_is_started_again_and_kept_connected(
    kill: bool, server_log: Path
) -> None:
    async def scenario() -> tuple[dict[str, Any], bool, bool]:
        async with MCPAdapter(stdio(server_log)) as adapter:
            tools = await adapter.list_tools()
            agent = calling(tools, ("crash", {"kill": kill}), ("pid", {}), ("pid", {}))
            result = await agent.ainvoke(ASK)
            connected = adapter.client.is_connected()
        return result, connected, adapter.client.is_connected()

    result, connected_inside, connected_after = asyncio.run(scenario())

    crashed, first, second = tool_messages(result)
    assert crashed.status == "error"
    assert LOST in texts(crashed)[0]
    assert pid(first) == pid(second)  # one new server, kept by the context
    assert servers.Counts(server_log)["crashed"] == 1
    assert (connected_inside, connected_after) == (True, False)


@pytest.mark.parametrize("how", ["ainvoke", "invoke"])
def test_calls_in_flight_when_a_stdio_server_dies_are_errors_and_the_next_works(
    how: str, server_log: Path
) -> None:
    waits = [("wait_forever", {}) for _ in range(3)]
    crash = ("crash", {"after": len(waits)})

    async def scenario() -> dict[str, Any]:
        async with MCPAdapter(stdio(server_log)) as adapter:
            agent = calling(await adapter.list_tools(), [*waits, crash], ("add", {"a": 1, "b": 1}))
            return await run(agent, how)

    result = asyncio.run(scenario())

    *failed, added = tool_messages(result)
    assert [message.status for message in failed] == ["error"] * 4
    assert all(LOST in texts(message)[0] for message in failed), [texts(m) for m in failed]
    assert texts(added) == ["2"]
    assert result["messages"][-1].content == "done"


def test_an_http_server_restarted_on_its_port_is_reached_again() -> None:
    async def scenario() -> tuple[list[ToolMessage], list[ToolMessage]]:
        with http_server() as server:
            adapter = MCPAdapter(server.url)
            await adapter.__aenter__()
            try:
                tools = await adapter.list_tools()
                before = tool_messages(await calling(tools, ("pid", {})).ainvoke(ASK))
                server.process.kill()
                server.process.wait()
                port = urlparse(server.url).port
                assert port is not None
                with http_server(port=port):
                    agent = calling(tools, ("pid", {}), ("pid", {}))
                    after = tool_messages(await agent.ainvoke(ASK))
            finally:
                await adapter.__aexit__(None, None, None)
        return before, after

    [before], after = asyncio.run(scenario())

    assert [message.status for message in after] == ["success", "success"]
    assert pid(after[0]) == pid(after[1]) != pid(before)
