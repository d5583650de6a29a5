"""LangChain 1.5's ``langchain.agents.structured_output`` values: ``ToolStrategy.schema_specs``,
``ProviderStrategy.schema_spec`` and ``ProviderStrategy.to_model_kwargs()``, pinned as LangChain
1.5.0 computes them for the same schemas. A JSON-schema dict without a ``title`` is accepted and
named ``response_format_<suffix>`` as LangChain names it (the suffix is derived from the schema,
so it is the same on every run)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from pydantic import BaseModel
from typing_extensions import TypedDict

from graphagent import create_agent
from graphagent.structured_output import (
    OutputToolBinding,
    ProviderStrategy,
    ProviderStrategyBinding,
    ToolStrategy,
)
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent
from tests.weather import Weather

UNTITLED: dict[str, Any] = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
}


class Rich(BaseModel):
    __doc__ = "A rich report.\n\n    It has several lines\n        and indentation.\n    "

    city: str


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


CONTACT = {
    "title": "contact",
    "description": "A contact card.",
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}
WEATHER_JSON = {
    "description": "A weather report.",
    "properties": {
        "city": {"title": "City", "type": "string"},
        "degrees": {"title": "Degrees", "type": "integer"},
    },
    "required": ["city", "degrees"],
    "title": "Weather",
    "type": "object",
}
POINT_JSON = {
    "description": "A point.",
    "properties": {"x": {"title": "X", "type": "integer"}, "y": {"title": "Y", "type": "integer"}},
    "required": ["x", "y"],
    "title": "Point",
    "type": "object",
}


def described(spec: Any) -> dict[str, Any]:
    return {
        "name": spec.name,
        "description": spec.description,
        "schema": spec.schema,
        "schema_kind": spec.schema_kind,
        "json_schema": spec.json_schema,
        "strict": spec.strict,
    }


def spec(name: str, description: str, schema: Any, kind: str, json_schema: dict[str, Any]) -> Any:
    return {
        "name": name,
        "description": description,
        "schema": schema,
        "schema_kind": kind,
        "json_schema": json_schema,
        "strict": None,
    }


SPEC_CASES = [
    ("pydantic", Weather, [
        spec("Weather", "A weather report.", Weather, "pydantic", WEATHER_JSON),
    ]),
    ("raw-docstring", Rich, [spec(
        "Rich",
        "A rich report.\n\n    It has several lines\n        and indentation.\n    ",
        Rich,
        "pydantic",
        {
            "description": "A rich report.\n\nIt has several lines\n    and indentation.",
            "properties": {"city": {"title": "City", "type": "string"}},
            "required": ["city"],
            "title": "Rich",
            "type": "object",
        },
    )]),
    ("dataclass-no-docstring", BarePoint, [spec(
        "BarePoint",
        "BarePoint(x: 'int')",
        BarePoint,
        "dataclass",
        {
            "properties": {"x": {"title": "X", "type": "integer"}},
            "required": ["x"],
            "title": "BarePoint",
            "type": "object",
        },
    )]),
    ("typeddict", Movie, [spec(
        "Movie",
        "A movie.",
        Movie,
        "typeddict",
        {
            "description": "A movie.",
            "properties": {"title": {"title": "Title", "type": "string"}},
            "required": ["title"],
            "title": "Movie",
            "type": "object",
        },
    )]),
    ("json-schema", CONTACT, [spec("contact", "A contact card.", CONTACT, "json_schema", CONTACT)]),
    ("union", Weather | Point, [
        spec("Weather", "A weather report.", Weather, "pydantic", WEATHER_JSON),
        spec("Point", "A point.", Point, "dataclass", POINT_JSON),
    ]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("schema", "expected"), [c[1:] for c in SPEC_CASES], ids=[c[0] for c in SPEC_CASES]
)
def test_tool_strategy_schema_specs(schema: Any, expected: list[dict[str, Any]]) -> None:
    assert [described(s) for s in ToolStrategy(schema).schema_specs] == expected


def test_one_of_variants_are_specs_of_their_own() -> None:
    cat = {"title": "cat", "type": "object", "properties": {}, "description": "A cat."}
    dog = {"title": "dog", "type": "object", "properties": {}}

    specs = ToolStrategy({"oneOf": [cat, dog]}).schema_specs

    assert [described(s) for s in specs] == [
        spec("cat", "A cat.", cat, "json_schema", cat),
        spec("dog", "", dog, "json_schema", dog),
    ]


@pytest.mark.parametrize(
    ("strict", "extra"), [(None, {}), (False, {}), (True, {"strict": True})], ids=str
)
def test_provider_strategy_model_kwargs(strict: bool | None, extra: dict[str, Any]) -> None:
    strategy = ProviderStrategy(Weather, strict=strict)

    assert strategy.to_model_kwargs() == {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "Weather", "schema": WEATHER_JSON, **extra},
        }
    }
    expected_spec = spec("Weather", "A weather report.", Weather, "pydantic", WEATHER_JSON)
    assert described(strategy.schema_spec) == {**expected_spec, "strict": strict}


def test_provider_strategy_model_kwargs_for_a_json_schema() -> None:
    assert ProviderStrategy(CONTACT).to_model_kwargs() == {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "contact", "schema": CONTACT},
        }
    }


def tool_name_for(schema: dict[str, Any]) -> str:
    model = ScriptedChatModel(["probe"])
    create_agent(model, response_format=ToolStrategy(schema)).invoke({"messages": ["q"]})
    (name,) = model.calls[0].tool_names
    return name


def test_an_untitled_json_schema_is_named_like_langchains(how_call: str) -> None:
    name = tool_name_for(UNTITLED)
    assert re.fullmatch(r"response_format_[0-9a-f]{4}", name)
    assert tool_name_for(dict(UNTITLED)) == name  # the same schema, the same name
    model = ScriptedChatModel([calls((name, {"n": 3}))])
    agent = create_agent(model, response_format=ToolStrategy(UNTITLED))

    result = run_agent(agent, how_call, {"messages": ["q"]})

    assert result["structured_response"] == {"n": 3}


def test_an_untitled_schema_works_as_a_plain_response_format(how_call: str) -> None:
    model = ScriptedChatModel([calls((tool_name_for(UNTITLED), {"n": 5}))])
    agent = create_agent(model, response_format=UNTITLED)

    result = run_agent(agent, how_call, {"messages": ["q"]})

    assert result["structured_response"] == {"n": 5}


def test_model_kwargs_are_what_the_model_is_bound_with(how_call: str) -> None:
    strategy = ProviderStrategy(CONTACT, strict=True)
    model = ScriptedChatModel(['{"name": "Ann"}'])

    result = run_agent(create_agent(model, response_format=strategy), how_call, {"messages": ["q"]})

    assert result["structured_response"] == {"name": "Ann"}
    assert model.calls[0].settings == strategy.to_model_kwargs()


def test_an_untitled_schema_is_bound_with_its_name_as_title(how_call: str) -> None:
    strategy = ProviderStrategy(UNTITLED)
    name = strategy.schema_spec.name
    model = ScriptedChatModel(['{"n": 1}'])

    result = run_agent(create_agent(model, response_format=strategy), how_call, {"messages": ["q"]})

    assert result["structured_response"] == {"n": 1}
    assert strategy.to_model_kwargs()["response_format"]["json_schema"]["schema"] == UNTITLED
    assert model.calls[0].settings["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": {"title": name, **UNTITLED}},
    }


def test_an_output_tool_binding_offers_the_schema_tool_and_parses_its_arguments() -> None:
    [spec] = ToolStrategy(Weather).schema_specs
    binding = OutputToolBinding.from_schema_spec(spec)

    assert (binding.schema, binding.schema_kind) == (Weather, "pydantic")
    assert (binding.tool.name, binding.tool.description) == ("Weather", "A weather report.")
    assert binding.parse({"city": "Paris", "degrees": 21}) == Weather(city="Paris", degrees=21)
    with pytest.raises(ValueError, match=r"^Failed to parse data to Weather: "):
        binding.parse({"city": "Paris"})


def test_an_output_tool_binding_of_a_json_schema_returns_the_dict() -> None:
    binding = OutputToolBinding.from_schema_spec(ToolStrategy(UNTITLED).schema_specs[0])

    assert binding.schema_kind == "json_schema"
    assert binding.parse({"n": 3}) == {"n": 3}


def test_a_provider_strategy_binding_parses_the_replys_json() -> None:
    binding = ProviderStrategyBinding.from_schema_spec(ProviderStrategy(Weather).schema_spec)

    assert (binding.schema, binding.schema_kind) == (Weather, "pydantic")
    reply = AIMessage([{"type": "text", "text": '{"city": "Oslo", '}, '"degrees": 4}'])
    assert binding.parse(reply) == Weather(city="Oslo", degrees=4)
    with pytest.raises(
        ValueError, match=r"^Native structured output expected valid JSON for Weather"
    ):
        binding.parse(AIMessage("sunny"))


@pytest.mark.parametrize(
    "make", [lambda: ToolStrategy(42), lambda: ProviderStrategy(Weather | Rich)]
)
def test_an_unsupported_schema_is_langchains_value_error(make: Any) -> None:
    with pytest.raises(ValueError, match=r"^Unsupported schema type: <class "):
        make()


@pytest.mark.parametrize(
    ("schema", "name"),
    [
        ({"type": "json_schema", "schema": {}}, None),
        ({"title": 3, "type": "object"}, "3"),
        ({"title": "Numbers", "type": "array", "items": {"type": "integer"}}, "Numbers"),
    ],
    ids=["not a schema of an object", "a number as title", "an array"],
)
def test_any_json_schema_dict_is_taken_as_given(schema: dict[str, Any], name: str | None) -> None:
    # LangChain builds such agents; what the schema describes is for the provider to judge.
    create_agent(ScriptedChatModel([]), response_format=schema)
    [spec] = ToolStrategy(schema).schema_specs
    assert (spec.kind, spec.json_schema) == ("json_schema", schema)
    assert spec.name == name or re.fullmatch(r"response_format_[0-9a-f]{4}", spec.name)


def test_the_answer_to_a_schema_of_no_object_is_kept_as_it_came(how_call: str) -> None:
    numbers = {"title": "Numbers", "type": "array", "items": {"type": "integer"}}
    model = ScriptedChatModel(["[1, 2, 3]"])
    agent = create_agent(model, response_format=ProviderStrategy(numbers))

    result = run_agent(agent, how_call, {"messages": ["q"]})

    assert result["structured_response"] == [1, 2, 3]
