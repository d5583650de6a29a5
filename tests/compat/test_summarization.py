"""LangChain 1.5's ``SummarizationMiddleware`` arguments: the deprecated
``max_tokens_before_summary`` / ``messages_to_keep`` still work, with a warning naming the
replacement."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

from graphagent import create_agent
from graphagent.middleware import SummarizationMiddleware
from graphagent.testing import ScriptedChatModel
from tests.conftest import run_agent


def history(turns: int) -> list[AnyMessage]:
    messages: list[AnyMessage] = []
    for n in range(turns):
        messages += [HumanMessage(f"Note {n}."), AIMessage(f"Noted {n}.")]
    return [*messages, HumanMessage("Sum up.")]


def one_token_each(messages: list[AnyMessage]) -> int:
    return len(messages)


def test_the_deprecated_arguments_warn_and_mean_trigger_and_keep(how_call: str) -> None:
    with (
        pytest.warns(DeprecationWarning, match=r"max_tokens_before_summary.*trigger=\('tokens'"),
        pytest.warns(DeprecationWarning, match=r"messages_to_keep.*keep=\('messages'"),
    ):
        middleware = SummarizationMiddleware(
            ScriptedChatModel(["summary"]),
            max_tokens_before_summary=5,
            messages_to_keep=3,
            token_counter=one_token_each,
        )
    assert (middleware.trigger, middleware.keep) == (("tokens", 5), ("messages", 3))
    agent = create_agent(ScriptedChatModel(["done"]), [], middleware=[middleware])

    result = run_agent(agent, how_call, {"messages": history(3)})

    # The summary, the three kept messages, then the reply.
    summary, *rest = result["messages"]
    assert summary.text.endswith("summary")
    assert [m.text for m in rest] == ["Note 2.", "Noted 2.", "Sum up.", "done"]


def test_explicit_trigger_and_keep_win_over_the_deprecated_arguments() -> None:
    with pytest.warns(DeprecationWarning, match="is deprecated"):
        middleware = SummarizationMiddleware(
            ScriptedChatModel(["summary"]),
            trigger=("messages", 50),
            keep=("messages", 7),
            max_tokens_before_summary=5,
            messages_to_keep=3,
        )

    assert (middleware.trigger, middleware.keep) == (("messages", 50), ("messages", 7))
