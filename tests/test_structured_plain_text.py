"""A plain-text reply under ToolStrategy: by default (as in LangChain) the run ends with no
structured_response; on_plain_text="retry" asks the model once more, "error" raises."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from pydantic import BaseModel

from graphagent import create_agent
from graphagent.errors import MiddlewareError, RunawayRunError
from graphagent.middleware import ModelCallLimitMiddleware
from graphagent.structured_output import (
    MissingStructuredOutputError,
    StructuredOutputError,
    ToolStrategy,
)
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run, run_agent
from tests.tools import add

QUESTION = {"messages": [("user", "Weather in Oslo?")]}


class Weather(BaseModel):
    """The weather in a city."""

    city: str
    celsius: int


def test_by_default_a_plain_text_reply_ends_the_run_without_a_structured_response(
    run: Run,
) -> None:
    model = ScriptedChatModel(["It is cold in Oslo."])
    agent = create_agent(model, [add], response_format=ToolStrategy(Weather))

    result = run(agent, QUESTION)

    assert "structured_response" not in result
    assert result["messages"][-1].content == "It is cold in Oslo."
    assert model.call_count == 1


def test_retry_asks_the_model_once_more_in_the_same_model_call(run: Run) -> None:
    model = ScriptedChatModel(
        ["It is cold in Oslo.", calls(("Weather", {"city": "Oslo", "celsius": -3}))]
    )
    limit = ModelCallLimitMiddleware(run_limit=1, exit_behavior="error")
    strategy = ToolStrategy(Weather, on_plain_text="retry")
    agent = create_agent(model, [add], middleware=[limit], response_format=strategy)

    result = run(agent, QUESTION)

    assert result["structured_response"] == Weather(city="Oslo", celsius=-3)
    text, ask, answer, done = result["messages"][1:]
    assert isinstance(text, AIMessage)
    assert text.content == "It is cold in Oslo."
    assert isinstance(ask, HumanMessage)
    assert ask.content == (
        "Your reply was plain text, but this answer must be structured: call the tool 'Weather' "
        "with arguments that follow its schema."
    )
    assert isinstance(answer, AIMessage)
    assert answer.tool_calls[0]["name"] == "Weather"
    assert isinstance(done, ToolMessage)
    # The model saw its own reply and the request before it answered again.
    assert [m.type for m in model.calls[1].messages[-2:]] == ["ai", "human"]


def test_retry_raises_when_the_model_answers_in_plain_text_again(how_call: str) -> None:
    model = ScriptedChatModel(["It is cold.", "Still cold."])
    strategy = ToolStrategy(Weather, on_plain_text="retry")
    agent = create_agent(model, response_format=strategy)

    with pytest.raises(MissingStructuredOutputError) as caught:
        _run(agent, how_call)

    assert caught.value.ai_message is not None
    assert caught.value.ai_message.content == "Still cold."
    assert caught.value.tool_names == ["Weather"]
    assert model.call_count == 2


def test_error_raises_at_once(how_call: str) -> None:
    model = ScriptedChatModel(["It is cold."])
    agent = create_agent(model, response_format=ToolStrategy(Weather, on_plain_text="error"))

    with pytest.raises(
        StructuredOutputError,
        match=r"answered in plain text instead of calling "
        r"the tool 'Weather', so the run has no structured response",
    ) as caught:
        _run(agent, how_call)

    assert isinstance(caught.value, MissingStructuredOutputError)
    assert model.call_count == 1


def test_a_reply_calling_an_ordinary_tool_is_no_plain_text(how_call: str) -> None:
    model = ScriptedChatModel(
        [calls(("add", {"a": 1, "b": 2})), calls(("Weather", {"city": "Oslo", "celsius": 3}))]
    )
    strategy = ToolStrategy(Weather, on_plain_text="error")
    agent = create_agent(model, [add], response_format=strategy)

    result = _run(agent, how_call)

    assert result["structured_response"] == Weather(city="Oslo", celsius=3)


def test_an_unknown_choice_fails_when_the_strategy_is_made() -> None:
    with pytest.raises(MiddlewareError, match=r"on_plain_text='raise'\): on_plain_text must be"):
        ToolStrategy(Weather, on_plain_text="raise")  # type: ignore[arg-type]


def _run(agent: Any, how: str) -> Any:
    return run_agent(agent, how, QUESTION)


def test_the_run_ceiling_counts_the_retry_as_a_model_call(how_call: str) -> None:
    model = ScriptedChatModel(["It is cold.", calls(("Weather", {"city": "Oslo", "celsius": 1}))])
    strategy = ToolStrategy(Weather, on_plain_text="retry")
    agent = create_agent(model, response_format=strategy, max_model_calls=1)

    with pytest.raises(RunawayRunError, match="ceiling of 1 model call"):
        _run(agent, how_call)
    assert model.call_count == 1
