"""The private methods of LangChain's ``SummarizationMiddleware`` that libraries built on it
call (deepagents' summarization keeps one as a helper and asks it when to summarize, where to
cut and for the summary): they answer with graphagent's own rules."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from graphagent.middleware.summarization import (
    _DEFAULT_MESSAGES_TO_KEEP,
    _DEFAULT_TRIM_TOKEN_LIMIT,
    SummarizationMiddleware,
)
from graphagent.testing import ScriptedChatModel, tool_call

SUMMARY = "They talked."


def history(turns: int) -> list[AnyMessage]:
    messages: list[AnyMessage] = []
    for n in range(turns):
        messages += [HumanMessage(f"q{n}"), AIMessage(f"a{n}")]
    return messages


def middleware(**options: object) -> SummarizationMiddleware:
    model = ScriptedChatModel([SUMMARY], repeat_last=True, profile={"max_input_tokens": 1000})
    return SummarizationMiddleware(model, **options)  # type: ignore[arg-type]


def test_the_defaults_have_langchains_private_names() -> None:
    assert _DEFAULT_MESSAGES_TO_KEEP == 20
    assert _DEFAULT_TRIM_TOKEN_LIMIT == 4000
    summarizing = middleware()
    assert summarizing.keep == ("messages", _DEFAULT_MESSAGES_TO_KEEP)
    assert summarizing.trim_tokens_to_summarize == _DEFAULT_TRIM_TOKEN_LIMIT


def test_the_trigger_reads_as_clauses() -> None:
    assert middleware(trigger=("tokens", 300))._trigger_clauses == [{"tokens": 300}]
    listed = middleware(trigger=[("messages", 5), {"tokens": 200, "fraction": 0.5}])
    assert listed._trigger_clauses == [{"messages": 5}, {"tokens": 200, "fraction": 0.5}]
    assert middleware()._trigger_clauses == []


def test_should_summarize_takes_the_callers_token_count() -> None:
    by_tokens = middleware(trigger=("tokens", 300))
    assert by_tokens._should_summarize(history(1), 300)
    assert not by_tokens._should_summarize(history(1), 299)
    by_window = middleware(trigger={"fraction": 0.5, "messages": 4})
    assert by_window._should_summarize(history(2), 500)
    assert not by_window._should_summarize(history(1), 500)  # two messages only
    assert not middleware()._should_summarize(history(50), 10**6)  # no trigger: never


def test_the_cutoff_follows_keep_whatever_the_trigger() -> None:
    keeping_two = middleware(trigger=("messages", 1000), keep=("messages", 2))
    assert keeping_two._determine_cutoff_index(history(3)) == 4
    assert keeping_two._determine_cutoff_index(history(1)) == 0

    # A kept tool answer keeps the call it answers.
    call = AIMessage("", tool_calls=[tool_call("look", {}, id="c1")])
    messages = [HumanMessage("q"), AIMessage("a"), call, ToolMessage("x", tool_call_id="c1")]
    cut = keeping_two._determine_cutoff_index(messages)
    assert cut == 2
    old, kept = keeping_two._partition_messages(messages, cut)
    assert (old, kept) == (messages[:2], messages[2:])


def test_token_helpers_use_the_token_counter_and_the_profile() -> None:
    counted = middleware(token_counter=lambda messages: 7 * len(messages), keep=("tokens", 14))
    assert counted._partial_token_counter(history(2)) == 28
    assert counted._determine_cutoff_index(history(2)) == 2
    assert counted._get_profile_limits() == 1000
    assert counted._get_profile_limits(ScriptedChatModel([])) is None


def test_reported_tokens_count_only_from_the_summary_models_provider() -> None:
    summarizing = middleware()
    reply = AIMessage(
        "a",
        usage_metadata={"input_tokens": 900, "output_tokens": 100, "total_tokens": 1000},
        response_metadata={"model_provider": "scriptedchatmodel"},
    )
    other = reply.model_copy(update={"response_metadata": {"model_provider": "openai"}})
    assert summarizing._should_summarize_based_on_reported_tokens([reply], 1000)
    assert not summarizing._should_summarize_based_on_reported_tokens([reply], 1001)
    assert not summarizing._should_summarize_based_on_reported_tokens([other], 10)
    assert not summarizing._should_summarize_based_on_reported_tokens(history(1)[:1], 10)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_the_summary_is_written_as_before_model_writes_it(asynchronous: bool) -> None:
    summarizing = middleware()
    model = summarizing.model
    assert isinstance(model, ScriptedChatModel)
    if asynchronous:
        text = asyncio.run(summarizing._acreate_summary(history(2)))
        empty = asyncio.run(summarizing._acreate_summary([]))
    else:
        text, empty = summarizing._create_summary(history(2)), summarizing._create_summary([])

    assert text == SUMMARY
    assert "q1" in model.calls[0].messages[0].text  # the summary prompt holds the history
    assert empty == "No previous conversation history."  # LangChain's words; no model call
    assert len(model.calls) == 1
