"""Agent state: the base schema, visibility markers, and merging every middleware's schema."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import UnionType
from typing import (
    Annotated,
    Any,
    Generic,
    NotRequired,
    Required,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from langchain_core.messages import AnyMessage
from langgraph.channels import EphemeralValue
from langgraph.channels.delta import DeltaChannel
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict, TypeVar, is_typeddict

from graphagent._core.hooks import JUMP_TARGETS as JUMP_TARGETS, JumpTo as JumpTo
from graphagent._core.log import log
from graphagent._core.message_deltas import add_message_batches
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import MiddlewareError, StateSchemaConflictError

ResponseT = TypeVar("ResponseT", default=Any)
"""The type of the ``structured_response`` field: what ``response_format`` parses into."""


@refuse_unknown_arguments
@dataclass(frozen=True, slots=True)
class OmitFromSchema:
    """Marks a state field, inside ``Annotated[...]``, as left out of the input and/or output.

    Args:
        input: Leave the field out of the input schema: callers cannot pass it in.
        output: Leave the field out of the output schema: runs do not return it.
    """

    input: bool = True
    output: bool = True


OmitFromInput = OmitFromSchema(input=True, output=False)
"""The caller cannot pass this field in; it still comes back out."""
OmitFromOutput = OmitFromSchema(input=False, output=True)
"""The caller may pass this field in; it is not returned."""
PrivateStateAttr = OmitFromSchema(input=True, output=True)
"""Internal to the agent: neither accepted as input nor returned."""


MESSAGES_SNAPSHOT_FREQUENCY = 100
"""How many updates of ``messages`` checkpoints store as deltas before one stores the whole
history again (docs/deployment.md, "How a thread is stored", says why 100)."""


class AgentState(TypedDict, Generic[ResponseT]):
    """The state every agent has; middleware and users extend it by subclassing."""

    messages: Required[
        Annotated[
            list[AnyMessage],
            DeltaChannel(add_message_batches, snapshot_frequency=MESSAGES_SNAPSHOT_FREQUENCY),
        ]
    ]
    """The conversation. Updates are merged by message id: new messages are appended, a
    message with a known id replaces the old one. Checkpoints store each step's new messages,
    and the whole history only every ``MESSAGES_SNAPSHOT_FREQUENCY`` updates."""
    jump_to: NotRequired[Annotated[JumpTo | None, EphemeralValue, PrivateStateAttr]]
    """Set by a node hook to jump (``"end"``, ``"tools"``, ``"model"``); read once, then
    cleared (private: neither input nor output)."""
    structured_response: NotRequired[Annotated[ResponseT, OmitFromInput]]
    """The parsed structured output, with a ``response_format`` (output only)."""


class FullHistoryState(AgentState[ResponseT]):
    """``AgentState`` stored as LangChain stores it: every checkpoint holds the whole history.

    Pass it (or a subclass) as ``create_agent(state_schema=...)`` when something reads the
    checkpoints themselves and expects the full ``messages`` in each. The values are the same."""

    messages: Required[Annotated[list[AnyMessage], add_messages]]
    """The conversation, merged by message id as in ``AgentState``."""


class InputAgentState(TypedDict):
    """What an agent accepts by default: messages."""

    messages: Required[Annotated[list[AnyMessage | dict[str, Any]], add_messages]]
    """The new messages: message objects, ``(role, text)`` pairs, or dicts with ``role`` and
    ``content``."""


class OutputAgentState(TypedDict, Generic[ResponseT]):
    """What an agent returns by default: messages and, with a response format, the response."""

    messages: Required[Annotated[list[AnyMessage], add_messages]]
    """The whole conversation."""
    structured_response: NotRequired[ResponseT]
    """The parsed structured output, with a ``response_format``."""


@dataclass(frozen=True, slots=True)
class StateField:
    """One field of the merged state: its annotation for the graph, visibility and declarer."""

    name: str
    annotation: Any
    visibility: OmitFromSchema | None
    owner: str

    @property
    def in_input(self) -> bool:
        return self.visibility is None or not self.visibility.input

    @property
    def in_output(self) -> bool:
        return self.visibility is None or not self.visibility.output


@dataclass(frozen=True, slots=True)
class MergedSchemas:
    """The state, input and output TypedDicts of one agent, plus the fields they came from."""

    state: type[Any]
    input: type[Any]
    output: type[Any]
    fields: Mapping[str, StateField]


def merge_state_schemas(
    sources: Sequence[tuple[str, type[Any]]], caller: type[Any] | None = None
) -> MergedSchemas:
    """Merge ``(owner, schema)`` pairs into one state; the first declarer of a field is its owner.

    ``caller`` is the ``state_schema`` given to ``create_agent``: its declarations win over those
    of ``AgentState`` and of every middleware (as in LangChain), so it may put ``messages`` on
    another channel, langgraph's ``DeltaChannel`` for one. Two middleware that declare one field
    differently are a conflict, except for the storage of messages: ``add_messages`` and its delta
    twin hold the same values, and the first declaration (``AgentState``'s) is kept. Visibility
    markers are stripped from the graph's annotations
    (langgraph reads the last ``Annotated`` item as a reducer, so a trailing marker would hide
    it) and kept on the field. A field declared by several schemas gets the most restrictive
    visibility any of them gives it: re-declaring a middleware's private field to read it must
    not let callers write it.
    """
    fields: dict[str, StateField] = {}
    merged: set[int] = set()
    for owner, schema in sources:
        if id(schema) in merged:  # most middleware keep the default AgentState: read it once
            continue
        for field in _fields(owner, schema):
            known = fields.get(field.name)
            if known is not None and not _same_values(known.annotation, field.annotation):
                raise _conflict(known, field)
            fields[field.name] = field if known is None else _restricted(known, field)
        merged.add(id(schema))
    if caller is not None:
        for field in _fields("state_schema", caller):
            fields[field.name] = _overridden(fields.get(field.name), field)
    return MergedSchemas(
        state=_typed_dict("AgentState", fields.values()),
        input=_typed_dict("AgentInput", (f for f in fields.values() if f.in_input)),
        output=_typed_dict("AgentOutput", (f for f in fields.values() if f.in_output)),
        fields=fields,
    )


def _fields(owner: str, schema: Any) -> list[StateField]:
    return [_field(name, raw, owner) for name, raw in _type_hints(owner, schema).items()]


def _restricted(known: StateField, field: StateField) -> StateField:
    return replace(known, visibility=_stricter(known.visibility, field.visibility))


def _overridden(known: StateField | None, field: StateField) -> StateField:
    """The caller's declaration of a field, kept as strict in visibility as the one it replaces."""
    if known is None or known.owner == field.owner:
        return field
    if _unrequired(known.annotation) != _unrequired(field.annotation):
        log.info(
            "State field '%s': the state_schema's declaration %s replaces %s from '%s'.",
            field.name,
            show_type(field.annotation),
            show_type(known.annotation),
            known.owner,
        )
    return replace(field, visibility=_stricter(known.visibility, field.visibility))


def _conflict(known: StateField, field: StateField) -> StateSchemaConflictError:
    shown = show_type(known.annotation), show_type(field.annotation)
    if shown[0] == shown[1]:  # they differ in Annotated metadata that show_type leaves out
        shown = repr(_unrequired(known.annotation)), repr(_unrequired(field.annotation))
    return StateSchemaConflictError(
        f"State field '{field.name}' is declared as {shown[0]} by '{known.owner}' and as "
        f"{shown[1]} by '{field.owner}'; declare it with the same type and reducer in both "
        "schemas (subclassing the other schema does that), or rename one of the fields."
    )


def _stricter(a: OmitFromSchema | None, b: OmitFromSchema | None) -> OmitFromSchema | None:
    """Left out of the input (output) when either declaration leaves it out."""
    if a is None or b is None:
        return a or b
    return OmitFromSchema(input=a.input or b.input, output=a.output or b.output)


def _type_hints(owner: str, schema: Any) -> dict[str, Any]:
    if not (isinstance(schema, type) and is_typeddict(schema)):
        raise MiddlewareError(
            f"'{owner}' gives a state_schema of {schema!r}, which is not a TypedDict; "
            "declare it as `class MyState(AgentState): field: NotRequired[int]`."
        )
    return _hints_of(schema)


@functools.lru_cache(maxsize=512)
def _hints_of(schema: type) -> dict[str, Any]:
    """A schema's resolved annotations, read once per class: every agent built with a
    middleware reads its schema (slow for schemas that extend AgentState)."""
    return get_type_hints(schema, include_extras=True)


def _field(name: str, raw: Any, owner: str) -> StateField:
    wrapper, inner = _split_required(raw)
    visibility: OmitFromSchema | None = None
    if get_origin(inner) is Annotated:
        base, *meta = get_args(inner)
        markers = [m for m in meta if isinstance(m, OmitFromSchema)]
        if markers:
            visibility = markers[-1]
            rest = [m for m in meta if not isinstance(m, OmitFromSchema)]
            inner = Annotated[(base, *rest)] if rest else base
    annotation = wrapper[inner] if wrapper is not None else inner
    return StateField(name=name, annotation=annotation, visibility=visibility, owner=owner)


def _split_required(annotation: Any) -> tuple[Any, Any]:
    origin = get_origin(annotation)
    if origin is NotRequired or origin is Required:
        return origin, get_args(annotation)[0]
    return None, annotation


def _unrequired(annotation: Any) -> Any:
    """``annotation`` out of ``Required``/``NotRequired``; its ``Annotated`` reducer stays, as it
    decides how the field is stored (``graphagent._core.annotations.bare`` drops that too)."""
    return _split_required(annotation)[1]


def _same_values(a: Any, b: Any) -> bool:
    """Whether two declarations of a field hold the same values, however they are stored."""
    return bool(_storage_blind(_unrequired(a)) == _storage_blind(_unrequired(b)))


def _storage_blind(annotation: Any) -> Any:
    """``annotation`` with a messages reducer (``add_messages`` on a plain channel, or
    ``add_message_batches`` on a ``DeltaChannel``) read as the one thing both are."""
    if get_origin(annotation) is not Annotated:
        return annotation
    base, *meta = get_args(annotation)
    last = meta[-1]
    if last is add_messages or (
        isinstance(last, DeltaChannel) and last.reducer is add_message_batches
    ):
        return (base, *meta[:-1], "messages merged by id")
    return annotation


def show_type(annotation: Any) -> str:
    """A field's type for messages: ``int``, ``list[str] (reducer add)``; visibility markers and
    ``NotRequired`` are left out."""
    bare = _unrequired(annotation)
    reducer = _reducer(bare)
    return f"{_type_name(bare)} (reducer {reducer})" if reducer else _type_name(bare)


def _reducer(annotation: Any) -> str | None:
    """The name of the reducer, which langgraph takes from the last ``Annotated`` item."""
    if get_origin(annotation) is not Annotated:
        return None
    last = get_args(annotation)[-1]
    if isinstance(last, DeltaChannel):
        return f"{_name(last.reducer)} on DeltaChannel"
    return _name(last) if callable(last) else None


def _name(reducer: Any) -> str:
    return str(getattr(reducer, "__name__", repr(reducer)))


def _type_name(annotation: Any) -> str:
    if annotation == AnyMessage:
        return "AnyMessage"
    if annotation is type(None) or annotation is Ellipsis:
        return "None" if annotation is type(None) else "..."
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _type_name(args[0])
    if origin is Union or origin is UnionType:
        return " | ".join(map(_type_name, args))
    if origin is not None and args:
        return f"{_type_name(origin)}[{', '.join(map(_type_name, args))}]"
    if isinstance(annotation, type):
        return annotation.__name__
    return repr(annotation).replace("typing.", "").replace("typing_extensions.", "")


def _typed_dict(name: str, fields: Any) -> type[Any]:
    annotations = {f.name: f.annotation for f in fields}
    return TypedDict(name, annotations)  # type: ignore[operator,no-any-return]
