"""LangChain 1.5's ``model_call_limit``: the count fields, the "end" message and jump, and
``exit_behavior="error"`` raising ``ModelCallLimitExceededError``, in LangChain's words."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from graphagent import MiddlewareError, create_agent
from graphagent.middleware import ModelCallLimitMiddleware
from graphagent.middleware.model_call_limit import ModelCallLimitExceededError
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent

CONFIG = {"configurable": {"thread_id": "t"}}


@tool
def search(q: str) -> str:
    """Search."""
    return f"found {q}"


def runaway() -> ScriptedChatModel:
    return ScriptedChatModel([calls(("search", {"q": "more"}))], repeat_last=True)


def test_end_stops_with_langchains_message_and_counts(how_call: str) -> None:
    limiter = ModelCallLimitMiddleware(thread_limit=2, run_limit=2)
    agent = create_agent(runaway(), [search], middleware=[limiter], checkpointer=InMemorySaver())

    result = run_agent(agent, how_call, {"messages": ["go"]}, config=CONFIG)

    last = result["messages"][-1]
    assert isinstance(last, AIMessage)
    assert last.content == "Model call limits exceeded: thread limit (2/2), run limit (2/2)"
    values = agent.get_state(CONFIG).values
    assert (values["thread_model_call_count"], values["run_model_call_count"]) == (2, 2)


def test_error_raises_model_call_limit_exceeded_error(how_call: str) -> None:
    agent = create_agent(
        runaway(),
        [search],
        middleware=[ModelCallLimitMiddleware(run_limit=1, exit_behavior="error")],
    )

    with pytest.raises(ModelCallLimitExceededError) as caught:
        run_agent(agent, how_call, {"messages": ["go"]})

    assert str(caught.value) == "Model call limits exceeded: run limit (1/1)"
    assert (caught.value.run_count, caught.value.run_limit) == (1, 1)


@pytest.mark.parametrize(
    ("kwargs", "start"),
    [
        ({}, "At least one limit must be specified (thread_limit or run_limit)"),
        (
            {"run_limit": 1, "exit_behavior": "continue"},
            "Invalid exit_behavior: continue. Must be 'end' or 'error'",
        ),
    ],
)
def test_bad_options_raise_value_error_in_langchains_words(
    kwargs: dict[str, Any], start: str
) -> None:
    with pytest.raises(ValueError) as caught:  # noqa: PT011 - the message is checked below
        ModelCallLimitMiddleware(**kwargs)

    assert isinstance(caught.value, MiddlewareError)
    assert str(caught.value).startswith(start)
    assert "ModelCallLimitMiddleware" in str(caught.value)
