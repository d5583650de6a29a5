"""LangChain 1.5's ``langchain.agents.structured_output``: a JSON-schema dict without a
``title`` is accepted, named ``response_format_<suffix>`` as LangChain names it (the suffix is
derived from the schema, so it is the same on every run)."""

from __future__ import annotations

import re
from typing import Any

from graphagent import create_agent
from graphagent.structured_output import ToolStrategy
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
