"""LLMToolSelectorMiddleware: names-only selection, the failure modes of seed 003, limits."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.errors import GraphInterrupt

from graphagent import MiddlewareError, ToolSelectionError, create_agent
from graphagent.middleware import ModelRequest, ModelResponse, wrap_model_call
from graphagent.middleware.tool_selection import DEFAULT_SYSTEM_PROMPT, LLMToolSelectorMiddleware
from graphagent.models import MissingIntegrationError
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent

LOGGER = "graphagent.middleware.tool_selection"


@tool
def get_weather(city: str) -> str:
    """Get weather for a city."""
    return f"{city}: sunny, 24 degrees"


@tool
def get_stock(symbol: str) -> str:
    """Get the latest price of a stock."""
    return f"{symbol}: 100"


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    return "sent"


@tool
def book_flight(origin: str, destination: str) -> str:
    """Book a flight between two cities."""
    return "booked"


TOOLS = [get_weather, get_stock, send_email, book_flight]
NAMES = ("get_weather", "get_stock", "send_email", "book_flight")
QUESTION = {"messages": [HumanMessage("What's the weather in Xi'an?")]}


def select(*names: str) -> AIMessage:
    """A structured-output answer choosing ``names``."""
    return calls(("ToolSelectionResponse", {"tools": list(names)}))


def raises(error: Exception) -> Callable[[list[BaseMessage]], str]:
    def reply(messages: list[BaseMessage]) -> str:
        raise error

    return reply


class BadRequestError(Exception):
    """Plays the provider error DeepSeek answers a json_schema response_format with."""


DEEPSEEK_400 = BadRequestError(
    "Error code: 400 - {'error': {'message': 'This response_format type is unavailable now'}}"
)


class NoStructuredOutput(ScriptedChatModel):
    """A chat model whose integration does not implement structured output at all."""

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("with_structured_output is not implemented for this model")


def agent_with(chat_model: ScriptedChatModel, **options: Any) -> Any:
    return create_agent(chat_model, TOOLS, middleware=[LLMToolSelectorMiddleware(**options)])


def test_the_model_sees_only_the_selected_tools(how_call: str) -> None:
    model = ScriptedChatModel(
        [
            select("get_weather"),
            calls(("get_weather", {"city": "Xi'an"})),
            select("get_weather"),
            "Sunny, 24 degrees.",
        ]
    )
    result = run_agent(agent_with(model), how_call, QUESTION)

    assert result["messages"][-1].content == "Sunny, 24 degrees."
    selection, answer = model.calls[0], model.calls[1]
    assert selection.tool_names == ("ToolSelectionResponse",)
    assert answer.tool_names == ("get_weather",)
    assert model.calls[3].tool_names == ("get_weather",)  # selection runs before every call
    # The selection sees the instructions and the user's request, nothing else.
    system, user = selection.messages
    assert system.text.startswith(DEFAULT_SYSTEM_PROMPT)
    assert user.text == "What's the weather in Xi'an?"


def test_the_schema_offers_names_only_and_the_prompt_carries_the_descriptions() -> None:
    model = ScriptedChatModel([select("get_weather"), "Sunny."])
    agent_with(model).invoke(QUESTION)

    (schema,) = model.calls[0].tools
    tools_field = schema["function"]["parameters"]["properties"]["tools"]
    assert tools_field["items"] == {"type": "string", "enum": list(NAMES)}
    assert "Get weather for a city." not in str(schema)
    prompt = model.calls[0].messages[0].text
    assert "- get_weather: Get weather for a city." in prompt
    assert "- book_flight: Book a flight between two cities." in prompt


# -- the failure modes seed 003 reports for LangChain's selector --------------------------------


def test_a_provider_rejecting_structured_output_falls_back_to_plain_text(how_call: str) -> None:
    """DeepSeek: a 400 for the response format; the selection is asked again in plain text."""
    model = ScriptedChatModel([raises(DEEPSEEK_400), "get_weather", "Sunny."])
    result = run_agent(agent_with(model), how_call, QUESTION)

    assert result["messages"][-1].content == "Sunny."
    structured, plain, answer = model.calls
    assert structured.tool_names == ("ToolSelectionResponse",)
    assert plain.tools == ()
    assert "Reply with the names of the relevant tools only" in plain.messages[0].text
    assert answer.tool_names == ("get_weather",)


def test_a_model_without_structured_output_falls_back_to_plain_text(how_call: str) -> None:
    model = NoStructuredOutput(["get_stock", "100."])
    result = run_agent(agent_with(model), how_call, QUESTION)

    assert result["messages"][-1].content == "100."
    assert [c.tool_names for c in model.calls] == [(), ("get_stock",)]


def test_a_bare_word_that_is_not_json_is_matched_against_the_names(how_call: str) -> None:
    """Ollama: the parser raises on 'weather'; the plain-text answer 'weather' -> get_weather."""
    parser_error = OutputParserException("Invalid json output: weather")
    model = ScriptedChatModel([raises(parser_error), "weather", "Sunny."])
    run_agent(agent_with(model), how_call, QUESTION)

    assert model.calls[-1].tool_names == ("get_weather",)


def test_a_plain_text_answer_to_the_structured_call_is_used_without_asking_again(
    how_call: str,
) -> None:
    model = ScriptedChatModel(["weather", "Sunny."])
    run_agent(agent_with(model), how_call, QUESTION)

    assert [c.tool_names for c in model.calls] == [("ToolSelectionResponse",), ("get_weather",)]


def test_a_description_returned_instead_of_the_name_selects_that_tool(how_call: str) -> None:
    """Gemini: {'tools': ['Get weather for a city.']} used to raise 'invalid tools'."""
    model = ScriptedChatModel([select("Get weather for a city."), "Sunny."])
    result = run_agent(agent_with(model), how_call, QUESTION)

    assert result["messages"][-1].content == "Sunny."
    assert [c.tool_names for c in model.calls] == [("ToolSelectionResponse",), ("get_weather",)]


def test_an_answer_naming_no_tool_raises_langchains_error(how_call: str) -> None:
    model = ScriptedChatModel([select("The forecast service."), "unreachable"])

    with pytest.raises(ToolSelectionError) as caught:
        run_agent(agent_with(model), how_call, QUESTION)

    assert str(caught.value).startswith(
        "Model selected invalid tools: ['The forecast service.']. LLMToolSelectorMiddleware:"
    )
    assert model.call_count == 1, "an answer naming only other tools is not asked again"


def test_with_on_parsing_failure_all_such_an_answer_keeps_every_tool_and_logs_a_warning(
    how_call: str, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedChatModel([select("The forecast service."), "Sunny."])
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        result = run_agent(agent_with(model, on_parsing_failure="all"), how_call, QUESTION)

    assert result["messages"][-1].content == "Sunny."
    assert model.calls[-1].tool_names == NAMES
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert "['The forecast service.'] names no tool" in record.getMessage()
    assert "on_parsing_failure selects" in record.getMessage()


def test_when_both_selection_calls_fail_the_error_says_so(how_call: str) -> None:
    timeout = TimeoutError("selection timed out")
    model = ScriptedChatModel([raises(DEEPSEEK_400), raises(timeout), "unreachable"])

    with pytest.raises(ToolSelectionError) as caught:
        run_agent(agent_with(model), how_call, QUESTION)

    message = str(caught.value)
    assert message.startswith("LLMToolSelectorMiddleware: the selection call failed after 1 ")
    assert "BadRequestError" in message
    assert "TimeoutError: selection timed out" in message
    assert caught.value.__cause__ is timeout


def test_when_both_selection_calls_fail_on_parsing_failure_can_keep_every_tool(
    how_call: str, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedChatModel(
        [raises(DEEPSEEK_400), raises(TimeoutError("selection timed out")), "Sunny."]
    )
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        run_agent(agent_with(model, on_parsing_failure="all"), how_call, QUESTION)

    assert model.calls[-1].tool_names == NAMES
    assert "BadRequestError" in caplog.text
    assert "TimeoutError: selection timed out" in caplog.text


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("get_weather", ("get_weather",)),
        ("`get_weather`.", ("get_weather",)),
        ("GET_WEATHER", ("get_weather",)),
        ("Get Weather", ("get_weather",)),
        ("I would use get_stock, then get_weather.", ("get_weather", "get_stock")),
        ("flight", ("book_flight",)),
        ("get", NAMES),  # a word found in several names is ambiguous: no pick
        ("", NAMES),
    ],
)
def test_plain_text_answers_are_matched_against_the_names(
    answer: str, expected: tuple[str, ...]
) -> None:
    model = ScriptedChatModel([raises(DEEPSEEK_400), answer, "ok"])
    agent_with(model, on_parsing_failure="all").invoke(QUESTION)

    assert model.calls[-1].tool_names == expected


def test_a_partly_valid_answer_keeps_the_valid_picks() -> None:
    model = ScriptedChatModel([select("nonsense", "send_email"), "ok"])
    agent_with(model).invoke(QUESTION)

    assert model.calls[-1].tool_names == ("send_email",)


def test_an_empty_choice_leaves_only_the_tools_that_are_always_kept() -> None:
    model = ScriptedChatModel([select(), "Hello!"])
    agent_with(model, always_include=["send_email"]).invoke({"messages": ["hi"]})

    assert model.calls[-1].tool_names == ("send_email",)


# -- options ---------------------------------------------------------------------------------


def test_max_tools_keeps_the_first_picks_in_the_models_order(how_call: str) -> None:
    model = ScriptedChatModel([select("send_email", "get_weather", "get_stock"), "ok"])
    run_agent(agent_with(model, max_tools=2), how_call, QUESTION)

    assert "Choose at most 2 tool(s)." in model.calls[0].messages[0].text
    assert set(model.calls[-1].tool_names) == {"send_email", "get_weather"}


def test_max_tools_also_bounds_a_plain_text_pick() -> None:
    model = ScriptedChatModel([raises(DEEPSEEK_400), "get_stock, get_weather", "ok"])
    agent_with(model, max_tools=1).invoke(QUESTION)

    assert model.calls[-1].tool_names == ("get_stock",)


def test_always_include_tools_are_kept_and_not_offered(how_call: str) -> None:
    model = ScriptedChatModel([select("get_weather"), "ok"])
    agent = agent_with(model, max_tools=1, always_include=["send_email", "book_flight"])
    run_agent(agent, how_call, QUESTION)

    offered = model.calls[0].tools[0]["function"]["parameters"]["properties"]["tools"]["items"]
    assert offered["enum"] == ["get_weather", "get_stock"]
    assert "send_email" not in model.calls[0].messages[0].text
    # Always-included tools do not count against max_tools.
    assert model.calls[-1].tool_names == ("get_weather", "send_email", "book_flight")


def test_always_include_naming_an_unknown_tool_fails_when_the_agent_is_built() -> None:
    middleware = LLMToolSelectorMiddleware(always_include=["send_mail"])
    with pytest.raises(MiddlewareError) as caught:
        create_agent(ScriptedChatModel([]), TOOLS, middleware=[middleware])

    assert str(caught.value) == (
        "Tools in always_include not found in request: ['send_mail']. Available tools: "
        "['book_flight', 'get_stock', 'get_weather', 'send_email']. LLMToolSelectorMiddleware: "
        "always_include names tools the agent does not have; fix the name(s) or add the tool(s)."
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"always_include": "send_email"}, r"always_include='send_email' .* \['send_email'\]"),
        ({"always_include": [1]}, r"always_include=\[1\] .* list of tool names"),
        ({"max_tools": 0}, r"max_tools=0 .* positive int"),
        ({"max_tools": True}, r"max_tools=True .* positive int"),
        ({"model": 42}, r"model is int; pass a chat model or a model id"),
        ({"model": "nosuchprovider:some-model"}, r"model='nosuchprovider:some-model'"),
        ({"system_prompt": None}, r"system_prompt=None .* string"),
    ],
)
def test_bad_options_fail_when_the_middleware_is_built(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(MiddlewareError, match=f"^LLMToolSelectorMiddleware: {message}"):
        LLMToolSelectorMiddleware(**options)


def test_a_separate_selection_model_makes_the_choice(how_call: str) -> None:
    selector = ScriptedChatModel([select("get_stock")])
    model = ScriptedChatModel(["100."])
    run_agent(agent_with(model, model=selector), how_call, QUESTION)

    assert selector.calls[0].tool_names == ("ToolSelectionResponse",)
    assert [c.tool_names for c in model.calls] == [("get_stock",)]


def test_a_model_id_is_built_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    middleware = LLMToolSelectorMiddleware(model="openai:gpt-4o-mini")
    assert middleware._selector is not None
    assert middleware._selector.built is None

    built = middleware.model

    assert type(built).__name__ == "ChatOpenAI"
    assert middleware.model is built


def test_a_model_id_of_a_missing_integration_fails_when_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "langchain_anthropic", None)  # not installed
    with pytest.raises(MissingIntegrationError, match="pip install langchain-anthropic"):
        LLMToolSelectorMiddleware(model="anthropic:claude-sonnet-4-5")


@pytest.mark.parametrize(
    ("tools", "always_include"),
    [([get_weather, get_stock], ["get_stock", "get_weather"]), ([], ())],
)
def test_no_selection_without_a_candidate(tools: list[Any], always_include: Any) -> None:
    model = ScriptedChatModel(["ok"])
    middleware = LLMToolSelectorMiddleware(always_include=always_include)
    create_agent(model, tools, middleware=[middleware]).invoke(QUESTION)

    assert model.call_count == 1
    assert model.calls[0].tool_names == tuple(t.name for t in tools)


def test_a_single_candidate_is_still_offered_for_selection() -> None:
    model = ScriptedChatModel([select(), "ok"])
    middleware = LLMToolSelectorMiddleware(always_include=["get_stock"])
    create_agent(model, [get_weather, get_stock], middleware=[middleware]).invoke(QUESTION)

    assert model.calls[0].tool_names == ("ToolSelectionResponse",)
    assert model.calls[1].tool_names == ("get_stock",)


def test_provider_tools_are_kept_after_the_selected_ones_and_never_offered() -> None:
    search = {"type": "web_search_preview"}
    lookup = {
        "type": "function",
        "function": {"name": "lookup", "description": "Look up a word.", "parameters": {}},
    }
    seen: list[list[Any]] = []

    @wrap_model_call
    def spy(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        seen.append(list(request.tools))
        return handler(request)

    model = ScriptedChatModel([select("get_stock"), "ok"])
    middleware = [LLMToolSelectorMiddleware(), spy]
    tools = [search, get_weather, lookup, get_stock]
    create_agent(model, tools, middleware=middleware).invoke(QUESTION)

    assert "lookup" not in model.calls[0].messages[0].text
    offered = model.calls[0].tools[0]["function"]["parameters"]["properties"]["tools"]["items"]
    assert offered["enum"] == ["get_weather", "get_stock"]
    assert seen == [[get_stock, search, lookup]]


def test_selection_needs_a_user_message() -> None:
    model = ScriptedChatModel([])
    request: ModelRequest[Any] = ModelRequest(
        model=model, messages=[AIMessage("hello")], tools=list(TOOLS)
    )
    seen: list[ModelRequest[Any]] = []

    def handler(req: ModelRequest[Any]) -> ModelResponse:
        seen.append(req)
        return ModelResponse(result=[AIMessage("ok")])

    LLMToolSelectorMiddleware().wrap_model_call(request, handler)
    assert seen == [request]
    assert model.call_count == 0


@pytest.mark.parametrize("how", ["sync", "async"])
def test_control_flow_exceptions_are_not_swallowed(how: str) -> None:
    model = ScriptedChatModel([raises(GraphInterrupt())])
    request: ModelRequest[Any] = ModelRequest(model=model, messages=[HumanMessage("hi")])
    request = request.override(tools=list(TOOLS))
    middleware = LLMToolSelectorMiddleware()

    def handler(req: ModelRequest[Any]) -> ModelResponse:
        raise AssertionError("the model must not be called")

    async def ahandler(req: ModelRequest[Any]) -> ModelResponse:
        raise AssertionError("the model must not be called")

    def select() -> Any:
        if how == "sync":
            return middleware.wrap_model_call(request, handler)
        return asyncio.run(middleware.awrap_model_call(request, ahandler))

    with pytest.raises(GraphInterrupt):
        select()


# -- streaming -------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_the_selection_calls_are_not_streamed_as_messages(how: str) -> None:
    model = ScriptedChatModel([raises(DEEPSEEK_400), "get_weather", "It is sunny."])
    agent = agent_with(model)

    if how == "stream":
        chunks = list(agent.stream(QUESTION, stream_mode="messages"))
    else:

        async def collect() -> list[Any]:
            return [c async for c in agent.astream(QUESTION, stream_mode="messages")]

        chunks = asyncio.run(collect())

    streamed = [m for m, _ in chunks if isinstance(m, AIMessageChunk)]
    assert "".join(m.text for m in streamed) == "It is sunny."
    assert model.call_count == 3
