"""LangChain 1.5's ``SummarizationMiddleware`` arguments: the deprecated
``max_tokens_before_summary`` / ``messages_to_keep`` still work, with a warning naming the
replacement; ``summarizer`` writes the summaries in place of ``model``."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableLambda

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


def test_a_summarizer_model_writes_the_summary_in_place_of_model(how_call: str) -> None:
    model = ScriptedChatModel(["never asked"])
    writer = ScriptedChatModel(["  the notes  "])
    middleware = SummarizationMiddleware(
        model, trigger=("messages", 4), keep=("messages", 1), summarizer=writer
    )
    agent = create_agent(ScriptedChatModel(["done"]), [], middleware=[middleware])

    result = run_agent(agent, how_call, {"messages": history(2)})

    assert result["messages"][0].text.endswith("\n\nthe notes")
    assert (model.call_count, writer.call_count) == (0, 1)
    assert "Note 0." in writer.calls[0].messages[0].text  # prompted with summary_prompt


def summarize_sync(messages: list[AnyMessage]) -> str:
    return f"{len(messages)} old messages"


async def summarize_async(messages: list[AnyMessage]) -> str:
    return f"{len(messages)} old messages"


@pytest.mark.parametrize(
    "summarizer", [summarize_sync, summarize_async, RunnableLambda(summarize_sync)]
)
def test_a_summarizer_function_gets_the_old_messages(how_call: str, summarizer: Any) -> None:
    if how_call == "invoke" and summarizer is summarize_async:
        summarizer = summarize_sync  # an async function needs ainvoke (next test)
    model = ScriptedChatModel(["never asked"])
    middleware = SummarizationMiddleware(
        model, trigger=("messages", 4), keep=("messages", 1), summarizer=summarizer
    )
    agent = create_agent(ScriptedChatModel(["done"]), [], middleware=[middleware])

    result = run_agent(agent, how_call, {"messages": history(2)})

    assert result["messages"][0].text.endswith("\n\n4 old messages")
    assert model.call_count == 0
    # As in LangChain, a function is kept as the Runnable that calls it.
    assert isinstance(middleware.summarizer, RunnableLambda)


def test_an_async_summarizer_under_invoke_says_to_use_ainvoke() -> None:
    middleware = SummarizationMiddleware(
        ScriptedChatModel([]),
        trigger=("messages", 4),
        keep=("messages", 1),
        summarizer=summarize_async,
    )
    agent = create_agent(ScriptedChatModel(["done"]), [], middleware=[middleware])

    with pytest.raises(TypeError, match="ainvoke"):
        agent.invoke({"messages": history(2)})


def test_a_summarizer_returning_no_text_is_a_type_error(how_call: str) -> None:
    middleware = SummarizationMiddleware(
        ScriptedChatModel([]),
        trigger=("messages", 4),
        keep=("messages", 1),
        summarizer=lambda messages: 42,
    )
    agent = create_agent(ScriptedChatModel(["done"]), [], middleware=[middleware])

    with pytest.raises(TypeError, match="`summarizer` must return a str, got int"):
        run_agent(agent, how_call, {"messages": history(2)})


def test_a_summarizer_of_the_wrong_type_fails_when_built() -> None:
    with pytest.raises(TypeError, match="summarizer must be a chat model, a model id"):
        SummarizationMiddleware(ScriptedChatModel([]), summarizer=42)  # type: ignore[arg-type]
