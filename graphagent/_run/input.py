"""What a caller writes into an agent's state, passed through the ``transform_input`` hooks before
langgraph stores or streams any of it.

langgraph writes a run's input to the first checkpoint, and streams it in the first chunks, before
any node runs; so what must never be at rest (personal data) is rewritten here, at the agent's
entry, and so is every ``update_state`` update.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.types import Command, StateUpdate

from graphagent._core.langgraph_internals import update_pairs
from graphagent._core.message_ids import with_message_ids
from graphagent._core.records import Hook
from graphagent.errors import HookReturnError, note_origin


def transformed(value: Any, hooks: Sequence[Hook]) -> Any:
    """``value`` (a run's input, or the values of an ``update_state``) with the state update it
    carries passed through ``hooks`` in order.

    A ``Command`` has its ``update`` rewritten; its ``resume`` value is an answer to an interrupt,
    for the code that asked, and is left as given. ``None`` (run on from the checkpoint) stays.
    """
    if not hooks or value is None:
        return value
    if isinstance(value, Command):
        if value.update is None:
            return value
        return dataclasses.replace(value, update=_update(value.update, hooks))
    if isinstance(value, list | tuple) and any(isinstance(item, Command) for item in value):
        return [transformed(item, hooks) for item in value]
    return _update(value, hooks)


def transformed_supersteps(
    supersteps: Sequence[Sequence[Any]], hooks: Sequence[Hook]
) -> Sequence[Sequence[Any]]:
    """``bulk_update_state``'s updates (``StateUpdate`` or plain tuples), values transformed."""
    if not hooks:
        return supersteps
    return [[_with_values_transformed(StateUpdate(*u), hooks) for u in step] for step in supersteps]


def identified_supersteps(supersteps: Sequence[Sequence[Any]]) -> Sequence[Sequence[Any]]:
    """``bulk_update_state``'s updates, the messages each writes holding ids."""
    return [[_with_ids(StateUpdate(*u)) for u in step] for step in supersteps]


def _with_ids(update: StateUpdate) -> StateUpdate:
    if not isinstance(update.values, Mapping):
        return update
    return update._replace(values=with_message_ids(update.values))


def _with_values_transformed(update: StateUpdate, hooks: Sequence[Hook]) -> StateUpdate:
    return update._replace(values=transformed(update.values, hooks))


def _update(update: Any, hooks: Sequence[Hook]) -> Any:
    """One state update (a dict, ``(key, value)`` pairs, a pydantic state...), rewritten into a
    dict; pair by pair when a key repeats (``[("messages", a), ("messages", b)]``)."""
    pairs = update_pairs(update)
    if len({key for key, _ in pairs}) == len(pairs):
        return _through(hooks, dict(pairs))
    return [pair for key, item in pairs for pair in _through(hooks, {key: item}).items()]


def _through(hooks: Sequence[Hook], values: dict[str, Any]) -> dict[str, Any]:
    for hook in hooks:
        try:
            result = hook.sync(values)  # type: ignore[misc]
        except Exception as error:
            note_origin(error, hook.label)
            raise
        if not isinstance(result, dict):
            raise HookReturnError(
                f"{hook.label} returned {type(result).__name__}; return a dict of the values to "
                "write (the dict it was given, when it changes nothing)."
            )
        values = result
    return values
