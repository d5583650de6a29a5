"""FinalAnswerFilterMiddleware: only the final round's text reaches stream_mode="messages"."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.constants import TAG_NOSTREAM

from graphagent import create_agent
from graphagent.middleware import wrap_model_call
from graphagent.middleware._kit.replay import hold_back
from graphagent.middleware.final_answer_filter import (
    FinalAnswerFilterMiddleware,
    final_answer_view,
)
from graphagent.requests import ModelRequest, ModelResponse
from graphagent.testing import ScriptedChatModel, tool_call
from tests.conftest import Run
from tests.tools import add

QUESTION = {"messages": [("user", "What is 1 + 2?")]}


def two_rounds(*middleware: Any, first_text: Any = "Let me check...") -> Any:
    """A tool round (with text) and then the final answer."""
    model = ScriptedChatModel(
        [
            AIMessage(first_text, tool_calls=[tool_call("add", {"a": 1, "b": 2}, id="c1")]),
            "The sum is 3.",
        ]
    )
    return create_agent(model, [add], middleware=list(middleware))


def stream_messages(agent: Any, how: str, **kwargs: Any) -> list[Any]:
    if how == "stream":
        return list(agent.stream(QUESTION, **kwargs))

    async def collect() -> list[Any]:
        return [item async for item in agent.astream(QUESTION, **kwargs)]

    return asyncio.run(collect())


def by_node(items: list[Any]) -> list[tuple[str, str, Any]]:
    return [(m["langgraph_node"], type(c).__name__, c.content) for c, m in items]


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_only_the_final_rounds_text_streams(how: str) -> None:
    items = stream_messages(two_rounds(FinalAnswerFilterMiddleware()), how, stream_mode="messages")

    assert by_node(items) == [
        ("model", "AIMessageChunk", ""),
        ("tools", "ToolMessage", "3"),
        ("model", "AIMessageChunk", "The sum is 3."),
    ]
    tool_round = items[0][0]
    assert [c["name"] for c in tool_round.tool_call_chunks] == ["add"]
    assert tool_round.id is not None


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_without_the_filter_the_tool_rounds_text_streams(how: str) -> None:
    items = stream_messages(two_rounds(), how, stream_mode="messages")
    assert "Let me check..." in "".join(str(c.content) for c, _ in items)


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_streamed_chunks_add_up_to_the_stored_messages(how: str) -> None:
    items = stream_messages(
        two_rounds(FinalAnswerFilterMiddleware()), how, stream_mode=["messages", "values"]
    )
    chunks = [item[0] for mode, item in items if mode == "messages"]
    final_state = [item for mode, item in items if mode == "values"][-1]
    tool_round, _, answer = final_state["messages"][1:]

    assert chunks[0].id == tool_round.id
    assert chunks[0].tool_calls == tool_round.tool_calls
    assert chunks[2].id == answer.id
    assert chunks[2].content == answer.content
    assert tool_round.content == "Let me check..."  # the state keeps the text


def test_the_result_is_unchanged(run: Run) -> None:
    plain = run(two_rounds(), QUESTION)
    filtered = run(two_rounds(FinalAnswerFilterMiddleware()), QUESTION)
    assert [(type(m), m.content) for m in filtered["messages"]] == [
        (type(m), m.content) for m in plain["messages"]
    ]
    assert filtered["messages"][1].content == "Let me check..."
    assert filtered["messages"][1].tool_calls == plain["messages"][1].tool_calls


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_text_blocks_of_a_tool_round_are_held_back(how: str) -> None:
    blocks = [
        {"type": "reasoning", "reasoning": "think"},
        {"type": "text", "text": "Let me check..."},
        {"type": "tool_use", "id": "c1", "name": "add", "input": {"a": 1, "b": 2}},
    ]
    agent = two_rounds(FinalAnswerFilterMiddleware(), first_text=blocks)
    items = stream_messages(agent, how, stream_mode="messages")
    assert items[0][0].content == [blocks[2]]
    assert "Let me check" not in str([c.content for c, _ in items])


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_other_stream_modes_are_untouched(how: str) -> None:
    items = stream_messages(two_rounds(FinalAnswerFilterMiddleware()), how, stream_mode="updates")
    written = [
        m.content for update in items for m in (update.get("model") or {}).get("messages", [])
    ]
    assert written == ["Let me check...", "The sum is 3."]


def test_a_round_without_tool_calls_is_shown_whole() -> None:
    message = AIMessage("The answer.", id="a")
    assert final_answer_view(message) is message
    bad = AIMessage(
        "text",
        invalid_tool_calls=[
            {"name": "x", "args": "{", "id": "1", "error": None, "type": "invalid_tool_call"}
        ],
    )
    assert final_answer_view(bad).content == ""


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_retried_model_calls_replay_only_the_kept_answer(how: str) -> None:
    # A sync-only layer: async runs bridge it through a worker thread, where the hold still holds.
    @wrap_model_call
    def second_try(
        request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        handler(request)  # thrown away
        return handler(request)

    model = ScriptedChatModel(["First try.", "Second try."])
    agent = create_agent(model, middleware=[FinalAnswerFilterMiddleware(), second_try])
    items = stream_messages(agent, how, stream_mode="messages")
    assert by_node(items) == [("model", "AIMessageChunk", "Second try.")]
    assert isinstance(items[0][0], AIMessageChunk)


def test_holding_restores_the_context_when_the_call_fails() -> None:
    before = var_child_runnable_config.get()
    seen_tags: list[str] = []

    def failing_model_call() -> None:
        with hold_back(final_answer_view):
            seen_tags.extend((var_child_runnable_config.get() or {}).get("tags") or [])
            raise RuntimeError("model failed")

    with pytest.raises(RuntimeError):
        failing_model_call()
    assert TAG_NOSTREAM in seen_tags
    assert var_child_runnable_config.get() is before
    with hold_back(final_answer_view) as replay:
        pass
    assert replay.hold is not None  # outermost again: the failed hold left nothing behind


def test_tool_messages_still_stream_whole() -> None:
    items = list(two_rounds(FinalAnswerFilterMiddleware()).stream(QUESTION, stream_mode="messages"))
    tool_messages = [c for c, m in items if isinstance(c, ToolMessage)]
    assert [(m.content, m.tool_call_id) for m in tool_messages] == [("3", "c1")]
