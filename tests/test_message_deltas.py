"""Properties of the messages reducer of the delta channel: whatever way langgraph batches the
writes it replays, the history comes out the same, and it is the history ``add_messages`` makes
of the same writes one by one."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages

from graphagent.state import add_message_batches

IDS = ("a", "b", "c", "d")
TEXTS = ("hi", "ok", "more")

Make = Callable[[], Any]
"""Builds one message-like afresh: both reducers stamp ids on the objects they are given."""


def _object(kind: type[BaseMessage], text: str, id: str | None) -> Make:
    return lambda: kind(content=text, id=id)


def _chunk(text: str, id: str | None) -> Make:
    return lambda: AIMessageChunk(content=text, id=id)


def _removal(id: str) -> Make:
    return lambda: RemoveMessage(id=id)


def _raw(value: Any) -> Make:
    return lambda: value


def message_likes(*, with_ids: bool) -> st.SearchStrategy[Make]:
    ids = st.sampled_from(IDS) if with_ids else st.sampled_from((*IDS, None))
    texts = st.sampled_from(TEXTS)
    kinds = st.sampled_from((HumanMessage, AIMessage, SystemMessage))
    options = [
        st.builds(_object, kinds, texts, ids),
        st.builds(_chunk, texts, ids),
        st.builds(_removal, st.sampled_from(IDS)),
        st.just(_removal(REMOVE_ALL_MESSAGES)),
    ]
    if not with_ids:
        options += [
            st.builds(_raw, texts),
            st.builds(lambda t: _raw(("ai", t)), texts),
            st.builds(lambda t: _raw({"role": "user", "content": t}), texts),
        ]
    return st.one_of(options)


def writes_of(*, with_ids: bool) -> st.SearchStrategy[list[Make | list[Make]]]:
    one = message_likes(with_ids=with_ids)
    return st.lists(st.one_of(one, st.lists(one, max_size=4)), max_size=6)


def build(writes: list[Make | list[Make]]) -> list[Any]:
    return [[m() for m in w] if isinstance(w, list) else w() for w in writes]


def state_of(ids: list[str]) -> list[BaseMessage]:
    return [HumanMessage(f"was {i}", id=i) for i in ids]


initial_states = st.lists(st.sampled_from(IDS), unique=True, max_size=3)


def outcome(reduce: Callable[[], list[BaseMessage]]) -> Any:
    """The history as comparable data, or the error it raised."""
    try:
        return [(type(m).__name__, m.id, m.content) for m in reduce()]
    except ValueError:
        return ValueError


def fold_of_add_messages(state: list[Any], writes: list[Any]) -> list[BaseMessage]:
    return functools.reduce(add_messages, writes, state)  # type: ignore[arg-type,return-value]


@settings(max_examples=400, deadline=None)
@given(state=initial_states, writes=writes_of(with_ids=False), data=st.data())
def test_any_batching_of_the_writes_gives_the_same_history(
    state: list[str], writes: list[Any], data: st.DataObject
) -> None:
    cut = data.draw(st.integers(0, len(writes)))

    def at_once() -> list[BaseMessage]:
        return add_message_batches(state_of(state), build(writes))

    def in_two() -> list[BaseMessage]:
        rebuilt = build(writes)
        return add_message_batches(
            add_message_batches(state_of(state), rebuilt[:cut]), rebuilt[cut:]
        )

    def one_by_one() -> list[BaseMessage]:
        return functools.reduce(
            lambda s, w: add_message_batches(s, [w]), build(writes), state_of(state)
        )

    assert outcome(at_once) == outcome(in_two) == outcome(one_by_one)


@settings(max_examples=400, deadline=None)
@given(state=initial_states, writes=writes_of(with_ids=True))
def test_it_is_add_messages_applied_write_by_write(state: list[str], writes: list[Any]) -> None:
    ours = outcome(lambda: add_message_batches(state_of(state), build(writes)))
    theirs = outcome(lambda: fold_of_add_messages(state_of(state), build(writes)))

    assert ours == theirs


@settings(max_examples=200, deadline=None)
@given(state=initial_states, writes=writes_of(with_ids=False))
def test_a_message_without_an_id_gets_one_and_the_same_on_every_replay(
    state: list[str], writes: list[Any]
) -> None:
    first = outcome(lambda: add_message_batches(state_of(state), build(writes)))
    again = outcome(lambda: add_message_batches(state_of(state), build(writes)))
    theirs = outcome(lambda: fold_of_add_messages(state_of(state), build(writes)))

    assert first == again
    if first is ValueError:
        assert theirs is ValueError
        return
    assert all(id for _, id, _ in first)
    assert len({id for _, id, _ in first}) == len(first) or _has_duplicates(theirs)
    shape = [(kind, text) for kind, _, text in first]
    assert theirs is not ValueError
    assert shape == [(kind, text) for kind, _, text in theirs]


def _has_duplicates(history: Any) -> bool:
    """add_messages keeps the messages after REMOVE_ALL_MESSAGES as given, repeats included."""
    return len({id for _, id, _ in history}) < len(history)


def test_the_state_it_is_given_is_left_as_it_was() -> None:
    state = [HumanMessage("hi", id="a")]

    merged = add_message_batches(state, [[AIMessage("ok", id="b")], RemoveMessage(id="a")])

    assert [m.id for m in merged] == ["b"]
    assert [m.id for m in state] == ["a"]


def test_removing_an_unknown_id_names_it() -> None:
    with pytest.raises(
        ValueError, match=r"RemoveMessage\(id='x'\): a message with that id doesn't exist"
    ):
        add_message_batches([HumanMessage("hi", id="a")], [RemoveMessage(id="x")])


def test_a_long_replay_is_one_pass() -> None:
    """Replaying many writes keeps one index: the result is the history, in order."""
    writes = [
        [HumanMessage(f"q{i}", id=f"h{i}"), AIMessage(f"a{i}", id=f"a{i}")] for i in range(500)
    ]

    merged = add_message_batches([], writes)

    assert [m.id for m in merged[:4]] == ["h0", "a0", "h1", "a1"]
    assert len(merged) == 1000
