"""LangChain 1.5's ``create_agent(response_format=...)`` on the wire, pinned case by case.

Each expected payload below is what LangChain 1.5.0's ``create_agent`` sent, measured with
``ChatOpenAI`` (langchain-openai 1.7) against ``tests/openai_stub.py``: the same agent, the same
scripted replies, the request bodies recorded. graphagent must send the same bodies. The one
deliberate difference: with ``ProviderStrategy`` and no tools, LangChain also sends ``"tools": []``,
which OpenAI-compatible servers reject; graphagent leaves the key out (see
docs/migrating-from-langchain.md). ``without_empty_tools`` applies exactly that difference.
Agents are built with ``prompt_caching=False``, LangChain's requests: with it, each body also
carries a ``prompt_cache_key`` (tests/test_prompt_caching.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel, Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from graphagent import create_agent
from graphagent.structured_output import (
    AutoStrategy,
    ProviderStrategy,
    StructuredOutputValidationError,
    ToolStrategy,
)
from tests.conftest import run_agent
from tests.openai_stub import OpenAIStub, Reply, StubCall, call, json_reply, tool_calls
from tests.weather import Weather, get_weather

QUESTION = {"messages": ["What is the weather in Paris?"]}
AGAIN = {"messages": ["And tomorrow?"]}
THREAD = {"configurable": {"thread_id": "t"}}


@pytest.fixture(autouse=True)
def _langchains_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every agent of this module is built with ``prompt_caching=False``."""
    monkeypatch.setitem(create_agent.__kwdefaults__, "prompt_caching", False)


def chat(stub: OpenAIStub, model: str = "gpt-test") -> ChatOpenAI:
    return ChatOpenAI(base_url=stub.url, api_key="test", model=model, max_retries=0, timeout=10)


class Bare(BaseModel):
    city: str


class Rich(BaseModel):
    __doc__ = "A rich report.\n\n    It has several lines\n        and indentation.\n    "

    city: str = Field(description="the city")
    degrees: int = 20
    note: str | None = None
    tags: list[str] = Field(default_factory=list)


class Inner(BaseModel):
    """An inner thing."""

    n: int


class Outer(BaseModel):
    """Holds inner things."""

    inner: Inner
    items: list[Inner]


@dataclasses.dataclass
class Point:
    """A point."""

    x: int
    y: int


@dataclasses.dataclass
class BarePoint:
    x: int


class Movie(TypedDict):
    """A movie."""

    title: str
    year: int


class BareMovie(TypedDict):
    title: str


CONTACT = {
    "title": "contact",
    "description": "A contact card.",
    "type": "object",
    "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
    "required": ["name"],
}
CONTACT_TITLE_ONLY = {
    "title": "contact",
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}
PETS = {
    "oneOf": [
        {
            "title": "cat",
            "description": "A cat.",
            "type": "object",
            "properties": {"meows": {"type": "integer"}},
            "required": ["meows"],
        },
        {
            "title": "dog",
            "type": "object",
            "properties": {"barks": {"type": "integer"}},
            "required": ["barks"],
        },
    ]
}
PARIS = {"city": "Paris", "degrees": 21}


def function(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """One entry of ``tools``: the envelope is fixed, the three fields are the payload."""
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def obj(properties: dict[str, Any], required: list[str], **more: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, **more}


INT, STR = {"type": "integer"}, {"type": "string"}
GET_WEATHER = function(
    "get_weather", "The current weather in a city.", obj({"city": STR}, ["city"])
)
WEATHER_TOOL = function(
    "Weather", "A weather report.", obj({"city": STR, "degrees": INT}, ["city", "degrees"])
)
POINT_TOOL = function("Point", "A point.", obj({"x": INT, "y": INT}, ["x", "y"]))


def offered(request: dict[str, Any]) -> dict[str, Any]:
    """A request body without the conversation, the model name and the stream flag."""
    return {k: v for k, v in request.items() if k not in ("messages", "model", "stream")}


def without_empty_tools(langchain_sends: dict[str, Any]) -> dict[str, Any]:
    """graphagent's one difference: no ``"tools": []`` (OpenAI-compatible servers reject it)."""
    return {k: v for k, v in langchain_sends.items() if k != "tools" or v}


# ToolStrategy: one tool per schema, the model must call a tool

TOOL_CASES = [
    ("pydantic", ToolStrategy(Weather), call("Weather", PARIS), [WEATHER_TOOL]),
    ("no-docstring", ToolStrategy(Bare), call("Bare", {"city": "P"}), [
        function("Bare", "", obj({"city": STR}, ["city"])),
    ]),
    ("raw-docstring-field-descriptions", ToolStrategy(Rich), call("Rich", {"city": "P"}), [
        function(
            "Rich",
            "A rich report.\n\n    It has several lines\n        and indentation.\n    ",
            obj(
                {
                    "city": {"description": "the city", "type": "string"},
                    "degrees": {"default": 20, "type": "integer"},
                    "note": {"anyOf": [STR, {"type": "null"}], "default": None},
                    "tags": {"items": STR, "type": "array"},
                },
                ["city"],
            ),
        ),
    ]),
    ("nested-refs-inlined", ToolStrategy(Outer), call("Outer", {"inner": {"n": 1}, "items": []}), [
        function(
            "Outer",
            "Holds inner things.",
            obj(
                {
                    "inner": obj({"n": INT}, ["n"], description="An inner thing."),
                    "items": {
                        "items": obj({"n": INT}, ["n"], description="An inner thing."),
                        "type": "array",
                    },
                },
                ["inner", "items"],
            ),
        ),
    ]),
    ("dataclass", ToolStrategy(Point), call("Point", {"x": 1, "y": 2}), [POINT_TOOL]),
    ("dataclass-no-docstring", ToolStrategy(BarePoint), call("BarePoint", {"x": 1}), [
        function("BarePoint", "BarePoint(x: 'int')", obj({"x": INT}, ["x"])),
    ]),
    ("typeddict", ToolStrategy(Movie), call("Movie", {"title": "Up", "year": 2009}), [
        function("Movie", "A movie.", obj({"title": STR, "year": INT}, ["title", "year"])),
    ]),
    ("typeddict-no-docstring", ToolStrategy(BareMovie), call("BareMovie", {"title": "Up"}), [
        function("BareMovie", "", obj({"title": STR}, ["title"])),
    ]),
    ("json-schema", ToolStrategy(CONTACT), call("contact", {"name": "Ann"}), [
        function("contact", "A contact card.", obj({"email": STR, "name": STR}, ["name"])),
    ]),
    ("json-schema-title-only", ToolStrategy(CONTACT_TITLE_ONLY), call("contact", {"name": "A"}), [
        function("contact", "", obj({"name": STR}, ["name"])),
    ]),
    ("json-schema-one-of", ToolStrategy(PETS), call("cat", {"meows": 3}), [
        function("cat", "A cat.", obj({"meows": INT}, ["meows"])),
        function("dog", "", obj({"barks": INT}, ["barks"])),
    ]),
    ("union", ToolStrategy(Weather | Point), call("Point", {"x": 1, "y": 2}), [
        WEATHER_TOOL,
        POINT_TOOL,
    ]),
    ("bare-schema", Weather, call("Weather", PARIS), [WEATHER_TOOL]),
    ("auto-strategy", AutoStrategy(Weather), call("Weather", PARIS), [WEATHER_TOOL]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("response_format", "answer", "langchain_tools"),
    [case[1:] for case in TOOL_CASES],
    ids=[case[0] for case in TOOL_CASES],
)
def test_tool_strategy_requests(
    response_format: Any,
    answer: StubCall,
    langchain_tools: list[dict[str, Any]],
    how_call: str,
    stub: OpenAIStub,
) -> None:
    stub.script(tool_calls(answer))

    run_agent(create_agent(chat(stub), response_format=response_format), how_call, QUESTION)

    [request] = stub.requests
    assert offered(request) == {"tool_choice": "required", "tools": langchain_tools}


def test_tool_strategy_with_tools_offers_the_agents_tools_first(
    how_call: str, stub: OpenAIStub
) -> None:
    stub.script(tool_calls(call("Point", {"x": 1, "y": 2})))
    agent = create_agent(chat(stub), [get_weather], response_format=ToolStrategy(Weather | Point))

    run_agent(agent, how_call, QUESTION)

    [request] = stub.requests
    assert offered(request) == {
        "tool_choice": "required",
        "tools": [GET_WEATHER, WEATHER_TOOL, POINT_TOOL],
    }


# What the model sees next: the answer to its structured call, on the thread's next turn

SUCCESS_CASES = [
    ("pydantic", ToolStrategy(Weather), call("Weather", PARIS, id="c"),
     "Returning structured response: city='Paris' degrees=21"),
    ("dataclass", ToolStrategy(Point), call("Point", {"x": 1, "y": 2}, id="c"),
     "Returning structured response: Point(x=1, y=2)"),
    ("typeddict", ToolStrategy(Movie), call("Movie", {"title": "Up", "year": 2009}, id="c"),
     "Returning structured response: {'title': 'Up', 'year': 2009}"),
    ("json-schema", ToolStrategy(CONTACT), call("contact", {"name": "Ann"}, id="c"),
     "Returning structured response: {'name': 'Ann'}"),
    ("tool_message_content", ToolStrategy(Weather, tool_message_content="Got it."),
     call("Weather", PARIS, id="c"), "Got it."),
]  # fmt: skip


@pytest.mark.parametrize(
    ("strategy", "answer", "content"),
    [case[1:] for case in SUCCESS_CASES],
    ids=[case[0] for case in SUCCESS_CASES],
)
def test_the_structured_call_is_answered_on_the_next_turn(
    strategy: ToolStrategy[Any], answer: StubCall, content: str, how_call: str, stub: OpenAIStub
) -> None:
    again = dataclasses.replace(answer, id="c2")
    stub.script(tool_calls(answer), tool_calls(again))
    agent = create_agent(chat(stub), response_format=strategy, checkpointer=InMemorySaver())

    run_agent(agent, how_call, QUESTION, config=THREAD)
    run_agent(agent, how_call, AGAIN, config=THREAD)

    assert stub.requests[1]["messages"] == [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [sent(answer)]},
        {"role": "tool", "tool_call_id": "c", "content": content},
        {"role": "user", "content": "And tomorrow?"},
    ]


def test_a_provider_answer_is_sent_back_as_the_assistants_json(
    how_call: str, stub: OpenAIStub
) -> None:
    stub.script(json_reply(PARIS), json_reply(PARIS))
    agent = create_agent(
        chat(stub), response_format=ProviderStrategy(Weather), checkpointer=InMemorySaver()
    )

    run_agent(agent, how_call, QUESTION, config=THREAD)
    run_agent(agent, how_call, AGAIN, config=THREAD)

    assert stub.requests[1]["messages"] == [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": '{"city": "Paris", "degrees": 21}'},
        {"role": "user", "content": "And tomorrow?"},
    ]


def sent(c: StubCall) -> dict[str, Any]:
    return {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}


# What the model sees after invalid output: the error, shaped by handle_errors


def pydantic_says(schema: Any, data: dict[str, Any]) -> str:
    """pydantic's own message for ``data`` (it names pydantic's version, so it is not pinned)."""
    try:
        TypeAdapter(schema).validate_python(data)
    except ValidationError as exc:
        return str(exc)
    raise AssertionError("the data is valid")


def parse_failure(name: str, schema: Any, data: dict[str, Any]) -> str:
    return (
        f"Error: Failed to parse structured output for tool '{name}': Failed to parse data to "
        f"{name}: {pydantic_says(schema, data)}.\n Please fix your mistakes."
    )


def custom(error: Exception) -> str:
    return f"custom: {type(error).__name__}"


NO_DEGREES = {"city": "Paris"}
RETRY_CASES = [
    ("true-type-error", True, Weather, {"city": "Paris", "degrees": "warm"}),
    ("true-missing", True, Weather, NO_DEGREES),
    ("true-dataclass", True, Point, {"x": "a", "y": 2}),
    ("true-typeddict", True, Movie, {"title": "Up"}),
    ("exception-type", Exception, Weather, NO_DEGREES),
    ("tuple-of-types", (ValueError, Exception), Weather, NO_DEGREES),
]


@pytest.mark.parametrize(
    ("handle_errors", "schema", "arguments"),
    [case[1:] for case in RETRY_CASES],
    ids=[case[0] for case in RETRY_CASES],
)
def test_invalid_arguments_are_answered_with_the_error(
    handle_errors: Any, schema: Any, arguments: dict[str, Any], how_call: str, stub: OpenAIStub
) -> None:
    name = schema.__name__
    bad = call(name, arguments, id="bad")
    valid = {"Weather": PARIS, "Point": {"x": 1, "y": 2}, "Movie": {"title": "Up", "year": 1}}
    stub.script(tool_calls(bad), tool_calls(call(name, valid[name])))
    strategy = ToolStrategy(schema, handle_errors=handle_errors)

    run_agent(create_agent(chat(stub), response_format=strategy), how_call, QUESTION)

    first, retry = stub.requests
    assert retry["messages"][1:] == [
        {"role": "assistant", "content": None, "tool_calls": [sent(bad)]},
        {"role": "tool", "tool_call_id": "bad", "content": parse_failure(name, schema, arguments)},
    ]
    assert offered(retry) == offered(first)


@pytest.mark.parametrize(
    ("handle_errors", "content"),
    [
        ("Try again, please.", "Try again, please."),
        (custom, "custom: StructuredOutputValidationError"),
    ],
    ids=["string", "callable"],
)
def test_handle_errors_text_is_the_answer(
    handle_errors: Any, content: str, how_call: str, stub: OpenAIStub
) -> None:
    bad = call("Weather", NO_DEGREES, id="bad")
    stub.script(tool_calls(bad), tool_calls(call("Weather", PARIS)))
    strategy = ToolStrategy(Weather, handle_errors=handle_errors)

    run_agent(create_agent(chat(stub), response_format=strategy), how_call, QUESTION)

    assert stub.requests[1]["messages"][2] == {
        "role": "tool",
        "tool_call_id": "bad",
        "content": content,
    }


@pytest.mark.parametrize(
    ("handle_errors", "content"),
    [
        (
            True,
            "Error: Model incorrectly returned multiple structured responses (Weather, Point) "
            "when only one is expected.\n Please fix your mistakes.",
        ),
        ("One only.", "One only."),
    ],
    ids=["true", "string"],
)
def test_two_structured_calls_are_both_answered_with_the_error(
    handle_errors: Any, content: str, how_call: str, stub: OpenAIStub
) -> None:
    both = [call("Weather", PARIS, id="c1"), call("Point", {"x": 1, "y": 2}, id="c2")]
    stub.script(tool_calls(*both), tool_calls(call("Weather", PARIS)))
    strategy = ToolStrategy(Weather | Point, handle_errors=handle_errors)

    run_agent(create_agent(chat(stub), response_format=strategy), how_call, QUESTION)

    assert stub.requests[1]["messages"][1:] == [
        {"role": "assistant", "content": None, "tool_calls": [sent(c) for c in both]},
        {"role": "tool", "tool_call_id": "c1", "content": content},
        {"role": "tool", "tool_call_id": "c2", "content": content},
    ]


@pytest.mark.parametrize("handle_errors", [False, KeyError], ids=["false", "other-type"])
def test_unhandled_invalid_arguments_raise_without_another_request(
    handle_errors: Any, how_call: str, stub: OpenAIStub
) -> None:
    stub.script(tool_calls(call("Weather", NO_DEGREES, id="bad")))
    strategy = ToolStrategy(Weather, handle_errors=handle_errors)

    with pytest.raises(StructuredOutputValidationError) as raised:
        run_agent(create_agent(chat(stub), response_format=strategy), how_call, QUESTION)

    assert str(raised.value) == (
        "Failed to parse structured output for tool 'Weather': Failed to parse data to Weather: "
        f"{pydantic_says(Weather, NO_DEGREES)}."
    )
    assert len(stub.requests) == 1


# ProviderStrategy: the provider's JSON-schema mode


def json_format(name: str, schema: dict[str, Any], *, strict: bool = False, **description: str):
    """``response_format`` as langchain-openai sends it (``description=`` when there is one)."""
    spec = {"name": name, **description, "schema": schema, "strict": strict}
    return {"type": "json_schema", "json_schema": spec}


TITLED_INT, TITLED_STR = (
    {"title": "Degrees", "type": "integer"},
    {"title": "City", "type": "string"},
)
WEATHER_SCHEMA = obj({"city": TITLED_STR, "degrees": TITLED_INT}, ["city", "degrees"])
WEATHER_FORMAT = json_format("Weather", WEATHER_SCHEMA, description="A weather report.")
RICH_PROPERTIES = {
    "city": {"description": "the city", "title": "City", "type": "string"},
    "degrees": {"default": 20, "title": "Degrees", "type": "integer"},
    "note": {"anyOf": [STR, {"type": "null"}], "default": None, "title": "Note"},
    "tags": {"items": STR, "title": "Tags", "type": "array"},
}
RICH_DESCRIPTION = "A rich report.\n\nIt has several lines\n    and indentation."
INNER = obj({"n": {"title": "N", "type": "integer"}}, ["n"], title="Inner")
STRICT_GET_WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": obj({"city": STR}, ["city"], additionalProperties=False),
        "strict": True,
    },
}

PROVIDER_CASES = [
    ("pydantic", ProviderStrategy(Weather), PARIS, WEATHER_FORMAT),
    ("strict-false", ProviderStrategy(Weather, strict=False), PARIS, WEATHER_FORMAT),
    ("strict-true", ProviderStrategy(Weather, strict=True), PARIS, json_format(
        "Weather",
        {**WEATHER_SCHEMA, "additionalProperties": False},
        strict=True,
        description="A weather report.",
    )),
    ("cleaned-docstring", ProviderStrategy(Rich), {"city": "P"}, json_format(
        "Rich", obj(RICH_PROPERTIES, ["city"]), description=RICH_DESCRIPTION
    )),
    ("strict-makes-all-required", ProviderStrategy(Rich, strict=True), {"city": "P"}, json_format(
        "Rich",
        obj(RICH_PROPERTIES, ["city", "degrees", "note", "tags"], additionalProperties=False),
        strict=True,
        description=RICH_DESCRIPTION,
    )),
    ("nested-refs-kept", ProviderStrategy(Outer), {"inner": {"n": 1}, "items": []}, json_format(
        "Outer",
        obj(
            {
                "inner": {"$ref": "#/$defs/Inner"},
                "items": {"items": {"$ref": "#/$defs/Inner"}, "title": "Items", "type": "array"},
            },
            ["inner", "items"],
            **{"$defs": {"Inner": {**INNER, "description": "An inner thing."}}},
        ),
        description="Holds inner things.",
    )),
    ("dataclass", ProviderStrategy(Point), {"x": 1, "y": 2}, json_format(
        "Point",
        obj({"x": {"title": "X", "type": "integer"}, "y": {"title": "Y", "type": "integer"}},
            ["x", "y"]),
        description="A point.",
    )),
    ("dataclass-no-docstring", ProviderStrategy(BarePoint), {"x": 1}, json_format(
        "BarePoint", obj({"x": {"title": "X", "type": "integer"}}, ["x"])
    )),
    ("typeddict", ProviderStrategy(Movie), {"title": "Up", "year": 1}, json_format(
        "Movie",
        obj({"title": {"title": "Title", "type": "string"},
             "year": {"title": "Year", "type": "integer"}}, ["title", "year"]),
        description="A movie.",
    )),
    ("json-schema", ProviderStrategy(CONTACT), {"name": "Ann"}, json_format(
        "contact", obj({"email": STR, "name": STR}, ["name"]), description="A contact card."
    )),
    ("json-schema-title-only", ProviderStrategy(CONTACT_TITLE_ONLY), {"name": "Ann"}, json_format(
        "contact", obj({"name": STR}, ["name"])
    )),
]  # fmt: skip


@pytest.mark.parametrize(
    ("strategy", "reply", "response_format"),
    [case[1:] for case in PROVIDER_CASES],
    ids=[case[0] for case in PROVIDER_CASES],
)
def test_provider_strategy_requests(
    strategy: ProviderStrategy[Any],
    reply: dict[str, Any],
    response_format: dict[str, Any],
    how_call: str,
    stub: OpenAIStub,
) -> None:
    stub.script(json_reply(reply))

    run_agent(create_agent(chat(stub), response_format=strategy), how_call, QUESTION)

    [request] = stub.requests
    langchain_sends = {"response_format": response_format, "tools": []}
    assert offered(request) == without_empty_tools(langchain_sends)


@pytest.mark.parametrize(
    ("strict", "response_format"),
    [
        (None, WEATHER_FORMAT),
        (
            True,
            json_format(
                "Weather",
                {**WEATHER_SCHEMA, "additionalProperties": False},
                strict=True,
                description="A weather report.",
            ),
        ),
    ],
    ids=["default", "strict"],
)
def test_provider_strategy_with_tools_declares_them_strict(
    strict: bool | None, response_format: dict[str, Any], how_call: str, stub: OpenAIStub
) -> None:
    stub.script(json_reply(PARIS))
    strategy = ProviderStrategy(Weather, strict=strict)

    run_agent(create_agent(chat(stub), [get_weather], response_format=strategy), how_call, QUESTION)

    [request] = stub.requests
    assert offered(request) == {"response_format": response_format, "tools": [STRICT_GET_WEATHER]}


# A bare schema or AutoStrategy: native output when the model's profile or name says so

AUTO_CASES = [
    ("gpt-test", False),
    ("gpt-3.5-turbo", False),
    ("gpt-4o", True),
    ("gpt-5", True),
    ("gpt-4.1-2025-04-14", True),
    ("openai/gpt-4o-custom", True),
]


@pytest.mark.parametrize("wrap", [False, True], ids=["bare-schema", "AutoStrategy"])
@pytest.mark.parametrize(("model", "native"), AUTO_CASES, ids=[m for m, _ in AUTO_CASES])
def test_auto_strategy_requests(
    model: str, native: bool, wrap: bool, how_call: str, stub: OpenAIStub
) -> None:
    stub.script(json_reply(PARIS) if native else tool_calls(call("Weather", PARIS)))
    response_format = AutoStrategy(Weather) if wrap else Weather

    result = run_agent(
        create_agent(chat(stub, model), response_format=response_format), how_call, QUESTION
    )

    assert result["structured_response"] == Weather(**PARIS)
    [request] = stub.requests
    if native:
        langchain_sends = {"response_format": WEATHER_FORMAT, "tools": []}
    else:
        langchain_sends = {"tool_choice": "required", "tools": [WEATHER_TOOL]}
    assert offered(request) == without_empty_tools(langchain_sends)


def test_auto_strategy_on_a_native_model_with_tools(how_call: str, stub: OpenAIStub) -> None:
    stub.script(json_reply(PARIS))
    agent = create_agent(chat(stub, "gpt-4o"), [get_weather], response_format=Weather)

    run_agent(agent, how_call, QUESTION)

    [request] = stub.requests
    assert offered(request) == {"response_format": WEATHER_FORMAT, "tools": [STRICT_GET_WEATHER]}


@pytest.mark.parametrize(
    ("schema", "reply", "response_format"),
    [
        (
            CONTACT,
            {"name": "Ann"},
            json_format(
                "contact", obj({"email": STR, "name": STR}, ["name"]), description="A contact card."
            ),
        ),
        (
            Point,
            {"x": 1, "y": 2},
            json_format(
                "Point",
                obj(
                    {
                        "x": {"title": "X", "type": "integer"},
                        "y": {"title": "Y", "type": "integer"},
                    },
                    ["x", "y"],
                ),
                description="A point.",
            ),
        ),
    ],
    ids=["json-schema", "dataclass"],
)
def test_auto_strategy_for_other_schema_kinds(
    schema: Any, reply: dict[str, Any], response_format: dict[str, Any], stub: OpenAIStub
) -> None:
    stub.script(json_reply(reply))

    create_agent(chat(stub, "gpt-4o"), response_format=schema).invoke(QUESTION)

    [request] = stub.requests
    assert offered(request) == without_empty_tools(
        {"response_format": response_format, "tools": []}
    )


# Streaming changes nothing in the request but the stream flag

STREAM_CASES = [
    ("tool", ToolStrategy(Weather), tool_calls(call("Weather", PARIS)),
     {"tool_choice": "required", "tools": [WEATHER_TOOL]}),
    ("provider", ProviderStrategy(Weather), json_reply(PARIS),
     without_empty_tools({"response_format": WEATHER_FORMAT, "tools": []})),
]  # fmt: skip


@pytest.mark.parametrize("how", ["stream", "astream"])
@pytest.mark.parametrize(
    ("strategy", "reply", "langchain_sends"),
    [case[1:] for case in STREAM_CASES],
    ids=[case[0] for case in STREAM_CASES],
)
def test_streaming_sends_the_same_request(
    strategy: Any, reply: Reply, langchain_sends: dict[str, Any], how: str, stub: OpenAIStub
) -> None:
    stub.script(reply)
    agent = create_agent(chat(stub), response_format=strategy)

    modes = ["messages", "values"]
    if how == "stream":
        parts = list(agent.stream(QUESTION, stream_mode=modes))
    else:

        async def collect() -> list[Any]:
            return [part async for part in agent.astream(QUESTION, stream_mode=modes)]

        parts = asyncio.run(collect())

    assert [p for m, p in parts if m == "values"][-1]["structured_response"] == Weather(**PARIS)
    [request] = stub.requests
    assert request["stream"] is True
    assert offered(request) == langchain_sends
