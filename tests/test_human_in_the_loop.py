"""HumanInTheLoopMiddleware: one interrupt per model turn, approve/edit/reject/respond decisions,
checked answers that leave the review open, rejected calls that nothing can run, wrappers that
stay balanced, checkpointer checks and build-time errors."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict, Field

from graphagent import create_agent
from graphagent.errors import (
    GraphAgentError,
    HookReturnError,
    MiddlewareError,
    ResumeError,
    UnknownArgumentError,
)
from graphagent.middleware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    after_model,
    before_model,
    hook_config,
    wrap_model_call,
    wrap_tool_call,
)
from graphagent.middleware._kit import retry as _retry
from graphagent.middleware.human_in_the_loop import (
    HumanInTheLoopMiddleware,
    InterruptOnConfig,
    InvalidDecisionError,
)
from graphagent.middleware.tool_call_limit import ToolCallLimitMiddleware
from graphagent.middleware.tool_retry import ToolRetryMiddleware
from graphagent.testing import ScriptedChatModel, calls, tool_call
from tests.conftest import run_agent
from tests.review_tools import RAN, delete_file, read_file, send_email

pytestmark = pytest.mark.usefixtures("review_log")


TOOLS = [send_email, delete_file, read_file]
THREAD = {"configurable": {"thread_id": "review"}}
EMAIL = tool_call("send_email", {"to": "ann@example.com", "body": "hi"}, id="c-email")
DELETE = tool_call("delete_file", {"path": "/report"}, id="c-delete")
READ = tool_call("read_file", {"path": "/notes"}, id="c-read")


def reviewed_agent(
    *replies: Any,
    interrupt_on: dict[str, Any] | None = None,
    middleware: tuple[Any, ...] = (),
    checkpointer: Any = None,
    **options: Any,
) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(list(replies) or [calls(EMAIL), "done"])
    hitl = HumanInTheLoopMiddleware(interrupt_on or {"send_email": True}, **options)
    agent = create_agent(
        model,
        TOOLS,
        middleware=[*middleware, hitl],
        checkpointer=checkpointer or InMemorySaver(),
    )
    return agent, model


def pause(agent: Any, how: str, prompt: str = "go") -> list[Any]:
    """Start a run that pauses; the values of its interrupts."""
    result = run_agent(agent, how, {"messages": [prompt]}, config=THREAD)
    return [i.value for i in result["__interrupt__"]]


def resume(agent: Any, how: str, *decisions: Any) -> dict[str, Any]:
    return run_agent(agent, how, Command(resume={"decisions": list(decisions)}), config=THREAD)


def answers(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (m.tool_call_id, m.status, m.content)
        for m in result["messages"]
        if isinstance(m, ToolMessage)
    ]


def approve() -> dict[str, Any]:
    return {"type": "approve"}


def edit(name: str, **args: Any) -> dict[str, Any]:
    return {"type": "edit", "edited_action": {"name": name, "args": args}}


def reject(message: str | None = None) -> dict[str, Any]:
    return {"type": "reject"} if message is None else {"type": "reject", "message": message}


# -- the request ---------------------------------------------------------------------------------


def test_one_interrupt_carries_every_gated_call_of_the_turn(how: str) -> None:
    agent, _ = reviewed_agent(
        calls(EMAIL, READ, DELETE),
        "done",
        interrupt_on={
            "send_email": True,
            "delete_file": {"allowed_decisions": ["approve", "reject"]},
        },
    )

    [request] = pause(agent, how)

    assert RAN == []  # the ungated read waits for the review too: tools run after the turn's review
    assert request == {
        "action_requests": [
            {
                "name": "send_email",
                "args": {"to": "ann@example.com", "body": "hi"},
                "description": "Tool execution requires approval\n\nTool: send_email\n"
                "Args: {'to': 'ann@example.com', 'body': 'hi'}",
            },
            {
                "name": "delete_file",
                "args": {"path": "/report"},
                "description": "Tool execution requires approval\n\nTool: delete_file\n"
                "Args: {'path': '/report'}",
            },
        ],
        "review_configs": [
            {
                "action_name": "send_email",
                "allowed_decisions": ["approve", "edit", "reject", "respond"],
                "args_schema": send_email.tool_call_schema.model_json_schema(),
            },
            {"action_name": "delete_file", "allowed_decisions": ["approve", "reject"]},
        ],
    }


def test_the_interrupt_publishes_the_shape_of_the_answer() -> None:
    agent, _ = reviewed_agent(
        calls(EMAIL, DELETE),
        "done",
        interrupt_on={"send_email": True, "delete_file": {"allowed_decisions": ["approve"]}},
    )

    [interrupted] = agent.invoke({"messages": ["go"]}, THREAD)["__interrupt__"]

    assert interrupted.response_schema["description"].startswith(
        "{'decisions': [...]} with one decision per action request, in order "
        "(send_email: approve, edit, reject, respond; delete_file: approve)"
    )
    decisions = interrupted.response_schema["properties"]["decisions"]
    assert (decisions["minItems"], decisions["maxItems"]) == (2, 2)
    assert [d["properties"]["type"]["enum"] for d in decisions["prefixItems"]] == [
        ["approve", "edit", "reject", "respond"],
        ["approve"],
    ]


def test_descriptions_fixed_written_per_call_and_by_prefix(how_call: str) -> None:
    seen: list[tuple[str, int, bool]] = []

    def describe(call: Any, state: Any, runtime: Any) -> str:
        seen.append((call["id"], len(state["messages"]), runtime is not None))
        return f"Delete {call['args']['path']}?"

    agent, _ = reviewed_agent(
        calls(EMAIL, DELETE, READ),
        "done",
        interrupt_on={
            "send_email": {"allowed_decisions": ["approve"], "description": "Mail goes out."},
            "delete_file": {"allowed_decisions": ["approve"], "description": describe},
            "read_file": True,
        },
        description_prefix="Please check",
    )

    [request] = pause(agent, how_call)

    assert [r["description"] for r in request["action_requests"]] == [
        "Mail goes out.",
        "Delete /report?",
        "Please check\n\nTool: read_file\nArgs: {'path': '/notes'}",
    ]
    assert seen == [("c-delete", 2, True)]


def test_calls_of_other_tools_run_without_a_review(how: str) -> None:
    agent, _ = reviewed_agent(
        calls(READ),
        "done",
        interrupt_on={"send_email": True, "delete_file": False},
    )

    result = run_agent(agent, how, {"messages": ["go"]}, config=THREAD)

    assert "__interrupt__" not in result
    assert RAN == ["read_file(/notes)"]
    assert result["messages"][-1].content == "done"


def test_a_false_entry_means_no_review(how_call: str) -> None:
    agent, _ = reviewed_agent(calls(DELETE), "done", interrupt_on={"delete_file": False})

    result = run_agent(agent, how_call, {"messages": ["go"]}, config=THREAD)

    assert "__interrupt__" not in result
    assert RAN == ["delete_file(/report)"]


def test_when_reviews_only_the_calls_it_picks(how_call: str) -> None:
    requests: list[ToolCallRequest] = []

    def outside_tmp(request: ToolCallRequest) -> bool:
        requests.append(request)
        return not request.tool_call["args"]["path"].startswith("/tmp")

    scratch = tool_call("delete_file", {"path": "/tmp/x"}, id="c-tmp")
    agent, _ = reviewed_agent(
        calls(scratch, DELETE),
        "done",
        interrupt_on={"delete_file": {"allowed_decisions": ["reject"], "when": outside_tmp}},
    )

    [request] = pause(agent, how_call)
    result = resume(agent, how_call, reject())

    assert [a["args"] for a in request["action_requests"]] == [{"path": "/report"}]
    assert RAN == ["delete_file(/tmp/x)"]
    assert [(tid, status) for tid, status, _ in answers(result)] == [
        ("c-delete", "error"),
        ("c-tmp", "success"),
    ]
    # As in LangChain: the call, no tool, and a runtime of the hook's (its tools not given).
    first = requests[0]
    assert (first.tool, first.runtime.tools) == (None, [])
    assert first.runtime.tool_call_id == "c-tmp"
    assert first.runtime.config["configurable"]["thread_id"] == "review"
    assert first.state["messages"][-1].tool_calls[0]["id"] == "c-tmp"


def test_calls_another_hook_already_answered_are_not_reviewed(how_call: str) -> None:
    second = tool_call("send_email", {"to": "bob@example.com", "body": "hi"}, id="c-email-2")
    hitl = HumanInTheLoopMiddleware({"send_email": True})
    # Listed after the reviewer, so its after_model runs first and refuses the second call.
    limiter = ToolCallLimitMiddleware(tool_name="send_email", run_limit=1)
    model = ScriptedChatModel([calls(EMAIL, second), "done"])
    agent = create_agent(model, TOOLS, middleware=[hitl, limiter], checkpointer=InMemorySaver())

    [request] = pause(agent, how_call)
    result = resume(agent, how_call, approve())

    assert [a["args"]["to"] for a in request["action_requests"]] == ["ann@example.com"]
    assert RAN == ["send_email(ann@example.com, hi)"]
    assert [(tid, status) for tid, status, _ in answers(result)] == [
        ("c-email-2", "error"),
        ("c-email", "success"),
    ]


# -- decisions -----------------------------------------------------------------------------------


def test_approve_runs_the_call_once_after_the_decision(how: str) -> None:
    agent, model = reviewed_agent()

    pause(agent, how)
    assert RAN == []
    result = resume(agent, how, approve())

    assert RAN == ["send_email(ann@example.com, hi)"]
    assert answers(result) == [("c-email", "success", "sent to ann@example.com")]
    assert result["messages"][-1].content == "done"
    assert model.call_count == 2


NOTICE = (
    "A human reviewer changed this tool call before it ran, on purpose: your message shows the "
    "call as you made it, not as it ran. Do not make your original call again."
)


def test_edit_runs_the_reviewers_call_and_its_result_says_so(how: str) -> None:
    agent, model = reviewed_agent()

    pause(agent, how)
    result = resume(agent, how, edit("send_email", to="bob@example.com", body="hello"))

    assert RAN == ["send_email(bob@example.com, hello)"]
    ai = [m for m in result["messages"] if isinstance(m, AIMessage)]
    assert len(ai) == 2
    assert ai[0].tool_calls == [EMAIL]  # the model's message keeps the call it made
    assert answers(result) == [
        (
            "c-email",
            "success",
            f'{NOTICE} Executed instead: send_email with arguments {{"to": "bob@example.com", '
            '"body": "hello"}.\n\nTool response:\nsent to bob@example.com',
        )
    ]
    assert model.calls[1].messages[-1].content == answers(result)[0][2]


def test_edit_may_switch_to_another_tool(how_call: str) -> None:
    agent, _ = reviewed_agent(calls(DELETE), "done", interrupt_on={"delete_file": True})

    pause(agent, how_call)
    result = resume(agent, how_call, edit("read_file", path="/report"))

    assert RAN == ["read_file(/report)"]
    assert result["messages"][1].tool_calls == [DELETE]
    [answer] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert (answer.tool_call_id, answer.name) == ("c-delete", "read_file")
    assert answer.content.startswith(f"{NOTICE} Executed instead: read_file with arguments")
    assert answer.content.endswith("\n\nTool response:\ncontents of /report")


@tool(return_direct=True)
def publish(path: str) -> str:
    """Publish a file; its result ends the run."""
    RAN.append(f"publish({path})")
    return f"published {path}"


@pytest.mark.parametrize(
    ("called", "ran", "model_turns"),
    [("publish", "read_file", 2), ("read_file", "publish", 1)],
    ids=["to a tool that does not end the run", "to one that does"],
)
def test_an_edit_to_another_tool_routes_on_the_tool_that_ran(
    called: str, ran: str, model_turns: int, how_call: str
) -> None:
    call = tool_call(called, {"path": "/report"}, id="c-1")
    model = ScriptedChatModel([calls(call), "done"])
    hitl = HumanInTheLoopMiddleware({called: True})
    agent = create_agent(
        model, [publish, read_file], middleware=[hitl], checkpointer=InMemorySaver()
    )

    pause(agent, how_call)
    resume(agent, how_call, edit(ran, path="/report"))

    assert [r.split("(")[0] for r in RAN] == [ran]
    assert model.call_count == model_turns


def test_reject_never_runs_the_call_and_tells_the_model_why(how: str) -> None:
    agent, model = reviewed_agent()

    pause(agent, how)
    result = resume(agent, how, reject("Ann is on leave."))

    assert RAN == []
    reply = "User rejected the tool call for `send_email` with reason: Ann is on leave."
    assert answers(result) == [("c-email", "error", reply)]
    assert model.calls[1].messages[-1].content == reply
    assert result["messages"][-1].content == "done"


def test_reject_without_a_reason_says_not_to_try_again(how_call: str) -> None:
    agent, _ = reviewed_agent()

    pause(agent, how_call)
    result = resume(agent, how_call, reject())

    assert answers(result) == [
        (
            "c-email",
            "error",
            "User rejected the tool call for `send_email` with id c-email. The tool was not "
            "executed. Do not retry this tool call unless the user explicitly requests it.",
        )
    ]


def test_respond_answers_in_place_of_the_tool(how_call: str) -> None:
    agent, _ = reviewed_agent()

    pause(agent, how_call)
    result = resume(agent, how_call, {"type": "respond", "message": "Sent it myself."})

    assert RAN == []
    assert answers(result) == [("c-email", "success", "Sent it myself.")]


def test_mixed_decisions_for_parallel_calls(how: str) -> None:
    agent, model = reviewed_agent(
        calls(EMAIL, READ, DELETE),
        "done",
        interrupt_on={"send_email": True, "delete_file": True},
    )

    pause(agent, how)
    result = resume(agent, how, edit("send_email", to="bob@example.com", body="hi"), reject())

    assert sorted(RAN) == ["read_file(/notes)", "send_email(bob@example.com, hi)"]
    assert [(tid, status) for tid, status, _ in sorted(answers(result))] == [
        ("c-delete", "error"),
        ("c-email", "success"),
        ("c-read", "success"),
    ]
    assert result["messages"][1].tool_calls == [EMAIL, READ, DELETE]
    assert model.call_count == 2


def test_the_state_records_each_decision_for_later_turns(how_call: str) -> None:
    second = tool_call("send_email", {"to": "cy@example.com", "body": "x"}, id="c-email-2")
    agent, _ = reviewed_agent(
        calls(EMAIL, DELETE),
        calls(second),
        "done",
        interrupt_on={"send_email": True, "delete_file": True},
    )

    pause(agent, how_call)
    resume(agent, how_call, approve(), reject())
    result = resume(agent, how_call, edit("send_email", to="cy@example.com", body="y"))

    assert "hitl_decisions" not in result  # private: not in the output
    assert agent.get_state(THREAD).values["hitl_decisions"] == {
        "c-email": "approve",
        "c-delete": "reject",
        "c-email-2": "edit",
    }


# -- answers that do not fit: a clear error, nothing runs, the review stays open ---------------


BAD_ANSWERS: dict[str, tuple[Any, int | None, str]] = {
    "too few": ([approve()], None, "got 1 decision(s) for 2 tool call(s) awaiting review"),
    "too many": ([approve()] * 3, None, "got 3 decision(s) for 2"),
    "not a decision": (["yes", approve()], 0, "is 'yes'; a decision is a dict"),
    "unknown type": ([approve(), {"type": "approved"}], 1, "is {'type': 'approved'}"),
    "misspelled type": (
        [{"type": "aprove"}, approve()],
        0,
        "one of ['approve', 'edit', 'reject', 'respond'] (did you mean 'approve'?)",
    ),
    "not allowed": ([approve(), edit("delete_file", path="/x")], 1, "is 'edit', which is not"),
    "edit without action": ([{"type": "edit"}, approve()], 0, "edited_action=None"),
    "edit of unknown tool": ([edit("shred", path="/x"), approve()], 0, "edits the call to 'shred'"),
    "edit with bad args": ([edit("send_email", to=3), approve()], 0, "to: Input should be"),
    "respond without text": ([{"type": "respond"}, approve()], 0, "without a 'message' str"),
    "reject with bad reason": ([{"type": "reject", "message": 42}, approve()], 0, "message=42"),
    "unknown key in a decision": (
        [{"type": "approve", "mesage": "go ahead"}, approve()],
        0,
        "is 'approve' with unknown key(s) ['mesage']; it takes {'type': 'approve'}",
    ),
    "message on an edit": (
        [{**edit("send_email", to="bob@example.com", body="hi"), "message": "why"}, approve()],
        0,
        "is 'edit' with unknown key(s) ['message']",
    ),
    "unknown key in an edited action": (
        [
            {"type": "edit", "edited_action": {"name": "read_file", "args": {}, "id": "x"}},
            approve(),
        ],
        0,
        "it must be {'name': str, 'args': dict}",
    ),
}


@pytest.mark.parametrize("case", BAD_ANSWERS, ids=list(BAD_ANSWERS))
def test_an_answer_that_does_not_fit_raises_and_runs_nothing(case: str, how_call: str) -> None:
    decisions, index, fragment = BAD_ANSWERS[case]
    agent, model = reviewed_agent(
        calls(EMAIL, DELETE),
        "done",
        interrupt_on={"send_email": True, "delete_file": {"allowed_decisions": ["approve"]}},
    )
    pause(agent, how_call)

    with pytest.raises(InvalidDecisionError) as caught:
        resume(agent, how_call, *decisions)

    error = caught.value
    assert fragment in str(error)
    assert "Nothing ran; the review is still open" in str(error)
    assert error.index == index
    if index is not None:
        assert error.tool_name == ["send_email", "delete_file"][index]
        assert error.allowed == (
            ("approve", "edit", "reject", "respond") if index == 0 else ("approve",)
        )
    assert RAN == []
    assert model.call_count == 1
    # Nothing was saved: the same review is still open and takes a fitting answer.
    result = resume(agent, how_call, approve(), approve())
    assert sorted(RAN) == ["delete_file(/report)", "send_email(ann@example.com, hi)"]
    assert result["messages"][-1].content == "done"


@pytest.mark.parametrize(
    "answer", ["yes", {"decisions": [approve()], "comment": "ok"}], ids=["a str", "an extra key"]
)
def test_a_resume_value_that_is_not_one_decisions_list_is_refused(
    answer: Any, how_call: str
) -> None:
    agent, _ = reviewed_agent()
    pause(agent, how_call)

    with pytest.raises(InvalidDecisionError) as caught:
        run_agent(agent, how_call, Command(resume=answer), config=THREAD)

    assert str(caught.value).startswith(
        "HumanInTheLoopMiddleware: resume with {'decisions': [...]} with one decision per action "
        "request, in order (send_email: approve, edit, reject, respond); a decision is one of "
        "{'type': 'approve'}, {'type': 'edit', 'edited_action': {'name': <tool>, 'args': {...}}}"
    )
    assert RAN == []
    resume(agent, how_call, approve())
    assert RAN == ["send_email(ann@example.com, hi)"]


def test_a_single_decision_is_told_to_go_in_the_list(how_call: str) -> None:
    agent, _ = reviewed_agent()
    pause(agent, how_call)

    with pytest.raises(InvalidDecisionError, match=r"put the decision in the list, \{'decisions'"):
        run_agent(agent, how_call, Command(resume=approve()), config=THREAD)

    assert RAN == []
    resume(agent, how_call, approve())
    assert RAN == ["send_email(ann@example.com, hi)"]


def test_resume_none_is_refused_naming_the_review_and_its_format(how_call: str) -> None:
    agent, model = reviewed_agent()
    pause(agent, how_call)

    with pytest.raises(ResumeError) as caught:
        run_agent(agent, how_call, Command(resume=None), config=THREAD)

    message = str(caught.value)
    assert (
        "'HumanInTheLoopMiddleware.after_model' waits for {'decisions': [...]} with one" in message
    )
    assert "(send_email: approve, edit, reject, respond)" in message
    assert (RAN, model.call_count) == ([], 1)
    resume(agent, how_call, approve())
    assert RAN == ["send_email(ann@example.com, hi)"]


def test_the_error_is_a_value_error_and_survives_pickling() -> None:
    error = InvalidDecisionError("bad", index=2, tool_name="send_email", allowed=["approve"])

    copy = pickle.loads(pickle.dumps(error))

    assert isinstance(copy, ValueError)
    assert isinstance(copy, ResumeError)
    assert isinstance(copy, GraphAgentError)
    assert (str(copy), copy.index, copy.tool_name, copy.allowed) == (
        "bad",
        2,
        "send_email",
        ("approve",),
    )


class Recipient(BaseModel):
    to: str = Field(pattern=r".+@example\.com$")
    body: str


ARGS_SCHEMAS: dict[str, Any] = {
    "pydantic model": Recipient,
    "json schema": {
        "type": "object",
        "properties": {"to": {"type": "string"}, "body": {"type": "string"}},
        "required": ["to", "body"],
        "additionalProperties": False,
    },
}


@pytest.mark.parametrize("kind", ARGS_SCHEMAS)
def test_args_schema_adds_checks_to_edits(kind: str, how_call: str) -> None:
    schema = ARGS_SCHEMAS[kind]
    config = InterruptOnConfig(allowed_decisions=["edit"], args_schema=schema)
    agent, _ = reviewed_agent(interrupt_on={"send_email": config})
    [request] = pause(agent, how_call)
    bad = (
        edit("send_email", to="eve@evil.test", body="x")
        if kind == "pydantic model"
        else edit("send_email", to="ann@example.com", body="x", cc="eve@evil.test")
    )

    with pytest.raises(InvalidDecisionError) as caught:
        resume(agent, how_call, bad)

    problem = "to: String should match pattern" if kind == "pydantic model" else "cc: not an"
    assert problem in str(caught.value)
    assert RAN == []
    expected = schema if isinstance(schema, dict) else schema.model_json_schema()
    assert request["review_configs"][0]["args_schema"] == expected
    resume(agent, how_call, edit("send_email", to="bob@example.com", body="ok"))
    assert RAN == ["send_email(bob@example.com, ok)"]


class Ticket(BaseModel):
    model_config = ConfigDict(extra="allow")
    title: str


@tool(args_schema=Ticket)
def open_ticket(title: str, **fields: Any) -> str:
    """Open a ticket; any other field is stored with it."""
    RAN.append(f"open_ticket({title}, {fields})")
    return "opened"


def test_an_edit_may_add_arguments_a_tool_that_takes_extra_keys_accepts(how_call: str) -> None:
    model = ScriptedChatModel([calls(tool_call("open_ticket", {"title": "Printer"})), "done"])
    hitl = HumanInTheLoopMiddleware({"open_ticket": True})
    agent = create_agent(model, [open_ticket], middleware=[hitl], checkpointer=InMemorySaver())
    pause(agent, how_call)

    resume(agent, how_call, edit("open_ticket", title="Printer", floor=3))

    assert RAN == ["open_ticket(Printer, {'floor': 3})"]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"body": "x"}, "to: required"),
        ({"to": 7, "body": "x"}, "to: expected string, got int"),
        ({"to": "a", "body": True}, "body: expected ['string', 'null'], got bool"),
    ],
)
def test_a_json_args_schema_checks_required_keys_and_types(args: Any, problem: str) -> None:
    schema = {
        "type": "object",
        "properties": {"to": {"type": "string"}, "body": {"type": ["string", "null"]}},
        "required": ["to"],
    }
    agent, _ = reviewed_agent(
        interrupt_on={"send_email": {"allowed_decisions": ["edit"], "args_schema": schema}}
    )
    pause(agent, "invoke")

    with pytest.raises(InvalidDecisionError, match=problem.replace("[", r"\[")):
        resume(
            agent, "invoke", {"type": "edit", "edited_action": {"name": "send_email", "args": args}}
        )


# -- rejected calls stay unrun -------------------------------------------------------------------


def test_a_later_jump_to_tools_cannot_run_a_rejected_call(how_call: str) -> None:
    class JumpToTools(AgentMiddleware):
        """Listed before the reviewer, so its after_model runs after the reviewer's."""

        @hook_config(can_jump_to=["tools"])
        def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            return {"jump_to": "tools"} if state["messages"][-1].type == "tool" else None

    agent, _ = reviewed_agent(
        calls(EMAIL, DELETE),
        "done",
        interrupt_on={"send_email": True, "delete_file": True},
        middleware=(JumpToTools(),),
    )

    pause(agent, how_call)
    result = resume(agent, how_call, approve(), reject())

    assert RAN == ["send_email(ann@example.com, hi)"]
    assert [(tid, status) for tid, status, _ in answers(result)] == [
        ("c-delete", "error"),
        ("c-email", "success"),
    ]


def test_a_jump_to_tools_after_everything_was_rejected_runs_nothing(how_call: str) -> None:
    @before_model(can_jump_to=["tools"])
    def rerun_tools(state: Any, runtime: Any) -> dict[str, Any] | None:
        return {"jump_to": "tools"} if state["messages"][-1].type == "tool" else None

    agent, _ = reviewed_agent(middleware=(rerun_tools,))
    pause(agent, how_call)

    with pytest.raises(HookReturnError, match="no pending tool calls"):
        resume(agent, how_call, reject())

    assert RAN == []


def test_a_retrying_wrapper_never_sees_a_rejected_call(
    how_call: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def no_wait(mode: Any, seconds: float) -> None:
        return None

    monkeypatch.setattr(_retry, "wait", no_wait)
    attempts: list[str] = []

    @wrap_tool_call
    def flaky_first_try(request: ToolCallRequest, handler: Callable[..., Any]) -> Any:
        attempts.append(request.tool_call["id"])
        if attempts.count(request.tool_call["id"]) == 1:
            raise ConnectionError("blip")
        return handler(request)

    retry = ToolRetryMiddleware(max_retries=2, jitter=False)
    agent, _ = reviewed_agent(
        calls(EMAIL, DELETE),
        "done",
        interrupt_on={"send_email": True, "delete_file": True},
        middleware=(retry, flaky_first_try),
    )

    pause(agent, how_call)
    resume(agent, how_call, approve(), reject())

    assert attempts == ["c-email", "c-email"]
    assert RAN == ["send_email(ann@example.com, hi)"]


# -- wrappers ------------------------------------------------------------------------------------


def test_wrappers_stay_balanced_and_see_approved_calls_once(how: str) -> None:
    events: list[str] = []

    @wrap_model_call
    def count_model(request: ModelRequest, handler: Callable[..., ModelResponse]) -> Any:
        events.append("model>")
        try:
            return handler(request)
        finally:
            events.append("<model")

    @wrap_tool_call
    def count_tool(request: ToolCallRequest, handler: Callable[..., Any]) -> Any:
        call_id = request.tool_call["id"]
        decision = request.state.get("hitl_decisions", {}).get(call_id, "not reviewed")
        events.append(f"tool> {call_id} {decision}")
        try:
            return handler(request)
        finally:
            events.append(f"<tool {call_id}")

    agent, _ = reviewed_agent(
        calls(EMAIL, READ, DELETE),
        "done",
        interrupt_on={"send_email": True, "delete_file": True},
        middleware=(count_model, count_tool),
    )

    pause(agent, how)
    assert events == ["model>", "<model"]
    resume(agent, how, approve(), reject())

    tool_events = sorted(e for e in events[2:-2])
    assert tool_events == [
        "<tool c-email",
        "<tool c-read",
        "tool> c-email approve",
        "tool> c-read not reviewed",
    ]
    assert events[-2:] == ["model>", "<model"]


def test_the_review_runs_again_on_resume_but_the_model_does_not(how_call: str) -> None:
    described: list[str] = []
    turns: list[int] = []

    def describe(call: Any, state: Any, runtime: Any) -> str:
        described.append(call["id"])
        return "Send it?"

    @after_model
    def count_turns(state: Any, runtime: Any) -> None:
        turns.append(len(state["messages"]))

    agent, model = reviewed_agent(
        interrupt_on={"send_email": {"allowed_decisions": ["approve"], "description": describe}},
        middleware=(count_turns,),
    )

    pause(agent, how_call)
    assert (described, turns, model.call_count) == (["c-email"], [], 1)
    resume(agent, how_call, approve())

    # langgraph runs the paused node again from its start; the model call before it does not run
    # again, and `count_turns` (listed first, so it runs after the reviewer) runs once per turn.
    assert described == ["c-email", "c-email"]
    assert turns == [2, 4]
    assert model.call_count == 2


# -- checkpointers ---------------------------------------------------------------------------------


def test_a_run_without_a_checkpointer_runs_until_a_review(
    how: str, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedChatModel(["Nothing to send.", calls(EMAIL), "done"])
    hitl = HumanInTheLoopMiddleware({"send_email": True})
    agent = create_agent(model, TOOLS, middleware=[hitl])

    # As in LangChain: a run that reaches no review just runs.
    with caplog.at_level("WARNING", logger="graphagent"):
        quiet = run_agent(agent, how, {"messages": ["hello"]})
    assert quiet["messages"][-1].content == "Nothing to send."
    assert caplog.records == []

    # A review it reaches ends it with the interrupt, which nothing can resume: the log says so.
    with caplog.at_level("WARNING", logger="graphagent"):
        paused = run_agent(agent, how, {"messages": ["go"]})
    [interrupted] = paused["__interrupt__"]
    assert interrupted.value["action_requests"][0]["name"] == "send_email"
    [record] = caplog.records
    assert record.getMessage().startswith(
        "HumanInTheLoopMiddleware: a review of send_email pauses this run, which has no "
        "checkpointer, so it cannot be resumed"
    )
    assert RAN == []


def test_a_subgraph_agent_uses_its_parents_checkpointer(how_call: str) -> None:
    model = ScriptedChatModel([calls(EMAIL), "done"])
    hitl = HumanInTheLoopMiddleware({"send_email": True})
    inner = create_agent(model, TOOLS, middleware=[hitl])
    parent = StateGraph(MessagesState)
    parent.add_node("assistant", inner)
    parent.add_edge(START, "assistant")
    graph = parent.compile(checkpointer=InMemorySaver())

    paused = run_agent(graph, how_call, {"messages": ["go"]}, config=THREAD)
    [interrupted] = paused["__interrupt__"]
    result = resume(graph, how_call, edit("send_email", to="bob@example.com", body="hi"))

    assert interrupted.value["action_requests"][0]["name"] == "send_email"
    assert RAN == ["send_email(bob@example.com, hi)"]
    assert result["messages"][-1].content == "done"


# -- building ------------------------------------------------------------------------------------


def test_interrupt_on_naming_a_tool_the_agent_lacks_is_noted_and_never_reviewed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # One table may serve agents with different tools (deepagents passes one to its sub-agents).
    hitl = HumanInTheLoopMiddleware({"send_mail": True, "send_email": True, "delete_file": False})
    model = ScriptedChatModel([calls(READ), "read"])

    with caplog.at_level("INFO", logger="graphagent"):
        agent = create_agent(model, [read_file], middleware=[hitl], checkpointer=InMemorySaver())

    [record] = caplog.records
    assert record.getMessage() == (
        "HumanInTheLoopMiddleware: interrupt_on names ['send_mail', 'send_email', "
        "'delete_file'], which this agent does not run, so they are never reviewed here (its "
        "tools are ['read_file'])"
    )
    result = agent.invoke({"messages": ["go"]}, THREAD)
    assert result["messages"][-1].content == "read"
    assert "__interrupt__" not in result


def test_a_provider_tool_cannot_be_reviewed(caplog: pytest.LogCaptureFixture) -> None:
    search = {"type": "web_search", "name": "web_search"}
    hitl = HumanInTheLoopMiddleware({"web_search": True})

    with caplog.at_level("INFO", logger="graphagent"):
        create_agent(ScriptedChatModel(["x"]), [read_file, search], middleware=[hitl])

    assert "['web_search'] run at the model provider and cannot be reviewed" in caplog.text


BAD_SETTINGS: dict[str, tuple[Any, dict[str, Any], str]] = {
    "not a mapping": (["send_email"], {}, "interrupt_on must map tool names"),
    "not a bool or config": ({"send_email": "yes"}, {}, "interrupt_on['send_email'] is 'yes'"),
    "misspelled key": (
        {"send_email": {"allowed_decision": ["approve"]}},
        {},
        "unknown key(s) ['allowed_decision']",
    ),
    "no decisions": (
        {"send_email": {"allowed_decisions": []}},
        {},
        "`allowed_decisions` must be a non-empty list",
    ),
    "unknown decision": (
        {"send_email": {"allowed_decisions": ["approve", "ignore"]}},
        {},
        "unknown decision(s) ['ignore']",
    ),
    "bad description": (
        {"send_email": {"allowed_decisions": ["approve"], "description": 3}},
        {},
        "description=3",
    ),
    "bad args_schema": (
        {"send_email": {"allowed_decisions": ["edit"], "args_schema": str}},
        {},
        "args_schema=<class 'str'>",
    ),
    "bad when": ({"send_email": {"allowed_decisions": ["approve"], "when": True}}, {}, "when=True"),
    "bad prefix": ({"send_email": True}, {"description_prefix": None}, "description_prefix"),
}


@pytest.mark.parametrize("case", BAD_SETTINGS, ids=list(BAD_SETTINGS))
def test_bad_settings_fail_when_the_middleware_is_built(case: str) -> None:
    interrupt_on, options, fragment = BAD_SETTINGS[case]

    with pytest.raises(MiddlewareError) as caught:
        HumanInTheLoopMiddleware(interrupt_on, **options)

    assert fragment in str(caught.value)
    assert "HumanInTheLoopMiddleware" in str(caught.value)


def test_an_unknown_keyword_is_refused_naming_the_closest_one() -> None:
    with pytest.raises(UnknownArgumentError, match="'edit_notes'; did you mean 'edit_notice'"):
        HumanInTheLoopMiddleware({"send_email": True}, edit_notes=None)  # type: ignore[call-arg]


def test_batched_is_the_default_mode_and_an_unknown_one_is_refused() -> None:
    assert HumanInTheLoopMiddleware({"send_email": True}).interrupt_mode == "batched"
    with pytest.raises(MiddlewareError, match="must be 'batched' or 'per_call', got 'each'"):
        HumanInTheLoopMiddleware({"send_email": True}, interrupt_mode="each")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("notice", "content"),
    [
        (
            "Edited.",
            'Edited. Executed instead: send_email with arguments {"to": "bob@example.com", '
            '"body": "hi"}.\n\nTool response:\nsent to bob@example.com',
        ),
        (None, "sent to bob@example.com"),
    ],
    ids=["a notice of ones own", "none"],
)
def test_edit_notice_opens_a_batched_edits_result(
    notice: str | None, content: str, how_call: str
) -> None:
    agent, _ = reviewed_agent(edit_notice=notice)
    pause(agent, how_call)

    result = resume(agent, how_call, edit("send_email", to="bob@example.com", body="hi"))

    assert answers(result) == [("c-email", "success", content)]
    assert result["messages"][1].tool_calls == [EMAIL]


def test_an_edit_may_carry_an_argument_the_tool_does_not_declare(how_call: str) -> None:
    agent, _ = reviewed_agent()
    pause(agent, how_call)

    extra = edit("send_email", to="bob@example.com", body="hi", cc="eve@example.com")
    result = resume(agent, how_call, extra)

    assert RAN == ["send_email(bob@example.com, hi)"]  # the tool ignores `cc`
    assert answers(result)[0][2].endswith("Tool response:\nsent to bob@example.com")


def test_a_later_turn_runs_its_own_call_though_it_reuses_an_edited_calls_id(
    how_call: str,
) -> None:
    again = tool_call("read_file", {"path": "/notes"}, id="c-email")  # the id the edit had
    agent, _ = reviewed_agent(calls(EMAIL), calls(again), "done")
    pause(agent, how_call)

    result = resume(agent, how_call, edit("send_email", to="bob@example.com", body="hi"))

    assert RAN == ["send_email(bob@example.com, hi)", "read_file(/notes)"]
    assert answers(result)[-1] == ("c-email", "success", "contents of /notes")
    assert agent.get_state(THREAD).values["hitl_edited_tool_calls"] == {}


def test_true_allows_every_decision_and_configs_are_kept() -> None:
    config = InterruptOnConfig(allowed_decisions=["approve", "approve", "reject"])

    hitl = HumanInTheLoopMiddleware({"send_email": True, "delete_file": config, "x": False})

    assert hitl.interrupt_on == {
        "send_email": {"allowed_decisions": ["approve", "edit", "reject", "respond"]},
        "delete_file": {"allowed_decisions": ["approve", "reject"]},
    }


def test_an_agent_built_with_checkpointing_disabled_is_refused_at_build_time() -> None:
    from graphagent.testing import ScriptedChatModel as Model

    hitl = HumanInTheLoopMiddleware(interrupt_on={"send_email": True})
    with pytest.raises(
        MiddlewareError, match=r"built with checkpointer=False; pass a checkpointer"
    ):
        create_agent(Model([]), [send_email], middleware=[hitl], checkpointer=False)


@tool("delete_file")
def delete_file_forced(path: str, force: bool) -> str:
    """Delete a file, even a protected one when forced."""
    RAN.append(f"delete_file({path}, force={force})")
    return f"deleted {path}"


@pytest.mark.parametrize("mode", ["batched", "per_call"])
def test_one_instance_shared_by_two_agents_checks_each_against_its_own_tools(
    how_call: str, mode: Any
) -> None:
    # The agent built last has a delete_file that requires `force`; the first agent's does not,
    # and an edit in the first agent is checked against the first agent's tool.
    shared = HumanInTheLoopMiddleware({"delete_file": True}, interrupt_mode=mode)
    first = create_agent(
        ScriptedChatModel([calls(DELETE), "done"]),
        [delete_file],
        middleware=[shared],
        checkpointer=InMemorySaver(),
    )
    create_agent(ScriptedChatModel([]), [delete_file_forced], middleware=[shared])
    run_agent(first, how_call, {"messages": ["tidy up"]}, config=THREAD)

    edit = {"type": "edit", "edited_action": {"name": "delete_file", "args": {"path": "/old"}}}
    answer = {"decisions": [edit]} if mode == "batched" else edit
    result = run_agent(first, how_call, Command(resume=answer), config=THREAD)

    assert RAN == ["delete_file(/old)"]
    assert result["messages"][-1].text == "done"
