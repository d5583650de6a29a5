"""wrap_tool_call: recovering from tool errors, overriding calls, parallel calls, bad arguments."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from graphagent import HookReturnError, create_agent
from graphagent.middleware import wrap_tool_call
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run, run_agent
from tests.tools import add


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    if b == 0:
        raise ValueError("division by zero")
    return a / b


def test_a_tool_error_becomes_an_error_message_and_the_model_recovers(run: Run) -> None:
    trace: list[str] = []

    @wrap_tool_call
    def catch(request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        name = request.tool_call["name"]
        trace.append(f"-> {name} {request.tool_call['args']}")
        try:
            result = handler(request)
        except Exception as exc:
            trace.append(f"!! {name} raised {type(exc).__name__}: {exc}")
            return ToolMessage(
                content=f"Tool {name} failed ({type(exc).__name__}); check the arguments.",
                tool_call_id=request.tool_call["id"],
                name=name,
                status="error",
            )
        trace.append(f"<- {name} ok")
        return result

    model = ScriptedChatModel(
        [
            calls(("divide", {"a": 10, "b": 0})),
            calls(("add", {"a": 10, "b": 0})),
            "divide failed, add gave 10",
        ]
    )
    agent = create_agent(model, [divide, add], middleware=[catch])

    result = run(agent, {"messages": ["divide 10 by 0, else add"]})

    assert trace == [
        "-> divide {'a': 10, 'b': 0}",
        "!! divide raised ValueError: division by zero",
        "-> add {'a': 10, 'b': 0}",
        "<- add ok",
    ]
    failed, succeeded = (m for m in result["messages"] if isinstance(m, ToolMessage))
    assert (failed.status, failed.content) == (
        "error",
        "Tool divide failed (ValueError); check the arguments.",
    )
    assert (succeeded.status, succeeded.content) == ("success", "10")
    assert model.calls[1].messages[-1] == failed


def test_tool_exceptions_propagate_by_default(how_call: str) -> None:
    model = ScriptedChatModel([calls(("divide", {"a": 1, "b": 0}))])
    agent = create_agent(model, [divide])
    with pytest.raises(ValueError, match="division by zero"):
        run_agent(agent, how_call, {"messages": ["go"]})


def test_exceptions_escaping_wrappers_propagate(how_call: str) -> None:
    @wrap_tool_call
    def passthrough(request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        return handler(request)

    model = ScriptedChatModel([calls(("divide", {"a": 1, "b": 0}))])
    agent = create_agent(model, [divide], middleware=[passthrough])
    with pytest.raises(ValueError, match="division by zero"):
        run_agent(agent, how_call, {"messages": ["go"]})


def test_invalid_arguments_become_an_error_message_the_model_reads(run: Run) -> None:
    seen: list[Any] = []

    @wrap_tool_call
    def observe(request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        result = handler(request)
        seen.append(result)
        return result

    model = ScriptedChatModel([calls(("add", {"a": "ten"})), "sorry"])
    result = run(create_agent(model, [add], middleware=[observe]), {"messages": ["go"]})

    error = result["messages"][2]
    assert isinstance(error, ToolMessage)
    assert error.status == "error"
    assert "add" in error.content
    assert seen == [error]
    assert result["messages"][-1].content == "sorry"


def test_override_changes_the_call(run: Run) -> None:
    @wrap_tool_call
    def double_b(request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        call = request.tool_call
        return handler(
            request.override(
                tool_call={**call, "args": {**call["args"], "b": 2 * call["args"]["b"]}}
            )
        )

    model = ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "done"])
    result = run(create_agent(model, [add], middleware=[double_b]), {"messages": ["go"]})

    assert result["messages"][2].content == "5"


def test_handler_may_be_called_many_times_or_not_at_all(run: Run) -> None:
    counter = {"n": 0}

    @tool
    def flaky() -> str:
        """Fails twice."""
        counter["n"] += 1
        if counter["n"] < 3:
            raise ConnectionError("down")
        return "up"

    @wrap_tool_call
    def retry(request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        for _ in range(5):
            try:
                return handler(request)
            except ConnectionError:
                continue
        raise AssertionError("unreachable")

    @wrap_tool_call
    def short_circuit(request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        if request.tool_call["name"] == "add":
            return ToolMessage("cached 99", tool_call_id=request.tool_call["id"], name="add")
        return handler(request)

    model = ScriptedChatModel([calls(("flaky", {}), ("add", {"a": 1, "b": 1})), "ok"])
    agent = create_agent(model, [flaky, add], middleware=[retry, short_circuit])

    result = run(agent, {"messages": ["go"]})

    assert counter["n"] == 3
    assert [m.content for m in result["messages"] if isinstance(m, ToolMessage)] == [
        "up",
        "cached 99",
    ]


def test_a_wrapper_may_return_a_command(run: Run) -> None:
    @wrap_tool_call
    def commanding(request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        message = handler(request)
        return Command(update={"messages": [message]})

    model = ScriptedChatModel([calls(("add", {"a": 2, "b": 3})), "five"])
    result = run(create_agent(model, [add], middleware=[commanding]), {"messages": ["go"]})

    assert result["messages"][2].content == "5"
    assert result["messages"][-1].content == "five"


def test_all_parallel_tool_calls_run(run: Run) -> None:
    threads: set[int] = set()

    @tool
    def record(i: int) -> int:
        """Record the thread."""
        threads.add(threading.get_ident())
        return i * 10

    model = ScriptedChatModel([calls(*[("record", {"i": i}) for i in range(4)]), "done"])
    result = run(create_agent(model, [record]), {"messages": ["go"]})

    answers = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [m.content for m in answers] == ["0", "10", "20", "30"]
    ids = [c["id"] for c in result["messages"][1].tool_calls]
    assert [m.tool_call_id for m in answers] == ids


def test_unknown_tool_name_gets_an_error_message(run: Run) -> None:
    model = ScriptedChatModel([calls(("nope", {})), "fine"])
    result = run(create_agent(model, [add]), {"messages": ["go"]})

    error = result["messages"][2]
    assert isinstance(error, ToolMessage)
    assert error.status == "error"
    assert "nope" in error.content


def test_a_single_tool_call_runs_without_starting_a_thread() -> None:
    started: list[str] = []
    original = threading.Thread.start

    def record(self: threading.Thread) -> None:
        started.append(self.name)
        original(self)

    where: list[int] = []

    @tool
    def here() -> str:
        """Report the thread."""
        where.append(threading.get_ident())
        return "ok"

    agent = create_agent(ScriptedChatModel([calls(("here", {})), "done"]), [here])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(threading.Thread, "start", record)
        agent.invoke({"messages": ["go"]})

    assert where == [threading.get_ident()]
    assert started == []


# --- what a wrap_tool_call may return ---------------------------------------------------------

BAD_RETURNS: dict[str, Callable[[ToolCallRequest], Any]] = {
    "a str": lambda request: "42",
    "an AIMessage": lambda request: AIMessage("42"),
    "a ToolMessage answering another call": lambda request: ToolMessage("42", tool_call_id="x"),
    "None": lambda request: None,
    "a dict": lambda request: {"messages": []},
}


@pytest.mark.parametrize(
    ("mode", "how"), [("sync", "invoke"), ("sync", "ainvoke"), ("async", "ainvoke")]
)
@pytest.mark.parametrize("bad", BAD_RETURNS)
def test_a_wrapper_must_answer_its_own_call(bad: str, mode: str, how: str) -> None:
    make = BAD_RETURNS[bad]
    if mode == "sync":

        @wrap_tool_call(name="Shortcut")
        def shortcut(request: ToolCallRequest, handler: Any) -> Any:
            return make(request)
    else:

        @wrap_tool_call(name="Shortcut")
        async def shortcut(request: ToolCallRequest, handler: Any) -> Any:
            return make(request)

    model = ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "never reached"])
    agent = create_agent(model, [add], middleware=[shortcut])

    with pytest.raises(HookReturnError) as caught:
        run_agent(agent, how, {"messages": [("user", "1 + 2?")]})

    message = str(caught.value)
    assert message.startswith("'Shortcut.wrap_tool_call' returned ")
    assert "return the handler's result, or a ToolMessage answering this call" in message
    assert model.call_count == 1  # nothing was injected into the conversation


def test_a_wrapper_may_answer_with_its_own_tool_message_or_a_command(how_call: str) -> None:
    @wrap_tool_call
    def answer(request: ToolCallRequest, handler: Any) -> Any:
        if request.tool_call["args"]["a"] == 1:
            return ToolMessage("three", tool_call_id=request.tool_call["id"])
        return Command(
            update={"messages": [ToolMessage("seven", tool_call_id=request.tool_call["id"])]}
        )

    model = ScriptedChatModel([calls(("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})), "ok"])
    agent = create_agent(model, [add], middleware=[answer])

    result = run_agent(agent, how_call, {"messages": [("user", "sums?")]})

    answers = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
    assert answers == ["three", "seven"]
