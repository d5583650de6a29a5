"""Servers that ask badly: one that asks forever is stopped after a number of rounds, and a
question whose form is broken fails the call, naming the server, before anyone is asked."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.types import Command

from graphagent.mcp import MCPAdapter
from graphagent.mcp.elicitation import MAX_ELICITATION_ROUNDS
from tests.conftest import run_agent
from tests.mcp import servers
from tests.mcp.helpers import THREAD, texts, tool_messages, with_memory

pytestmark = pytest.mark.timeout(180)
ASK = {"messages": [("user", "Go")]}
SERVER = "the MCP server in process, named 'pesterer'"


def test_a_server_that_asks_forever_is_stopped_after_the_cap(how_call: str) -> None:
    counts = servers.Counts()
    tools = asyncio.run(MCPAdapter(servers.pesterer(counts)).list_tools())
    agent = with_memory(tools, ("forever", {}))
    answer = {"responses": {"more": {"action": "accept", "content": {"answer": "yes"}}}}

    result: dict[str, Any] = run_agent(agent, how_call, ASK, config=THREAD)
    rounds = 0
    while "__interrupt__" in result:
        rounds += 1
        assert rounds <= MAX_ELICITATION_ROUNDS
        result = run_agent(agent, how_call, Command(resume=answer), config=THREAD)

    assert rounds == MAX_ELICITATION_ROUNDS
    [failed] = tool_messages(result)
    assert failed.status == "error"
    assert texts(failed) == [
        f"The tool 'forever' did not finish: {SERVER} kept asking questions, "
        f"{MAX_ELICITATION_ROUNDS} rounds of them, and graphagent.mcp asks no more than that in "
        "one call. The call was abandoned; whether it took effect is unknown."
    ]
    assert result["messages"][-1].content == "done"


@pytest.mark.parametrize(
    ("tool", "problem"),
    [
        ("dangling", "has a $ref, '#/$defs/gone', that does not point into the schema itself"),
        ("unknown_type", "is not a valid JSON schema ("),
        ("bad_regex", "is not a valid JSON schema ("),
    ],
)
def test_a_broken_question_fails_the_call_naming_the_server(
    how_call: str, tool: str, problem: str
) -> None:
    tools = asyncio.run(MCPAdapter(servers.pesterer(servers.Counts())).list_tools())
    agent = with_memory(tools, (tool, {}))

    result = run_agent(agent, how_call, ASK, config=THREAD)

    assert "__interrupt__" not in result
    [failed] = tool_messages(result)
    assert failed.status == "error"
    [text] = texts(failed)
    assert text.startswith(
        f"The tool {tool!r} could not finish: {SERVER} asked the question 'q' with a form whose "
        f"requested schema {problem}"
    )
    assert text.endswith("Nothing was asked; the server's tool needs fixing.")
    assert result["messages"][-1].content == "done"
