"""MCP tools in synchronous runs: they call their server on an event loop of graphagent's own,
through a copy of the client, whatever the caller's loop holds."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

from graphagent.mcp import MCPAdapter
from tests.mcp import servers
from tests.mcp.helpers import calling, texts, tool_messages


def test_a_tool_invoked_on_its_own_calls_its_server() -> None:
    [add, _] = asyncio.run(MCPAdapter(servers.calculator()).list_tools())

    assert [block["text"] for block in add.invoke({"a": 2, "b": 5})] == ["7"]


def test_a_sync_run_works_while_the_callers_loop_holds_the_connection() -> None:
    async def scenario() -> list[str]:
        async with MCPAdapter(servers.calculator()) as adapter:
            tools = await adapter.list_tools()
            agent = calling(tools, ("add", {"a": 1, "b": 1}))
            result = await asyncio.to_thread(agent.invoke, {"messages": [("user", "1 + 1")]})
            assert adapter.client.is_connected()  # still the caller's, on the caller's loop
            return texts(tool_messages(result)[0])

    assert asyncio.run(scenario()) == ["2"]


def test_a_forked_child_makes_sync_calls_on_a_loop_of_its_own() -> None:
    script = textwrap.dedent(
        """
        import asyncio, os, signal, sys, warnings
        warnings.simplefilter("ignore")
        from graphagent.mcp import MCPAdapter
        from tests.mcp import servers

        [add, _] = asyncio.run(MCPAdapter(servers.calculator()).list_tools())
        assert add.invoke({"a": 1, "b": 2})[0]["text"] == "3"
        child = os.fork()
        if child == 0:
            signal.alarm(60)  # a child that hangs ends, rather than outliving the test
            os._exit(0 if add.invoke({"a": 3, "b": 4})[0]["text"] == "7" else 1)
        _, status = os.waitpid(child, 0)
        sys.exit(os.waitstatus_to_exitcode(status))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )

    assert done.returncode == 0, done.stderr
