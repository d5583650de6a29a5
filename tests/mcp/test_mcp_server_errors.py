"""A server that answers a call with an error: the model reads what the server said, as a failed
tool call, and the run goes on; a lost connection is reported only when it was lost."""

from __future__ import annotations

import asyncio

import pytest

from graphagent.mcp import MCPAdapter
from tests.conftest import Run
from tests.mcp import servers
from tests.mcp.helpers import calling, texts, tool_messages

pytestmark = pytest.mark.timeout(120)
ASK = {"messages": [("user", "Go")]}


@pytest.mark.parametrize(
    ("code", "meaning"),
    [
        (-32000, "a server error"),
        (-32602, "it refused the arguments"),
        (-32603, "it failed internally"),
    ],
)
def test_a_json_rpc_error_is_a_failed_call_naming_the_server(
    run: Run, code: int, meaning: str
) -> None:
    tools = asyncio.run(MCPAdapter(servers.refuser()).list_tools())
    agent = calling(tools, ("refuse", {"code": code}), ("refuse", {"code": code}))

    result = run(agent, ASK)

    first, second = tool_messages(result)
    assert first.status == second.status == "error"
    assert texts(first) == [
        "The tool 'refuse' failed: the MCP server in process, named 'refuser' answered with "
        f"JSON-RPC error {code} ({meaning}): refused with {code}"
    ]
    assert result["messages"][-1].content == "done"


def test_a_huge_error_message_is_cut_and_an_empty_one_explained(run: Run) -> None:
    tools = asyncio.run(MCPAdapter(servers.complainer()).list_tools())
    agent = calling(tools, [("rant", {}), ("sulk", {})])

    result = run(agent, ASK)

    rant, sulk = tool_messages(result)
    [text] = texts(rant)
    assert len(text) < 5000
    assert text.endswith("more characters cut]")
    assert texts(sulk) == ["The MCP tool reported an error with empty content."]
    assert result["messages"][-1].content == "done"


def test_a_result_that_breaks_its_output_schema_is_a_failed_call(run: Run) -> None:
    tools = asyncio.run(MCPAdapter(servers.liar()).list_tools())
    agent = calling(tools, [("mistyped", {}), ("unstructured", {})])

    result = run(agent, ASK)

    mistyped, unstructured = tool_messages(result)
    assert mistyped.status == unstructured.status == "error"
    server = "the MCP server in process, named 'liar'"
    assert texts(mistyped)[0].startswith(
        f"The tool 'mistyped' failed: {server} sent a result that cannot be used (Invalid "
        "structured content returned by tool mistyped: 'x' is not of type 'integer'"
    )
    assert texts(unstructured) == [
        f"The tool 'unstructured' failed: {server} sent a result that cannot be used (Tool "
        "unstructured has an output schema but did not return structured content)."
    ]
    assert result["messages"][-1].content == "done"
