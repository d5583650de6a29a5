"""Ids for messages before they are written: random version-4 UUIDs, unique in every thread.

A message stored without an id would get one only when the history is read back. On a
``DeltaChannel`` that happens on every read, so the messages reducer must then give the same id
each time, and can only derive it from where the message lands: the same id for the first
message of every thread, and for the messages two forks add at one place. So what a caller
writes to ``messages`` (a run's input, ``update_state``) gets its ids first, and a replay reads
them back as stored. langgraph gives message objects ids itself when it saves
a write, but stores strings and ``(role, text)`` pairs as given; here those become messages.

langgraph gives every message object without an id a ``uuid4``, one ``uuid.uuid4()`` at a time
(about 2 µs each: a system call and a ``UUID`` object per message). An input of a long history,
as a caller without a checkpointer sends at every turn, pays that for each of its messages at
each run. The ids given here are the same kind of value, drawn from one read of the system's
random source, so langgraph finds them set and leaves them.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Mapping
from typing import Any

from langchain_core.messages import BaseMessage, convert_to_messages
from langgraph.types import Command, Overwrite

MESSAGES = "messages"


def give_input_ids(input: Any) -> None:
    """Give each message object of ``input["messages"]`` that has no id (or an empty one) a new
    one, in place, as langgraph would, before anything sees the input. Anything else (a
    ``Command``, strings, message dicts) waits for :func:`identified_input`."""
    if not isinstance(input, Mapping):
        return
    messages = input.get(MESSAGES)
    if not isinstance(messages, list):
        return
    missing = [m for m in messages if isinstance(m, BaseMessage) and not m.id]
    for message, new_id in zip(missing, new_ids(len(missing)), strict=True):
        message.id = new_id


def identified_input(input: Any) -> Any:
    """``input`` as the graph is to receive it: every message of its ``messages`` (or of a
    ``Command``'s update) holding an id: message objects without one (or with an empty one) get
    one in place, as langgraph would; strings, ``(role, text)`` pairs and message dicts become
    messages with one. The
    caller's dicts and lists are never changed: what changes is returned anew."""
    if isinstance(input, Command) and isinstance(input.update, Mapping):
        update = with_message_ids(input.update)
        return input if update is input.update else dataclasses.replace(input, update=update)
    return with_message_ids(input) if isinstance(input, Mapping) else input


def with_message_ids(values: Mapping[str, Any]) -> Any:
    """``values`` (a state update) with the messages it writes holding ids, as
    :func:`identified_input` says; ``values`` itself when nothing had to change."""
    if MESSAGES not in values:
        return values
    messages = values[MESSAGES]
    identified = _identified(messages)
    return values if identified is messages else {**values, MESSAGES: identified}


def _identified(value: Any) -> Any:
    if isinstance(value, Overwrite):
        inner = _identified(value.value)
        return value if inner is value.value else Overwrite(inner)
    items = value if isinstance(value, list) else [value]
    made = [_as_message(item) for item in items]
    missing = [m for m in made if isinstance(m, BaseMessage) and not m.id]
    for message, new_id in zip(missing, new_ids(len(missing)), strict=True):
        message.id = new_id
    if all(new is old for new, old in zip(made, items, strict=True)):
        return value
    return made if isinstance(value, list) else made[0]


def _as_message(item: Any) -> Any:
    """A message-like as a message; anything else as it is, for the reducer to refuse."""
    if isinstance(item, BaseMessage) or not isinstance(item, str | tuple | dict):
        return item
    try:
        return convert_to_messages([item])[0]
    except (TypeError, ValueError, NotImplementedError):
        return item


def new_ids(count: int) -> Iterator[str]:
    """``count`` random version-4 UUIDs in their string form."""
    raw = bytearray(os.urandom(16 * count))
    for at in range(0, len(raw), 16):
        raw[at + 6] = raw[at + 6] & 0x0F | 0x40  # version 4
        raw[at + 8] = raw[at + 8] & 0x3F | 0x80  # the RFC 4122 variant
        digits = raw[at : at + 16].hex()
        yield f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
