"""A listing with tools no agent can use: those are left out, each with a warning naming its
server and why, and the others are kept."""

from __future__ import annotations

import asyncio
import logging

import pytest

from graphagent.mcp import MCPAdapter
from tests.conftest import Run
from tests.mcp import servers
from tests.mcp.helpers import calling, texts, tool_messages

pytestmark = pytest.mark.timeout(120)


def test_unusable_tools_are_left_out_by_name_and_the_rest_kept(
    run: Run, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="graphagent.mcp"):
        tools = asyncio.run(MCPAdapter(servers.misfits()).list_tools())

    assert [tool.name for tool in tools] == ["fine"]
    warnings = sorted(r.getMessage() for r in caplog.records if r.name == "graphagent.mcp")
    server = "the MCP server in process, named 'misfits'"
    assert warnings == [
        f"graphagent.mcp left out the tool 'dangling' of {server}: its input schema has a "
        "$ref, '#/$defs/missing', that does not point into the schema itself. The server's "
        "other tools are kept.",
        f"graphagent.mcp left out the tool 'deep' of {server}: its input schema is nested more "
        "than 64 levels deep. The server's other tools are kept.",
        f"graphagent.mcp left out the tool 'has space' of {server}: its name 'has space' is not "
        "1 to 64 letters, digits, '_' or '-', which model providers require. The server's other "
        "tools are kept.",
    ]
    [answer] = tool_messages(run(calling(tools, ("fine", {"text": "hi"})), {"messages": []}))
    assert texts(answer) == ["hi"]
