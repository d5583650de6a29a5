"""SummarizationMiddleware: when it summarizes, what it keeps, what the models see, streaming."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from graphagent import create_agent
from graphagent.errors import MiddlewareError
from graphagent.middleware import summarization
from graphagent.middleware.summarization import (
    DEFAULT_SUMMARY_PROMPT,
    SUMMARY_HEADER,
    ContextSize,
    SummarizationMiddleware,
    TriggerClause,
)
from graphagent.testing import ScriptedChatModel, calls, tool_call
from tests.conftest import Run, run_agent

SUMMARY = "The user listed points 1 to 5."


def points_history() -> list[AnyMessage]:
    """The seed experiment's 11 messages: five remembered points, then a question."""
    history: list[AnyMessage] = []
    for n in range(1, 6):
        history += [HumanMessage(f"Remember point {n}."), AIMessage(f"Point {n} noted.")]
    return [*history, HumanMessage("Combine the points into one sentence.")]


def summarizer(*replies: str) -> ScriptedChatModel:
    return ScriptedChatModel(list(replies) or [SUMMARY], repeat_last=True)


def contents(messages: Sequence[BaseMessage]) -> list[str]:
    return [m.text for m in messages]


def per_message(tokens: int) -> Any:
    """A token counter charging ``tokens`` for each message."""
    return lambda messages: tokens * len(messages)


def test_the_seed_experiment_eleven_messages_become_four(run: Run) -> None:
    writer = summarizer()
    main = ScriptedChatModel(["Points 1 to 5 make one sentence."])
    middleware = SummarizationMiddleware(writer, trigger=("messages", 6), keep=("messages", 2))
    agent = create_agent(main, [], middleware=[middleware])

    result = run(agent, {"messages": points_history()})

    summary, *kept, reply = result["messages"]
    assert isinstance(summary, HumanMessage)
    assert summary.text == f"{SUMMARY_HEADER}\n\n{SUMMARY}"
    assert summary.additional_kwargs == {"lc_source": "summarization"}
    assert contents(kept) == ["Point 5 noted.", "Combine the points into one sentence."]
    assert reply.text == "Points 1 to 5 make one sentence."
    # The agent's model saw the summary and the kept messages, not the old ones.
    assert contents(main.calls[0].messages) == [summary.text, *contents(kept)]
    # The summary model read the old messages only, inside the default prompt.
    (prompt,) = writer.calls[0].messages
    assert prompt.text.startswith(DEFAULT_SUMMARY_PROMPT.partition("{messages}")[0])
    assert all(f"Remember point {n}." in prompt.text for n in range(1, 6))
    assert "Point 5 noted." not in prompt.text
    assert writer.call_count == 1


def test_below_the_trigger_nothing_changes(how_call: str) -> None:
    writer = summarizer()
    main = ScriptedChatModel(["ok"])
    middleware = SummarizationMiddleware(writer, trigger=("messages", 12), keep=("messages", 2))
    agent = create_agent(main, [], middleware=[middleware])

    result = run_agent(agent, how_call, {"messages": points_history()})

    assert len(result["messages"]) == 12
    assert writer.call_count == 0
    assert len(main.calls[0].messages) == 11


def test_without_a_trigger_it_never_summarizes(how_call: str) -> None:
    writer = summarizer()
    main = ScriptedChatModel(["ok"])
    middleware = SummarizationMiddleware(
        writer, keep=("messages", 1), token_counter=per_message(1000)
    )
    agent = create_agent(main, [], middleware=[middleware])

    result = run_agent(
        agent, how_call, {"messages": [m for _ in range(10) for m in points_history()]}
    )

    assert len(result["messages"]) == 111
    assert writer.call_count == 0


def test_the_cut_never_separates_a_tool_call_from_its_results(how_call: str) -> None:
    # keep=4 would naively start the kept part at the Rome ToolMessage, orphaning it; the
    # cut moves back to the AI message that made both calls.
    history: list[AnyMessage] = [
        HumanMessage("Compare Paris and Rome."),
        AIMessage("", tool_calls=[tool_call("weather", {"city": "Paris"}, id="paris")]),
        ToolMessage("Paris: 18C", tool_call_id="paris", name="weather"),
        AIMessage(
            "",
            tool_calls=[
                tool_call("weather", {"city": "Rome"}, id="rome"),
                tool_call("weather", {"city": "Oslo"}, id="oslo"),
            ],
        ),
        ToolMessage("Rome: 24C", tool_call_id="rome", name="weather"),
        ToolMessage("Oslo: 9C", tool_call_id="oslo", name="weather"),
        AIMessage("Rome is warmest."),
        HumanMessage("And coldest?"),
    ]
    writer = summarizer()
    main = ScriptedChatModel(["Oslo."])
    middleware = SummarizationMiddleware(writer, trigger=("messages", 8), keep=("messages", 4))
    agent = create_agent(main, [], middleware=[middleware])

    result = run_agent(agent, how_call, {"messages": history})

    seen = main.calls[0].messages
    assert contents(seen[1:]) == [
        "",
        "Rome: 24C",
        "Oslo: 9C",
        "Rome is warmest.",
        "And coldest?",
    ]
    assert [c["id"] for c in seen[1].tool_calls] == ["rome", "oslo"]  # type: ignore[attr-defined]
    prompt = writer.calls[0].messages[0].text
    assert "Paris: 18C" in prompt
    assert "Rome: 24C" not in prompt
    assert len(result["messages"]) == 7


def test_orphan_tool_results_at_the_cut_are_summarized(how_call: str) -> None:
    # A ToolMessage answering no call at all (left behind by an earlier edit) is not kept first.
    history: list[AnyMessage] = [
        HumanMessage("one"),
        AIMessage("two"),
        ToolMessage("stray result", tool_call_id="gone"),
        HumanMessage("three"),
    ]
    writer = summarizer()
    main = ScriptedChatModel(["ok"])
    middleware = SummarizationMiddleware(writer, trigger=("messages", 4), keep=("messages", 2))
    agent = create_agent(main, [], middleware=[middleware])

    run_agent(agent, how_call, {"messages": history})

    assert contents(main.calls[0].messages) == [f"{SUMMARY_HEADER}\n\n{SUMMARY}", "three"]
    assert "stray result" in writer.calls[0].messages[0].text


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"facts about {topic}"


def test_summarizes_before_every_model_call_within_one_run(how: str) -> None:
    writer = summarizer("Earlier: greetings.")
    main = ScriptedChatModel([calls(("lookup", {"topic": "owls"})), "Owls are nocturnal."])
    middleware = SummarizationMiddleware(writer, trigger=("messages", 5), keep=("messages", 3))
    agent = create_agent(main, [lookup], middleware=[middleware])
    history = [HumanMessage("hi"), AIMessage("hello"), HumanMessage("Tell me about owls.")]

    result = run_agent(agent, how, {"messages": history})

    assert len(main.calls[0].messages) == 3  # 3 messages: below the trigger
    assert contents(main.calls[1].messages) == [
        f"{SUMMARY_HEADER}\n\nEarlier: greetings.",
        "Tell me about owls.",
        "",
        "facts about owls",
    ]
    assert contents(result["messages"])[-1] == "Owls are nocturnal."
    assert len(result["messages"]) == 5


def test_a_second_summary_folds_in_the_first(how_call: str) -> None:
    writer = summarizer("first summary", "second summary")
    main = ScriptedChatModel(["a1", "a2"])
    middleware = SummarizationMiddleware(writer, trigger=("messages", 4), keep=("messages", 1))
    agent = create_agent(main, [], middleware=[middleware], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    start = [HumanMessage("q1"), AIMessage("x"), HumanMessage("y"), AIMessage("z")]

    run_agent(agent, how_call, {"messages": [*start, HumanMessage("q2")]}, config=config)
    result = run_agent(agent, how_call, {"messages": [HumanMessage("q3")]}, config=config)

    assert f"{SUMMARY_HEADER}\n\nfirst summary" in writer.calls[1].messages[0].text
    assert contents(result["messages"]) == [
        f"{SUMMARY_HEADER}\n\nsecond summary",
        "q3",
        "a2",
    ]


@pytest.mark.parametrize(
    ("trigger", "summarized"),
    [
        # any of a list: the token clause is reached (11 messages x 10 = 110 tokens)
        ([("messages", 50), ("tokens", 100)], True),
        ([("messages", 50), ("tokens", 200)], False),
        # all of a dict: both must be reached
        ({"messages": 11, "tokens": 110}, True),
        ({"messages": 11, "tokens": 111}, False),
        ({"messages": 12, "tokens": 100}, False),
        # a list of dicts: any dict whose thresholds are all reached
        ([{"messages": 12, "tokens": 10}, {"messages": 5, "tokens": 100}], True),
        ([{"messages": 12, "tokens": 10}, {"messages": 5, "tokens": 120}], False),
        ({"tokens": 110}, True),
    ],
)
def test_any_of_a_list_all_of_a_dict(
    trigger: ContextSize | TriggerClause | list[ContextSize | TriggerClause],
    summarized: bool,
    how_call: str,
) -> None:
    writer = summarizer()
    main = ScriptedChatModel(["ok"])
    middleware = SummarizationMiddleware(
        writer, trigger=trigger, keep=("messages", 2), token_counter=per_message(10)
    )
    agent = create_agent(main, [], middleware=[middleware])

    run_agent(agent, how_call, {"messages": points_history()})

    assert writer.call_count == (1 if summarized else 0)
    assert len(main.calls[0].messages) == (3 if summarized else 11)


def characters(messages: Sequence[BaseMessage]) -> int:
    return sum(len(m.text) for m in messages)


def test_a_tokens_trigger_and_keep_use_the_token_counter(how_call: str) -> None:
    history = [HumanMessage("a" * 40), AIMessage("b" * 30), HumanMessage("c" * 20)]
    writer = summarizer()
    main = ScriptedChatModel(["ok"])
    middleware = SummarizationMiddleware(
        writer, trigger=("tokens", 90), keep=("tokens", 55), token_counter=characters
    )
    agent = create_agent(main, [], middleware=[middleware])

    run_agent(agent, how_call, {"messages": history})

    # 90 characters reach the trigger; the newest messages within 55 characters stay.
    assert contents(main.calls[0].messages)[1:] == ["b" * 30, "c" * 20]


def test_keep_tokens_keeps_at_least_the_last_message(how_call: str) -> None:
    history = [HumanMessage("a" * 40), AIMessage("b" * 30), HumanMessage("c" * 80)]
    writer = summarizer()
    main = ScriptedChatModel(["ok"])
    middleware = SummarizationMiddleware(
        writer, trigger=("tokens", 100), keep=("tokens", 10), token_counter=characters
    )
    agent = create_agent(main, [], middleware=[middleware])

    run_agent(agent, how_call, {"messages": history})

    assert contents(main.calls[0].messages)[1:] == ["c" * 80]


def test_a_fraction_trigger_uses_the_model_profile(how_call: str) -> None:
    writer = ScriptedChatModel([SUMMARY], repeat_last=True, profile={"max_input_tokens": 200})
    main = ScriptedChatModel(["ok", "ok"])
    middleware = SummarizationMiddleware(
        writer,
        trigger=("fraction", 0.5),
        keep=("fraction", 0.1),
        token_counter=per_message(10),
    )
    agent = create_agent(main, [], middleware=[middleware])

    run_agent(agent, how_call, {"messages": points_history()[:9]})  # 90 < 100 tokens
    run_agent(agent, how_call, {"messages": points_history()[:10]})  # 100 tokens: 50% of 200

    assert len(main.calls[0].messages) == 9
    # keep 10% of 200 = 20 tokens = the last two messages
    assert contents(main.calls[1].messages)[1:] == ["Remember point 5.", "Point 5 noted."]
    assert writer.call_count == 1


def test_trim_tokens_to_summarize_sends_only_the_newest_old_messages(how_call: str) -> None:
    writer = summarizer()
    main = ScriptedChatModel(["ok"])
    middleware = SummarizationMiddleware(
        writer,
        trigger=("messages", 6),
        keep=("messages", 1),
        token_counter=per_message(10),
        trim_tokens_to_summarize=30,
    )
    agent = create_agent(main, [], middleware=[middleware])

    run_agent(agent, how_call, {"messages": points_history()})

    prompt = writer.calls[0].messages[0].text
    assert "Remember point 4." not in prompt
    assert all(text in prompt for text in ("Point 4 noted.", "Remember point 5.", "Point 5 noted."))


def test_no_trimming_with_none_and_a_custom_prompt(how_call: str) -> None:
    writer = summarizer()
    main = ScriptedChatModel(["ok"])
    middleware = SummarizationMiddleware(
        writer,
        trigger=("messages", 6),
        keep=("messages", 1),
        summary_prompt="Sum up {{briefly}}:\n{messages}",
        trim_tokens_to_summarize=None,
    )
    agent = create_agent(main, [], middleware=[middleware])

    run_agent(agent, how_call, {"messages": points_history()})

    prompt = writer.calls[0].messages[0].text
    assert prompt.startswith("Sum up {briefly}:\n")
    assert all(f"Remember point {n}." in prompt for n in range(1, 6))


def test_one_old_message_longer_than_the_trim_limit_is_cut_to_its_end(how_call: str) -> None:
    writer = summarizer()
    main = ScriptedChatModel(["ok"])
    middleware = SummarizationMiddleware(
        writer, trigger=("messages", 2), keep=("messages", 1), trim_tokens_to_summarize=10
    )
    agent = create_agent(main, [], middleware=[middleware])
    long_text = "start " + "x" * 500 + " end"

    run_agent(agent, how_call, {"messages": [AIMessage(long_text), HumanMessage("next")]})

    prompt = writer.calls[0].messages[0].text
    assert "x end" in prompt
    assert "start" not in prompt


class SyncBrokenModel(ScriptedChatModel):
    """Answers asynchronous calls only, so a test can tell ``ainvoke`` was used."""

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the summary model was called synchronously")


def test_the_async_hook_writes_the_summary_with_ainvoke() -> None:
    writer = SyncBrokenModel([SUMMARY])
    main = ScriptedChatModel(["ok"])
    middleware = SummarizationMiddleware(writer, trigger=("messages", 6), keep=("messages", 2))
    middleware._summary_model.wait_exponential_jitter = False  # type: ignore[attr-defined]
    agent = create_agent(main, [], middleware=[middleware])

    result = asyncio.run(agent.ainvoke({"messages": points_history()}))

    assert result["messages"][0].text == f"{SUMMARY_HEADER}\n\n{SUMMARY}"
    with pytest.raises(AssertionError, match="synchronously"):
        agent.invoke({"messages": points_history()})


def stream_messages(agent: Any, inputs: Any, asynchronous: bool) -> list[tuple[Any, Any]]:
    if not asynchronous:
        return list(agent.stream(inputs, stream_mode="messages"))

    async def collect() -> list[tuple[Any, Any]]:
        return [item async for item in agent.astream(inputs, stream_mode="messages")]

    return asyncio.run(collect())


@pytest.mark.parametrize("asynchronous", [False, True], ids=["stream", "astream"])
def test_the_summary_call_is_not_streamed(asynchronous: bool) -> None:
    writer = summarizer("SECRET SUMMARY TEXT")
    main = ScriptedChatModel(["Points one to five."])
    middleware = SummarizationMiddleware(writer, trigger=("messages", 6), keep=("messages", 2))
    agent = create_agent(main, [], middleware=[middleware])

    streamed = stream_messages(agent, {"messages": points_history()}, asynchronous)

    assert writer.call_count == 1
    tokens = [chunk for chunk, _ in streamed if isinstance(chunk, AIMessageChunk)]
    assert "".join(chunk.text for chunk in tokens) == "Points one to five."
    assert {meta["langgraph_node"] for chunk, meta in streamed if chunk in tokens} == {"model"}
    # The summary reaches the stream only as the state update of the hook node.
    updates = [chunk for chunk, meta in streamed if meta["langgraph_node"] != "model"]
    assert all(not isinstance(chunk, AIMessageChunk) for chunk in updates)


def test_a_model_id_is_built_with_init_chat_model_when_the_middleware_is(
    how_call: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    writer = summarizer()

    def fake_init(model: str) -> ScriptedChatModel:
        built.append(model)
        return writer

    monkeypatch.setattr(summarization, "init_chat_model", fake_init)
    middleware = SummarizationMiddleware(
        "openai:gpt-4o-mini", trigger=("messages", 6), keep=("messages", 2)
    )
    assert built == ["openai:gpt-4o-mini"]
    assert middleware.model is writer

    agent = create_agent(ScriptedChatModel(["a", "b"]), [], middleware=[middleware])
    run_agent(agent, how_call, {"messages": points_history()})
    assert writer.call_count == 1
    assert built == ["openai:gpt-4o-mini"]


def test_a_summarizer_id_is_built_with_init_chat_model_too(monkeypatch: pytest.MonkeyPatch) -> None:
    writer = summarizer()
    monkeypatch.setattr(summarization, "init_chat_model", lambda model: writer)
    middleware = SummarizationMiddleware(ScriptedChatModel([]), summarizer="openai:gpt-4o-mini")

    assert middleware.summarizer is None  # a chat model writes with summary_prompt
    assert middleware._create_summary([HumanMessage("hi")]) == SUMMARY
    assert writer.call_count == 1


def test_a_fraction_with_a_model_id_without_a_window_fails_when_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(summarization, "init_chat_model", lambda model: summarizer())
    with pytest.raises(MiddlewareError, match="max_input_tokens"):
        SummarizationMiddleware("openai:gpt-4o-mini", trigger=("fraction", 0.5))


def test_the_public_attributes_keep_what_was_given() -> None:
    trigger: list[ContextSize | TriggerClause] = [("messages", 5), {"tokens": 100}]
    middleware = SummarizationMiddleware(summarizer(), trigger=trigger, keep=("messages", 3))
    trigger[1]["tokens"] = 1  # type: ignore[index]

    assert middleware.trigger == [("messages", 5), {"tokens": 100}]
    assert middleware.keep == ("messages", 3)
    assert middleware.trim_tokens_to_summarize == 4000
    assert middleware.summary_prompt == DEFAULT_SUMMARY_PROMPT
    assert SummarizationMiddleware(summarizer()).keep == ("messages", 20)


def test_the_summary_prompt_asks_for_a_usable_summary() -> None:
    # Pinned so a prompt edit is a conscious decision: the headings the summary is asked for.
    for heading in ("## Goal", "## What happened", "## Artifacts", "## Next steps"):
        assert heading in DEFAULT_SUMMARY_PROMPT
    assert DEFAULT_SUMMARY_PROMPT.count("{messages}") == 1


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        ({"trigger": ("turns", 5)}, "Unsupported context size type turns for trigger"),
        ({"trigger": ("tokens", 0)}, "trigger thresholds must be greater than 0, got 0"),
        ({"trigger": ("messages", -3)}, "trigger thresholds must be greater than 0, got -3"),
        ({"trigger": ("messages", 2.5)}, "messages trigger values must be integers, got 2.5"),
        ({"trigger": ("messages", True)}, "messages trigger value must be numeric, got True"),
        ({"trigger": ("fraction", 0)}, "Fractional trigger values must be between 0 and 1"),
        ({"trigger": ("fraction", 1.5)}, "between 0 and 1, got 1.5"),
        ({"trigger": ("tokens",)}, "a \\(kind, amount\\) pair"),
        ({"trigger": "tokens"}, "Unsupported trigger type: <class 'str'>"),
        ({"trigger": {}}, "empty dict"),
        ({"trigger": {"tokens": 100, "turns": 3}}, "Unsupported trigger metric: 'turns'"),
        ({"trigger": [("messages", 5), {"tokens": -1}]}, "greater than 0, got -1"),
        ({"keep": ("messages", 0)}, "keep thresholds must be greater than 0"),
        ({"keep": ("turns", 2)}, "Unsupported context size type turns for keep"),
        ({"keep": 20}, "keep must be a \\(kind, amount\\) pair"),
        ({"trigger": ("fraction", 0.8)}, "profile has no 'max_input_tokens'"),
        ({"keep": ("fraction", 0.3)}, "profile has no 'max_input_tokens'"),
        ({"summary_prompt": "Summarize this."}, "placeholder \\{messages\\}"),
        ({"summary_prompt": "{messages} in {style}"}, "found \\['messages', 'style'\\]"),
        ({"summary_prompt": "{messages"}, "not a valid format string"),
        ({"trim_tokens_to_summarize": 0}, "trim_tokens_to_summarize must be"),
        ({"token_counter": 5}, "token_counter must be a function"),
    ],
)
def test_bad_options_fail_when_built(options: dict[str, Any], complaint: str) -> None:
    with pytest.raises(MiddlewareError, match=complaint) as caught:
        SummarizationMiddleware(summarizer(), **options)
    assert "SummarizationMiddleware: " in str(caught.value)


def test_a_bad_model_fails_when_built() -> None:
    with pytest.raises(MiddlewareError, match="SummarizationMiddleware: model is int; pass a chat"):
        SummarizationMiddleware(42, trigger=("messages", 5))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'nonsense' is no known model provider"):
        SummarizationMiddleware("nonsense:model-x", trigger=("messages", 5))


def test_an_empty_trigger_list_never_summarizes(
    how_call: str, caplog: pytest.LogCaptureFixture
) -> None:
    writer = summarizer()
    with caplog.at_level(logging.INFO, logger="graphagent"):
        middleware = SummarizationMiddleware(writer, trigger=[], token_counter=per_message(10**6))
    assert "trigger is an empty list, so it never summarizes" in caplog.text

    agent = create_agent(ScriptedChatModel(["done"]), [], middleware=[middleware])
    result = run_agent(agent, how_call, {"messages": points_history()})

    assert writer.call_count == 0
    assert len(result["messages"]) == len(points_history()) + 1


def test_a_profile_window_allows_fractions() -> None:
    windowed = ScriptedChatModel([], profile={"max_input_tokens": 1000})
    middleware = SummarizationMiddleware(windowed, trigger=("fraction", 1), keep=("fraction", 0.2))
    assert middleware.model is windowed


class EchoSummarizer:
    """No BaseChatModel: just something with ``invoke`` and ``ainvoke``, as a wrapper or a test
    double would be."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def invoke(self, prompt: str, config: Any = None) -> AIMessage:
        self.prompts.append(prompt)
        return AIMessage(SUMMARY)

    async def ainvoke(self, prompt: str, config: Any = None) -> AIMessage:
        return self.invoke(prompt, config)


def test_a_model_that_only_quacks_like_one_is_taken_and_called(
    how_call: str, caplog: pytest.LogCaptureFixture
) -> None:
    echo = EchoSummarizer()
    with caplog.at_level("DEBUG", logger="graphagent"):
        middleware = SummarizationMiddleware(echo, trigger=("messages", 10), keep=("messages", 2))  # type: ignore[arg-type]
    agent = create_agent(ScriptedChatModel(["Done."]), middleware=[middleware])

    result = run_agent(agent, how_call, {"messages": points_history()})

    assert middleware.model is echo
    assert "model is a EchoSummarizer, not a BaseChatModel" in caplog.text
    assert contents(result["messages"])[0] == f"{SUMMARY_HEADER}\n\n{SUMMARY}"
    assert len(echo.prompts) == 1
