"""HumanInTheLoopMiddleware(interrupt_mode="per_call"): the review inside the wrap_tool_call onion.
Every layer entered is left, on the interrupt path too; layers around the review never take a
pause or a bad answer (pydantic's ValidationError, as in LangChain) for a tool failure; a retry
around it does not ask twice; a resume runs each call once; edits are checked against the tool's
schema and announced to the model in LangChain's words."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import is_invalid_resume
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command
from pydantic import ValidationError

from graphagent import create_agent
from graphagent.errors import MiddlewareError, UnknownArgumentError
from graphagent.middleware import (
    AgentMiddleware,
    ToolErrorMiddleware,
    ToolRetryMiddleware,
    wrap_tool_call,
)
from graphagent.middleware.human_in_the_loop import HumanInTheLoopMiddleware
from graphagent.testing import ScriptedChatModel, calls, tool_call
from tests.conftest import run_agent
from tests.review_tools import RAN, delete_file, read_file, send_email

THREAD = {"configurable": {"thread_id": "per-call"}}
pytestmark = pytest.mark.usefixtures("review_log")


EMAIL = tool_call("send_email", {"to": "ann", "body": "hi"}, id="c-email")
DELETE = tool_call("delete_file", {"path": "/report"}, id="c-delete")
READ = tool_call("read_file", {"path": "/notes"}, id="c-read")
GATED = {"send_email": True, "delete_file": True}


def per_call_agent(
    *replies: Any,
    before: tuple[AgentMiddleware[Any, Any, Any], ...] = (),
    after: tuple[AgentMiddleware[Any, Any, Any], ...] = (),
    interrupt_on: dict[str, Any] | None = None,
    tools: tuple[Any, ...] = (send_email, delete_file, read_file),
    **options: Any,
) -> Any:
    hitl = HumanInTheLoopMiddleware(
        interrupt_on or {"send_email": True}, interrupt_mode="per_call", **options
    )
    return create_agent(
        ScriptedChatModel(list(replies) or [calls(EMAIL), "done"]),
        list(tools),
        middleware=[*before, hitl, *after],
        checkpointer=InMemorySaver(),
    )


def run(agent: Any, how: str, inputs: Any) -> tuple[dict[str, Any], list[Any]]:
    """The run's final state and every interrupt it paused on: a stream yields one chunk per
    paused call, ``invoke`` returns them together."""
    if how in ("invoke", "ainvoke"):
        result = run_agent(agent, how, inputs, config=THREAD)
        return result, list(result.get("__interrupt__", ()))

    async def collect() -> list[Any]:
        stream = agent.astream(inputs, THREAD, stream_mode="values")
        return [chunk async for chunk in stream]

    chunks = (
        list(agent.stream(inputs, THREAD, stream_mode="values"))
        if how == "stream"
        else asyncio.run(collect())
    )
    paused = [i for chunk in chunks for i in chunk.get("__interrupt__", ())]
    return chunks[-1], paused


def start(agent: Any, how: str) -> dict[str, Any]:
    """Run until the agent pauses: its interrupts by tool call id."""
    return {i.value["tool_call_id"]: i for i in run(agent, how, {"messages": ["go"]})[1]}


def answer(agent: Any, how: str, answers: dict[str, Any]) -> dict[str, Any]:
    return run_agent(agent, how, Command(resume=answers), config=THREAD)


def approve() -> dict[str, Any]:
    return {"type": "approve"}


def results(final: dict[str, Any]) -> dict[str, str]:
    return {m.tool_call_id: m.text for m in final["messages"] if isinstance(m, ToolMessage)}


def recorder(events: list[str], label: str) -> Any:
    """A wrap_tool_call layer that records entering and leaving, and how it was left."""

    @wrap_tool_call(name=label)
    def record(request: ToolCallRequest, handler: Callable[..., Any]) -> Any:
        call_id = request.tool_call["id"]
        events.append(f"{label}> {call_id}")
        try:
            result = handler(request)
        except BaseException as error:
            events.append(f"<{label} {call_id} {type(error).__name__}")
            raise
        events.append(f"<{label} {call_id}")
        return result

    return record


# -- the onion -----------------------------------------------------------------------------------


def test_every_layer_entered_is_left_on_the_interrupt_path_too(how: str) -> None:
    events: list[str] = []
    agent = per_call_agent(
        calls(EMAIL, READ),
        "done",
        before=(recorder(events, "outer"),),
        after=(recorder(events, "inner"),),
    )

    paused = start(agent, how)

    # The outer layer is entered, then left by the interrupt (control flow, not an error); the
    # inner layer and the tool are not reached until the call is decided.
    assert sorted(events) == sorted(
        [
            "outer> c-email",
            "<outer c-email GraphInterrupt",
            "outer> c-read",
            "inner> c-read",
            "<inner c-read",
            "<outer c-read",
        ]
    )
    assert RAN == ["read_file(/notes)"]
    events.clear()

    answer(agent, how, {paused["c-email"].id: approve()})

    # On resume only the paused call runs again: the outer layer up to the review, then the rest.
    assert events == ["outer> c-email", "inner> c-email", "<inner c-email", "<outer c-email"]
    assert RAN == ["read_file(/notes)", "send_email(ann, hi)"]


def test_an_outer_retry_takes_the_pause_for_no_failure_and_does_not_ask_again(
    how_call: str,
) -> None:
    attempts: list[str] = []

    @tool("send_email")
    def flaky(to: str, body: str) -> str:
        """Send an email."""
        attempts.append(to)
        if len(attempts) == 1:
            raise ConnectionError("mail server unavailable")
        return f"sent to {to}"

    retry = ToolRetryMiddleware(max_retries=2, initial_delay=0)
    agent = per_call_agent(before=(retry,), tools=(flaky,))

    paused = start(agent, how_call)
    assert attempts == []  # the pause was not retried into the tool
    final = answer(agent, how_call, {paused["c-email"].id: approve()})

    # The retry re-sends the approved call without a second review.
    assert "__interrupt__" not in final
    assert attempts == ["ann", "ann"]
    assert results(final)["c-email"] == "sent to ann"


def test_an_outer_layer_that_changes_the_call_gets_it_reviewed_again(how_call: str) -> None:
    @wrap_tool_call
    def send_twice(request: ToolCallRequest, handler: Callable[..., Any]) -> Any:
        handler(request)
        changed = {**request.tool_call, "args": {**request.tool_call["args"], "to": "eve"}}
        return handler(request.override(tool_call=changed))

    agent = per_call_agent(before=(send_twice,))
    first = start(agent, how_call)["c-email"]

    [second] = answer(agent, how_call, {first.id: approve()})["__interrupt__"]

    # A decision covers only the call it was taken about.
    assert second.id != first.id
    assert second.value["args"] == {"to": "eve", "body": "hi"}


@pytest.mark.parametrize("outer", ["retry", "tool_error", "recorder"])
def test_a_bad_answer_passes_every_outer_layer_and_the_review_stays_open(
    outer: str, how_call: str
) -> None:
    events: list[str] = []
    layer = {
        "retry": ToolRetryMiddleware(max_retries=3, initial_delay=0),
        "tool_error": ToolErrorMiddleware(on_error=lambda *_: "the tool failed"),
        "recorder": recorder(events, "outer"),
    }[outer]
    agent = per_call_agent(before=(layer,))
    paused = start(agent, how_call)["c-email"]

    bad = {"type": "edit", "edited_action": {"name": "send_email", "args": {"to": "bob"}}}
    with pytest.raises(ValidationError, match=r"edit\.edited_action\.args\.body") as caught:
        answer(agent, how_call, {paused.id: bad})

    assert is_invalid_resume(caught.value)
    assert "the answer for the call 'c-email' to 'send_email' does not fit its review" in (
        "\n".join(caught.value.__notes__)
    )
    if outer == "recorder":  # it saw the pause, then the refused answer leave the review
        assert events[-2:] == ["outer> c-email", "<outer c-email ValidationError"]
    assert RAN == []
    assert [i.id for i in agent.get_state(THREAD).interrupts] == [paused.id]
    fixed = {
        "type": "edit",
        "edited_action": {"name": "send_email", "args": {"to": "bob", "body": "x"}},
    }
    final = answer(agent, how_call, {paused.id: fixed})
    assert RAN == ["send_email(bob, x)"]
    assert results(final)["c-email"].endswith("sent to bob")


def test_a_decision_of_a_type_not_allowed_is_refused_by_its_tag(how_call: str) -> None:
    agent = per_call_agent(
        interrupt_on={"send_email": {"allowed_decisions": ["approve", "reject"]}}
    )
    paused = start(agent, how_call)["c-email"]

    with pytest.raises(ValidationError, match="expected tags: 'approve', 'reject'"):
        answer(agent, how_call, {paused.id: {"type": "respond", "message": "x"}})
    assert RAN == []


def test_spans_around_a_paused_call_end_as_interrupted_not_failed(how_call: str) -> None:
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    export = pytest.importorskip("opentelemetry.sdk.trace.export")
    memory = pytest.importorskip("opentelemetry.sdk.trace.export.in_memory_span_exporter")
    from graphagent.middleware.otel import OtelTracingMiddleware

    exporter = memory.InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(export.SimpleSpanProcessor(exporter))
    agent = per_call_agent(before=(OtelTracingMiddleware(tracer_provider=provider),))

    paused = start(agent, how_call)["c-email"]
    answer(agent, how_call, {paused.id: approve()})

    tools = [s for s in exporter.get_finished_spans() if s.name == "execute_tool send_email"]
    assert [dict(s.attributes or {}).get("graphagent.interrupted") for s in tools] == [True, None]
    assert [s.status.is_ok for s in tools] == [True, True]
    provider.shutdown()


# -- a resume runs each call once ---------------------------------------------------------------


def test_parallel_calls_pause_together_and_each_runs_once(how: str) -> None:
    agent = per_call_agent(calls(EMAIL, READ, DELETE), "done", interrupt_on=GATED)

    paused = start(agent, how)
    assert set(paused) == {"c-email", "c-delete"}
    assert RAN == ["read_file(/notes)"]

    # Answer one: the other stays pending, with the same id; nothing else runs again.
    _, [pending] = run(agent, how, Command(resume={paused["c-delete"].id: approve()}))
    assert pending.id == paused["c-email"].id
    final, _ = run(agent, how, Command(resume={paused["c-email"].id: {"type": "reject"}}))

    assert RAN == ["read_file(/notes)", "delete_file(/report)"]
    assert set(results(final)) == {"c-email", "c-read", "c-delete"}
    assert final["messages"][-1].text == "done"


def test_answers_sent_together_take_effect_though_one_is_bad(how_call: str) -> None:
    agent = per_call_agent(calls(EMAIL, DELETE), "done", interrupt_on=GATED)
    paused = start(agent, how_call)

    together = {paused["c-email"].id: approve(), paused["c-delete"].id: {"type": "maybe"}}
    with pytest.raises(ValidationError) as caught:
        answer(agent, how_call, together)
    assert "'c-delete' to 'delete_file'" in "\n".join(caught.value.__notes__)
    assert RAN == ["send_email(ann, hi)"]

    final = answer(agent, how_call, {paused["c-delete"].id: approve()})
    assert RAN == ["send_email(ann, hi)", "delete_file(/report)"]  # the email was not sent twice
    assert "__interrupt__" not in final


def test_one_value_for_several_pauses_is_refused_by_langgraph(how_call: str) -> None:
    agent = per_call_agent(calls(EMAIL, DELETE), "done", interrupt_on=GATED)
    start(agent, how_call)

    with pytest.raises(RuntimeError, match="specify the interrupt id"):
        run_agent(agent, how_call, Command(resume=approve()), config=THREAD)
    assert RAN == []


def test_the_only_pause_also_takes_a_plain_value(how_call: str) -> None:
    agent = per_call_agent()
    start(agent, how_call)

    final = run_agent(agent, how_call, Command(resume=approve()), config=THREAD)

    assert RAN == ["send_email(ann, hi)"]
    assert "__interrupt__" not in final


# -- edits ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"to": "bob"}, r"edit\.edited_action\.args\.body\n  Field required"),
        (
            {"to": 7, "body": "x"},
            r"edit\.edited_action\.args\.to\n  Input should be a valid string",
        ),
    ],
)
def test_edits_are_checked_against_the_tool(args: Any, problem: str, how_call: str) -> None:
    agent = per_call_agent()
    paused = start(agent, how_call)["c-email"]
    edit = {"type": "edit", "edited_action": {"name": "send_email", "args": args}}

    with pytest.raises(ValidationError, match=problem):
        answer(agent, how_call, {paused.id: edit})
    assert RAN == []


def test_an_edit_keeps_the_tool(how_call: str) -> None:
    agent = per_call_agent()
    paused = start(agent, how_call)["c-email"]
    edit = {"type": "edit", "edited_action": {"name": "delete_file", "args": {"path": "/x"}}}

    with pytest.raises(
        ValidationError, match=r"edit\.edited_action\.name\n  Input should be 'send_email'"
    ):
        answer(agent, how_call, {paused.id: edit})
    assert RAN == []


def test_an_argument_the_tool_does_not_declare_passes_and_the_tool_ignores_it(
    how_call: str,
) -> None:
    agent = per_call_agent()
    paused = start(agent, how_call)["c-email"]
    args = {"to": "bob", "body": "x", "subject": "hi"}
    edit = {"type": "edit", "edited_action": {"name": "send_email", "args": args}}

    final = answer(agent, how_call, {paused.id: edit})

    assert RAN == ["send_email(bob, x)"]
    assert (
        'Executed instead: send_email with arguments {"to": "bob", "body": "x", "subject": "hi"}'
        in (results(final)["c-email"])
    )


@tool
def send_blocks(to: str) -> list[dict[str, str]]:
    """Send an email, answering with content blocks."""
    RAN.append(f"send_blocks({to})")
    return [{"type": "text", "text": f"sent to {to}"}]


@tool
def send_command(to: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
    """Send an email, answering with a Command."""
    RAN.append(f"send_command({to})")
    message = ToolMessage(f"sent to {to}", tool_call_id=tool_call_id, name="send_command")
    return Command(update={"messages": [message]})


@pytest.mark.parametrize("sender", [send_blocks, send_command], ids=["blocks", "command"])
def test_an_edits_notice_opens_every_kind_of_result(sender: Any, how_call: str) -> None:
    call = tool_call(sender.name, {"to": "ann"}, id="c-send")
    agent = per_call_agent(
        calls(call),
        "done",
        interrupt_on={sender.name: True},
        tools=(sender,),
        edit_notice="Edited.",
    )
    paused = start(agent, how_call)["c-send"]
    edit = {"type": "edit", "edited_action": {"name": sender.name, "args": {"to": "bob"}}}

    final = answer(agent, how_call, {paused.id: edit})

    [message] = [m for m in final["messages"] if isinstance(m, ToolMessage)]
    assert message.text.startswith(
        f'Edited. Executed instead: {sender.name} with arguments {{"to": "bob"}}.'
    )
    assert message.text.endswith("sent to bob")
    assert [f"{sender.name}(bob)"] == RAN


def test_a_call_not_reviewed_or_approved_is_not_annotated(how_call: str) -> None:
    agent = per_call_agent(calls(EMAIL, READ), "done")
    paused = start(agent, how_call)["c-email"]

    final = answer(agent, how_call, {paused.id: approve()})

    assert results(final) == {"c-email": "sent to ann", "c-read": "contents of /notes"}


# -- settings ------------------------------------------------------------------------------------


def test_an_unknown_keyword_names_the_class_and_the_closest_argument() -> None:
    with pytest.raises(UnknownArgumentError) as caught:
        HumanInTheLoopMiddleware({"send_email": True}, interupt_mode="per_call")  # type: ignore[call-arg]

    message = str(caught.value)
    assert "HumanInTheLoopMiddleware.__init__() got an unexpected keyword argument" in message
    assert "'interupt_mode'; did you mean 'interrupt_mode'?" in message
    assert isinstance(caught.value, TypeError)


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"interrupt_mode": "sometimes"}, "`interrupt_mode` must be 'batched' or 'per_call'"),
        ({"interrupt_mode": None}, "got None"),
        ({"edit_notice": 3}, "edit_notice must be a str or None, got 3"),
        ({"description_prefix": None}, "description_prefix must be a str, got None"),
    ],
)
def test_bad_settings_fail_when_the_middleware_is_built(
    options: dict[str, Any], problem: str
) -> None:
    with pytest.raises(MiddlewareError, match=problem):
        HumanInTheLoopMiddleware({"send_email": True}, **options)


def test_per_call_mode_checks_the_agent_like_batched_mode(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hitl = HumanInTheLoopMiddleware({"send_mail": True}, interrupt_mode="per_call")
    with caplog.at_level("INFO", logger="graphagent"):
        create_agent(ScriptedChatModel(["hi"]), [send_email], middleware=[hitl])
    assert "interrupt_on names ['send_mail'], which this agent does not run" in caplog.text


def test_a_run_without_a_checkpointer_ends_at_its_first_review(
    how_call: str, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedChatModel([calls(EMAIL), "done"])
    hitl = HumanInTheLoopMiddleware({"send_email": True}, interrupt_mode="per_call")
    agent = create_agent(model, [send_email], middleware=[hitl])

    with caplog.at_level("WARNING", logger="graphagent"):
        paused = run_agent(agent, how_call, {"messages": ["go"]})

    [interrupted] = paused["__interrupt__"]
    assert interrupted.value["name"] == "send_email"
    assert "pauses this run, which has no checkpointer, so it cannot be resumed" in caplog.text
    assert model.call_count == 1
    assert RAN == []


@pytest.mark.parametrize(("mode", "node"), [("batched", True), ("per_call", False)])
def test_each_mode_adds_the_hooks_it_uses(mode: Any, node: bool) -> None:
    """Per call, the review is the tool layer alone; batched, it is the after_model node, and
    the tool layer runs the calls a reviewer edited."""
    review = HumanInTheLoopMiddleware({"send_email": True}, interrupt_mode=mode)
    agent = create_agent(
        ScriptedChatModel([]), [send_email], middleware=[review], checkpointer=InMemorySaver()
    )

    assert ("HumanInTheLoopMiddleware.after_model" in agent.get_graph().nodes) is node
    assert [h.middleware for h in agent.plan.hooks["wrap_tool_call"]] == [review]
