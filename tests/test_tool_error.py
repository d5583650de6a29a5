"""ToolErrorMiddleware: tool exceptions become error ToolMessages the model can react to."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, interrupt

from graphagent import create_agent
from graphagent.errors import AsyncOnlyHookError, HookReturnError, MiddlewareError
from graphagent.middleware.tool_error import ToolErrorMiddleware, error_type_message
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run, run_agent
from tests.tools import add

SECRET = "postgres://admin:hunter2@db.internal:5432/prod"


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    if b == 0:
        raise ValueError("division by zero")
    return a / b


@tool
def lookup(key: str) -> str:
    """Look a key up in the database."""
    raise ConnectionError(f"could not connect to {SECRET}")


@tool
def approve(action: str) -> str:
    """Ask a human to approve an action."""
    return f"approved: {interrupt(action)}"


def error_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage) and m.status == "error"]


def test_the_model_reads_the_error_and_switches_tools(run: Run) -> None:
    def on_error(exc: Exception, request: ToolCallRequest) -> str | None:
        if isinstance(exc, ValueError):
            return f"Tool {request.tool_call['name']} got invalid arguments; fix them and retry."
        return None

    model = ScriptedChatModel(
        [
            calls(("divide", {"a": 10, "b": 0})),
            calls(("add", {"a": 10, "b": 0})),
            "divide failed, add gave 10",
        ]
    )
    agent = create_agent(model, [divide, add], middleware=[ToolErrorMiddleware(on_error=on_error)])

    result = run(agent, {"messages": ["divide 10 by 0; if that fails, add 10 and 0"]})

    failed, succeeded = (m for m in result["messages"] if isinstance(m, ToolMessage))
    assert (failed.status, failed.name, failed.content) == (
        "error",
        "divide",
        "Tool divide got invalid arguments; fix them and retry.",
    )
    assert failed.tool_call_id == result["messages"][1].tool_calls[0]["id"]
    assert (succeeded.status, succeeded.content) == ("success", "10")
    assert model.calls[1].messages[-1] == failed
    assert result["messages"][-1].content == "divide failed, add gave 10"


def test_error_type_message_names_tool_and_type_but_not_the_exception_text(run: Run) -> None:
    model = ScriptedChatModel([calls(("lookup", {"key": "users"})), "the database is down"])
    agent = create_agent(model, [lookup], middleware=[ToolErrorMiddleware(error_type_message)])

    result = run(agent, {"messages": ["look up users"]})

    (error,) = error_messages(result)
    assert error.content == (
        "Tool 'lookup' failed with ConnectionError. Check the arguments and call it again with "
        "corrected ones, or try a different approach."
    )
    assert "hunter2" not in str(result["messages"])
    assert "hunter2" not in str([call.messages for call in model.calls])


def test_returning_none_re_raises_the_original_exception(how_call: str) -> None:
    seen: list[Exception] = []

    def only_value_errors(exc: Exception, request: ToolCallRequest) -> str | None:
        seen.append(exc)
        return "bad input" if isinstance(exc, ValueError) else None

    model = ScriptedChatModel([calls(("lookup", {"key": "users"}))])
    agent = create_agent(model, [lookup], middleware=[ToolErrorMiddleware(only_value_errors)])

    with pytest.raises(ConnectionError, match="could not connect") as caught:
        run_agent(agent, how_call, {"messages": ["go"]})
    assert seen == [caught.value]


def test_content_blocks_are_passed_through(how_call: str) -> None:
    blocks: list[str | dict[str, Any]] = [{"type": "text", "text": "divide needs b != 0"}]
    model = ScriptedChatModel([calls(("divide", {"a": 1, "b": 0})), "ok"])
    agent = create_agent(model, [divide], middleware=[ToolErrorMiddleware(lambda e, r: blocks)])

    (error,) = error_messages(run_agent(agent, how_call, {"messages": ["go"]}))

    assert error.content == blocks


def test_tools_limits_the_scope_by_name_or_tool(how_call: str) -> None:
    for scope in (["divide"], [divide]):
        model = ScriptedChatModel(
            [calls(("divide", {"a": 1, "b": 0})), calls(("lookup", {"key": "k"})), "unreached"]
        )
        scoped = ToolErrorMiddleware(error_type_message, tools=scope)
        agent = create_agent(model, [divide, lookup], middleware=[scoped])
        with pytest.raises(ConnectionError):
            run_agent(agent, how_call, {"messages": ["go"]})
        assert model.call_count == 2  # divide's error reached the model; lookup's did not
        assert scoped.covered_tools == {"divide"}
    assert ToolErrorMiddleware(error_type_message).covered_tools is None


def test_async_runs_prefer_aon_error() -> None:
    async def aon_error(exc: Exception, request: ToolCallRequest) -> str:
        await asyncio.sleep(0)
        return f"async handled {type(exc).__name__}"

    def on_error(exc: Exception, request: ToolCallRequest) -> str:
        return f"sync handled {type(exc).__name__}"

    middleware = ToolErrorMiddleware(on_error, aon_error=aon_error)

    def content(how: str) -> Any:
        model = ScriptedChatModel([calls(("divide", {"a": 1, "b": 0})), "ok"])
        agent = create_agent(model, [divide], middleware=[middleware])
        (error,) = error_messages(run_agent(agent, how, {"messages": ["go"]}))
        return error.content

    assert content("ainvoke") == "async handled ValueError"
    assert content("astream") == "async handled ValueError"
    assert content("invoke") == "sync handled ValueError"
    assert content("stream") == "sync handled ValueError"


def test_aon_error_returning_none_re_raises() -> None:
    async def aon_error(exc: Exception, request: ToolCallRequest) -> None:
        return None

    model = ScriptedChatModel([calls(("divide", {"a": 1, "b": 0}))])
    agent = create_agent(model, [divide], middleware=[ToolErrorMiddleware(aon_error=aon_error)])

    with pytest.raises(ValueError, match="division by zero"):
        run_agent(agent, "ainvoke", {"messages": ["go"]})


def test_aon_error_alone_fails_clearly_when_a_tool_fails_under_a_sync_run() -> None:
    async def aon_error(exc: Exception, request: ToolCallRequest) -> str:
        return "handled"

    model = ScriptedChatModel([calls(("divide", {"a": 1, "b": 0}))])
    agent = create_agent(model, [divide], middleware=[ToolErrorMiddleware(aon_error=aon_error)])

    with pytest.raises(AsyncOnlyHookError, match=r"only aon_error.*also pass on_error") as caught:
        agent.invoke({"messages": ["go"]})
    assert isinstance(caught.value, RuntimeError)  # LangChain's type for the same case
    assert isinstance(caught.value.__cause__, ValueError)


def test_aon_error_alone_lets_working_tools_run_under_a_sync_run() -> None:
    async def aon_error(exc: Exception, request: ToolCallRequest) -> str:
        return "handled"

    model = ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "3"])
    agent = create_agent(model, [add], middleware=[ToolErrorMiddleware(aon_error=aon_error)])

    assert agent.invoke({"messages": ["go"]})["messages"][-1].content == "3"


def test_a_handler_returning_the_wrong_type_is_named(how_call: str) -> None:
    model = ScriptedChatModel([calls(("divide", {"a": 1, "b": 0}))])
    handler: Any = lambda exc, request: 42  # noqa: E731
    agent = create_agent(model, [divide], middleware=[ToolErrorMiddleware(handler)])

    with pytest.raises(HookReturnError, match=r"returned int; return a str") as caught:
        run_agent(agent, how_call, {"messages": ["go"]})
    assert isinstance(caught.value.__cause__, ValueError)


def test_successful_calls_and_commands_pass_through_unchanged(how_call: str) -> None:
    handled: list[Exception] = []
    model = ScriptedChatModel([calls(("add", {"a": 2, "b": 3})), "5"])
    agent = create_agent(
        model, [add], middleware=[ToolErrorMiddleware(lambda e, r: handled.append(e) or "x")]
    )

    result = run_agent(agent, how_call, {"messages": ["go"]})

    assert [m.content for m in result["messages"] if isinstance(m, ToolMessage)] == ["5"]
    assert handled == []


def test_interrupts_pass_through_and_resume(how_call: str) -> None:
    handled: list[Exception] = []
    model = ScriptedChatModel([calls(("approve", {"action": "deploy"})), "deployed"])
    agent = create_agent(
        model,
        [approve],
        middleware=[ToolErrorMiddleware(lambda e, r: handled.append(e) or "x")],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t"}}

    paused = run_agent(agent, how_call, {"messages": ["deploy"]}, config=config)
    assert paused["__interrupt__"][0].value == "deploy"
    result = run_agent(agent, how_call, Command(resume="yes"), config=config)

    assert handled == []
    assert result["messages"][-2].content == "approved: yes"
    assert isinstance(result["messages"][-1], AIMessage)


def test_the_hidden_exception_is_logged_for_developers(
    how_call: str, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedChatModel([calls(("divide", {"a": 1, "b": 0})), "ok"])
    agent = create_agent(model, [divide], middleware=[ToolErrorMiddleware(error_type_message)])

    with caplog.at_level(logging.DEBUG, logger="graphagent.middleware.tool_error"):
        run_agent(agent, how_call, {"messages": ["go"]})

    (record,) = caplog.records
    assert record.exc_info is not None
    assert str(record.exc_info[1]) == "division by zero"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"on_error": "oops"}, r"on_error=\.\.\.\) got 'oops' \(str\), which is not callable"),
        ({"aon_error": 3}, r"aon_error=\.\.\.\) got 3 \(int\), which is not callable"),
        (
            {"tools": "divide"},
            r"tools='divide'\): tools is not a list; .* e\.g\. tools=\['divide'\]",
        ),
        (
            {"tools": divide},
            r"tools is not a list; pass a list of tool names or tools, e\.g\. tools=\['divide'\]",
        ),
        ({"tools": ["divide", 7]}, r"item 1 is 7; give tool names"),
        ({"tools": [""]}, r"item 0 is ''; give tool names"),
    ],
)
def test_bad_options_fail_at_construction(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(MiddlewareError, match=message):
        ToolErrorMiddleware(**{"on_error": error_type_message, **kwargs})


def test_a_handler_is_required() -> None:
    with pytest.raises(ValueError, match="requires on_error and/or aon_error") as caught:
        ToolErrorMiddleware()
    assert "on_error=error_type_message" in str(caught.value)


def test_tools_that_never_apply_are_noted(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="graphagent"):
        ToolErrorMiddleware(error_type_message, tools=[])
        create_agent(
            ScriptedChatModel([]),
            [divide],
            middleware=[ToolErrorMiddleware(error_type_message, tools=["divde"])],
        )

    assert "tools=[] covers no tool" in caplog.text
    assert "tools names ['divde'], which the agent does not have" in caplog.text


def test_a_handler_that_is_not_callable_is_also_a_type_error() -> None:
    # LangChain raises TypeError when it calls it; `except TypeError` keeps working.
    with pytest.raises(TypeError, match=r"on_error=\.\.\.\) got 'oops' \(str\)"):
        ToolErrorMiddleware(on_error="oops")  # type: ignore[arg-type]
