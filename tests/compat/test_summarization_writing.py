"""How ``SummarizationMiddleware`` writes a summary, as LangChain 1.5 does: a prompt that
overflows the summary model's window is retried once with the middle of the history left out
(sized to the summarizer's own window), transient failures are retried up to three attempts,
model ids go through the module's ``init_chat_model`` when the middleware is built, and an
empty history needs no model."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.exceptions import ContextOverflowError, ModelAuthenticationError
from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage

from graphagent import create_agent
from graphagent.middleware import SummarizationMiddleware, summarization as summarization_module
from graphagent.testing import ScriptedChatModel
from tests.conftest import run_agent


def long_history() -> list[AnyMessage]:
    return [HumanMessage(f"turn-{n} " * 500) for n in range(10)]


def fits_in(max_chars: int, prompts: list[str]) -> Any:
    """A scripted reply that overflows on prompts longer than ``max_chars``."""

    def reply(messages: list[BaseMessage]) -> str:
        prompts.append(messages[-1].text)
        if len(prompts[-1]) > max_chars:
            raise ContextOverflowError("prompt is too long")
        return "Summary."

    return reply


def test_an_overflowing_prompt_is_retried_with_the_middle_left_out(how_call: str) -> None:
    prompts: list[str] = []
    model = ScriptedChatModel([fits_in(25_000, prompts)], repeat_last=True)
    middleware = SummarizationMiddleware(
        model, trigger=("messages", 10), keep=("messages", 1), trim_tokens_to_summarize=None
    )
    agent = create_agent(ScriptedChatModel(["done"]), [], middleware=[middleware])

    result = run_agent(agent, how_call, {"messages": long_history()})

    assert result["messages"][0].text.endswith("\n\nSummary.")
    assert len(prompts) == 2
    retry = prompts[1]
    assert "turn-0" in retry  # the start, where the task is stated
    assert "turn-4" not in retry  # the middle
    assert "turn-8" in retry  # the latest of the summarized messages
    assert len(retry) < len(prompts[0]) * 0.6


def test_an_overflow_that_persists_is_raised(how_call: str) -> None:
    prompts: list[str] = []
    model = ScriptedChatModel([fits_in(10, prompts)], repeat_last=True)
    middleware = SummarizationMiddleware(
        model, trigger=("messages", 10), keep=("messages", 1), trim_tokens_to_summarize=None
    )
    agent = create_agent(ScriptedChatModel(["done"]), [], middleware=[middleware])

    with pytest.raises(ContextOverflowError):
        run_agent(agent, how_call, {"messages": long_history()})
    assert len(prompts) == 2


def test_the_retry_fits_the_summarizers_window() -> None:
    open_prompts: list[str] = []
    capped_prompts: list[str] = []
    open_writer = ScriptedChatModel([fits_in(25_000, open_prompts)], repeat_last=True)
    capped_writer = ScriptedChatModel(
        [fits_in(25_000, capped_prompts)], repeat_last=True, profile={"max_input_tokens": 1000}
    )
    for writer in (open_writer, capped_writer):
        middleware = SummarizationMiddleware(
            ScriptedChatModel([]), trim_tokens_to_summarize=None, summarizer=writer
        )
        assert middleware._create_summary(long_history()) == "Summary."

    assert "turn-9" in capped_prompts[1]
    assert len(capped_prompts[1]) < len(open_prompts[1])


def test_a_summarizer_model_writes_with_the_summary_prompt(how_call: str) -> None:
    never = ScriptedChatModel([])
    writer = ScriptedChatModel(["Summary."])
    middleware = SummarizationMiddleware(
        never,
        trigger=("messages", 3),
        keep=("messages", 1),
        summary_prompt="Summarize this: {messages}",
        summarizer=writer,
    )
    agent = create_agent(ScriptedChatModel(["done"]), [], middleware=[middleware])

    run_agent(agent, how_call, {"messages": [HumanMessage(f"m{n}") for n in range(3)]})

    assert middleware.summarizer is None  # no function or Runnable replaces the prompt
    assert writer.calls[0].messages[0].text.startswith("Summarize this: ")
    assert never.call_count == 0


def no_wait(middleware: SummarizationMiddleware) -> SummarizationMiddleware:
    middleware._summary_model.wait_exponential_jitter = False  # type: ignore[attr-defined]
    return middleware


def test_a_transient_failure_is_retried_up_to_three_attempts(how_call: str) -> None:
    attempts: list[int] = []

    def flaky(messages: list[BaseMessage]) -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise RuntimeError("429 Too Many Requests")
        return "Summary."

    model = ScriptedChatModel([flaky], repeat_last=True)
    middleware = no_wait(
        SummarizationMiddleware(model, trigger=("messages", 3), keep=("messages", 1))
    )
    agent = create_agent(ScriptedChatModel(["done"]), [], middleware=[middleware])

    result = run_agent(agent, how_call, {"messages": [HumanMessage(f"m{n}") for n in range(3)]})

    assert result["messages"][0].text.endswith("\n\nSummary.")
    assert len(attempts) == 3


def test_an_error_marked_final_is_not_retried(how_call: str) -> None:
    attempts: list[int] = []

    def refused(messages: list[BaseMessage]) -> str:
        attempts.append(1)
        raise ModelAuthenticationError("invalid api key")

    model = ScriptedChatModel([refused], repeat_last=True)
    middleware = no_wait(
        SummarizationMiddleware(model, trigger=("messages", 3), keep=("messages", 1))
    )
    agent = create_agent(ScriptedChatModel(["done"]), [], middleware=[middleware])

    with pytest.raises(ModelAuthenticationError):
        run_agent(agent, how_call, {"messages": [HumanMessage(f"m{n}") for n in range(3)]})
    assert len(attempts) == 1


def test_model_ids_are_built_by_the_modules_init_chat_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[str] = []
    writer = ScriptedChatModel(["Summary."])

    def fake_init(model: str) -> ScriptedChatModel:
        built.append(model)
        return writer

    monkeypatch.setattr(summarization_module, "init_chat_model", fake_init)
    middleware = SummarizationMiddleware("openai:gpt-4o", summarizer="openai:gpt-4o-mini")

    assert built == ["openai:gpt-4o", "openai:gpt-4o-mini"]
    assert middleware.model is writer


def test_an_empty_history_needs_no_model() -> None:
    model = ScriptedChatModel([])

    def summarizer(messages: list[AnyMessage]) -> str:
        raise AssertionError("not called")

    for middleware in (
        SummarizationMiddleware(model),
        SummarizationMiddleware(model, summarizer=summarizer),
    ):
        assert middleware._create_summary([]) == "No previous conversation history."
    assert model.call_count == 0


def test_the_summary_message_starts_with_langchains_words(how_call: str) -> None:
    middleware = SummarizationMiddleware(
        ScriptedChatModel(["They said hello."]), trigger=("messages", 3), keep=("messages", 1)
    )
    agent = create_agent(ScriptedChatModel(["done"]), [], middleware=[middleware])

    result = run_agent(agent, how_call, {"messages": [HumanMessage(f"m{n}") for n in range(3)]})

    summary = result["messages"][0]
    assert summary.text == "Here is a summary of the conversation to date:\n\nThey said hello."
    assert summary.additional_kwargs.get("lc_source") == "summarization"
