"""Agents behind ``as_tool``, three deep: every chunk carries the name of the agent that wrote it
(``lc_agent_name``), the innermost one's at any depth."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from graphagent import create_agent
from graphagent.composition import as_tool
from graphagent.testing import ScriptedChatModel, calls


def three_levels(**inner: Any) -> Any:
    leaf = create_agent(ScriptedChatModel(["leaf words"]), **inner)
    middle = create_agent(
        ScriptedChatModel([calls(("ask_leaf", {"request": "x"})), "middle words"]),
        [as_tool(leaf, name="ask_leaf", description="Ask the leaf agent.")],
        name="middle",
    )
    return create_agent(
        ScriptedChatModel([calls(("ask_middle", {"request": "x"})), "top words"]),
        [as_tool(middle, name="ask_middle", description="Ask the middle agent.")],
        name="top",
    )


def message_chunks(agent: Any, how: str) -> list[tuple[int, str, str | None]]:
    """``(depth, text, lc_agent_name)`` of each ``messages`` chunk with text."""
    inputs = {"messages": [("user", "go")]}
    options: dict[str, Any] = {"stream_mode": "messages", "subgraphs": True}
    if how == "stream":
        parts = list(agent.stream(inputs, **options))
    else:

        async def collect() -> list[Any]:
            return [part async for part in agent.astream(inputs, **options)]

        parts = asyncio.run(collect())
    return [
        (len(ns), token.text, meta.get("lc_agent_name"))
        for ns, (token, meta) in parts
        if token.text
    ]


STREAMS = pytest.mark.parametrize("how", ["stream", "astream"])


@STREAMS
def test_the_innermost_agents_name_wins_at_every_depth(how: str) -> None:
    seen = message_chunks(three_levels(name="leaf"), how)

    assert seen == [
        (2, "leaf", "leaf"),
        (2, " words", "leaf"),
        (1, "leaf words", "middle"),  # the middle agent's tool answer
        (1, "middle", "middle"),
        (1, " words", "middle"),
        (0, "middle words", "top"),
        (0, "top", "top"),
        (0, " words", "top"),
    ]


@STREAMS
def test_an_unnamed_inner_agent_takes_the_name_of_the_agent_calling_it(how: str) -> None:
    """As in LangChain: only a named agent puts its name on its runs."""
    seen = message_chunks(three_levels(), how)

    assert [name for depth, _, name in seen if depth == 2] == ["middle", "middle"]
