"""The answer graphagent fills in for a call left unanswered (after a handoff that dropped it,
for one) tells a call that did not run from one that ran and whose result was not kept."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from graphagent import create_agent
from graphagent._core.history import RESULT_NOT_KEPT, UNANSWERED
from graphagent.testing import ScriptedChatModel
from tests.conftest import Run


def call(name: str, call_id: str) -> dict[str, Any]:
    return {"name": name, "args": {}, "id": call_id}


def test_a_dropped_result_is_not_said_never_to_have_run(run: Run) -> None:
    history = [
        HumanMessage("Book it and tell Bob."),
        AIMessage("", tool_calls=[call("book", "booked"), call("to_bob", "handoff")]),
        ToolMessage("Transferred to Bob.", tool_call_id="handoff"),
        AIMessage("", tool_calls=[call("cancel", "skipped")]),
        HumanMessage("Never mind."),
    ]
    model = ScriptedChatModel(["ok"])

    run(create_agent(model), {"messages": history})

    sent = {m.tool_call_id: m for m in model.calls[0].messages if isinstance(m, ToolMessage)}
    assert (sent["booked"].content, sent["booked"].status) == (RESULT_NOT_KEPT, "error")
    assert (sent["skipped"].content, sent["skipped"].status) == (UNANSWERED, "error")
    assert sent["handoff"].content == "Transferred to Bob."
    assert "did not run" in UNANSWERED
    assert "ran, but its result was not added" in RESULT_NOT_KEPT
