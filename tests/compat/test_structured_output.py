"""LangChain 1.5's ``langchain.agents.structured_output``: a JSON-schema dict without a
``title`` is accepted, named ``response_format_<suffix>`` as LangChain names it (the suffix is
derived from the schema, so it is the same on every run); ``ToolStrategy.schema_specs``,
``ProviderStrategy.schema_spec`` and ``ProviderStrategy.to_model_kwargs()``."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel
from typing_extensions import TypedDict

from graphagent import create_agent
from graphagent.structured_output import ProviderStrategy, ToolStrategy
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent

UNTITLED: dict[str, Any] = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
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


class Point(TypedDict):
    x: int


class Weather(BaseModel):
    """The weather in a city."""

    city: str


def test_tool_strategy_schema_specs_describe_each_member() -> None:
    strategy = ToolStrategy(Weather | Point)  # type: ignore[operator]

    specs = strategy.schema_specs

    assert [(s.name, s.schema_kind, s.schema) for s in specs] == [
        ("Weather", "pydantic", Weather),
        ("Point", "typeddict", Point),
    ]
    assert specs[0].description == "The weather in a city."
    assert set(specs[0].json_schema["properties"]) == {"city"}


def test_provider_strategy_schema_spec_and_model_kwargs() -> None:
    strategy = ProviderStrategy(Weather, strict=True)

    spec = strategy.schema_spec
    kwargs = strategy.to_model_kwargs()

    assert (spec.name, spec.schema_kind, spec.strict, spec.schema) == (
        "Weather",
        "pydantic",
        True,
        Weather,
    )
    response_format = kwargs["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "Weather"
    assert response_format["json_schema"]["strict"] is True
    assert set(response_format["json_schema"]["schema"]["properties"]) == {"city"}


def test_model_kwargs_are_what_the_model_is_bound_with(how_call: str) -> None:
    strategy = ProviderStrategy(UNTITLED)
    model = ScriptedChatModel(['{"n": 1}'])

    result = run_agent(create_agent(model, response_format=strategy), how_call, {"messages": ["q"]})

    assert result["structured_response"] == {"n": 1}
    assert (
        model.calls[0].settings["response_format"] == strategy.to_model_kwargs()["response_format"]
    )
