"""LangChain 1.5.2's ``tool_selection``: the selection model is asked for a
``ToolSelectionResponse``; a malformed answer (no ``tools`` list) is asked again ``max_retries``
times, then ``on_parsing_failure`` decides, raising a ``ValueError`` by default; an answer naming
only tools that are not offered raises LangChain's "Model selected invalid tools"; picks are
deduplicated and cut at ``max_tools``, and the tools in ``always_include`` come on top of them, as
do provider tools, which are never offered; the selection call is not streamed as messages."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.tools import tool

from graphagent import MiddlewareError, ToolSelectionError, create_agent
from graphagent.middleware import LLMToolSelectorMiddleware, ModelRequest, wrap_model_call
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


def answer(**args: Any) -> AIMessage:
    """The selection model's structured answer, as a call of LangChain's tool name."""
    return calls(("ToolSelectionResponse", args))


MALFORMED = answer()  # no "tools" list
NONSENSE = answer(tools=["nothing useful"])


def selecting(model: ScriptedChatModel, **options: Any) -> Any:
    return create_agent(model, TOOLS, middleware=[LLMToolSelectorMiddleware(**options)])


def test_the_defaults_are_langchains() -> None:
    selector = LLMToolSelectorMiddleware()

    assert (selector.max_tools, selector.always_include, selector.max_retries) == (None, [], 1)
    assert selector.on_parsing_failure == "error"
    assert selector.model is None


@pytest.mark.parametrize("retries", [0, 1, 3])
def test_a_malformed_answer_is_asked_again_max_retries_times(how_call: str, retries: int) -> None:
    model = ScriptedChatModel([*[MALFORMED] * (retries + 1), "Sunny."])

    run_agent(selecting(model, max_retries=retries, on_parsing_failure="all"), how_call, QUESTION)

    assert model.call_count == retries + 2  # the selection asks, then the agent's model call
    assert [c.tool_names for c in model.calls[:-1]] == [("ToolSelectionResponse",)] * (retries + 1)
    assert model.calls[-1].tool_names == ("get_weather", "get_stock", "send_email")


def test_a_retry_that_names_a_tool_ends_the_asking(how_call: str) -> None:
    model = ScriptedChatModel([MALFORMED, answer(tools=["get_weather"]), "Sunny."])

    run_agent(selecting(model, max_retries=3), how_call, QUESTION)

    assert model.call_count == 3
    assert model.calls[-1].tool_names == ("get_weather",)


def test_by_default_a_malformed_answer_raises_a_value_error(how_call: str) -> None:
    model = ScriptedChatModel([MALFORMED, MALFORMED, "unreachable"])

    with pytest.raises(ValueError, match="malformed") as caught:
        run_agent(selecting(model), how_call, QUESTION)

    assert isinstance(caught.value, ToolSelectionError)
    assert str(caught.value).startswith(
        "LLMToolSelectorMiddleware: selection model returned a malformed response after 1 "
        "retries (expected a dict with a 'tools' list): {}."
    )
    assert model.call_count == 2


def test_by_default_an_answer_naming_no_offered_tool_raises_langchains_error(
    how_call: str,
) -> None:
    model = ScriptedChatModel([NONSENSE, "unreachable"])

    with pytest.raises(ValueError, match=r"^Model selected invalid tools: \['nothing useful'\]"):
        run_agent(selecting(model), how_call, QUESTION)

    assert model.call_count == 1, "LangChain does not ask again"


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("none", ()),
        ("all", ("get_weather", "get_stock", "send_email")),
        (["send_email", "get_stock"], ("get_stock", "send_email")),
        (lambda last: ["get_weather"] if last == {"oops": True} else [], ("get_weather",)),
    ],
)
def test_on_parsing_failure_chooses_the_tools(how_call: str, choice: Any, expected: Any) -> None:
    # The function is given the last answer as parsed; max_tools does not cut a fallback.
    oops = answer(oops=True)
    model = ScriptedChatModel([oops, oops, "Sunny."])

    run_agent(selecting(model, on_parsing_failure=choice, max_tools=1), how_call, QUESTION)

    assert model.calls[-1].tool_names == expected


def test_a_function_choosing_a_tool_not_offered_is_an_error(how_call: str) -> None:
    model = ScriptedChatModel([MALFORMED, MALFORMED, "unreachable"])
    agent = selecting(model, on_parsing_failure=lambda last: ["delete_everything"])

    with pytest.raises(ToolSelectionError, match=r"chose \['delete_everything'\]"):
        run_agent(agent, how_call, QUESTION)


def test_picks_are_deduplicated_and_cut_at_max_tools_in_the_models_order(how_call: str) -> None:
    picks = ["send_email", "send_email", "get_weather", "get_stock"]
    model = ScriptedChatModel([answer(tools=picks), "ok"])

    run_agent(selecting(model, max_tools=2), how_call, QUESTION)

    # The two first picks, listed in the agent's order.
    assert model.calls[-1].tool_names == ("get_weather", "send_email")


def test_selected_tools_come_first_then_always_include_then_provider_tools(
    how_call: str,
) -> None:
    search = {"type": "web_search_preview"}
    seen: list[list[Any]] = []

    @wrap_model_call
    def spy(request: ModelRequest, handler: Any) -> Any:
        seen.append(list(request.tools))
        return handler(request)

    model = ScriptedChatModel([answer(tools=["send_email"]), "ok"])
    selector = LLMToolSelectorMiddleware(always_include=["get_weather"])
    agent = create_agent(model, [search, *TOOLS], middleware=[selector, spy])

    run_agent(agent, how_call, QUESTION)

    offered = model.calls[0].tools[0]["function"]["parameters"]["properties"]["tools"]["items"]
    assert offered["enum"] == ["get_stock", "send_email"]
    assert seen == [[send_email, get_weather, search]]


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
    model = ScriptedChatModel(
        [calls(("ToolSelectionResponse", {"tools": ["weather", "stocks"]})), "ok"]
    )
    agent = agent_with(model, max_tools=1, always_include=["email"])

    run_agent(agent, how_call, LYON)

    assert set(model.calls[-1].tool_names) == {"weather", "email"}


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_the_selection_call_stays_off_the_messages_stream(how: str) -> None:
    model = ScriptedChatModel(
        [calls(("ToolSelectionResponse", {"tools": ["weather"]})), "It is sunny."]
    )
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
