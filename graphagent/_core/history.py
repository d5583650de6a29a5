"""Tool-call bookkeeping over a message history: what is pending, malformed, or unpaired.

Before every model call the history is checked for malformed calls to answer and for calls and
answers without their pair. A run's model calls see the same history growing, so what a check
proved of the history is kept (a :class:`_Ledger`), and the next check reads only the messages
added since: the work of a step follows what the step added, not what the thread holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage

FINAL_ANSWER = "graphagent_structured_response"
"""Marks (in ``response_metadata``) the ToolMessage answering a valid structured-output call."""

UNANSWERED = "No result: this tool call did not run, as far as the conversation shows."
"""The answer filled in for a call of a turn in which no call has an answer."""
RESULT_NOT_KEPT = (
    "No result kept: this tool call ran, but its result was not added to the conversation. Do "
    "not assume it had no effect; check before calling it again."
)
"""The answer filled in for a call whose turn has answers to other calls (they ran together, so
it ran too, and its result was dropped), and for a call known to have run without one."""


def pending_tool_calls(messages: Sequence[Any]) -> list[ToolCall]:
    """The tool calls of the last AI message that have no ToolMessage answer yet."""
    answered: set[str | None] = set()
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            answered.add(message.tool_call_id)
        elif isinstance(message, AIMessage):
            return [call for call in message.tool_calls if call["id"] not in answered]
    return []


def answered_in_place(messages: Sequence[Any]) -> bool:
    """Whether the last AI message's tool calls were all answered without running tools (malformed
    calls, invalid structured output, calls a hook refused), so the model should see the answers.
    A valid structured response is a final answer instead."""
    answers: list[ToolMessage] = []
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return bool(answers) and not any(_is_final(m) for m in answers)
        if isinstance(message, ToolMessage):
            answers.append(message)
    return False


def _is_final(message: ToolMessage) -> bool:
    return bool(message.response_metadata.get(FINAL_ANSWER))


def answer_malformed_calls(messages: Sequence[BaseMessage]) -> list[BaseMessage] | None:
    """``messages`` with an error answer right after each malformed tool call (arguments that
    could not be parsed) that has none yet, or ``None`` when there is none to answer.

    The model node answers a new reply's malformed calls with it (``answer_malformed_tool_calls``,
    the default); a history that still holds unanswered ones (written with LangChain's handling,
    or by LangChain) has them answered before the next model call, so the model reads why."""
    if not _ledger(messages).malformed:
        return None
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    history: list[BaseMessage] = []
    for message in messages:
        history.append(message)
        if not isinstance(message, AIMessage):
            continue
        for call in message.invalid_tool_calls:
            call_id = call.get("id")
            if call_id is not None and call_id not in answered:  # "" is an id, as in LangChain
                answered.add(call_id)
                history.append(_malformed_answer(call_id, call.get("name"), call.get("error")))
    return history if len(history) > len(messages) else None


def _malformed_answer(call_id: str, name: str | None, error: str | None) -> ToolMessage:
    name = name or "unknown"
    return ToolMessage(
        content=(
            f"Tool call {name} with id {call_id} could not be executed - arguments were "
            f"malformed or truncated ({error or 'invalid arguments'}). Send the arguments "
            "again as one valid JSON object."
        ),
        tool_call_id=call_id,
        name=name,
        status="error",
    )


def pair_tool_calls(messages: list[Any]) -> list[Any]:
    """``messages`` with every tool call answered and every answer matched to a call.

    Providers reject histories where a tool call has no ToolMessage (left by editing, summarizing
    or a rejected call) or a ToolMessage answers no call. A missing answer is filled with an error
    ToolMessage right after its AI message's answers (``RESULT_NOT_KEPT`` when other calls of that
    message have answers, ``UNANSWERED`` when none has); an orphan answer is dropped.
    """
    if not _ledger(messages).unpaired:
        return messages
    called = {_id for m in messages if isinstance(m, AIMessage) for _id in call_ids(m)}
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    repaired: list[Any] = []
    missing: list[str] = []
    text = UNANSWERED
    for message in messages:
        if isinstance(message, ToolMessage):
            if message.tool_call_id in called:
                repaired.append(message)
            continue
        repaired += _fill(missing, text)
        repaired.append(message)
        if isinstance(message, AIMessage):
            ids = call_ids(message)
            missing = [i for i in ids if i not in answered]
            text = RESULT_NOT_KEPT if len(missing) < len(ids) else UNANSWERED
    return repaired + _fill(missing, text)


def call_ids(message: AIMessage) -> list[str]:
    """The ids of ``message``'s tool calls, valid and malformed, in order; ``""`` is an id, as in
    LangChain (a call without one, ``None``, has none)."""
    return [*_ids(message.tool_calls), *_ids(message.invalid_tool_calls)]


def _ids(calls: Sequence[Any]) -> list[str]:
    return [i for call in calls if (i := call.get("id")) is not None]


def _fill(missing: list[str], text: str) -> list[ToolMessage]:
    filled = [ToolMessage(text, tool_call_id=i, status="error") for i in missing]
    missing.clear()
    return filled


@dataclass(frozen=True, slots=True)
class _Ledger:
    """What the tool calls and answers of ``messages`` are, once read.

    ``unpaired`` holds the ids that are called but not answered, or answered but not called;
    ``malformed`` the malformed calls with no answer. Both empty: nothing to repair. The sets of
    a ledger are never changed once it is made: a longer history gets a ledger of its own.
    """

    messages: list[Any]
    """The history read (a copy: a list may be changed after); kept, to tell that a later
    history begins with it."""
    called: frozenset[str]
    answered: frozenset[str]
    unpaired: frozenset[str]
    malformed: frozenset[str]

    def covers_the_start_of(self, messages: Sequence[Any]) -> bool:
        """Whether ``messages`` begins with the messages this ledger read. A later step's history
        holds the same message objects (langgraph's reducers replace a message, never change it
        in place), which compare at the speed of a list copy."""
        known = self.messages
        size = len(known)
        return (
            size <= len(messages)
            and (size == 0 or messages[size - 1] is known[-1])
            and known == _as_list(messages[:size])
        )

    def extended(self, messages: Sequence[Any]) -> _Ledger:
        """The ledger of ``messages``, which begin with this ledger's: only the rest is read."""
        calls: set[str] = set()
        answers: set[str] = set()
        invalid: set[str] = set()
        for message in messages[len(self.messages) :]:
            if isinstance(message, ToolMessage):
                answers.add(message.tool_call_id)
            elif isinstance(message, AIMessage) and (
                message.tool_calls or message.invalid_tool_calls
            ):
                calls.update(call_ids(message))
                invalid.update(_ids(message.invalid_tool_calls))
        if not calls and not answers:
            return replace(self, messages=list(messages))
        called, answered = self.called | calls, self.answered | answers
        touched = calls | answers
        return _Ledger(
            list(messages),
            called,
            answered,
            unpaired=(self.unpaired - touched)
            | {key for key in touched if (key in called) != (key in answered)},
            malformed=(self.malformed - answers) | (invalid - answered),
        )


def _as_list(messages: Sequence[Any]) -> list[Any]:
    return messages if isinstance(messages, list) else list(messages)


_EMPTY = _Ledger([], frozenset(), frozenset(), frozenset(), frozenset())
_KEPT = 8
"""Ledgers kept: one per history being run, for as many runs at a time (each keeps its
messages alive until it is dropped)."""
_ledgers: tuple[_Ledger, ...] = ()


def _ledger(messages: Sequence[Any]) -> _Ledger:
    """The ledger of ``messages``, built on the longest kept one it extends."""
    global _ledgers
    kept = _ledgers  # read once: other threads may replace it (the tuple is never changed)
    base = max(
        (ledger for ledger in kept if ledger.covers_the_start_of(messages)),
        key=lambda ledger: len(ledger.messages),
        default=_EMPTY,
    )
    if len(base.messages) == len(messages):
        return base
    ledger = base.extended(messages)
    _ledgers = (*(k for k in kept if k is not base), ledger)[-_KEPT:]
    return ledger
