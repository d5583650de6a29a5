"""MCPAdapter over each kind of target FastMCP takes, against real servers: in process, a stdio
script run as a subprocess, and streamable HTTP on 127.0.0.1; one server or several."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.client.group import ClientGroup
from fastmcp.client.transports import (
    FastMCPTransport,
    PythonStdioTransport,
    StdioTransport,
    StreamableHttpTransport,
)
from fastmcp.mcp_config import MCPConfig

from graphagent.mcp import MCPAdapter
from graphagent.mcp.errors import MCPConnectionError
from tests.conftest import Run, run_agent
from tests.mcp import servers
from tests.mcp.helpers import calling, texts, tool_messages
from tests.mcp.processes import STDIO_SERVER, HttpServer


def list_tools(target: Any) -> list[Any]:
    return asyncio.run(MCPAdapter(target).list_tools())


def test_an_in_process_server_gives_its_tools_to_an_agent(run: Run) -> None:
    tools = list_tools(servers.calculator())
    agent = calling(tools, ("add", {"a": 17, "b": 25}))

    result = run(agent, {"messages": [("user", "17 + 25?")]})

    [answer] = tool_messages(result)
    assert sorted(tool.name for tool in tools) == ["add", "divide"]
    assert texts(answer) == ["42"]
    assert answer.artifact == {"structured_content": {"result": 42}}
    assert result["messages"][-1].content == "done"


def test_an_mcp_sdk_server_in_process_is_a_target_too() -> None:
    calls = servers.Counts()
    [tool] = list_tools(servers.restaurant(calls))

    assert tool.name == "book_table"
    assert tool.description == "Book a table for the party."


def test_a_stdio_script_runs_as_a_subprocess(how_call: str, server_log: Path) -> None:
    transport = StdioTransport(sys.executable, [str(STDIO_SERVER), str(server_log)])
    tools = list_tools(transport)
    agent = calling(tools, ("add", {"a": 2, "b": 3}))

    result = run_agent(agent, how_call, {"messages": [("user", "2 + 3?")]})

    assert texts(tool_messages(result)[0]) == ["5"]
    assert "book_table" in {tool.name for tool in tools}


def test_a_path_is_a_server_script_to_run(tmp_path: Path) -> None:
    adapter = MCPAdapter(STDIO_SERVER)

    assert isinstance(adapter.client, Client)
    assert isinstance(adapter.client.transport, PythonStdioTransport)
    assert {tool.name for tool in asyncio.run(adapter.list_tools())} >= {"add", "crash"}


def test_a_url_reaches_a_streamable_http_server(run: Run, http: HttpServer) -> None:
    adapter = MCPAdapter(http.url)
    tools = asyncio.run(adapter.list_tools())
    agent = calling(tools, ("divide", {"a": 1, "b": 4}))

    result = run(agent, {"messages": [("user", "1 / 4?")]})

    assert isinstance(adapter.client, Client)
    assert isinstance(adapter.client.transport, StreamableHttpTransport)
    assert texts(tool_messages(result)[0]) == ["0.25"]


def test_several_servers_in_one_config_keep_their_names_apart(
    how_call: str, http: HttpServer, server_log: Path
) -> None:
    config = MCPConfig.from_dict(
        {
            "mcpServers": {
                "local": {"command": sys.executable, "args": [str(STDIO_SERVER), str(server_log)]},
                "remote": {"url": http.url},
            }
        }
    )
    tools = list_tools(config)
    agent = calling(tools, ("local_add", {"a": 1, "b": 1}), ("remote_add", {"a": 2, "b": 2}))

    result = run_agent(agent, how_call, {"messages": [("user", "sums")]})

    assert {"local_add", "remote_add", "local_book_table"} <= {tool.name for tool in tools}
    assert [texts(m) for m in tool_messages(result)] == [["2"], ["4"]]


def test_a_group_names_each_tool_by_its_server_and_calls_that_server(run: Run) -> None:
    group = ClientGroup(
        {"left": Client(servers.whoami("left")), "right": Client(servers.whoami("right"))}
    )
    tools = list_tools(group)
    agent = calling(tools, ("left_whoami", {}), ("right_whoami", {}))

    result = run(agent, {"messages": [("user", "who?")]})

    assert sorted(tool.name for tool in tools) == ["left_whoami", "right_whoami"]
    assert [texts(m) for m in tool_messages(result)] == [["left"], ["right"]]


def test_tools_keep_working_after_the_adapter_context_ends() -> None:
    async def scenario() -> list[str]:
        async with MCPAdapter(servers.calculator()) as adapter:
            tools = {tool.name: tool for tool in await adapter.list_tools()}
            inside = await tools["add"].ainvoke({"a": 1, "b": 2})
        assert not adapter.client.is_connected()
        after = await tools["add"].ainvoke({"a": 3, "b": 4})
        return [block["text"] for block in inside + after]

    assert asyncio.run(scenario()) == ["3", "7"]


def test_inside_the_context_the_tools_share_its_connection() -> None:
    async def scenario() -> bool:
        async with MCPAdapter(servers.calculator()) as adapter:
            [add, _] = await adapter.list_tools()
            client = adapter.client
            assert isinstance(client, Client)
            session = client.session
            await add.ainvoke({"a": 1, "b": 2})
            return client.session is session

    assert asyncio.run(scenario())


def test_a_ready_client_is_armed_on_a_copy_and_left_as_it_was() -> None:
    client: Client[Any] = Client(servers.calculator())

    adapter = MCPAdapter(client)

    assert adapter.client is not client
    assert isinstance(adapter.client, Client)
    assert adapter.client.transport is client.transport
    assert getattr(client, "_elicitation_callback", None) is None


def test_a_client_with_an_elicitation_handler_of_its_own_is_used_as_it_is() -> None:
    async def handler(*_: Any) -> dict[str, Any]:
        return {"guests": 2}

    client: Client[Any] = Client(servers.calculator(), elicitation_handler=handler)

    assert MCPAdapter(client).client is client


def test_a_group_is_armed_member_by_member_on_copies() -> None:
    members = {"calc": Client(servers.calculator())}
    group = ClientGroup(members)

    adapter = MCPAdapter(group)

    assert isinstance(adapter.client, ClientGroup)
    assert adapter.client is not group
    assert adapter.client.clients["calc"] is not members["calc"]


def test_other_targets_go_to_fastmcp_as_they_are() -> None:
    adapter = MCPAdapter(servers.calculator())

    assert isinstance(adapter.client, Client)
    assert isinstance(adapter.client.transport, FastMCPTransport)


@pytest.mark.parametrize(
    "target", ["server.py", "./server.js", "/usr/local/bin/server.py", "example.com/mcp", ""]
)
def test_a_string_that_is_not_a_url_is_refused(target: str) -> None:
    match = rf"^MCP target {re.escape(repr(target))} is not a valid URL\..*MCPAdapter\(Path\("
    with pytest.raises(ValueError, match=match):
        MCPAdapter(target)


@pytest.mark.parametrize(
    ("target", "scheme"),
    [(r"C:\Users\me\server.py", "c"), ("file:///etc/passwd", "file"), ("ws://host/mcp", "ws")],
)
def test_a_string_url_must_be_http_or_https(target: str, scheme: str) -> None:
    with pytest.raises(ValueError, match=f"has scheme '{scheme}', but a string target must be an"):
        MCPAdapter(target)


@pytest.mark.skipif(sys.platform == "win32", reason="':' cannot be in a Windows file name")
def test_an_existing_script_named_by_a_string_is_never_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a:b.py").write_text("raise SystemExit('must not run')\n", encoding="utf-8")
    (tmp_path / "server.py").write_text("raise SystemExit('must not run')\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    with pytest.raises(ValueError, match="has scheme 'a'"):
        MCPAdapter("a:b.py")
    with pytest.raises(ValueError, match="is not a valid URL"):
        MCPAdapter("server.py")


def test_listing_the_tools_of_a_server_that_is_down_names_it(http: HttpServer) -> None:
    url = "http://127.0.0.1:9/mcp"  # the discard port: nothing listens there

    with pytest.raises(MCPConnectionError) as raised:
        list_tools(url)

    assert str(raised.value).startswith(f"Could not connect to the MCP server at {url}: ")
    assert "Check that the server is running and reachable" in str(raised.value)
    assert raised.value.servers == (f"the MCP server at {url}",)
    assert isinstance(raised.value, RuntimeError)


def test_a_stdio_server_that_exits_at_once_is_named_by_its_command(tmp_path: Path) -> None:
    script = tmp_path / "exits.py"
    script.write_text("raise SystemExit(3)\n", encoding="utf-8")

    with pytest.raises(MCPConnectionError, match=r"run as `\S+python\S* \S+exits\.py`"):
        list_tools(script)


def test_a_group_names_the_servers_that_are_down_among_those_that_are_up(
    http: HttpServer,
) -> None:
    group = ClientGroup(
        {
            "calc": Client(servers.calculator()),
            "remote": Client(http.url),
            "gone": Client("http://127.0.0.1:9/mcp"),
        }
    )

    with pytest.raises(MCPConnectionError) as raised:
        list_tools(group)

    assert raised.value.servers == ("the MCP server 'gone' (at http://127.0.0.1:9/mcp)",)
    assert "Could not connect to the MCP server 'gone' (at http://127.0.0.1:9/mcp): " in str(
        raised.value
    )
