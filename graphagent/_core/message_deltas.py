"""The messages reducer of a ``DeltaChannel``: ``add_messages`` over a batch of writes.

langgraph's ``DeltaChannel`` stores each step's writes instead of the whole value, and rebuilds
the value by replaying the writes since the last snapshot in one reducer call. So the reducer
takes a batch, and must be batching-invariant: ``reducer(reducer(s, xs), ys)`` equals
``reducer(s, xs + ys)``. :func:`add_message_batches` folds ``add_messages`` over the writes,
which is invariant by construction, and keeps one index of ids for the whole batch so a replay of
many writes costs one pass, not one copy of the history per write.

The index is kept with the history it was made for (a few of them): the next step's reducer call
starts from that very history, and copies the index instead of reading every message again.

``add_messages`` gives a message without an id a random one; a replay would give it a new one on
every read. What callers write has its ids (``_core/message_ids.py`` gives the input and
``update_state`` theirs, and langgraph stamps the message objects of every write it saves), but a
node hook may return strings or ``(role, text)`` pairs (its trace shows them as returned), and a
thread written by an earlier graphagent stores them as given. Such a message gets an id derived
from where it lands (the id before it, itself random, and its position), so every replay gives it
the same.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import (
    BaseMessage,
    BaseMessageChunk,
    RemoveMessage,
    convert_to_messages,
    message_chunk_to_message,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages

_IDS = uuid.UUID("6f1c2a52-8d0e-4b7a-9f53-2b1e4c7d9a10")
"""The namespace of the ids derived for messages that come without one."""


def merges_messages(reducer: Any) -> bool:
    """Whether ``reducer`` merges messages by id: ``add_messages`` (on a plain channel) or
    :func:`add_message_batches` (on a ``DeltaChannel``). The two hold the same values, and
    merging a history into one that holds it already changes nothing."""
    return reducer is add_messages or reducer is add_message_batches


def add_message_batches(state: Sequence[Any] | None, writes: Sequence[Any]) -> list[BaseMessage]:
    """``state`` with each write merged in turn as ``add_messages`` merges one: a message with a
    known id replaces it in place, a new one is appended, ``RemoveMessage(id)`` removes one (an
    unknown id is a ``ValueError``), and ``RemoveMessage(id=REMOVE_ALL_MESSAGES)`` starts the
    history again from the messages after it.

    A write is a message or a list of them (objects, dicts, strings or ``(role, text)`` pairs).
    ``state`` is not changed. Use it as ``DeltaChannel(add_message_batches)``.
    """
    log = _Log(state or ())
    for write in writes:
        log.merge(write)
    _keep(_Indexed(list(log.messages), log.index))
    return log.messages


@dataclass(frozen=True, slots=True)
class _Indexed:
    """A history the reducer returned, and the position of each id in it (never changed: a
    reducer call starting from this history copies it)."""

    messages: list[BaseMessage]
    """A copy of the history: the list returned may be changed after."""
    index: Mapping[str, int]

    def is_(self, state: Sequence[Any]) -> bool:
        """Whether ``state`` holds the messages of this history, in order (the same objects, as
        a channel passes the history it holds, compare at the speed of a list copy)."""
        known = self.messages
        return (
            len(known) == len(state)
            and (not known or state[-1] is known[-1])
            and known == (state if isinstance(state, list) else list(state))
        )


_KEPT = 8
"""Histories whose index is kept: one per thread being run, for as many at a time (each keeps
its messages alive until it is dropped)."""
_kept: tuple[_Indexed, ...] = ()


def _keep(indexed: _Indexed) -> None:
    global _kept
    _kept = (*_kept, indexed)[-_KEPT:]  # a new tuple: another thread may be reading the old one


def _index_of(state: Sequence[Any]) -> dict[str, int] | None:
    """A copy of the index of ``state``, if it is a history the reducer returned lately."""
    found = next((indexed for indexed in reversed(_kept) if indexed.is_(state)), None)
    return None if found is None else dict(found.index)


class _Log:
    """The history being rebuilt, and the position of each id in it."""

    __slots__ = ("index", "messages")

    def __init__(self, state: Sequence[Any]) -> None:
        self.messages: list[BaseMessage] = list(state)
        known = _index_of(state)
        if known is not None:
            self.index = known
        else:
            self._reset(_coerced(self.messages))

    def _reset(self, messages: list[BaseMessage]) -> None:
        """Start again from ``messages`` (a list of its own)."""
        self.messages = messages
        self.index = {m.id: at for at, m in enumerate(messages)}  # type: ignore[misc]
        if None in self.index or "" in self.index:  # the state of an Overwrite may lack ids
            self.messages, self.index = [], {}
            for message in messages:
                self.index[self._id_of(message, 0)] = len(self.messages)
                self.messages.append(message)

    def merge(self, write: Any) -> None:
        incoming = _coerced(write if isinstance(write, list) else [write])
        keys = [self._id_of(message, offset) for offset, message in enumerate(incoming)]
        restart = _last_remove_all(incoming)
        if restart is not None:
            self._reset(incoming[restart + 1 :])
            return
        removed: set[str] = set()
        for key, message in zip(keys, incoming, strict=True):
            at = self.index.get(key)
            if at is None:
                if isinstance(message, RemoveMessage):
                    raise _unknown_removal(key)
                self.index[key] = len(self.messages)
                self.messages.append(message)
            elif isinstance(message, RemoveMessage):
                removed.add(key)
            else:
                removed.discard(key)  # removed and given again in one write: it stays
                self.messages[at] = message
        if removed:
            self._reset([m for m in self.messages if m.id not in removed])

    def _id_of(self, message: BaseMessage, offset: int) -> str:
        """The id of ``message``; given one if it has none, the same on every replay."""
        if message.id:
            return message.id
        previous = self.messages[-1].id if self.messages else ""
        seed = f"{previous}/{len(self.messages)}/{offset}"
        candidate = str(uuid.uuid5(_IDS, seed))
        while candidate in self.index:
            seed += "'"
            candidate = str(uuid.uuid5(_IDS, seed))
        message.id = candidate
        return candidate


def _coerced(items: list[Any]) -> list[BaseMessage]:
    """``items`` as message objects, chunks made whole, as ``add_messages`` reads them."""
    kinds = set(map(type, items))  # a long history holds a few kinds: check those
    if all(issubclass(k, BaseMessage) and not issubclass(k, BaseMessageChunk) for k in kinds):
        return items
    return [message_chunk_to_message(m) for m in convert_to_messages(items)]


def _last_remove_all(messages: list[BaseMessage]) -> int | None:
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if isinstance(message, RemoveMessage) and message.id == REMOVE_ALL_MESSAGES:
            return position
    return None


def _unknown_removal(key: str) -> ValueError:
    return ValueError(
        f"RemoveMessage(id={key!r}): a message with that id doesn't exist in the history; "
        "remove a message by the id it has in the state, or clear the history with "
        "RemoveMessage(id=REMOVE_ALL_MESSAGES)."
    )
