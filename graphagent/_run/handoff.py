"""Handoffs: a tool's ``Command(graph=Command.PARENT, ...)`` leaves the agent with every call of
its turn answered.

langgraph ends the agent's run as soon as a task returns a command for the parent, and applies
that command's update alone: the other tool calls of the same model turn run to their end, but
their results are dropped with the agent's state, and the parent gets neither the AI message that
made the calls nor their answers (only what the update carries, often one orphan ``ToolMessage``).

So graphagent defers the handoff by one step. The tool's command becomes the call's answer in the
agent's own state, a ``ToolMessage`` marked (in its ``response_metadata``) with what the command
asks; the other calls of the turn finish and write their answers as usual. The node that comes
next (the loop's entry, or the exit after a ``return_direct`` tool) finds the marked answer before
doing anything and hands off, with an update that carries the AI message and an answer for every
call of the turn, unless the tool's own update already carries them.

Within a run the mark holds the command's values as they are. A run that stops between the two
steps (a sibling call's interrupt, say) keeps them in its checkpoint, through which messages and
``Send`` packets come back as they were, and pydantic or dataclass values as plain dicts.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, TypeAlias, TypeGuard, TypeVar

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    RemoveMessage,
    ToolCall,
    ToolMessage,
    convert_to_messages,
)
from langgraph.errors import ParentCommand
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.types import Command

from graphagent._core.bridge import Mode
from graphagent._core.history import RESULT_NOT_KEPT, UNANSWERED, call_ids
from graphagent._core.langgraph_internals import update_pairs

StateT = TypeVar("StateT", bound=Mapping[str, Any])
RuntimeT = TypeVar("RuntimeT")
UpdateT = TypeVar("UpdateT")
Core: TypeAlias = Callable[[Mode, StateT, RuntimeT], Coroutine[Any, Any, UpdateT]]
"""A node's core: ``core(mode, state, runtime)``, returning the node's update."""

HANDOFF = "graphagent_handoff"
"""The ``response_metadata`` key of an answer that carries a deferred handoff."""
MESSAGES = "messages"


def is_handoff(result: object) -> TypeGuard[Command[Any]]:
    """Whether a tool's result is a command for the parent graph."""
    return isinstance(result, Command) and result.graph == Command.PARENT


def deferred(call: ToolCall, command: Command[Any]) -> Command[Any]:
    """What the tool node writes for ``call`` instead of handing off now: the call's answer (the
    one the command carries, else one saying the tool ran), marked with the command."""
    pairs = [(key, value) for key, value in update_pairs(command.update)]
    answer = next(
        (m for m in _messages_of(pairs) if _answers(m, call["id"])),
        ToolMessage(RESULT_NOT_KEPT, tool_call_id=call["id"], name=call["name"]),
    )
    kept = answer.model_copy(update={"id": answer.id or str(uuid.uuid4())})
    pairs = [
        (key, _replaced(value, answer, kept) if key == MESSAGES else value) for key, value in pairs
    ]
    mark = {"goto": command.goto, "update": pairs, "resume": command.resume}
    marked = kept.model_copy(
        update={"response_metadata": {**kept.response_metadata, HANDOFF: mark}}
    )
    return Command(update={MESSAGES: [marked]})


def handoff_pending(messages: Sequence[Any]) -> bool:
    """Whether the last model turn's answers carry a deferred handoff."""
    return any(HANDOFF in m.response_metadata for m in _turn(messages)[1])


def hand_off_if_pending(messages: Sequence[Any]) -> None:
    """Hand off now if the last turn's answers carry a deferred handoff (raises
    ``ParentCommand``, as returning the command from the tool would have)."""
    ai, answers = _turn(messages)
    marks = [m.response_metadata[HANDOFF] for m in answers if HANDOFF in m.response_metadata]
    if ai is None or not marks:
        return
    raise ParentCommand(_parent_command(ai, answers, marks))


def handing_off(
    core: Core[StateT, RuntimeT, UpdateT],
) -> Core[StateT, RuntimeT, UpdateT]:
    """A node's core (``core(mode, state, runtime)``) that first hands off if a tool of the last
    turn did."""

    async def run(mode: Mode, state: StateT, runtime: RuntimeT) -> UpdateT:
        hand_off_if_pending(state["messages"])
        return await core(mode, state, runtime)

    return run


def _parent_command(
    ai: AIMessage, answers: list[ToolMessage], marks: list[Mapping[str, Any]]
) -> Command[Any]:
    pairs = [tuple(pair) for mark in marks for pair in mark["update"]]
    carried = [m for key, value in pairs if key == MESSAGES for m in _as_messages(value)]
    rest = [(key, value) for key, value in pairs if key != MESSAGES]
    messages = carried if _replaces_all(carried) else _answered_turn(ai, answers, carried)
    gotos = [mark["goto"] for mark in marks]
    goto = gotos[0] if len(gotos) == 1 else [g for goto in gotos for g in _as_list(goto)]
    resume = next((mark["resume"] for mark in marks if mark.get("resume") is not None), None)
    return Command(
        graph=Command.PARENT, goto=goto, update=[(MESSAGES, messages), *rest], resume=resume
    )


def _answered_turn(
    ai: AIMessage, answers: list[ToolMessage], carried: list[BaseMessage]
) -> list[BaseMessage]:
    """``carried`` with the AI message and, right after it, an answer to each of its calls in
    call order: the carried answer, else the one in the agent's state, else one saying it did
    not run."""
    given = {m.tool_call_id: _unmarked(m) for m in answers}
    calls = call_ids(ai)
    carried_answers = {
        m.tool_call_id: m for m in carried if isinstance(m, ToolMessage) and m.tool_call_id in calls
    }
    block = [
        carried_answers.get(i)
        or given.get(i)
        or ToolMessage(UNANSWERED, tool_call_id=i, status="error")
        for i in calls
    ]
    rest = [m for m in carried if not any(m is a for a in carried_answers.values())]
    position = next((i for i, m in enumerate(rest) if m.id == ai.id), None)
    if position is None:
        return [ai, *block, *rest]
    return [*rest[: position + 1], *block, *rest[position + 1 :]]


def _turn(messages: Sequence[Any]) -> tuple[AIMessage | None, list[ToolMessage]]:
    """The last AI message and the answers after it, if nothing else follows it."""
    answers: list[ToolMessage] = []
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            answers.append(message)
        elif isinstance(message, AIMessage):
            return message, answers[::-1]
        else:
            break
    return None, []


def _answers(message: Any, call_id: str | None) -> bool:
    return isinstance(message, ToolMessage) and message.tool_call_id == call_id


def _messages_of(pairs: list[tuple[str, Any]]) -> list[BaseMessage]:
    return [m for key, value in pairs if key == MESSAGES for m in _as_messages(value)]


def _replaced(value: Any, old: BaseMessage, new: BaseMessage) -> Any:
    if isinstance(value, list):
        return [new if item is old else item for item in value]
    return new if value is old else value


def _as_messages(value: Any) -> list[BaseMessage]:
    """The messages of an update's value, also in the form a checkpoint gives them back in."""
    items = list(value) if isinstance(value, list | tuple) else [value]
    return [item if isinstance(item, BaseMessage) else _message(item) for item in items]


def _message(item: Any) -> BaseMessage:
    if isinstance(item, Mapping) and item.get("type") == "remove":
        return RemoveMessage(id=item["id"])
    return convert_to_messages([item])[0]


def _replaces_all(messages: list[BaseMessage]) -> bool:
    """Whether the update replaces the parent's messages: it is then passed on as it is."""
    return any(isinstance(m, RemoveMessage) and m.id == REMOVE_ALL_MESSAGES for m in messages)


def _unmarked(message: ToolMessage) -> ToolMessage:
    metadata = {k: v for k, v in message.response_metadata.items() if k != HANDOFF}
    return message.model_copy(update={"response_metadata": metadata})


def _as_list(goto: Any) -> list[Any]:
    return list(goto) if isinstance(goto, list | tuple) else [goto]
