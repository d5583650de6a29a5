"""State fields an agent shares with its parent graph, and the clashes that break them.

An agent running as a node reads the parent's value of each input field it shares with the parent
and writes its whole value of each shared output field back, through the parent's reducer. Two
declarations of one name clash when their types cannot hold each other's values, or when the
parent's reducer is not the agent's: the parent then reduces the agent's whole value (which holds
what it was given) with its own, and an adding reducer counts everything twice.

Only clashes that are certain are refused: a type that is not a plain class (a forward reference,
a protocol, a type variable) is taken to fit any other.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.channels import BaseChannel, BinaryOperatorAggregate
from langgraph.graph.message import add_messages

from graphagent._core.annotations import bare
from graphagent._core.langgraph_internals import REDUCER_CHANNELS
from graphagent._core.message_deltas import merges_messages
from graphagent.errors import StateSchemaConflictError, note_origin
from graphagent.state import StateField

_NUMBERS = (int, float, complex)


@dataclass(frozen=True, slots=True)
class Declaration:
    """One side's declaration of a field: its value type and its reducer (``None``: the last
    value wins)."""

    typ: Any
    reducer: Any

    @classmethod
    def of(cls, channel: Any) -> Declaration:
        reducer = None
        if isinstance(channel, REDUCER_CHANNELS):
            reducer = getattr(channel, "operator", None) or getattr(channel, "reducer", None)
        return cls(getattr(channel, "typ", Any), getattr(reducer, "__wrapped__", reducer))

    def describe(self, name: str) -> str:
        typ = _shown(self.typ)
        if self.reducer is None:
            return f"{name}: {typ} (the last value written wins)"
        return f"{name}: Annotated[{typ}, {getattr(self.reducer, '__name__', self.reducer)!s}]"


def check_shared_fields(
    agent_name: str,
    fields: Mapping[str, StateField],
    agent_channels: Mapping[str, Any],
    parent_channels: Mapping[str, Any],
    where: str,
    *,
    only: Collection[str] | None = None,
    reducers: bool = True,
) -> None:
    """Refuse the first field the agent and its parent both declare, and that crosses between
    them, whose declarations clash. ``where`` names the parent (for the message); ``only``
    limits the check to those fields, and ``reducers=False`` to their types."""
    for name, field in fields.items():
        if not (field.in_input or field.in_output) or name not in parent_channels:
            continue
        if name not in agent_channels or (only is not None and name not in only):
            continue
        parent = Declaration.of(parent_channels[name])
        agent = Declaration.of(agent_channels[name])
        problem = _clash(parent, agent, writes_back=reducers and field.in_output)
        if problem:
            raise StateSchemaConflictError(
                f"The state field {name!r} clashes between {where} and the agent "
                f"'{agent_name}': the parent declares {parent.describe(name)}, and the agent "
                f"({_owner(field.owner)}) declares {agent.describe(name)}; {problem}. Rename the "
                "field on one side, or give it the same type and reducer on both, or run the "
                "agent from a node of your own that maps the fields "
                "(def node(state): ... agent.invoke({...}) ...)."
            )


def _clash(parent: Declaration, agent: Declaration, *, writes_back: bool) -> str | None:
    if not fits(parent.typ, agent.typ):
        return "one side would receive values of a type it does not declare"
    if writes_back and parent.reducer is not None and not _same_reducer(parent, agent):
        return (
            "the agent writes its whole value back through the parent's reducer, which then "
            "reduces what it already holds a second time"
        )
    return None


def _same_reducer(parent: Declaration, agent: Declaration) -> bool:
    """The same reducer, or two that merge messages by id (a history on a plain channel and one
    on a delta channel): writing the agent's history back merges what the parent holds."""
    if parent.reducer is agent.reducer:
        return True
    return merges_messages(parent.reducer) and merges_messages(agent.reducer)


def _owner(owner: str) -> str:
    if owner in ("AgentState", "state_schema"):
        return f"its {owner}" if owner == "state_schema" else owner
    return f"the state_schema of middleware {owner!r}"


def fits(left: Any, right: Any) -> bool:
    """Whether values of type ``left`` and of type ``right`` may be one another's: ``False`` only
    when they certainly cannot (``int`` and ``str``, ``list[str]`` and ``list[int]``)."""
    left, right = bare(left), bare(right)
    if left is right or left == right or Any in (left, right) or object in (left, right):
        return True
    left_options, right_options = _options(left), _options(right)
    if len(left_options) > 1 or len(right_options) > 1:
        return any(fits(a, b) for a in left_options for b in right_options)
    (left,), (right,) = left_options, right_options
    left_origin, right_origin = typing.get_origin(left) or left, typing.get_origin(right) or right
    if not (isinstance(left_origin, type) and isinstance(right_origin, type)):
        return True
    if not _related(left_origin, right_origin):
        return False
    left_args, right_args = typing.get_args(left), typing.get_args(right)
    if not left_args or not right_args or len(left_args) != len(right_args):
        return True
    return all(fits(a, b) for a, b in zip(left_args, right_args, strict=True) if a is not ...)


def _options(typ: Any) -> tuple[Any, ...]:
    """The members of a union (or the types of a ``Literal``'s values); ``typ`` alone otherwise."""
    origin = typing.get_origin(typ)
    if origin is typing.Union or origin is types.UnionType:
        return tuple(bare(t) for t in typing.get_args(typ))
    if origin is typing.Literal:
        return tuple(dict.fromkeys(type(value) for value in typing.get_args(typ)))
    return (typ,)


def _related(left: type, right: type) -> bool:
    if left in _NUMBERS and right in _NUMBERS:
        return True
    try:
        return issubclass(left, right) or issubclass(right, left)
    except TypeError:  # a protocol or a class that refuses issubclass: cannot tell
        return True


def _shown(typ: Any) -> str:
    typ = bare(typ)
    if isinstance(typ, type) and not typing.get_args(typ):
        return typ.__qualname__
    return repr(typ).replace("typing.", "")


def name_reducer_failures(channels: Mapping[str, BaseChannel[Any, Any, Any]]) -> None:
    """Make each reducer of ``channels`` (a graph's, before it is compiled) say, when it fails,
    which field it reduces: langgraph calls it with no word of the field, so a wrong value
    (such as a parent's of another type) would fail naming nothing. ``add_messages`` names
    what it cannot read itself, and stays as it is."""
    for name, channel in channels.items():
        reducer = getattr(channel, "operator", None)
        if isinstance(channel, BinaryOperatorAggregate) and reducer is not add_messages:
            channel.operator = _named(name, reducer)


def _named(field: str, reducer: Any) -> Any:
    shown = getattr(reducer, "__name__", repr(reducer))

    def reduce(current: Any, update: Any) -> Any:
        try:
            return reducer(current, update)
        except Exception as error:
            note_origin(
                error,
                f"the reducer {shown} of the state field {field!r}, given "
                f"{type(current).__name__} and {type(update).__name__}",
            )
            raise

    reduce.__name__ = shown
    reduce.__wrapped__ = reducer  # type: ignore[attr-defined]
    return reduce
