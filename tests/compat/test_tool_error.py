"""LangChain 1.5's ``ToolErrorMiddleware``: what the handlers receive, the error ``ToolMessage``
built from what they return, ``None`` (or no return) re-raising the tool's exception, which
handler each kind of run calls, which tools are covered, and what never reaches a handler
(interrupts, arguments refused before the tool runs).

Tests marked "Deliberate difference" assert graphagent's behaviour where
docs/migrating-from-langchain.md ("What graphagent does differently") lists it.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from graphagent import create_agent
from graphagent.middleware import ToolErrorMiddleware, ToolRetryMiddleware
from graphagent.middleware.tool_error import error_type_message
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent

GO = {"messages": ["go"]}
ARGS = {"a": 1.0, "b": 0.0}


class Failure(Exception):
    """What the tools below raise."""


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    raise Failure(f"cannot divide {a} by {b}")


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    raise ConnectionError("database unreachable")


def calling(name: str, args: dict[str, Any]) -> ScriptedChatModel:
    return ScriptedChatModel([calls((name, args)), "done"])


class Recorder:
    """A sync or async handler recording ``(exc, request)`` and returning ``answer``."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.seen: list[tuple[Exception, Any]] = []

    def __call__(self, exc: Exception, request: Any) -> Any:
        self.seen.append((exc, request))
        return self.answer(exc, request) if callable(self.answer) else self.answer

    async def asynchronous(self, exc: Exception, request: Any) -> Any:
        return self(exc, request)


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


# -- options -------------------------------------------------------------------------------------


def test_the_handlers_are_readable_and_no_tool_is_added() -> None:
    on_error, aon_error = Recorder("x"), Recorder("y").asynchronous

    sync_only = ToolErrorMiddleware(on_error)
    both = ToolErrorMiddleware(on_error, aon_error=aon_error, tools=["divide", lookup])

    assert (sync_only.on_error, sync_only.aon_error) == (on_error, None)
    assert (both.on_error, both.aon_error) == (on_error, aon_error)
    assert list(both.tools) == []
    assert both.name == "ToolErrorMiddleware"


# -- the handler's answer ------------------------------------------------------------------------


def test_the_handlers_text_answers_the_call_as_an_error(how_call: str) -> None:
    handler = Recorder(
        lambda exc, request: f"`{request.tool_call['name']}` failed; fix the input and retry."
    )
    model = calling("divide", ARGS)
    agent = create_agent(model, [divide], middleware=[ToolErrorMiddleware(handler)])

    result = run_agent(agent, how_call, GO)

    [call] = result["messages"][1].tool_calls
    [answer] = tool_messages(result)
    assert answer.content == "`divide` failed; fix the input and retry."
    assert (answer.name, answer.tool_call_id, answer.status) == ("divide", call["id"], "error")
    # The model reads it and the run goes on.
    assert model.calls[1].messages[-1].content == answer.content
    assert result["messages"][-1].text == "done"
    # The handler got the tool's exception and the call.
    [(exc, request)] = handler.seen
    assert isinstance(exc, Failure)
    assert str(exc) == "cannot divide 1.0 by 0.0"
    assert (request.tool_call["name"], request.tool_call["args"]) == ("divide", ARGS)
    assert request.tool_call["id"] == call["id"]
    assert request.tool.name == "divide"


def test_content_blocks_are_the_messages_content(how_call: str) -> None:
    blocks = [{"type": "text", "text": "divide failed"}, {"type": "text", "text": "use b != 0"}]
    agent = create_agent(
        calling("divide", ARGS), [divide], middleware=[ToolErrorMiddleware(Recorder(blocks))]
    )

    [answer] = tool_messages(run_agent(agent, how_call, GO))

    assert answer.content == blocks
    assert answer.status == "error"


def test_returning_none_re_raises_the_tools_exception(how_call: str) -> None:
    handler = Recorder(None)
    agent = create_agent(
        calling("divide", ARGS), [divide], middleware=[ToolErrorMiddleware(handler)]
    )

    with pytest.raises(Failure, match="cannot divide") as caught:
        run_agent(agent, how_call, GO)

    [(exc, _)] = handler.seen
    assert caught.value is exc


def test_a_handler_that_falls_through_re_raises(how_call: str) -> None:
    def only_value_errors(exc: Exception, request: Any) -> str | None:
        if isinstance(exc, ValueError):
            return "fix the input"
        return None

    agent = create_agent(
        calling("lookup", {"key": "k"}),
        [lookup],
        middleware=[ToolErrorMiddleware(only_value_errors)],
    )

    with pytest.raises(ConnectionError, match="database unreachable"):
        run_agent(agent, how_call, GO)


def test_a_tool_that_works_is_answered_as_usual(how_call: str) -> None:
    @tool
    def echo(text: str) -> str:
        """Echo."""
        return f"echo {text}"

    handler = Recorder("unused")
    agent = create_agent(
        calling("echo", {"text": "hi"}), [echo], middleware=[ToolErrorMiddleware(handler)]
    )

    [answer] = tool_messages(run_agent(agent, how_call, GO))

    assert (answer.content, answer.status) == ("echo hi", "success")
    assert handler.seen == []


# -- which handler -------------------------------------------------------------------------------


def test_invoke_calls_on_error_and_ainvoke_prefers_aon_error(how_call: str) -> None:
    on_error, aon_error = Recorder("from on_error"), Recorder("from aon_error")
    middleware = ToolErrorMiddleware(on_error, aon_error=aon_error.asynchronous)
    agent = create_agent(calling("divide", ARGS), [divide], middleware=[middleware])

    [answer] = tool_messages(run_agent(agent, how_call, GO))

    used, unused = (on_error, aon_error) if how_call == "invoke" else (aon_error, on_error)
    assert answer.content == f"from {'on_error' if used is on_error else 'aon_error'}"
    assert (len(used.seen), unused.seen) == (1, [])


def test_ainvoke_falls_back_to_on_error() -> None:
    on_error = Recorder("from on_error")
    agent = create_agent(
        calling("divide", ARGS), [divide], middleware=[ToolErrorMiddleware(on_error)]
    )

    [answer] = tool_messages(run_agent(agent, "ainvoke", GO))

    assert answer.content == "from on_error"


def test_aon_error_alone_serves_ainvoke() -> None:
    aon_error = Recorder("from aon_error")
    middleware = ToolErrorMiddleware(aon_error=aon_error.asynchronous)
    agent = create_agent(calling("divide", ARGS), [divide], middleware=[middleware])

    [answer] = tool_messages(run_agent(agent, "ainvoke", GO))

    assert (answer.content, answer.status) == ("from aon_error", "error")


def test_aon_error_returning_none_re_raises() -> None:
    middleware = ToolErrorMiddleware(aon_error=Recorder(None).asynchronous)
    agent = create_agent(calling("divide", ARGS), [divide], middleware=[middleware])

    with pytest.raises(Failure, match="cannot divide"):
        run_agent(agent, "ainvoke", GO)


def test_aon_error_alone_under_invoke_is_a_runtime_error() -> None:
    # graphagent's AsyncOnlyHookError is a NotImplementedError, itself a RuntimeError.
    aon_error = Recorder("unused")
    middleware = ToolErrorMiddleware(aon_error=aon_error.asynchronous)
    agent = create_agent(calling("divide", ARGS), [divide], middleware=[middleware])

    with pytest.raises(RuntimeError, match=r"^ToolErrorMiddleware has no sync `on_error`"):
        agent.invoke(GO)

    assert aon_error.seen == []


# -- which tools ---------------------------------------------------------------------------------


@pytest.mark.parametrize("by", ["name", "tool"])
def test_tools_limits_handling_to_the_tools_named(how_call: str, by: str) -> None:
    handler = Recorder("handled")
    covered: list[str | BaseTool] = ["divide"] if by == "name" else [divide]
    middleware = ToolErrorMiddleware(handler, tools=covered)

    agent = create_agent(calling("divide", ARGS), [divide, lookup], middleware=[middleware])
    [answer] = tool_messages(run_agent(agent, how_call, GO))
    assert answer.content == "handled"

    agent = create_agent(calling("lookup", {"key": "k"}), [divide, lookup], middleware=[middleware])
    with pytest.raises(ConnectionError, match="database unreachable"):
        run_agent(agent, how_call, GO)
    assert len(handler.seen) == 1


# -- what never reaches the handler --------------------------------------------------------------


def test_an_interrupt_passes_through_and_the_run_resumes(how_call: str) -> None:
    @tool
    def approve(action: str) -> str:
        """Ask a human to approve."""
        return f"approved: {interrupt(action)}"

    handler = Recorder("unused")
    agent = create_agent(
        calling("approve", {"action": "deploy"}),
        [approve],
        middleware=[ToolErrorMiddleware(handler)],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t"}}

    paused = run_agent(agent, how_call, GO, config=config)
    assert [i.value for i in paused["__interrupt__"]] == ["deploy"]

    done = run_agent(agent, how_call, Command(resume="yes"), config=config)
    [answer] = tool_messages(done)
    assert (answer.content, answer.status) == ("approved: yes", "success")
    assert handler.seen == []


def test_arguments_refused_before_the_tool_runs_never_reach_the_handler(how_call: str) -> None:
    handler = Recorder("unused")
    model = calling("divide", {"a": "not a number"})
    agent = create_agent(model, [divide], middleware=[ToolErrorMiddleware(handler)])

    result = run_agent(agent, how_call, GO)

    [answer] = tool_messages(result)
    assert answer.status == "error"
    assert handler.seen == []
    assert result["messages"][-1].text == "done"


def test_with_a_retry_inside_the_handler_sees_the_error_once_retries_run_out(
    how_call: str,
) -> None:
    runs: list[int] = []

    @tool
    def flaky(key: str) -> str:
        """Look a key up."""
        runs.append(len(runs))
        raise ConnectionError(f"down {len(runs)}")

    handler = Recorder(lambda exc, request: f"gave up: {exc}")
    middleware = [
        ToolErrorMiddleware(handler),
        ToolRetryMiddleware(max_retries=2, on_failure="error", initial_delay=0),
    ]
    agent = create_agent(calling("flaky", {"key": "k"}), [flaky], middleware=middleware)

    [answer] = tool_messages(run_agent(agent, how_call, GO))

    assert len(runs) == 3
    assert len(handler.seen) == 1
    assert (answer.content, answer.status) == ("gave up: down 3", "error")


# -- no handler, and tools that never apply ------------------------------------------------------


def test_a_handler_is_required() -> None:
    with pytest.raises(ValueError, match="on_error"):
        ToolErrorMiddleware()


def test_error_type_message_names_the_tool_and_the_exception_type(how_call: str) -> None:
    # graphagent's own handler, given as on_error: the exception's text never reaches the model.
    agent = create_agent(
        calling("lookup", {"key": "k"}),
        [lookup],
        middleware=[ToolErrorMiddleware(error_type_message)],
    )

    [answer] = tool_messages(run_agent(agent, how_call, GO))

    assert answer.content == (
        "Tool 'lookup' failed with ConnectionError. Check the arguments and call it again with "
        "corrected ones, or try a different approach."
    )
    assert answer.status == "error"


def test_aon_error_alone_under_invoke_runs_tools_that_work() -> None:
    runs: list[str] = []

    @tool
    def echo(text: str) -> str:
        """Echo."""
        runs.append(text)
        return text

    middleware = ToolErrorMiddleware(aon_error=Recorder("unused").asynchronous)
    agent = create_agent(calling("echo", {"text": "hi"}), [echo], middleware=[middleware])

    agent.invoke(GO)

    assert runs == ["hi"]


@pytest.mark.parametrize("tools", [[], ["divde"]])
def test_tools_that_can_never_match_are_accepted_and_handle_nothing(
    how_call: str, tools: list[str]
) -> None:
    handler = Recorder("x")
    agent = create_agent(
        calling("divide", ARGS), [divide], middleware=[ToolErrorMiddleware(handler, tools=tools)]
    )

    with pytest.raises(Failure, match="cannot divide"):
        run_agent(agent, how_call, GO)
    assert handler.seen == []
