"""langchain-openai's ChatOpenAI driven by graphagent against a local OpenAI-compatible stub.

These tests check the wire format both ways: what graphagent makes the client send (messages,
tools, tool_choice, response_format, settings, stream) and how it handles what a provider sends
back (tool calls, parallel and malformed ones, SSE deltas, usage, JSON content, 400 errors).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from typing import Any

import openai
import openai.resources.beta.beta  # eager: its lazy first import (~1 s) would land in one test
import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

from graphagent import create_agent
from graphagent.middleware import wrap_model_call
from graphagent.requests import ModelRequest
from graphagent.structured_output import ProviderStrategy, StructuredOutputError, ToolStrategy
from tests.conftest import Run, run_agent
from tests.openai_stub import (
    OpenAIStub,
    Usage,
    call,
    error,
    json_reply,
    text,
    tool_calls,
)
from tests.weather import Weather, get_weather

QUESTION = {"messages": ["What is the weather in Paris?"]}
THREAD = {"configurable": {"thread_id": "t"}}


@pytest.fixture(params=("stream", "astream"))
def how_stream(request: pytest.FixtureRequest) -> str:
    """stream and astream with stream_mode="messages", so the model itself streams."""
    return request.param  # type: ignore[no-any-return]


def chat(stub: OpenAIStub, model: str = "gpt-test", **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=stub.url, api_key="test", model=model, max_retries=0, timeout=10, **kwargs
    )


class Forecast(BaseModel):
    """A forecast."""

    city: str
    days: int


def stream_messages(
    agent: Any, how: str, inputs: Any, **kwargs: Any
) -> tuple[list[tuple[AIMessageChunk, dict[str, Any]]], dict[str, Any]]:
    """The model's message chunks (with their metadata) and the final state of one run."""
    modes = ["messages", "values"]
    if how == "stream":
        parts = list(agent.stream(inputs, stream_mode=modes, **kwargs))
    else:

        async def collect() -> list[Any]:
            return [part async for part in agent.astream(inputs, stream_mode=modes, **kwargs)]

        parts = asyncio.run(collect())
    chunks = [p for mode, p in parts if mode == "messages" and isinstance(p[0], AIMessageChunk)]
    states = [p for mode, p in parts if mode == "values"]
    return chunks, states[-1]


def invoke_or_stream(agent: Any, how: str, inputs: Any) -> dict[str, Any]:
    if how in ("stream", "astream"):
        return stream_messages(agent, how, inputs)[1]
    return run_agent(agent, how, inputs)


def tool_messages(state: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]


def last_ai(state: dict[str, Any]) -> AIMessage:
    return next(m for m in reversed(state["messages"]) if isinstance(m, AIMessage))


def sent_calls(message: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """(id, name, parsed arguments) of an assistant message as it went over the wire."""
    assert message["role"] == "assistant"
    return [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in message["tool_calls"]
    ]


# Tool calls


def test_a_tool_call_round_trip_sends_the_call_and_its_answer(run: Run, stub: OpenAIStub) -> None:
    stub.script(
        tool_calls(call("get_weather", {"city": "Paris"}, id="call_1")),
        text("It is sunny in Paris."),
    )
    agent = create_agent(chat(stub), [get_weather])

    result = run(agent, QUESTION)

    assert last_ai(result).content == "It is sunny in Paris."
    [answer] = tool_messages(result)
    assert (answer.tool_call_id, answer.content) == ("call_1", "sunny in Paris")
    first, second = stub.requests
    assert [r["stream"] for r in stub.requests] == [False, False]
    assert first["model"] == "gpt-test"
    assert first["messages"] == [{"role": "user", "content": "What is the weather in Paris?"}]
    [offered] = first["tools"]
    assert offered["type"] == "function"
    assert offered["function"]["name"] == "get_weather"
    assert offered["function"]["parameters"]["required"] == ["city"]
    assert "tool_choice" not in first
    assistant, tool_answer = second["messages"][1:]
    assert sent_calls(assistant) == [("call_1", "get_weather", {"city": "Paris"})]
    assert tool_answer == {"role": "tool", "tool_call_id": "call_1", "content": "sunny in Paris"}


def test_parallel_tool_calls_all_run_and_are_all_answered(how_call: str, stub: OpenAIStub) -> None:
    ran: list[str] = []
    lock = threading.Lock()

    @tool
    def forecast(city: str, days: int) -> str:
        """The forecast for a city."""
        with lock:
            ran.append(f"forecast {city} {days}")
        return f"{days} days of rain in {city}"

    stub.script(
        tool_calls(
            call("get_weather", {"city": "Paris"}, id="call_a"),
            call("forecast", {"city": "Rome", "days": 3}, id="call_b"),
        ),
        text("Paris is sunny; Rome gets rain."),
    )
    agent = create_agent(chat(stub), [get_weather, forecast])

    result = run_agent(agent, how_call, QUESTION)

    assert ran == ["forecast Rome 3"]
    answers = {m.tool_call_id: m.content for m in tool_messages(result)}
    assert answers == {"call_a": "sunny in Paris", "call_b": "3 days of rain in Rome"}
    sent = stub.requests[1]["messages"]
    assert sent_calls(sent[1]) == [
        ("call_a", "get_weather", {"city": "Paris"}),
        ("call_b", "forecast", {"city": "Rome", "days": 3}),
    ]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool"]
    assert {m["tool_call_id"]: m["content"] for m in sent[2:]} == answers


def test_malformed_tool_arguments_are_answered_and_the_model_tries_again(
    run: Run, stub: OpenAIStub
) -> None:
    ran: list[str] = []

    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        ran.append(city)
        return city

    stub.script(
        tool_calls(call("lookup", '{"city": "Par', id="call_bad")),
        tool_calls(call("lookup", {"city": "Paris"}, id="call_good")),
        text("Found Paris."),
    )
    agent = create_agent(chat(stub), [lookup], checkpointer=InMemorySaver())

    result = run(agent, QUESTION, config=THREAD)

    assert ran == ["Paris"]
    bad, good = tool_messages(result)
    assert (bad.tool_call_id, bad.status) == ("call_bad", "error")
    assert "could not be executed - arguments were malformed or truncated" in bad.text
    assert (good.tool_call_id, good.content) == ("call_good", "Paris")
    second = stub.requests[1]["messages"]
    assert second[1]["tool_calls"][0]["function"]["arguments"] == '{"city": "Par'
    assert [m["role"] for m in second[1:]] == ["assistant", "tool"]
    assert second[2]["tool_call_id"] == "call_bad"
    assert last_ai(result).content == "Found Paris."


# Streaming


def test_streamed_tokens_arrive_as_chunks_and_tool_arguments_are_assembled(
    how_stream: str, stub: OpenAIStub
) -> None:
    stub.script(
        tool_calls(call("get_weather", {"city": "Paris"}, id="call_1")),
        text("It is sunny in Paris."),
    )
    agent = create_agent(chat(stub), [get_weather])

    chunks, state = stream_messages(agent, how_stream, QUESTION)

    assert [r["stream"] for r in stub.requests] == [True, True]
    assert all("stream_options" not in r for r in stub.requests)
    from_model = [c for c, meta in chunks if meta["langgraph_node"] == "model"]
    pieces = [c.tool_call_chunks[0]["args"] for c in from_model if c.tool_call_chunks]
    assert len(pieces) > 2
    assert "".join(p or "" for p in pieces) == '{"city": "Paris"}'
    words = [c.content for c in from_model if c.content]
    assert words == ["It ", "is ", "sunny ", "in ", "Paris."]
    calling = next(m for m in state["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert calling.tool_calls[0]["args"] == {"city": "Paris"}
    assert calling.tool_calls[0]["id"] == "call_1"
    assert tool_messages(state)[0].content == "sunny in Paris"
    assert sent_calls(stub.requests[1]["messages"][1]) == [
        ("call_1", "get_weather", {"city": "Paris"})
    ]
    assert last_ai(state).content == "It is sunny in Paris."


def test_streamed_parallel_calls_are_split_by_index(how_stream: str, stub: OpenAIStub) -> None:
    stub.script(
        tool_calls(
            call("get_weather", {"city": "Paris"}, id="call_a"),
            call("get_weather", {"city": "Rome"}, id="call_b"),
        ),
        text("Both sunny."),
    )
    agent = create_agent(chat(stub), [get_weather])

    _, state = stream_messages(agent, how_stream, QUESTION)

    answers = {m.tool_call_id: m.content for m in tool_messages(state)}
    assert answers == {"call_a": "sunny in Paris", "call_b": "sunny in Rome"}
    assert sent_calls(stub.requests[1]["messages"][1]) == [
        ("call_a", "get_weather", {"city": "Paris"}),
        ("call_b", "get_weather", {"city": "Rome"}),
    ]


def test_streamed_malformed_arguments_become_an_error_answer(
    how_stream: str, stub: OpenAIStub
) -> None:
    stub.script(tool_calls(call("get_weather", "{city: Paris}", id="call_bad")), text("Sorry."))
    agent = create_agent(chat(stub), [get_weather], checkpointer=InMemorySaver())

    _, state = stream_messages(agent, how_stream, QUESTION, config=THREAD)

    [answer] = tool_messages(state)
    assert (answer.tool_call_id, answer.status) == ("call_bad", "error")
    assert stub.requests[1]["messages"][2]["tool_call_id"] == "call_bad"
    assert last_ai(state).content == "Sorry."


def test_streamed_usage_lands_on_the_message_when_requested(
    how_stream: str, stub: OpenAIStub
) -> None:
    stub.script(text("Hello there.", usage=Usage(prompt_tokens=30, completion_tokens=4)))
    agent = create_agent(chat(stub, stream_usage=True))

    _, state = stream_messages(agent, how_stream, {"messages": ["hi"]})

    assert stub.requests[0]["stream_options"] == {"include_usage": True}
    usage = last_ai(state).usage_metadata
    assert usage is not None
    assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (30, 4, 34)


# Usage, system prompt, model settings


def test_usage_metadata_lands_on_each_ai_message(how_call: str, stub: OpenAIStub) -> None:
    stub.script(
        tool_calls(call("get_weather", {"city": "Paris"})),
        text("Sunny.", usage=Usage(prompt_tokens=40, completion_tokens=9)),
    )
    agent = create_agent(chat(stub), [get_weather])

    result = run_agent(agent, how_call, QUESTION)

    usages = [m.usage_metadata for m in result["messages"] if isinstance(m, AIMessage)]
    assert [(u["input_tokens"], u["output_tokens"], u["total_tokens"]) for u in usages if u] == [
        (12, 5, 17),
        (40, 9, 49),
    ]


def test_the_system_prompt_is_the_first_message_of_every_request(
    how_call: str, stub: OpenAIStub
) -> None:
    stub.script(tool_calls(call("get_weather", {"city": "Paris"})), text("Sunny."))
    agent = create_agent(chat(stub), [get_weather], system_prompt="Answer in one word.")

    run_agent(agent, how_call, QUESTION)

    for request in stub.requests:
        assert request["messages"][0] == {"role": "system", "content": "Answer in one word."}
        assert request["messages"][1]["role"] == "user"
        assert sum(m["role"] == "system" for m in request["messages"]) == 1


def test_model_settings_from_wrap_model_call_reach_the_provider(
    how_call: str, stub: OpenAIStub
) -> None:
    @wrap_model_call
    def settings(request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        calls_so_far = sum(isinstance(m, AIMessage) for m in request.messages)
        return handler(request.override(model_settings={"temperature": 0.1 * (calls_so_far + 1)}))

    stub.script(tool_calls(call("get_weather", {"city": "Paris"})), text("Sunny."))
    agent = create_agent(chat(stub, temperature=0.9), [get_weather], middleware=[settings])

    run_agent(agent, how_call, QUESTION)

    assert [r["temperature"] for r in stub.requests] == pytest.approx([0.1, 0.2])


# Structured output: the requests are LangChain's (tests/compat/test_structured_output_wire.py
# pins them case by case); these show them end to end and pin where graphagent differs.

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "Weather",
        "description": "A weather report.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "degrees": {"type": "integer"}},
            "required": ["city", "degrees"],
        },
    },
}
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"title": "City", "type": "string"},
        "degrees": {"title": "Degrees", "type": "integer"},
    },
    "required": ["city", "degrees"],
}


def weather_format(*, strict: bool = False) -> dict[str, Any]:
    schema = {**WEATHER_SCHEMA, "additionalProperties": False} if strict else WEATHER_SCHEMA
    spec = {"name": "Weather", "description": "A weather report.", "schema": schema}
    return {"type": "json_schema", "json_schema": {**spec, "strict": strict}}


def test_tool_strategy_offers_the_schema_as_a_required_tool(
    how_call: str, stub: OpenAIStub
) -> None:
    stub.script(tool_calls(call("Weather", {"city": "Paris", "degrees": 21}, id="call_w")))
    agent = create_agent(chat(stub), [get_weather], response_format=ToolStrategy(Weather))

    result = run_agent(agent, how_call, QUESTION)

    assert result["structured_response"] == Weather(city="Paris", degrees=21)
    [request] = stub.requests
    assert request["tool_choice"] == "required"  # ChatOpenAI's spelling of graphagent's "any"
    assert "response_format" not in request
    assert "parallel_tool_calls" not in request
    assert request["tools"][1:] == [WEATHER_TOOL]
    [answer] = tool_messages(result)
    assert (answer.tool_call_id, answer.content) == (
        "call_w",
        "Returning structured response: city='Paris' degrees=21",
    )


def test_tool_strategy_sends_invalid_output_back_for_another_turn(
    how_call: str, stub: OpenAIStub
) -> None:
    stub.script(
        tool_calls(call("Weather", {"city": "Paris", "degrees": "warm"}, id="call_1")),
        tool_calls(call("Weather", {"city": "Paris", "degrees": 22}, id="call_2")),
    )
    agent = create_agent(chat(stub), response_format=ToolStrategy(Weather))

    result = run_agent(agent, how_call, QUESTION)

    assert result["structured_response"] == Weather(city="Paris", degrees=22)
    retry = stub.requests[1]["messages"]
    assert [m["role"] for m in retry] == ["user", "assistant", "tool"]
    assert retry[2]["tool_call_id"] == "call_1"
    assert retry[2]["content"].startswith(
        "Error: Failed to parse structured output for tool 'Weather': Failed to parse data to "
        "Weather: 1 validation error for Weather\ndegrees\n"
    )
    assert retry[2]["content"].endswith(".\n Please fix your mistakes.")


def test_provider_strategy_sends_a_json_schema_and_parses_the_reply(
    run: Run, stub: OpenAIStub
) -> None:
    stub.script(json_reply({"city": "Paris", "degrees": 23}))
    agent = create_agent(chat(stub), response_format=ProviderStrategy(Weather))

    result = run(agent, QUESTION)

    assert result["structured_response"] == Weather(city="Paris", degrees=23)
    [request] = stub.requests
    # No "tools": [] (LangChain sends one; OpenAI-compatible servers reject an empty list).
    # (prompt_cache_key: prompt caching, tests/test_prompt_caching.py.)
    sent = {k: v for k, v in request.items() if k not in ("messages", "stream", "prompt_cache_key")}
    assert sent == {
        "model": "gpt-test",
        "response_format": weather_format(),
    }


def test_provider_strategy_parses_a_streamed_reply(how_stream: str, stub: OpenAIStub) -> None:
    stub.script(json_reply({"city": "Paris", "degrees": 24}))
    agent = create_agent(chat(stub), response_format=ProviderStrategy(Weather, strict=True))

    chunks, state = stream_messages(agent, how_stream, QUESTION)

    assert state["structured_response"] == Weather(city="Paris", degrees=24)
    assert len([c for c, _ in chunks if c.content]) > 1
    [request] = stub.requests
    assert request["stream"] is True
    assert request["response_format"] == weather_format(strict=True)
    assert "tools" not in request


def test_provider_strategy_works_alongside_tools(stub: OpenAIStub) -> None:
    stub.script(json_reply({"city": "Paris", "degrees": 25}))
    agent = create_agent(chat(stub), [get_weather], response_format=ProviderStrategy(Weather))

    result = agent.invoke(QUESTION)

    assert result["structured_response"] == Weather(city="Paris", degrees=25)
    [request] = stub.requests
    assert request["response_format"] == weather_format()
    [offered] = request["tools"]
    assert (offered["function"]["name"], offered["function"]["strict"]) == ("get_weather", True)


@pytest.mark.parametrize(
    ("model", "native"),
    [("gpt-4o", True), ("gpt-4o-2024-11-20-ft", True), ("gpt-test", False)],
    ids=["profiled", "known-name", "unknown"],
)
def test_a_plain_schema_follows_the_model_profile_or_name(
    model: str, native: bool, how_call: str, stub: OpenAIStub
) -> None:
    payload = {"city": "Paris", "degrees": 26}
    stub.script(json_reply(payload) if native else tool_calls(call("Weather", payload)))
    agent = create_agent(chat(stub, model=model), response_format=Weather)

    result = run_agent(agent, how_call, QUESTION)

    assert result["structured_response"] == Weather.model_validate(payload)
    [request] = stub.requests
    assert request.get("response_format") == (weather_format() if native else None)
    assert request.get("tools") == (None if native else [WEATHER_TOOL])


# Where graphagent's requests differ from LangChain's (docs/migrating-from-langchain.md)


def test_a_union_on_a_native_model_is_offered_as_tools(how_call: str, stub: OpenAIStub) -> None:
    stub.script(tool_calls(call("Weather", {"city": "Paris", "degrees": 1})))
    agent = create_agent(chat(stub, model="gpt-4o"), response_format=Weather | Forecast)

    result = run_agent(agent, how_call, QUESTION)

    assert result["structured_response"] == Weather(city="Paris", degrees=1)
    [request] = stub.requests
    assert [t["function"]["name"] for t in request["tools"]] == ["Weather", "Forecast"]
    assert "response_format" not in request


def test_an_untitled_json_schema_is_sent_under_its_name(how_call: str, stub: OpenAIStub) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    strategy = ProviderStrategy(schema)
    stub.script(json_reply({"n": 1}))

    result = run_agent(create_agent(chat(stub), response_format=strategy), how_call, QUESTION)

    assert result["structured_response"] == {"n": 1}
    name = strategy.schema_spec.name
    [request] = stub.requests
    assert request["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": schema, "strict": False},
    }


def test_a_json_schema_missing_a_required_key_is_retried(how_call: str, stub: OpenAIStub) -> None:
    schema = {"title": "contact", "type": "object", "properties": {}, "required": ["name"]}
    stub.script(
        tool_calls(call("contact", {"email": "x"}, id="bad")),
        tool_calls(call("contact", {"name": "Ann"})),
    )

    result = run_agent(create_agent(chat(stub), response_format=schema), how_call, QUESTION)

    assert result["structured_response"] == {"name": "Ann"}
    assert stub.requests[1]["messages"][2]["content"] == (
        "Error: Failed to parse structured output for tool 'contact': Failed to parse data to "
        "contact: missing required field(s) ['name'].\n Please fix your mistakes."
    )


def test_a_tool_choice_set_by_middleware_is_kept(stub: OpenAIStub) -> None:
    @wrap_model_call
    def weather_first(request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        return handler(request.override(tool_choice="get_weather"))

    stub.script(tool_calls(call("Weather", {"city": "Paris", "degrees": 2})))
    agent = create_agent(
        chat(stub), [get_weather], response_format=ToolStrategy(Weather), middleware=[weather_first]
    )

    agent.invoke(QUESTION)

    chosen = {"type": "function", "function": {"name": "get_weather"}}
    assert stub.requests[0]["tool_choice"] == chosen


def test_a_call_beside_the_structured_one_runs_then_the_run_ends(
    how_call: str, stub: OpenAIStub
) -> None:
    ran: list[str] = []

    @tool
    def book(city: str) -> str:
        """Book a trip."""
        ran.append(city)
        return "booked"

    weather = {"city": "Paris", "degrees": 3}
    stub.script(
        tool_calls(call("book", {"city": "Paris"}, id="b"), call("Weather", weather, id="w")),
        tool_calls(call("Weather", weather, id="w2")),
    )
    agent = create_agent(
        chat(stub), [book], response_format=ToolStrategy(Weather), checkpointer=InMemorySaver()
    )

    first = run_agent(agent, how_call, QUESTION, config=THREAD)
    assert (ran, len(stub.requests)) == (["Paris"], 1), "the tool runs, the model is not asked"
    assert first["structured_response"] == Weather(city="Paris", degrees=3)
    run_agent(agent, how_call, {"messages": ["And tomorrow?"]}, config=THREAD)

    assert stub.requests[1]["messages"][2:4] == [
        {
            "role": "tool",
            "tool_call_id": "w",
            "content": "Returning structured response: city='Paris' degrees=3",
        },
        {"role": "tool", "tool_call_id": "b", "content": "booked"},
    ]


def test_a_text_reply_under_tool_strategy_ends_the_run(how_call: str, stub: OpenAIStub) -> None:
    stub.script(text("It is sunny."))
    agent = create_agent(chat(stub), response_format=ToolStrategy(Weather))

    result = run_agent(agent, how_call, QUESTION)

    assert result.get("structured_response") is None
    assert last_ai(result).content == "It is sunny."
    assert len(stub.requests) == 1


# Provider errors


@pytest.mark.parametrize("how", ["invoke", "ainvoke", "stream", "astream"])
def test_a_provider_rejecting_native_output_names_tool_strategy(how: str, stub: OpenAIStub) -> None:
    stub.script(error(400, "This response_format type is unavailable", "response_format"))
    agent = create_agent(chat(stub), response_format=ProviderStrategy(Weather))

    with pytest.raises(StructuredOutputError, match=r"ToolStrategy") as caught:
        invoke_or_stream(agent, how, QUESTION)

    assert isinstance(caught.value.__cause__, openai.BadRequestError)
    assert caught.value.__cause__.status_code == 400
    [request] = stub.requests
    assert request["response_format"]["json_schema"]["name"] == "Weather"
    assert request["stream"] is how.endswith("stream")


def test_openais_unsupported_model_message_also_names_tool_strategy(
    how_call: str, stub: OpenAIStub
) -> None:
    message = (
        "Invalid parameter: 'response_format' of type 'json_schema' is not supported with "
        "this model."
    )
    stub.script(error(400, message, "response_format"))
    agent = create_agent(chat(stub), response_format=ProviderStrategy(Weather))

    # langchain-openai warns about this exact message before raising its own BadRequestError.
    with (
        pytest.warns(UserWarning, match="structured output"),
        pytest.raises(StructuredOutputError, match=r"ToolStrategy"),
    ):
        run_agent(agent, how_call, QUESTION)


def test_a_bad_request_without_native_output_propagates_unchanged(
    how_call: str, stub: OpenAIStub
) -> None:
    stub.script(error(400, "messages: too many", "messages"))
    agent = create_agent(chat(stub), response_format=ToolStrategy(Weather))

    with pytest.raises(openai.BadRequestError, match="too many"):
        run_agent(agent, how_call, QUESTION)


# The stub itself


def test_the_stub_reports_a_request_beyond_its_script(openai_server: OpenAIStub) -> None:
    server = openai_server
    server.reset()
    agent = create_agent(chat(server))

    with pytest.raises(openai.InternalServerError, match="no scripted reply left"):
        agent.invoke({"messages": ["hi"]})

    assert server.problems == ["request 1 came after the script ran out"]
    server.reset()


def test_the_stub_stops_by_itself_after_its_lifetime() -> None:
    stub = OpenAIStub(lifetime=0.05).start()
    try:
        stub._thread.join(timeout=5)
        assert not stub._thread.is_alive()
    finally:
        stub.stop()
