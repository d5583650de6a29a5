"""The state advanced hook by hook inside one node, and the writes that reproduce it.

A fused node (``fuse_hooks=True``) runs several hooks where the graph would run several nodes.
Each hook's update is applied to a :class:`StateView` as the graph applies one step's writes:
through fresh channels of the graph's own kinds, so ``add_messages``, ``RemoveMessage``,
``Overwrite``, custom reducers, ``DeltaChannel`` (which holds ``messages`` by default) and
ephemeral fields such as ``jump_to`` behave exactly as they would. The node then writes in one
step what the separate steps wrote: each plain field once, with the value it ended with
(sequential nodes overwrite it), and each update of a reducer field in order, so the graph's
channel makes the same reducer calls (a ``DeltaChannel`` gets them in one batch, which its
reducer must merge as it would one by one).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import (
    BaseMessage,
    BaseMessageChunk,
    convert_to_messages,
    message_chunk_to_message,
)
from langgraph.channels import (
    AnyValue,
    BaseChannel,
    EphemeralValue,
    LastValue,
    UntrackedValue,
)
from langgraph.types import Command, Overwrite

from graphagent._core.langgraph_internals import REDUCER_CHANNELS, is_overwrite
from graphagent._core.message_deltas import merges_messages
from graphagent.errors import MiddlewareError, note_origin

Channel = BaseChannel[Any, Any, Any]

_PLAIN_CHANNELS: tuple[type[Channel], ...] = (LastValue, EphemeralValue, AnyValue, UntrackedValue)
"""Channels that hold the one value last written."""
_STABLE_CHANNELS: tuple[type[Channel], ...] = (LastValue, *REDUCER_CHANNELS)
"""Channels that stay as they are through a step that does not write them; the others (an
ephemeral field) may change, so the view steps them after every hook."""


@dataclass(frozen=True, slots=True)
class StateChannels:
    """The graph's channels by state field, sorted by how a fused node writes them."""

    specs: Mapping[str, Channel]
    owners: Mapping[str, str]
    """The schema that declares each field (for error messages)."""
    reduced: frozenset[str]
    messages: frozenset[str]
    """Reducer fields that merge messages by id (``add_messages`` or its delta twin)."""
    stepped: frozenset[str]

    @property
    def keys(self) -> frozenset[str]:
        """Every field of the state."""
        return frozenset(self.owners)

    @classmethod
    def of(cls, specs: Mapping[str, Channel], owners: Mapping[str, str]) -> StateChannels:
        """Classify ``specs`` (``StateGraph.channels``)."""
        reduced = frozenset(k for k, spec in specs.items() if isinstance(spec, REDUCER_CHANNELS))
        return cls(
            specs=specs,
            owners=owners,
            reduced=reduced,
            messages=frozenset(k for k in reduced if merges_messages(_reducer(specs[k]))),
            stepped=frozenset(
                k for k, spec in specs.items() if not isinstance(spec, _STABLE_CHANNELS)
            ),
        )

    def check_fusable(self) -> None:
        """Refuse a field of a kind a view cannot reproduce, naming the schema declaring it."""
        for key, spec in self.specs.items():
            if not isinstance(spec, _PLAIN_CHANNELS + REDUCER_CHANNELS):
                raise MiddlewareError(
                    f"fuse_hooks=True cannot run hooks over the state field '{key}' declared by "
                    f"'{self.owners.get(key, '?')}': its channel is {type(spec).__name__}. Fused "
                    "hooks support plain fields, fields with a reducer (Annotated[T, reducer]) "
                    "and ephemeral fields; declare the field as one of these, or build the agent "
                    "without fuse_hooks."
                )


def _reducer(spec: Channel) -> Any:
    return getattr(spec, "operator", None) or getattr(spec, "reducer", None)


class StateView:
    """The state as each hook of a fused node sees it, and the writes the node makes.

    Channels are made on a field's first write (and at the start for fields a step may change
    unwritten), so hooks that return nothing cost a dict copy each.
    """

    __slots__ = ("_channels", "_fields", "_overwritten", "_plain", "_reduced", "values")

    def __init__(self, fields: StateChannels, state: dict[str, Any]) -> None:
        self._fields = fields
        self.values = state
        self._channels = {
            key: fields.specs[key].from_checkpoint(state[key])
            for key in fields.stepped
            if key in state
        }
        self._plain: dict[str, None] = {}
        self._reduced: list[tuple[str, Any]] = []
        self._overwritten: dict[str, None] = {}

    def state(self) -> dict[str, Any]:
        """The state for the next hook: its own dict, as each node gets its own."""
        return dict(self.values)

    def apply(self, update: dict[str, Any] | None, hook_label: str) -> None:
        """Apply ``update`` as the graph applies the writes of one step: written fields take
        their value, the others are stepped. An update a channel refuses raises here, noted
        with ``hook_label``."""
        written = update or {}
        changed: list[str] = []
        try:
            for key, value in written.items():
                if key in self._fields.specs and self._write(key, value):
                    changed.append(key)
        except Exception as error:
            note_origin(error, hook_label)
            raise
        for key, channel in self._channels.items():
            if key not in written and channel.update(()):
                changed.append(key)
        if changed:
            self.values = dict(self.values)
            for key in changed:
                channel = self._channels[key]
                if channel.is_available():
                    self.values[key] = channel.get()
                else:
                    self.values.pop(key, None)

    def _write(self, key: str, value: Any) -> bool:
        if key in self._fields.messages and not is_overwrite(value):
            value = _as_messages(value)
        if key in self._fields.reduced:
            self._reduced.append((key, value))
            if is_overwrite(value):
                self._overwritten[key] = None
        else:
            self._plain[key] = None
        return self._channel(key).update([value])

    def _channel(self, key: str) -> Channel:
        channel = self._channels.get(key)
        if channel is None:
            spec = self._fields.specs[key]
            if key not in self.values:
                channel = spec.copy()
            elif key in self._fields.reduced:
                # A copy: a reducer that extends its left value in place must not touch the
                # value the graph holds, which it will extend itself.
                channel = spec.from_checkpoint(copy.copy(self.values[key]))
            else:
                channel = spec.from_checkpoint(self.values[key])
            self._channels[key] = channel
        return channel

    def writes(self) -> dict[str, Any] | list[Command[Any]] | None:
        """What the node returns: the plain fields in one write, then each reducer update in
        order. A reducer field given an ``Overwrite`` gets one ``Overwrite`` of the value it
        ended with: the graph applies nothing after an ``Overwrite`` within one step."""
        plain = {
            key: self._channels[key].get()
            for key in self._plain
            if self._channels[key].is_available()
        }
        reduced: list[Command[Any]] = [
            Command(update={key: value})
            for key, value in self._reduced
            if key not in self._overwritten
        ]
        reduced += [
            Command(update={key: Overwrite(self._channels[key].get())}) for key in self._overwritten
        ]
        if not reduced:
            return plain or None
        return [Command(update=plain), *reduced] if plain else reduced


def _as_messages(value: Any) -> Any:
    """``value`` as the messages ``add_messages`` makes of it, so that the ids it gives them in
    the view are the ids the graph keeps (it gives new ids only to new message objects)."""
    items = value if isinstance(value, list) else [value]
    if all(isinstance(m, BaseMessage) and not isinstance(m, BaseMessageChunk) for m in items):
        return value
    return [message_chunk_to_message(m) for m in convert_to_messages(items)]
