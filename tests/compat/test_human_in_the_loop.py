"""LangChain 1.5.2's ``HumanInTheLoopMiddleware(interrupt_mode=...)``: with ``"per_call"`` one
interrupt per reviewed tool call, raised as the call starts, whose value is a
``ToolApprovalRequest`` and whose ``response_schema`` lists the decisions allowed for the tool;
each is answered with one decision keyed by the interrupt's id, which the schema checks before it
is saved (a bad one raises pydantic's ``ValidationError``; an edit may carry arguments the tool
does not declare, which it ignores). In both modes a rejected or responded call is answered in
LangChain's words, by a ``ToolMessage`` carrying LangChain's notification metadata
(``lc_source: "hitl_interrupt_decision"``); an approved or edited call's result carries none, and
an edited one opens with the notice and "Executed instead: ..."."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import ValidationError

from graphagent import create_agent
from graphagent.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    InterruptOnConfig,
    ToolErrorMiddleware,
    ToolRetryMiddleware,
)
from graphagent.middleware.human_in_the_loop import InterruptMode, ToolApprovalRequest
from graphagent.testing import ScriptedChatModel, calls, tool_call
from tests.conftest import run_agent
from tests.review_tools import RAN, delete_file, read_file

THREAD = {"configurable": {"thread_id": "t"}}
pytestmark = pytest.mark.usefixtures("review_log")


@tool
def send_email(to: str, cc: str | None = None) -> str:
    """Send an email."""
    RAN.append(f"send_email(to={to}, cc={cc})")
    return f"sent to {to}"


EMAIL = tool_call("send_email", {"to": "alice"}, id="call_email")


def per_call_agent(
    tool_calls: list[Any], interrupt_on: dict[str, Any], *after: AgentMiddleware[Any, Any, Any]
) -> Any:
    """A per-call reviewed agent whose model makes ``tool_calls``, then finishes."""
    hitl = HumanInTheLoopMiddleware(interrupt_on, interrupt_mode="per_call")
    return create_agent(
        ScriptedChatModel([calls(*tool_calls), "done"]),
        [send_email, delete_file, read_file],
        middleware=[hitl, *after],
        checkpointer=InMemorySaver(),
    )


def start(agent: Any, how: str) -> list[Any]:
    """Run until the agent pauses; its interrupts."""
    return list(run_agent(agent, how, {"messages": ["go"]}, config=THREAD)["__interrupt__"])


def answer(agent: Any, how: str, answers: dict[str, Any]) -> dict[str, Any]:
    return run_agent(agent, how, Command(resume=answers), config=THREAD)


def results(final: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in final["messages"] if isinstance(m, ToolMessage)}


# -- the mode ------------------------------------------------------------------------------------


def test_batched_is_the_default_and_an_unknown_mode_is_refused() -> None:
    assert HumanInTheLoopMiddleware({"send_email": True}).interrupt_mode == "batched"
    mode: InterruptMode = "per_call"
    assert HumanInTheLoopMiddleware({"send_email": True}, interrupt_mode=mode).interrupt_mode == (
        "per_call"
    )
    with pytest.raises(ValueError, match="must be 'batched' or 'per_call', got 'sometimes'"):
        HumanInTheLoopMiddleware({"send_email": True}, interrupt_mode="sometimes")  # type: ignore[arg-type]


# -- what the reviewer is sent -------------------------------------------------------------------


def test_the_interrupt_shows_the_call_and_the_answers_it_accepts(how_call: str) -> None:
    config: InterruptOnConfig = {
        "allowed_decisions": ["approve", "edit", "reject", "respond"],
        "description": "Email",
    }
    agent = per_call_agent([EMAIL], {"send_email": config})

    [paused] = start(agent, how_call)

    expected: ToolApprovalRequest = {
        "type": "tool_approval",
        "tool_call_id": "call_email",
        "name": "send_email",
        "args": {"to": "alice"},
        "description": "Email",
    }
    assert paused.value == expected
    schema = paused.response_schema
    defs = schema["$defs"]
    assert schema["oneOf"] == [
        {"$ref": "#/$defs/ApproveDecision"},
        {"$ref": "#/$defs/EditDecision"},
        {"$ref": "#/$defs/RejectDecision"},
        {"$ref": "#/$defs/RespondDecision"},
    ]
    assert defs["ApproveDecision"]["required"] == ["type"]
    assert defs["EditDecision"]["required"] == ["type", "edited_action"]
    assert defs["RejectDecision"]["required"] == ["type"]
    assert defs["RespondDecision"]["required"] == ["type", "message"]
    # An edit names the same tool; its args follow the tool's own schema.
    assert defs["EditDecision"]["properties"]["edited_action"] == {"$ref": "#/$defs/EditedAction"}
    assert defs["EditedAction"]["properties"]["name"]["const"] == "send_email"
    assert defs["EditedAction"]["properties"]["args"] == {"$ref": "#/$defs/send_email"}
    assert (list(defs["send_email"]["properties"]), defs["send_email"]["required"]) == (
        ["to", "cc"],
        ["to"],
    )
    assert defs["send_email"]["description"] == "Send an email."
    assert RAN == []


def test_a_tool_with_one_decision_gets_that_decisions_plain_schema(how_call: str) -> None:
    agent = per_call_agent([EMAIL], {"send_email": {"allowed_decisions": ["respond", "respond"]}})

    [paused] = start(agent, how_call)

    assert paused.response_schema["properties"]["type"]["const"] == "respond"
    assert paused.response_schema["required"] == ["type", "message"]


def test_a_description_function_gets_the_call_the_state_and_the_graphs_runtime(
    how_call: str,
) -> None:
    seen: list[object] = []

    def describe(call: Any, state: Any, runtime: Any) -> str:
        seen.append(runtime)
        return f"Email {call['args']['to']}? ({len(state['messages'])} messages)"

    agent = per_call_agent(
        [EMAIL], {"send_email": {"allowed_decisions": ["approve"], "description": describe}}
    )

    [paused] = start(agent, how_call)

    assert paused.value["description"] == "Email alice? (2 messages)"
    assert seen
    assert all(isinstance(runtime, Runtime) for runtime in seen)


# -- what the reviewer answers -------------------------------------------------------------------

EDIT_TO_BOB = {"type": "edit", "edited_action": {"name": "send_email", "args": {"to": "bob"}}}


@pytest.mark.parametrize(
    ("decision", "ran", "status", "ends_with"),
    [
        ({"type": "approve"}, ["send_email(to=alice, cc=None)"], "success", "sent to alice"),
        (EDIT_TO_BOB, ["send_email(to=bob, cc=None)"], "success", "sent to bob"),
        ({"type": "reject", "message": "not now"}, [], "error", "not now"),
        ({"type": "respond", "message": "already sent"}, [], "success", "already sent"),
    ],
    ids=["approve", "edit", "reject", "respond"],
)
def test_each_decision(
    decision: dict[str, Any], ran: list[str], status: str, ends_with: str, how_call: str
) -> None:
    agent = per_call_agent([EMAIL], {"send_email": True})
    [paused] = start(agent, how_call)

    final = answer(agent, how_call, {paused.id: decision})

    message = results(final)["call_email"]
    assert (RAN, message.status, message.name) == (ran, status, "send_email")
    assert message.text.endswith(ends_with)
    # Only an edit tells the model that the call it made is not the one that ran.
    assert ('send_email with arguments {"to": "bob"}' in message.text) == (
        decision["type"] == "edit"
    )
    # The model's message keeps the call it made.
    [model_call] = next(m for m in final["messages"] if isinstance(m, AIMessage)).tool_calls
    assert model_call["args"] == {"to": "alice"}
    assert "__interrupt__" not in final


@pytest.mark.parametrize("mode", ["batched", "per_call"])
def test_a_reject_without_a_reason_says_the_call_did_not_run(mode: str, how_call: str) -> None:
    agent = reviewed_agent(mode)
    [paused] = start(agent, how_call)

    resume = as_answer(mode, {"type": "reject"})
    message = results(answer(agent, how_call, {paused.id: resume}))["call_email"]

    assert message.status == "error"
    assert message.text == (
        "User rejected the tool call for `send_email` with id call_email. The tool was not "
        "executed. Do not retry this tool call unless the user explicitly requests it."
    )
    assert RAN == []


def reviewed_agent(mode: str) -> Any:
    hitl = HumanInTheLoopMiddleware({"send_email": True}, interrupt_mode=mode)  # type: ignore[arg-type]
    return create_agent(
        ScriptedChatModel([calls(EMAIL), "done"]),
        [send_email],
        middleware=[hitl],
        checkpointer=InMemorySaver(),
    )


def as_answer(mode: str, decision: dict[str, Any]) -> dict[str, Any]:
    return {"decisions": [decision]} if mode == "batched" else decision


@pytest.mark.parametrize(
    ("decision", "ran", "status", "content"),
    [
        ({"type": "approve"}, ["alice"], "success", "sent to alice"),
        (EDIT_TO_BOB, ["bob"], "success", "sent to bob"),
        (
            {"type": "reject", "message": "not now"},
            [],
            "error",
            "User rejected the tool call for `send_email` with reason: not now",
        ),
        ({"type": "respond", "message": "already sent"}, [], "success", "already sent"),
    ],
    ids=["approve", "edit", "reject", "respond"],
)
@pytest.mark.parametrize("mode", ["batched", "per_call"])
def test_each_decision_in_each_mode_and_its_notification_metadata(
    mode: str, decision: dict[str, Any], ran: list[str], status: str, content: str, how_call: str
) -> None:
    agent = reviewed_agent(mode)
    [paused] = start(agent, how_call)

    final = answer(agent, how_call, {paused.id: as_answer(mode, decision)})

    message = results(final)["call_email"]
    answered = decision["type"] in ("reject", "respond")
    assert message.additional_kwargs == (
        {"lc_source": "hitl_interrupt_decision", "lc_data": {"decision": decision["type"]}}
        if answered
        else {}
    )
    assert ([r.split("to=")[1].split(",")[0] for r in RAN], message.status) == (ran, status)
    assert message.text.endswith(content)
    if answered:
        assert message.text == content
    # In both modes the model's message keeps the call it made.
    [model_call] = next(m for m in final["messages"] if isinstance(m, AIMessage)).tool_calls
    assert model_call == EMAIL
    # Only an edit tells the model that a reviewer replaced the call, in both modes.
    assert ("Executed instead: send_email" in message.text) == (decision["type"] == "edit")


@pytest.mark.parametrize("mode", ["batched", "per_call"])
def test_edit_notice_none_adds_nothing(mode: Any, how_call: str) -> None:
    hitl = HumanInTheLoopMiddleware({"send_email": True}, interrupt_mode=mode, edit_notice=None)
    agent = create_agent(
        ScriptedChatModel([calls(EMAIL), "done"]),
        [send_email],
        middleware=[hitl],
        checkpointer=InMemorySaver(),
    )
    [paused] = start(agent, how_call)

    final = answer(agent, how_call, {paused.id: as_answer(mode, EDIT_TO_BOB)})

    assert results(final)["call_email"].text == "sent to bob"


def test_each_gated_call_pauses_alone_and_is_answered_by_id(how_call: str) -> None:
    agent = per_call_agent(
        [
            tool_call("send_email", {"to": "alice", "cc": "carol"}, id="call_email"),
            tool_call("delete_file", {"path": "x.txt"}, id="call_delete"),
            tool_call("delete_file", {"path": "tmp.txt"}, id="call_delete_tmp"),
            tool_call("read_file", {"path": "y.txt"}, id="call_read"),
        ],
        {
            "send_email": True,
            "delete_file": {
                "allowed_decisions": ["approve", "reject"],
                "when": lambda request: request.tool_call["args"]["path"] != "tmp.txt",
            },
        },
    )

    paused = start(agent, how_call)

    by_tool = {i.value["name"]: i for i in paused}
    email, delete = by_tool["send_email"], by_tool["delete_file"]
    assert (len(paused), delete.value["args"]) == (2, {"path": "x.txt"})
    # A call that is not gated, or that `when` lets through, runs without waiting.
    assert sorted(RAN) == ["delete_file(tmp.txt)", "read_file(y.txt)"]
    assert delete.response_schema["oneOf"] == [
        {"$ref": "#/$defs/ApproveDecision"},
        {"$ref": "#/$defs/RejectDecision"},
    ]
    # Each interrupt takes only its own tool's decisions.
    with pytest.raises(ValidationError, match="expected tags: 'approve', 'reject'"):
        answer(agent, how_call, {delete.id: {"type": "respond", "message": "x"}})

    # The edit replaces the arguments: `cc` is not carried over from the model's call.
    [pending] = answer(agent, how_call, {email.id: EDIT_TO_BOB})["__interrupt__"]
    assert pending.id == delete.id
    final = answer(agent, how_call, {delete.id: {"type": "reject", "message": "keep it"}})

    assert sorted(RAN) == [  # nothing ran twice
        "delete_file(tmp.txt)",
        "read_file(y.txt)",
        "send_email(to=bob, cc=None)",
    ]
    messages = results(final)
    assert (
        'Executed instead: send_email with arguments {"to": "bob"}' in messages["call_email"].text
    )
    assert (messages["call_delete"].status, "keep it" in messages["call_delete"].text) == (
        "error",
        True,
    )
    assert "__interrupt__" not in final


def test_several_answers_at_once(how_call: str) -> None:
    calls_ = [tool_call("send_email", {"to": "alice"}, id=i) for i in ("e1", "")]  # "" works too
    agent = per_call_agent(calls_, {"send_email": True})

    by_call = {i.value["tool_call_id"]: i.id for i in start(agent, how_call)}
    assert set(by_call) == {"e1", ""}
    final = answer(
        agent, how_call, {by_call["e1"]: {"type": "approve"}, by_call[""]: {"type": "reject"}}
    )

    assert RAN == ["send_email(to=alice, cc=None)"]
    assert results(final)[""].status == "error"


# -- answers that do not fit ---------------------------------------------------------------------

BAD_ANSWERS = {
    "no edited_action": ({"type": "edit"}, r"1 validation error for .*\nedit\.edited_action\n"),
    "unknown type": ({"type": "nope"}, "'nope' .* expected tags: 'approve', 'edit'"),
    "missing arg": (
        {"type": "edit", "edited_action": {"name": "send_email", "args": {}}},
        r"edit\.edited_action\.args\.to\n  Field required",
    ),
    "wrong arg type": (
        {"type": "edit", "edited_action": {"name": "send_email", "args": {"to": 5}}},
        r"edit\.edited_action\.args\.to\n  Input should be a valid string",
    ),
    "another tool": (
        {"type": "edit", "edited_action": {"name": "delete_file", "args": {"path": "x"}}},
        r"edit\.edited_action\.name\n  Input should be 'send_email'",
    ),
    "a batched answer": ({"decisions": [{"type": "approve"}]}, "Unable to extract tag"),
}


@pytest.mark.parametrize("case", BAD_ANSWERS, ids=list(BAD_ANSWERS))
@pytest.mark.parametrize(
    "after",
    [(), (ToolRetryMiddleware(initial_delay=0),), (ToolErrorMiddleware(on_error=lambda *_: "x"),)],
    ids=["alone", "before_retry", "before_tool_error"],
)
def test_a_bad_answer_raises_and_is_not_saved(
    case: str, after: tuple[AgentMiddleware[Any, Any, Any], ...], how_call: str
) -> None:
    bad, problem = BAD_ANSWERS[case]
    agent = per_call_agent([EMAIL], {"send_email": True}, *after)
    [paused] = start(agent, how_call)

    with pytest.raises(ValidationError, match=problem):
        answer(agent, how_call, {paused.id: bad})
    assert RAN == []

    final = answer(agent, how_call, {paused.id: EDIT_TO_BOB})
    assert RAN == ["send_email(to=bob, cc=None)"]
    assert "__interrupt__" not in final


def test_a_decision_sent_to_a_batched_review_is_refused(how_call: str) -> None:
    hitl = HumanInTheLoopMiddleware({"send_email": True})
    agent = create_agent(
        ScriptedChatModel([calls(EMAIL), "done"]),
        [send_email],
        middleware=[hitl],
        checkpointer=InMemorySaver(),
    )
    [paused] = start(agent, how_call)
    assert set(paused.value) == {"action_requests", "review_configs"}

    with pytest.raises(ValueError, match="decisions"):
        answer(agent, how_call, {paused.id: {"type": "approve"}})

    final = answer(agent, how_call, {paused.id: {"decisions": [{"type": "approve"}]}})
    assert RAN == ["send_email(to=alice, cc=None)"]
    assert "__interrupt__" not in final


def test_an_answer_for_an_interrupt_that_is_not_pending_is_refused(how_call: str) -> None:
    agent = per_call_agent(
        [EMAIL, tool_call("delete_file", {"path": "x"}, id="call_delete")],
        {"send_email": True, "delete_file": True},
    )
    paused = start(agent, how_call)
    stale = "0" * 32

    # LangChain's agent drops it and pauses again; graphagent says so before anything runs.
    with pytest.raises(ValueError, match=rf"interrupt id\(s\) \['{stale}'\], which do not wait"):
        answer(agent, how_call, {stale: {"type": "approve"}})

    again = answer(agent, how_call, {paused[0].id: {"type": "approve"}})["__interrupt__"]
    assert [i.id for i in again] == [paused[1].id]


def test_a_tool_call_without_an_id_cannot_be_reviewed(how_call: str) -> None:
    no_id = AIMessage(
        content="", tool_calls=[{"name": "send_email", "args": {"to": "a"}, "id": None}]
    )
    agent = create_agent(
        ScriptedChatModel([no_id, "done"]),
        [send_email],
        middleware=[HumanInTheLoopMiddleware({"send_email": True}, interrupt_mode="per_call")],
        checkpointer=InMemorySaver(),
    )

    with pytest.raises(ValueError, match="`send_email` has no ID"):
        start(agent, how_call)
    assert RAN == []


# -- middleware order ------------------------------------------------------------------------------


def test_a_retried_tool_is_not_reviewed_again(how_call: str) -> None:
    attempts: list[str] = []

    @tool("send_email")
    def flaky_email(to: str) -> str:
        """Send an email."""
        attempts.append(to)
        if len(attempts) == 1:
            raise RuntimeError("mail server unavailable")
        return f"sent to {to}"

    hitl = HumanInTheLoopMiddleware({"send_email": True}, interrupt_mode="per_call")
    agent = create_agent(
        ScriptedChatModel([calls(EMAIL), "done"]),
        [flaky_email],
        middleware=[hitl, ToolRetryMiddleware(initial_delay=0)],
        checkpointer=InMemorySaver(),
    )
    [paused] = start(agent, how_call)

    final = answer(agent, how_call, {paused.id: {"type": "approve"}})

    assert "__interrupt__" not in final
    assert attempts == ["alice", "alice"]
    assert results(final)["call_email"].text == "sent to alice"


@pytest.mark.parametrize("mode", ["batched", "per_call"])
def test_an_edit_may_carry_an_argument_the_tool_does_not_declare(mode: str, how_call: str) -> None:
    agent = reviewed_agent(mode)
    [paused] = start(agent, how_call)
    args = {"to": "bob", "subject": "hi"}
    edit = {"type": "edit", "edited_action": {"name": "send_email", "args": args}}

    final = answer(agent, how_call, {paused.id: as_answer(mode, edit)})

    assert RAN == ["send_email(to=bob, cc=None)"]  # the tool ignores `subject`
    assert results(final)["call_email"].text.endswith("\n\nTool response:\nsent to bob")
