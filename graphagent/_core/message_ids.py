"""Ids for the messages of a run's input, given in one pass before langgraph writes them.

langgraph gives every message object written without an id a ``uuid4`` in place, one
``uuid.uuid4()`` at a time (about 2 µs each: a system call and a ``UUID`` object per message).
An input of a long history, as a caller without a checkpointer sends at every turn, pays that for
each of its messages at each run. The ids given here are the same kind of value (random version-4
UUIDs, as strings), drawn from one read of the system's random source, so langgraph finds them
set and leaves them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from langchain_core.messages import BaseMessage


def give_input_ids(input: Any) -> None:
    """Give each message object of ``input["messages"]`` that has no id (or an empty one) a new
    one, in place, as langgraph would. Anything else (a ``Command``, message dicts) is left to
    langgraph."""
    if not isinstance(input, Mapping):
        return
    messages = input.get("messages")
    if not isinstance(messages, list):
        return
    missing = [m for m in messages if isinstance(m, BaseMessage) and not m.id]
    for message, new_id in zip(missing, new_ids(len(missing)), strict=True):
        message.id = new_id


def new_ids(count: int) -> Iterator[str]:
    """``count`` random version-4 UUIDs in their string form."""
    raw = bytearray(os.urandom(16 * count))
    for at in range(0, len(raw), 16):
        raw[at + 6] = raw[at + 6] & 0x0F | 0x40  # version 4
        raw[at + 8] = raw[at + 8] & 0x3F | 0x80  # the RFC 4122 variant
        digits = raw[at : at + 16].hex()
        yield f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
