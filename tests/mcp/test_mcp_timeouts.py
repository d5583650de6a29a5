"""A server that never answers: each call has a time limit, after which the model is told and
the request is cancelled at the server; a run's own time limit does the same in sync runs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fastmcp import Client

from graphagent.mcp import MCPAdapter
from graphagent.mcp.tools import DEFAULT_CALL_TIMEOUT
from graphagent.middleware import ToolTimeoutMiddleware
from tests.conftest import run_agent
from tests.mcp import servers
from tests.mcp.helpers import calling, texts, tool_messages
from tests.mcp.processes import http_server

pytestmark = pytest.mark.timeout(180)
ASK = {"messages": [("user", "Go")]}
LIMIT = 0.2  # seconds given to a call that never answers: the test waits this long, no more


def test_the_default_limit_is_documented_and_generous() -> None:
    assert DEFAULT_CALL_TIMEOUT == 300.0


def test_a_call_past_its_limit_is_answered_and_cancelled_on_an_in_process_server() -> None:
    async def scenario() -> dict[str, Any]:
        seen = servers.Waiting()
        adapter = MCPAdapter(servers.waiter(seen), tool_timeouts={"wait_forever": LIMIT})
        agent = calling(await adapter.list_tools(), ("wait_forever", {}))
        result = await agent.ainvoke(ASK)
        await asyncio.wait_for(seen.cancelled.wait(), timeout=30)
        return result

    result = asyncio.run(scenario())

    [answer] = tool_messages(result)
    assert answer.status == "error"
    assert texts(answer) == [
        f"The tool 'wait_forever' did not answer within {LIMIT:g} s: the request was cancelled "
        "at the MCP server in process, named 'waiter', and whether it took effect is unknown. "
        "Try a smaller request, or later."
    ]
    assert result["messages"][-1].content == "done"


def cancelled_at(url: str) -> bool:
    async def ask() -> bool:
        async with Client(url) as observer:
            return bool((await observer.call_tool("waited", {"what": "cancelled"})).data)

    return asyncio.run(ask())


def test_a_call_past_the_adapters_limit_is_cancelled_at_an_http_server(how_call: str) -> None:
    with http_server() as server:
        tools = asyncio.run(MCPAdapter(server.url, call_timeout=LIMIT).list_tools())
        agent = calling(tools, ("wait_forever", {}), ("add", {"a": 1, "b": 1}))

        result = run_agent(agent, how_call, ASK)

        assert cancelled_at(server.url)
    timed_out, added = tool_messages(result)
    assert timed_out.status == "error"
    assert f"did not answer within {LIMIT:g} s" in texts(timed_out)[0]
    assert texts(added) == ["2"]


def test_a_tool_timeout_middleware_cancels_the_call_of_a_sync_run() -> None:
    with http_server() as server:
        tools = asyncio.run(MCPAdapter(server.url, call_timeout=None).list_tools())
        agent = calling(
            tools, ("wait_forever", {}), middleware=[ToolTimeoutMiddleware(timeout=LIMIT)]
        )

        result = agent.invoke(ASK)

        assert cancelled_at(server.url)  # the thread stopped waiting, and told the server
    [answer] = tool_messages(result)
    assert answer.status == "error"
    assert "timed out" in answer.text


@pytest.mark.parametrize("bad", [0, -1, "10", True])
def test_a_bad_limit_is_refused_by_name(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"MCPAdapter\(call_timeout=\.\.\.\) must be a number"):
        MCPAdapter(servers.calculator(), call_timeout=bad)


def test_a_limit_for_a_tool_the_servers_lack_is_refused_by_name() -> None:
    adapter = MCPAdapter(servers.calculator(), tool_timeouts={"ad": 5})

    with pytest.raises(ValueError, match=r"names tools its servers do not have: 'ad'\. Their"):
        asyncio.run(adapter.list_tools())
