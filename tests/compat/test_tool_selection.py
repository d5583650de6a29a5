"""LangChain 1.5's ``tool_selection``: ``max_retries=`` and ``on_parsing_failure=`` (how often to
ask again when an answer names no tool, and what is selected when none did); tools named in
``always_include`` are kept on top of the ``max_tools`` picks; the selection call is not streamed
as messages."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.tools import tool

from graphagent import MiddlewareError, ToolSelectionError, create_agent
from graphagent.middleware import LLMToolSelectorMiddleware
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent


@tool
def get_weather(city: str) -> str:
    """Get weather for a city."""
    return "sunny"


@tool
def get_stock(symbol: str) -> str:
    """Get a stock price."""
    return "100"


@tool
def send_email(to: str) -> str:
    """Send an email."""
    return "sent"


TOOLS = [get_weather, get_stock, send_email]
QUESTION = {"messages": [HumanMessage("Weather in Lisbon?")]}
NONSENSE = calls(("select_tools", {"tools": ["nothing useful"]}))


def selecting(model: ScriptedChatModel, **options: Any) -> Any:
    return create_agent(model, TOOLS, middleware=[LLMToolSelectorMiddleware(**options)])


@pytest.mark.parametrize("retries", [0, 1, 3])
def test_max_retries_is_how_often_a_useless_answer_is_asked_again(
    how_call: str, retries: int
) -> None:
    model = ScriptedChatModel([NONSENSE, *["browse"] * retries, "Sunny."])

    run_agent(selecting(model, max_retries=retries, on_parsing_failure="all"), how_call, QUESTION)

    assert model.call_count == retries + 2  # the selection asks, then the agent's model call
    assert model.calls[-1].tool_names == ("get_weather", "get_stock", "send_email")


def test_a_retry_that_names_a_tool_ends_the_asking(how_call: str) -> None:
    model = ScriptedChatModel([NONSENSE, "get_weather", "Sunny."])

    run_agent(selecting(model, max_retries=3), how_call, QUESTION)

    assert model.call_count == 3
    assert model.calls[-1].tool_names == ("get_weather",)


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("none", ()),
        (["send_email", "get_stock"], ("get_stock", "send_email")),
        (lambda last: ["get_weather"] if isinstance(last, AIMessage) else [], ("get_weather",)),
    ],
)
def test_on_parsing_failure_chooses_the_tools(how_call: str, choice: Any, expected: Any) -> None:
    model = ScriptedChatModel([NONSENSE, "browse", "Sunny."])

    run_agent(selecting(model, on_parsing_failure=choice, max_tools=1), how_call, QUESTION)

    # A fallback choice is deliberate: max_tools does not cut it.
    assert model.calls[-1].tool_names == expected


def test_on_parsing_failure_error_raises(how_call: str) -> None:
    model = ScriptedChatModel([NONSENSE, "browse", "unreachable"])

    with pytest.raises(ToolSelectionError, match="named no tool after 1 retries") as caught:
        run_agent(selecting(model, on_parsing_failure="error"), how_call, QUESTION)
    assert isinstance(caught.value, ValueError)  # LangChain raises a ValueError


def test_a_function_choosing_a_tool_not_offered_is_an_error(how_call: str) -> None:
    model = ScriptedChatModel([NONSENSE, "browse", "unreachable"])
    agent = selecting(model, on_parsing_failure=lambda last: ["delete_everything"])

    with pytest.raises(ToolSelectionError, match=r"chose \['delete_everything'\]"):
        run_agent(agent, how_call, QUESTION)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_retries": -1}, "^max_retries must be >= 0.*got max_retries=-1"),
        ({"max_retries": True}, "max_retries=True is not valid"),
        ({"on_parsing_failure": "raise"}, "on_parsing_failure='raise' is not valid"),
        ({"on_parsing_failure": [1]}, r"on_parsing_failure=\[1\] is not valid"),
    ],
)
def test_bad_options_fail_when_built(options: dict[str, Any], message: str) -> None:
    with pytest.raises(MiddlewareError, match=message):
        LLMToolSelectorMiddleware(**options)


def test_a_fallback_list_naming_an_unknown_tool_fails_when_the_agent_is_built() -> None:
    with pytest.raises(
        MiddlewareError,
        match=r"^Model selected invalid tools: \['get_wether'\].*on_parsing_failure names",
    ):
        selecting(ScriptedChatModel([]), on_parsing_failure=["get_wether"])


# --- always_include and the stream ---------------------------------------------------------


LYON = {"messages": [HumanMessage("Weather in Lyon, then mail it.")]}


@tool
def weather(city: str) -> str:
    """Get the weather."""
    return "sunny"


@tool
def stocks(symbol: str) -> str:
    """Get a stock price."""
    return "100"


@tool
def email(to: str) -> str:
    """Send an email."""
    return "sent"


def agent_with(model: ScriptedChatModel, **options: Any) -> Any:
    selector = LLMToolSelectorMiddleware(**options)
    return create_agent(model, [weather, stocks, email], middleware=[selector])


def test_always_included_tools_do_not_count_toward_max_tools(how_call: str) -> None:
    model = ScriptedChatModel([calls(("select_tools", {"tools": ["weather", "stocks"]})), "ok"])
    agent = agent_with(model, max_tools=1, always_include=["email"])

    run_agent(agent, how_call, LYON)

    assert set(model.calls[-1].tool_names) == {"weather", "email"}


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_the_selection_call_stays_off_the_messages_stream(how: str) -> None:
    model = ScriptedChatModel([calls(("select_tools", {"tools": ["weather"]})), "It is sunny."])
    agent = agent_with(model)

    if how == "stream":
        chunks = list(agent.stream(LYON, stream_mode="messages"))
    else:

        async def collect() -> list[Any]:
            return [c async for c in agent.astream(LYON, stream_mode="messages")]

        chunks = asyncio.run(asyncio.wait_for(collect(), 60))

    streamed = [m for m, _ in chunks if isinstance(m, AIMessageChunk)]
    assert "".join(m.text for m in streamed) == "It is sunny."
    assert not any(m.tool_calls for m in streamed), "the selection reply was streamed"
    assert model.call_count == 2
