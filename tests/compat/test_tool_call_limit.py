"""LangChain 1.5's ``tool_call_limit``: the count keys (the tool's name, ``"__all__"`` for every
tool), the counts, ``exit_behavior="error"`` raising ``ToolCallLimitExceededError``, and the
messages and jump of ``"end"`` and ``"continue"``."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from graphagent import MiddlewareError, create_agent
from graphagent.middleware import ToolCallLimitExceededError, ToolCallLimitMiddleware
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent

CONFIG = {"configurable": {"thread_id": "t"}}


@tool
def search(q: str) -> str:
    """Search."""
    return f"found {q}"


@tool
def calc(q: str) -> str:
    """Calculate."""
    return f"= {q}"


def agent_with(model: ScriptedChatModel, *limiters: ToolCallLimitMiddleware) -> Any:
    return create_agent(
        model, [search, calc], middleware=list(limiters), checkpointer=InMemorySaver()
    )


def counts(agent: Any) -> tuple[dict[str, int], dict[str, int]]:
    values = agent.get_state(CONFIG).values
    return values["thread_tool_call_count"], values["run_tool_call_count"]


def test_counts_are_keyed_by_tool_name_and_all(how_call: str) -> None:
    model = ScriptedChatModel(
        [calls(("search", {"q": "a"}), ("calc", {"q": "1"}), ("search", {"q": "b"})), "done"]
    )
    agent = agent_with(
        model,
        ToolCallLimitMiddleware(run_limit=10),
        ToolCallLimitMiddleware(tool_name="search", thread_limit=1),
    )

    run_agent(agent, how_call, {"messages": ["go"]}, config=CONFIG)

    thread, run = counts(agent)
    # 'search' lets one call through and refuses one (the run count includes it); the global
    # limiter sees the two calls still pending.
    assert thread == {"search": 1, "__all__": 2}
    assert run == {"search": 2, "__all__": 2}


def test_continue_refuses_the_excess_with_langchains_message(how_call: str) -> None:
    model = ScriptedChatModel([calls(("search", {"q": "a"}), ("search", {"q": "b"})), "done"])
    agent = agent_with(model, ToolCallLimitMiddleware(tool_name="search", run_limit=1))

    result = run_agent(agent, how_call, {"messages": ["go"]}, config=CONFIG)

    refused = [m for m in result["messages"] if isinstance(m, ToolMessage) and m.status == "error"]
    assert [m.content for m in refused] == ["Tool call limit exceeded. Do not call 'search' again."]
    assert result["messages"][-1].content == "done"
    assert counts(agent) == ({"search": 1}, {"search": 2})


def test_a_global_limiter_tells_the_model_to_stop_calling_tools(how_call: str) -> None:
    model = ScriptedChatModel([calls(("search", {"q": "a"})), "done"])
    agent = agent_with(model, ToolCallLimitMiddleware(run_limit=0))

    result = run_agent(agent, how_call, {"messages": ["go"]}, config=CONFIG)

    assert result["messages"][2].content == (
        "Tool call limit exceeded. Do not make additional tool calls."
    )


def test_end_answers_the_calls_adds_the_reason_and_ends(how_call: str) -> None:
    reply = calls(("search", {"q": "a"}), ("search", {"q": "b"}), ("calc", {"q": "1"}))
    model = ScriptedChatModel([reply, "never"])
    limiter = ToolCallLimitMiddleware(tool_name="search", run_limit=1, exit_behavior="end")
    agent = agent_with(model, limiter)

    result = run_agent(agent, how_call, {"messages": ["go"]}, config=CONFIG)

    assert model.call_count == 1
    answers = {m.tool_call_id: m.content for m in result["messages"] if isinstance(m, ToolMessage)}
    stopped = (
        "Execution stopped before this tool call could run because another tool call in the "
        "same batch exceeded the limit."
    )
    ids = [call["id"] for call in reply.tool_calls]
    assert answers == {
        ids[0]: stopped,
        ids[1]: "Tool call limit exceeded. Do not call 'search' again.",
        ids[2]: stopped,
    }
    last = result["messages"][-1]
    assert isinstance(last, AIMessage)
    assert last.content == "'search' tool call limit reached: run limit exceeded (2/1 calls)."
    # The thread count stays; the run count includes every call the model asked for.
    assert counts(agent) == ({"search": 0}, {"search": 2})


def test_error_raises_tool_call_limit_exceeded_error(how_call: str) -> None:
    model = ScriptedChatModel([calls(("search", {"q": "a"}), ("search", {"q": "b"}))])
    limiter = ToolCallLimitMiddleware(tool_name="search", thread_limit=1, exit_behavior="error")
    agent = agent_with(model, limiter)

    with pytest.raises(ToolCallLimitExceededError) as caught:
        run_agent(agent, how_call, {"messages": ["go"]}, config=CONFIG)

    error = caught.value
    assert (error.thread_count, error.run_count, error.tool_name) == (2, 2, "search")
    assert str(error) == "'search' tool call limit reached: thread limit exceeded (2/1 calls)."


@pytest.mark.parametrize(
    ("kwargs", "start"),
    [
        ({}, "At least one limit must be specified (thread_limit or run_limit)"),
        ({"run_limit": 1, "exit_behavior": "stop"}, "Invalid exit_behavior: 'stop'."),
        ({"thread_limit": 1, "run_limit": 2}, "run_limit (2) cannot exceed thread_limit (1)"),
    ],
)
def test_bad_options_raise_value_error_in_langchains_words(
    kwargs: dict[str, Any], start: str
) -> None:
    with pytest.raises(ValueError) as caught:  # noqa: PT011 - the message is checked below
        ToolCallLimitMiddleware(**kwargs)

    assert isinstance(caught.value, MiddlewareError)
    assert str(caught.value).startswith(start)
    assert "ToolCallLimitMiddleware" in str(caught.value)
