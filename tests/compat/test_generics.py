"""LangChain 1.5.2's generic types are generic in graphagent too, and only those: code built on
LangChain writes ``Callable[[ModelRequest[ContextT]], ModelResponse[ResponseT]]`` and
``ResponseFormat[Any]`` at import time (deepagents does), and subscripting a type that is not
generic fails there. A subscripted class builds the same object as the bare one."""

from __future__ import annotations

from typing import Any, NotRequired, get_args

import pytest
from langchain_core.messages import AIMessage
from langgraph.types import Command
from pydantic import BaseModel

from graphagent import create_agent
from graphagent.middleware import types
from graphagent.middleware.base import AgentMiddleware
from graphagent.requests import ExtendedModelResponse, ModelResponse
from graphagent.state import AgentState
from graphagent.structured_output import (
    AutoStrategy,
    ProviderStrategy,
    ResponseFormat,
    ToolStrategy,
)
from graphagent.testing import ScriptedChatModel


class Answer(BaseModel):
    text: str


# The names of langchain.agents.middleware.types and langchain.agents.structured_output that
# LangChain 1.5.2 makes generic, and how many type parameters each takes.
GENERIC = {
    "ModelRequest": 1,
    "ModelResponse": 1,
    "ExtendedModelResponse": 1,
    "ModelCallResult": 1,
    "AgentState": 1,
    "OutputAgentState": 1,
    "AgentMiddleware": 3,
}
GENERIC_OUTPUT = {
    "ToolStrategy": 1,
    "ProviderStrategy": 1,
    "AutoStrategy": 1,
    "OutputToolBinding": 1,
    "ProviderStrategyBinding": 1,
    "ResponseFormat": 1,
}
NOT_GENERIC = ("InputAgentState", "OmitFromSchema", "ToolCallRequest", "TracePolicy")


@pytest.mark.parametrize(("name", "count"), GENERIC.items())
def test_each_generic_type_of_the_types_module_takes_its_parameters(name: str, count: int) -> None:
    value = getattr(types, name)
    subscripted = value[(int,) * count] if count > 1 else value[int]  # a TypeError if not generic

    assert len(value.__parameters__) == count
    assert subscripted.__parameters__ == ()


@pytest.mark.parametrize(("name", "count"), GENERIC_OUTPUT.items())
def test_each_structured_output_strategy_is_generic_in_its_schema(name: str, count: int) -> None:
    import graphagent.structured_output as module

    value = getattr(module, name)
    assert len(value.__parameters__) == count
    assert value[Answer] is not None


@pytest.mark.parametrize("name", NOT_GENERIC)
def test_the_types_langchain_keeps_plain_are_plain(name: str) -> None:
    value = getattr(types, name)
    assert not getattr(value, "__parameters__", ())


def test_a_subscripted_response_builds_the_same_record() -> None:
    reply = AIMessage("hi")
    response = ModelResponse[Answer](result=[reply], structured_response=Answer(text="hi"))
    extended = ExtendedModelResponse[Answer](response, Command(update={"n": 1}))

    assert response == ModelResponse(result=[reply], structured_response=Answer(text="hi"))
    assert extended.model_response is response
    response.result = []  # its fields may be set, as LangChain's may
    assert response.result == []


def test_a_subscripted_request_and_strategies_build_as_the_bare_ones() -> None:
    request = types.ModelRequest[dict[str, Any]](model=ScriptedChatModel([]), messages=[])
    assert request.tools == []
    assert ToolStrategy[Answer](Answer) == ToolStrategy(Answer)
    assert ProviderStrategy[Answer](Answer).schema is Answer
    assert isinstance(AutoStrategy[Answer](Answer), AutoStrategy)


def test_response_format_names_the_three_strategies_of_one_schema() -> None:
    assert set(get_args(ResponseFormat[Answer])) == {
        ToolStrategy[Answer],
        ProviderStrategy[Answer],
        AutoStrategy[Answer],
    }


def test_a_middleware_over_a_subscripted_state_builds_and_runs() -> None:
    class Noted(AgentState[Answer]):
        note: NotRequired[str]

    class Note(AgentMiddleware[Noted, None, Answer]):
        state_schema = Noted

        def before_model(self, state: Noted, runtime: Any) -> dict[str, Any]:
            return {"note": "seen"}

    agent = create_agent(ScriptedChatModel(["hi"]), middleware=[Note()])
    result = agent.invoke({"messages": [("user", "hello")]})

    assert result["note"] == "seen"


def test_kinds_of_the_other_names_follow_langchain() -> None:
    import inspect

    import graphagent.middleware as middleware
    import graphagent.structured_output as output

    # The hook decorators are functions, as LangChain's are; its model router is not generic.
    decorators = ("before_agent", "before_model", "after_model", "after_agent")
    for name in (*decorators, "wrap_model_call", "wrap_tool_call", "dynamic_prompt"):
        assert inspect.isfunction(getattr(middleware, name)), name
    assert middleware.ModelRouterMiddleware.__parameters__ == ()
    assert get_args(output.SchemaKind) == ("pydantic", "dataclass", "typeddict", "json_schema")
