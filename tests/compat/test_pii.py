"""LangChain 1.5.2's ``PIIMiddleware``: tool results are masked in LangChain's formats (an email
address keeps its name and top-level domain, ``user@****.com``); the hooks called by hand return
what LangChain's return; and with ``apply_to_output`` or ``apply_to_tool_results`` a stream
transformer keeps personal data off every surface of a ``stream_events(version="v3")`` run."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from graphagent import create_agent
from graphagent.middleware import PIIDetectionError, PIIMiddleware
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent


@pytest.mark.parametrize(
    ("pii_type", "value", "masked"),
    [
        ("credit_card", "4111 1111 1111 1111", "**** **** **** 1111"),
        ("credit_card", "4111-1111-1111-1111", "****-****-****-1111"),
        ("credit_card", "4111111111111111", "************1111"),
        ("credit_card", "3782 822463 10005", "**** **** **** 0005"),  # LangChain's grouping
        ("mac_address", "00-1A-2B-3C-4D-5E", "**-**-**-**-**-5E"),
        ("ip", "192.168.0.7", "*.*.*.7"),
        ("url", "https://example.com/a", "[MASKED_URL]"),
        ("email", "jane.doe@example.com", "jane.doe@****.com"),
    ],
)
def test_tool_results_are_masked_in_langchains_formats(
    how_call: str, pii_type: str, value: str, masked: str
) -> None:
    @tool
    def lookup(query: str) -> str:
        """Look something up."""
        return f"found {value} here"

    model = ScriptedChatModel([calls(("lookup", {"query": "x"})), "done"])
    middleware = PIIMiddleware(
        pii_type, strategy="mask", apply_to_input=False, apply_to_tool_results=True
    )
    agent = create_agent(model, [lookup], middleware=[middleware])

    result = run_agent(agent, how_call, {"messages": ["go"]})

    [answer] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert answer.text == f"found {masked} here"


# -- the hooks, called by hand ------------------------------------------------------------------

REPLY = AIMessage("Write to ai@example.com.")
SEARCH = AIMessage("", tool_calls=[{"name": "search", "args": {}, "id": "c1", "type": "tool_call"}])


def call_hook(middleware: PIIMiddleware, hook: str, how: str, messages: list[Any]) -> Any:
    """``middleware.<hook>`` (or its async twin) called by hand on a state of ``messages``."""
    state: Any = {"messages": messages}
    if how == "sync":
        return getattr(middleware, hook)(state, None)
    return asyncio.run(getattr(middleware, "a" + hook)(state, None))


@pytest.mark.parametrize("how", ["sync", "async"])
def test_after_model_rewrites_the_last_ai_message_and_returns_the_messages(how: str) -> None:
    middleware = PIIMiddleware("email", apply_to_input=False, apply_to_output=True)

    result = call_hook(middleware, "after_model", how, [HumanMessage("hi"), REPLY])

    assert [m.content for m in result["messages"]] == ["hi", "Write to [REDACTED_EMAIL]."]
    assert call_hook(middleware, "after_model", how, [HumanMessage("hi")]) is None


@pytest.mark.parametrize("how", ["sync", "async"])
def test_before_model_rewrites_the_tool_results_after_the_last_ai_message(how: str) -> None:
    middleware = PIIMiddleware("email", apply_to_input=False, apply_to_tool_results=True)
    blocks = [{"type": "text", "text": "found: john@example.com"}]
    messages = [HumanMessage("Find John"), SEARCH, ToolMessage(blocks, tool_call_id="c1")]

    result = call_hook(middleware, "before_model", how, messages)

    assert len(result["messages"]) == 3
    assert result["messages"][2].content == [{"type": "text", "text": "found: [REDACTED_EMAIL]"}]


@pytest.mark.parametrize("how", ["sync", "async"])
def test_the_hooks_block_as_langchains_do(how: str) -> None:
    middleware = PIIMiddleware(
        "email", strategy="block", apply_to_input=False, apply_to_tool_results=True
    )
    messages = [SEARCH, ToolMessage("User email: s@example.com", tool_call_id="c1")]

    with pytest.raises(PIIDetectionError) as caught:
        call_hook(middleware, "before_model", how, messages)

    assert (caught.value.pii_type, len(caught.value.matches)) == ("email", 1)


def test_the_agent_runs_no_after_model_node() -> None:
    middleware = PIIMiddleware("email", apply_to_output=True)
    agent = create_agent(ScriptedChatModel(["hi"]), middleware=[middleware])

    assert "PIIMiddleware[email].after_model" not in agent.get_graph().nodes


# -- the stream transformer ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "installed"),
    [
        ({}, 0),
        ({"apply_to_output": True}, 1),
        ({"apply_to_tool_results": True, "apply_to_output": False}, 1),
        ({"strategy": "block", "apply_to_output": True}, 1),
    ],
)
def test_a_stream_transformer_is_installed_for_output_and_tool_results(
    options: dict[str, Any], installed: int
) -> None:
    assert len(PIIMiddleware("email", **options).transformers) == installed


def surfaces(event: Any) -> list[str]:
    """Every text a v3 event shows a consumer, as LangChain's tests read them."""
    data = event.get("params", {}).get("data")
    if isinstance(data, tuple) and len(data) == 2:
        payload = data[0]
        if isinstance(payload, BaseMessage):
            calls_ = getattr(payload, "tool_calls", None) or []
            return [str(payload.content), *(str(c.get("args")) for c in calls_)]
        return [repr(payload)]
    return [repr(data)]


def v3_surfaces(agent: Any, how: str) -> list[str]:
    inputs = {"messages": [HumanMessage("hi")]}
    if how == "sync":
        return [s for event in agent.stream_events(inputs, version="v3") for s in surfaces(event)]

    async def collect() -> list[str]:
        run = await agent.astream_events(inputs, version="v3")
        return [s async for event in run for s in surfaces(event)]

    return asyncio.run(asyncio.wait_for(collect(), 60))


@tool
def lookup_user(user_id: str) -> str:
    """Look up a user."""
    return f"User {user_id}: alice@example.com"


@tool
def echo(text: str) -> str:
    """Echo."""
    return f"echo: {text}"


@pytest.mark.parametrize("how", ["sync", "async"])
def test_tool_call_arguments_and_tool_output_stay_off_every_v3_surface(how: str) -> None:
    model = ScriptedChatModel(
        [
            calls(("echo", {"text": "ping bob@example.com"}), ("lookup_user", {"user_id": "u1"})),
            "ok",
        ]
    )
    middleware = PIIMiddleware("email", apply_to_output=True, apply_to_tool_results=True)
    agent = create_agent(model, [echo, lookup_user], middleware=[middleware])

    shown = v3_surfaces(agent, how)

    assert not [s for s in shown if "bob@example.com" in s or "alice@example.com" in s]
    assert any("[REDACTED_EMAIL]" in s for s in shown)


@pytest.mark.parametrize("how", ["sync", "async"])
def test_under_block_a_tool_output_fails_the_v3_stream_before_it_shows(how: str) -> None:
    model = ScriptedChatModel([calls(("lookup_user", {"user_id": "u1"})), "ok"])
    middleware = PIIMiddleware("email", strategy="block", apply_to_tool_results=True)
    agent = create_agent(model, [lookup_user], middleware=[middleware])
    shown: list[str] = []
    inputs = {"messages": [HumanMessage("hi")]}

    async def drain() -> None:
        run = await agent.astream_events(inputs, version="v3")
        async for event in run:
            shown.extend(surfaces(event))

    def consume() -> None:
        if how == "async":
            asyncio.run(asyncio.wait_for(drain(), 60))
            return
        for event in agent.stream_events(inputs, version="v3"):
            shown.extend(surfaces(event))

    with pytest.raises(PIIDetectionError):
        consume()
    # langgraph leaves a failed sync run's graph iterator open; close it here, off any loop.
    gc.collect()

    assert not [s for s in shown if "alice@example.com" in s]
