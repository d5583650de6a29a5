"""Structured output through ToolStrategy, ProviderStrategy, AutoStrategy and plain schemas."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from graphagent import GraphAgentError, create_agent
from graphagent.middleware import ModelRequest, wrap_model_call
from graphagent.structured_output import (
    AutoStrategy,
    MultipleStructuredOutputsError,
    ProviderStrategy,
    StructuredOutputError,
    StructuredOutputValidationError,
    ToolStrategy,
)
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run, run_agent


class Weather(BaseModel):
    """The weather in a city."""

    city: str
    celsius: int = Field(description="temperature")


@dataclass
class Point:
    x: int
    y: int


class Contact(TypedDict):
    name: str
    email: str


@tool
def lookup(city: str) -> str:
    """Look up the weather."""
    return f"{city}: 24C"


def test_tool_strategy_ends_with_the_structured_response(run: Run) -> None:
    model = ScriptedChatModel(
        [calls(("lookup", {"city": "Xi'an"})), calls(("Weather", {"city": "Xi'an", "celsius": 24}))]
    )
    agent = create_agent(model, [lookup], response_format=ToolStrategy(Weather))

    result = run(agent, {"messages": ["weather in Xi'an?"]})

    assert result["structured_response"] == Weather(city="Xi'an", celsius=24)
    final = result["messages"][-1]
    assert isinstance(final, ToolMessage)
    assert final.content == 'Returning structured response: city="Xi\'an" celsius=24'
    assert model.calls[0].tool_names == ("lookup", "Weather")
    assert model.calls[0].tool_choice == "any"
    assert model.call_count == 2


def test_invalid_output_goes_back_to_the_model(run: Run) -> None:
    model = ScriptedChatModel(
        [
            calls(("Weather", {"city": "Paris"})),
            calls(("Weather", {"city": "Paris", "celsius": 18})),
        ]
    )
    agent = create_agent(model, response_format=ToolStrategy(Weather))

    result = run(agent, {"messages": ["weather?"]})

    error = result["messages"][2]
    assert isinstance(error, ToolMessage)
    assert error.status == "error"
    assert "celsius" in error.content
    assert model.calls[1].messages[-1] == error
    assert result["structured_response"].celsius == 18


@pytest.mark.parametrize(
    ("handle_errors", "expected"),
    [
        ("Try again, with every field.", "Try again, with every field."),
        (lambda exc: f"custom: {type(exc).__name__}", "custom: StructuredOutputValidationError"),
        (StructuredOutputValidationError, "Please fix your mistakes."),
    ],
)
def test_handle_errors_shapes_the_message(handle_errors: Any, expected: str, how_call: str) -> None:
    model = ScriptedChatModel(
        [calls(("Weather", {})), calls(("Weather", {"city": "a", "celsius": 1}))]
    )
    agent = create_agent(model, response_format=ToolStrategy(Weather, handle_errors=handle_errors))

    result = run_agent(agent, how_call, {"messages": ["q"]})

    assert expected in result["messages"][2].content


def test_handle_errors_false_raises(how_call: str) -> None:
    model = ScriptedChatModel([calls(("Weather", {"city": "a"}))])
    agent = create_agent(model, response_format=ToolStrategy(Weather, handle_errors=False))
    with pytest.raises(
        StructuredOutputValidationError, match="structured output for tool 'Weather'"
    ):
        run_agent(agent, how_call, {"messages": ["q"]})


def test_structured_output_errors_are_graphagent_errors(how_call: str) -> None:
    model = ScriptedChatModel([calls(("Weather", {"city": "a"}))])
    agent = create_agent(model, response_format=ToolStrategy(Weather, handle_errors=False))
    with pytest.raises(GraphAgentError) as info:
        run_agent(agent, how_call, {"messages": ["q"]})
    assert isinstance(info.value, StructuredOutputError)


def test_handle_errors_with_other_types_raises(how_call: str) -> None:
    model = ScriptedChatModel([calls(("Weather", {"city": "a"}))])
    strategy = ToolStrategy(Weather, handle_errors=(MultipleStructuredOutputsError,))
    with pytest.raises(StructuredOutputValidationError):
        run_agent(create_agent(model, response_format=strategy), how_call, {"messages": ["q"]})


def test_two_structured_calls_in_one_reply(run: Run) -> None:
    both = calls(("Weather", {"city": "a", "celsius": 1}), ("Weather", {"city": "b", "celsius": 2}))
    model = ScriptedChatModel([both, calls(("Weather", {"city": "a", "celsius": 1}))])
    result = run(create_agent(model, response_format=ToolStrategy(Weather)), {"messages": ["q"]})

    errors = result["messages"][2:4]
    assert all(m.status == "error" and "multiple structured responses" in m.content for m in errors)
    assert result["structured_response"].city == "a"

    strict = ToolStrategy(Weather, handle_errors=False)
    model = ScriptedChatModel([both])
    with pytest.raises(MultipleStructuredOutputsError):
        create_agent(model, response_format=strict).invoke({"messages": ["q"]})


def test_union_schemas_offer_one_tool_each(run: Run) -> None:
    model = ScriptedChatModel([calls(("Point", {"x": 1, "y": 2}))])
    agent = create_agent(model, response_format=ToolStrategy(Weather | Point))

    result = run(agent, {"messages": ["q"]})

    assert result["structured_response"] == Point(1, 2)
    assert model.calls[0].tool_names == ("Weather", "Point")


def test_typed_dict_and_json_schema(run: Run) -> None:
    model = ScriptedChatModel([calls(("Contact", {"name": "Ada", "email": "ada@example.com"}))])
    result = run(create_agent(model, response_format=ToolStrategy(Contact)), {"messages": ["q"]})
    assert result["structured_response"] == {"name": "Ada", "email": "ada@example.com"}

    schema = {
        "title": "Answer",
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
    }
    model = ScriptedChatModel([calls(("Answer", {})), calls(("Answer", {"n": 3}))])
    result = run(create_agent(model, response_format=ToolStrategy(schema)), {"messages": ["q"]})
    assert "missing required field(s) ['n']" in result["messages"][2].content
    assert result["structured_response"] == {"n": 3}


def test_tool_message_content_is_configurable(run: Run) -> None:
    model = ScriptedChatModel([calls(("Point", {"x": 0, "y": 0}))])
    strategy = ToolStrategy(Point, tool_message_content="Got it.")
    result = run(create_agent(model, response_format=strategy), {"messages": ["q"]})
    assert result["messages"][-1].content == "Got it."


def test_provider_strategy_parses_native_json(run: Run) -> None:
    model = ScriptedChatModel([json.dumps({"city": "Oslo", "celsius": -3})])
    agent = create_agent(model, response_format=ProviderStrategy(Weather, strict=True))

    result = run(agent, {"messages": ["q"]})

    assert result["structured_response"] == Weather(city="Oslo", celsius=-3)
    response_format = model.calls[0].settings["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "Weather"
    assert response_format["json_schema"]["strict"] is True
    assert isinstance(result["messages"][-1], AIMessage)


def test_provider_strategy_invalid_json_raises(how_call: str) -> None:
    agent = create_agent(ScriptedChatModel(["not json"]), response_format=ProviderStrategy(Weather))
    with pytest.raises(StructuredOutputValidationError):
        run_agent(agent, how_call, {"messages": ["q"]})


class BadRequestError(Exception):
    status_code = 400


def test_a_provider_rejecting_native_output_names_the_fix(how_call: str) -> None:
    def refuse(messages: Any) -> str:
        raise BadRequestError("This response_format type is unavailable now")

    agent = create_agent(ScriptedChatModel([refuse]), response_format=ProviderStrategy(Weather))
    with pytest.raises(StructuredOutputError, match=r"use response_format=ToolStrategy\(schema\)"):
        run_agent(agent, how_call, {"messages": ["q"]})


def test_plain_schema_picks_by_model_profile(how_call: str) -> None:
    native = ScriptedChatModel([json.dumps({"x": 1, "y": 1})], profile={"structured_output": True})
    result = run_agent(create_agent(native, response_format=Point), how_call, {"messages": ["q"]})
    assert result["structured_response"] == Point(1, 1)
    assert "response_format" in native.calls[0].settings

    plain = ScriptedChatModel([calls(("Point", {"x": 2, "y": 2}))])
    result = run_agent(
        create_agent(plain, response_format=AutoStrategy(Point)), how_call, {"messages": ["q"]}
    )
    assert result["structured_response"] == Point(2, 2)
    assert plain.calls[0].tool_names == ("Point",)


def test_wrap_model_call_sees_and_overrides_the_format(run: Run) -> None:
    seen: list[Any] = []

    @wrap_model_call
    def switch(request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        seen.append(request.response_format)
        return handler(request.override(response_format=ToolStrategy(Point)))

    model = ScriptedChatModel([calls(("Point", {"x": 5, "y": 6}))])
    result = run(
        create_agent(model, response_format=ToolStrategy(Weather), middleware=[switch]),
        {"messages": ["q"]},
    )

    assert seen == [ToolStrategy(Weather)]
    assert result["structured_response"] == Point(5, 6)


def test_wrappers_see_the_structured_response(run: Run) -> None:
    seen: list[Any] = []

    @wrap_model_call
    def observe(request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        response = handler(request)
        seen.append(response.structured_response)
        return response

    model = ScriptedChatModel([calls(("Point", {"x": 1, "y": 2}))])
    run(create_agent(model, response_format=Point, middleware=[observe]), {"messages": ["q"]})
    assert seen == [Point(1, 2)]


@pytest.mark.parametrize(
    ("response_format", "message"),
    [
        (42, "AutoStrategy cannot use 42 as a schema"),
        (list[int], "cannot use list[int] as a schema"),
    ],
)
def test_unusable_formats_fail_at_build_time(response_format: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        create_agent(ScriptedChatModel([]), response_format=response_format)


def test_provider_strategy_takes_one_schema() -> None:
    with pytest.raises(TypeError, match="ProviderStrategy takes one schema"):
        ProviderStrategy(Weather | Point)
