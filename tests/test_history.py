"""The checks run before every model call read only what a step added, and decide as a full
read of the history would: whatever happens to the history between two checks (messages added,
replaced in place, removed, the whole history rebuilt), in any order."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings, strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from graphagent._core.history import answer_malformed_calls, call_ids, pair_tool_calls

CALL_IDS = ("c1", "c2", "c3", "c4", "c5")


def human() -> BaseMessage:
    return HumanMessage("hi")


def calling(ids: list[str]) -> BaseMessage:
    return AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": i} for i in ids])


def malformed(ids: list[str]) -> BaseMessage:
    invalid = [
        {"name": "t", "args": "{", "id": i, "error": "bad", "type": "invalid_tool_call"}
        for i in ids
    ]
    return AIMessage("", invalid_tool_calls=invalid)


def answer(id: str) -> BaseMessage:
    return ToolMessage("done", tool_call_id=id)


ids = st.lists(st.sampled_from(CALL_IDS), max_size=2, unique=True)
new_messages = st.one_of(
    st.builds(human),
    ids.map(calling),
    ids.map(malformed),
    st.sampled_from(CALL_IDS).map(answer),
)
# Each edit takes the previous history (a new list every time, as a reducer makes) to the next.
edits = st.one_of(
    st.tuples(st.just("append"), st.lists(new_messages, min_size=1, max_size=3)),
    st.tuples(st.just("replace"), st.integers(0, 20), new_messages),
    st.tuples(st.just("remove"), st.integers(0, 20)),
    st.tuples(st.just("rebuild"), st.lists(new_messages, max_size=4)),
    st.tuples(st.just("same"), st.none()),
)


def edited(history: list[Any], edit: tuple[Any, ...]) -> list[Any]:
    kind, *args = edit
    if kind == "append":
        return [*history, *args[0]]
    if kind == "replace" and history:
        at = args[0] % len(history)
        return [*history[:at], args[1], *history[at + 1 :]]
    if kind == "remove" and history:
        at = args[0] % len(history)
        return history[:at] + history[at + 1 :]
    if kind == "rebuild":
        return list(args[0])
    return list(history)


def called_and_answered(history: list[Any]) -> tuple[set[str], set[str]]:
    called = {
        c["id"]
        for m in history
        if isinstance(m, AIMessage)
        for c in [*m.tool_calls, *m.invalid_tool_calls]
    }
    answered = {m.tool_call_id for m in history if isinstance(m, ToolMessage)}
    return called, answered


def malformed_unanswered(history: list[Any]) -> list[str]:
    _, answered = called_and_answered(history)
    return [
        c["id"]
        for m in history
        if isinstance(m, AIMessage)
        for c in m.invalid_tool_calls
        if c["id"] not in answered
    ]


def shape(messages: list[Any]) -> list[tuple[str, str, Any]]:
    return [(type(m).__name__, str(m.content), getattr(m, "tool_call_id", None)) for m in messages]


@settings(max_examples=300, deadline=None)
@given(start=st.lists(new_messages, max_size=6), steps=st.lists(edits, max_size=8))
def test_each_check_decides_as_a_full_read_would(start: list[Any], steps: list[Any]) -> None:
    history = list(start)
    for step in [("same", None), *steps]:
        history = edited(history, step)
        called, answered = called_and_answered(history)

        paired = pair_tool_calls(history)
        answers = answer_malformed_calls(history)

        assert (paired is history) == (called == answered)
        assert called_and_answered(paired) == (called, called)
        pending = malformed_unanswered(history)
        assert (answers is None) == (not pending)
        if answers is not None:
            added = [m for m in answers if m not in history]
            assert sorted(m.tool_call_id for m in added) == sorted(set(pending))


def test_a_history_changed_in_place_after_a_check_is_read_again() -> None:
    history: list[Any] = [human(), calling(["c1"]), answer("c1")]
    assert pair_tool_calls(history) is history

    history.append(calling(["c2"]))  # the same list object, now with an unanswered call

    repaired = pair_tool_calls(history)
    assert shape(repaired)[-1] == ("ToolMessage", repaired[-1].content, "c2")


def test_an_empty_id_is_an_id_and_a_missing_one_is_none() -> None:
    message = AIMessage(
        "",
        tool_calls=[{"name": "a", "args": {}, "id": ""}, {"name": "b", "args": {}, "id": "b1"}],
        invalid_tool_calls=[
            {"type": "invalid_tool_call", "name": "c", "args": "x", "id": None, "error": None},
            {"type": "invalid_tool_call", "name": "d", "args": "x", "id": "d1", "error": None},
        ],
    )

    assert call_ids(message) == ["", "b1", "d1"]
