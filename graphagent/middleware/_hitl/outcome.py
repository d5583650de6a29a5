"""What a batched review's decisions do to the state, and the ``ToolMessage`` that answers a
rejected or responded call in either mode."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolCall, ToolMessage

from graphagent.middleware._hitl.types import (
    EDITS_KEY,
    Action,
    Decision,
    DecisionType,
    RejectDecision,
    RespondDecision,
    Review,
)

DECISION_SOURCE = "hitl_interrupt_decision"
"""The ``lc_source`` of the ``ToolMessage`` that answers a rejected or responded call."""


def last_ai_message(messages: Sequence[Any]) -> AIMessage:
    return next(m for m in reversed(messages) if isinstance(m, AIMessage))


def outcome(message: AIMessage, reviews: list[Review], decisions: list[Decision]) -> dict[str, Any]:
    """The state update that carries out the decisions, as LangChain writes it: the model's AI
    message as it is (every call kept, so each answer follows the call it answers), a
    ``ToolMessage`` for each rejected or responded call, and the reviewer's call for each edited
    one, which the tools step runs in its place. Edits are written even when there are none, so
    an earlier review's cannot apply to this turn."""
    answers: list[ToolMessage] = []
    edits: dict[str, Action] = {}
    chosen: dict[str, DecisionType] = {}
    for review, decision in zip(reviews, decisions, strict=True):
        call = review.call
        chosen[call["id"] or ""] = decision["type"]
        if decision["type"] == "edit":
            edited = decision["edited_action"]
            if call["id"]:
                edits[call["id"]] = Action(name=edited["name"], args=dict(edited["args"]))
        elif decision["type"] != "approve":
            answers.append(answer(call, decision))
    return {"messages": [message, *answers], EDITS_KEY: edits, "hitl_decisions": chosen}


def answer(call: ToolCall, decision: RejectDecision | RespondDecision) -> ToolMessage:
    """What the model reads in place of the tool's result, in LangChain's words, marked with
    LangChain's notification metadata: the harness wrote it, in answer to a review."""
    name, reason = call["name"], decision.get("message")
    if decision["type"] == "respond":
        content, status = decision["message"], "success"
    elif reason:
        content, status = f"User rejected the tool call for `{name}` with reason: {reason}", "error"
    else:
        content = (
            f"User rejected the tool call for `{name}` with id {call['id']}. The tool was not "
            "executed. Do not retry this tool call unless the user explicitly requests it."
        )
        status = "error"
    # What langchain-core's add_notification_metadata writes (it has it from 1.7.2 on).
    notification = {"lc_source": DECISION_SOURCE, "lc_data": {"decision": decision["type"]}}
    return ToolMessage(
        content=content,
        tool_call_id=call["id"] or "",
        name=name,
        status=status,
        additional_kwargs=notification,
    )
