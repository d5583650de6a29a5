"""LangChain 1.5.2's batched ``HumanInTheLoopMiddleware`` as code written for it sees it: the hook
returns the model's AI message (its calls unchanged) with the answers of rejected and responded
calls, and keeps each edited call's replacement in ``hitl_edited_tool_calls``, which its
``wrap_tool_call`` runs in place of the model's call, the result opening with the edit notice
once. The hooks also work called by hand, outside any run, with ``interrupt`` replaced in the
module by a function of the request alone: a wrong answer is then a ``ValueError`` in LangChain's
words, and a ``when`` predicate gets LangChain's request with an empty config."""

from __future__ import annotations

import asyncio
import re
from types import SimpleNamespace
from typing import Any
from unittest.mock import patch

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
from langgraph.runtime import Runtime
from langgraph.types import Command

from graphagent.middleware.human_in_the_loop import HumanInTheLoopMiddleware
from graphagent.testing import tool_call
from tests.review_tools import delete_file, read_file, send_email

EMAIL = tool_call("send_email", {"to": "ann", "body": "hi"}, id="c1")
READ = tool_call("read_file", {"path": "/notes"}, id="c2")
INTERRUPT = "graphagent.middleware.human_in_the_loop.interrupt"
NOTICE = "Edited by a person."


def state_with(*tool_calls: Any, **fields: Any) -> dict[str, Any]:
    return {"messages": [HumanMessage("go"), AIMessage("", tool_calls=list(tool_calls))], **fields}


def answered_by_hand(
    hitl: HumanInTheLoopMiddleware[Any, Any], state: dict[str, Any], *decisions: Any
) -> tuple[dict[str, Any] | None, list[Any]]:
    """``after_model`` called outside a run, ``interrupt`` answering with ``decisions``; what it
    returned, and the requests ``interrupt`` got."""
    asked: list[Any] = []

    def reviewer(request: Any) -> dict[str, Any]:  # takes the request alone, as LangChain's does
        asked.append(request)
        return {"decisions": list(decisions)}

    with patch(INTERRUPT, side_effect=reviewer):
        return hitl.after_model(state, Runtime()), asked  # type: ignore[arg-type]


def test_the_hook_returns_the_model_message_the_answers_and_the_edits() -> None:
    hitl = HumanInTheLoopMiddleware({"send_email": True, "read_file": True})
    state = state_with(EMAIL, READ)
    edit = {"type": "edit", "edited_action": {"name": "send_email", "args": {"to": "bob"}}}

    update, [request] = answered_by_hand(hitl, state, edit, {"type": "reject", "message": "no"})

    assert update is not None
    ai, rejection = update["messages"]
    assert ai == state["messages"][-1]
    assert ai.tool_calls == [EMAIL, READ]  # nothing removed, nothing rewritten
    assert isinstance(rejection, ToolMessage)
    assert (rejection.tool_call_id, rejection.status) == ("c2", "error")
    assert rejection.content == "User rejected the tool call for `read_file` with reason: no"
    assert update["hitl_edited_tool_calls"] == {"c1": {"name": "send_email", "args": {"to": "bob"}}}
    assert request["action_requests"][1]["description"] == (
        "Tool execution requires approval\n\nTool: read_file\nArgs: {'path': '/notes'}"
    )


def test_an_approval_returns_the_model_message_and_no_edits() -> None:
    hitl = HumanInTheLoopMiddleware({"send_email": True})
    state = state_with(EMAIL)

    update, _ = answered_by_hand(hitl, state, {"type": "approve"})

    assert update is not None
    assert update["messages"] == [state["messages"][-1]]
    assert update["hitl_edited_tool_calls"] == {}


@pytest.mark.parametrize(
    ("decisions", "words"),
    [
        ([], "Number of human decisions (0) does not match number of hanging tool calls (1)."),
        (
            [{"type": "respond", "message": "x"}],
            "Unexpected human decision: {'type': 'respond', 'message': 'x'}. Decision type "
            "'respond' is not allowed for tool 'send_email'. Expected one of ['approve', "
            "'reject'] based on the tool's configuration.",
        ),
    ],
    ids=["too few", "not allowed"],
)
def test_a_wrong_answer_to_a_hook_called_by_hand_is_a_value_error(
    decisions: list[Any], words: str
) -> None:
    hitl = HumanInTheLoopMiddleware({"send_email": {"allowed_decisions": ["approve", "reject"]}})

    with pytest.raises(ValueError, match=f"^{re.escape(words)}"):
        answered_by_hand(hitl, state_with(EMAIL), *decisions)


def test_when_gets_the_call_no_tool_and_an_empty_config_outside_a_run() -> None:
    seen: list[ToolCallRequest] = []

    def when(request: ToolCallRequest) -> bool:
        seen.append(request)
        return bool(request.tool_call["args"]["to"] == "eve")

    config = {"allowed_decisions": ["approve"], "when": when}
    hitl = HumanInTheLoopMiddleware({"send_email": config})
    state = state_with(EMAIL)

    update, asked = answered_by_hand(hitl, state, {"type": "approve"})

    assert (update, asked) == (None, [])  # `when` said no: nothing asked
    [request] = seen
    assert (request.tool_call, request.tool, request.state) == (EMAIL, None, state)
    assert isinstance(request.runtime, ToolRuntime)
    assert (request.runtime.tool_call_id, request.runtime.tools) == ("c1", [])
    assert request.runtime.config == {}


@pytest.mark.parametrize("asynchronous", [False, True], ids=["after_model", "aafter_model"])
def test_a_turn_with_nothing_to_review_empties_the_edits_once(asynchronous: bool) -> None:
    hitl = HumanInTheLoopMiddleware({"send_email": True})
    edits = {"c2": {"name": "send_email", "args": {"to": "bob"}}}

    def review(state: dict[str, Any]) -> dict[str, Any] | None:
        if asynchronous:
            return asyncio.run(hitl.aafter_model(state, Runtime()))  # type: ignore[arg-type]
        return hitl.after_model(state, Runtime())  # type: ignore[arg-type]

    assert review(state_with(READ, hitl_edited_tool_calls=edits)) == {"hitl_edited_tool_calls": {}}
    assert review(state_with(READ, hitl_edited_tool_calls={})) is None
    assert review(state_with(READ)) is None


def edited_request(edit: dict[str, Any], *tools: Any) -> ToolCallRequest:
    """The tools step's request for the call ``EMAIL``, which a review replaced by ``edit``."""
    return ToolCallRequest(
        tool_call=EMAIL,
        tool=send_email,
        state=state_with(EMAIL, hitl_edited_tool_calls={"c1": edit}),
        runtime=SimpleNamespace(tools=list(tools)),  # type: ignore[arg-type]
    )


def test_the_tool_layer_runs_the_reviewers_call_and_says_so_once() -> None:
    hitl = HumanInTheLoopMiddleware({"send_email": True}, edit_notice=NOTICE)
    request = edited_request({"name": "read_file", "args": {"path": "/q3"}}, send_email, read_file)
    ran: list[ToolCallRequest] = []

    def handler(req: ToolCallRequest) -> ToolMessage:
        ran.append(req)
        return ToolMessage("contents of /q3", tool_call_id="c1", name=req.tool_call["name"])

    once = hitl.wrap_tool_call(request, handler)
    again = hitl.wrap_tool_call(request, lambda _: once)  # a retry handing the result back

    [req] = ran
    assert (req.tool_call["name"], req.tool_call["args"], req.tool) == (
        "read_file",
        {"path": "/q3"},
        read_file,
    )
    assert req.tool_call["id"] == "c1"
    expected = (
        f'{NOTICE} Executed instead: read_file with arguments {{"path": "/q3"}}.'
        "\n\nTool response:\ncontents of /q3"
    )
    assert isinstance(once, ToolMessage)
    assert isinstance(again, ToolMessage)
    assert (once.content, again.content) == (expected, expected)


@pytest.mark.parametrize(
    ("content", "opened"),
    [
        ([{"type": "text", "text": "ok"}], [{"type": "text", "text": "{lead}"}]),
        (["ok"], ["{lead}"]),
        ([], [{"type": "text", "text": "{notice}"}]),
        ("", "{notice}"),
    ],
    ids=["blocks", "strings", "no blocks", "empty text"],
)
def test_the_notice_keeps_the_shape_of_the_result(content: Any, opened: Any) -> None:
    hitl = HumanInTheLoopMiddleware({"send_email": True}, edit_notice=NOTICE)
    request = edited_request({"name": "send_email", "args": {"to": "bob"}})
    notice = f'{NOTICE} Executed instead: send_email with arguments {{"to": "bob"}}.'
    lead = f"{notice}\n\nTool response:"

    result = hitl.wrap_tool_call(request, lambda _: ToolMessage(content, tool_call_id="c1"))

    def filled(value: Any) -> Any:
        if isinstance(value, str):
            return value.format(lead=lead, notice=notice)
        return {k: filled(v) for k, v in value.items()}

    assert isinstance(result, ToolMessage)
    if isinstance(opened, str):
        assert result.content == filled(opened)
    else:
        assert result.content == [*map(filled, opened), *content]


def test_a_command_result_gets_the_notice_on_its_own_message_only() -> None:
    hitl = HumanInTheLoopMiddleware({"send_email": True}, edit_notice=NOTICE)
    request = edited_request({"name": "send_email", "args": {"to": "bob"}})
    other = ToolMessage("other", tool_call_id="c9")
    command = Command(update={"messages": [ToolMessage("sent", tool_call_id="c1"), other], "n": 1})

    result = hitl.wrap_tool_call(request, lambda _: command)

    assert isinstance(result, Command)
    assert isinstance(result.update, dict)
    mine, theirs = result.update["messages"]
    assert mine.content.startswith(NOTICE)
    assert mine.content.endswith("Tool response:\nsent")
    assert (theirs, result.update["n"]) == (other, 1)


def test_an_edit_naming_a_tool_the_agent_lacks_fails_naming_it() -> None:
    hitl = HumanInTheLoopMiddleware({"send_email": True})
    request = edited_request({"name": "shred", "args": {}}, send_email, delete_file)

    with pytest.raises(ValueError, match="'shred', which is not an available tool") as caught:
        hitl.wrap_tool_call(request, lambda _: ToolMessage("x", tool_call_id="c1"))

    assert "Available tools: delete_file, send_email." in str(caught.value)


def test_a_call_no_review_edited_runs_as_it_is() -> None:
    hitl = HumanInTheLoopMiddleware({"send_email": True})
    request = ToolCallRequest(
        tool_call=EMAIL,
        tool=send_email,
        state=state_with(EMAIL, hitl_edited_tool_calls={"c7": {"name": "x", "args": {}}}),
        runtime=None,  # type: ignore[arg-type]
    )
    result = ToolMessage("sent to ann", tool_call_id="c1")

    assert hitl.wrap_tool_call(request, lambda req: result if req is request else None) is result


def test_the_async_tool_layer_runs_the_reviewers_call_too() -> None:
    hitl = HumanInTheLoopMiddleware({"send_email": True}, edit_notice=NOTICE)
    request = edited_request({"name": "send_email", "args": {"to": "bob"}})

    async def handler(req: ToolCallRequest) -> ToolMessage:
        return ToolMessage(f"sent to {req.tool_call['args']['to']}", tool_call_id="c1")

    result = asyncio.run(hitl.awrap_tool_call(request, handler))

    assert isinstance(result, ToolMessage)
    assert result.content == (
        f'{NOTICE} Executed instead: send_email with arguments {{"to": "bob"}}.'
        "\n\nTool response:\nsent to bob"
    )
