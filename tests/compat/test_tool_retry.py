"""LangChain 1.5's ``ToolRetryMiddleware``: its defaults, how many times a tool runs, the waits
between runs, the error ``ToolMessage`` that answers a call whose retries ran out, which errors
propagate at once, which tools are covered, the ``ValueError`` for each bad option, and the
deprecated ``on_failure`` values ``"raise"`` and ``"return_message"``, which mean ``"error"`` and
``"continue"``, with a warning.

Tests marked "Deliberate difference" assert graphagent's behaviour where
docs/migrating-from-langchain.md ("What graphagent does differently") lists it.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import pytest
from langchain_core.exceptions import ModelAuthenticationError
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from graphagent import create_agent
from graphagent.middleware import ToolRetryMiddleware
from graphagent.testing import ScriptedChatModel, calls
from tests.compat.waits import Waits, record_waits, seconds
from tests.conftest import run_agent

GO = {"messages": ["go"]}


@tool
def dead(query: str) -> str:
    """Never works."""
    raise ConnectionError("down")


def agent_with(retry: ToolRetryMiddleware) -> object:
    model = ScriptedChatModel([calls(("dead", {"query": "x"})), "answered anyway"])
    return create_agent(model, [dead], middleware=[retry])


def test_raise_is_the_old_name_of_error(how_call: str) -> None:
    with pytest.warns(DeprecationWarning, match="on_failure='raise'.*on_failure='error'"):
        retry = ToolRetryMiddleware(max_retries=0, on_failure="raise")  # type: ignore[arg-type]
    assert retry.on_failure == "error"

    with pytest.raises(ConnectionError, match="down"):
        run_agent(agent_with(retry), how_call, {"messages": ["go"]})


def test_return_message_is_the_old_name_of_continue(how_call: str) -> None:
    with pytest.warns(
        DeprecationWarning, match="on_failure='return_message'.*on_failure='continue'"
    ):
        retry = ToolRetryMiddleware(max_retries=0, on_failure="return_message")  # type: ignore[arg-type]
    assert retry.on_failure == "continue"

    result = run_agent(agent_with(retry), how_call, {"messages": ["go"]})

    [failure] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert failure.status == "error"
    assert "ConnectionError" in failure.text
    assert result["messages"][-1].text == "answered anyway"


def test_the_warning_points_at_the_callers_line() -> None:
    # ModelRetryMiddleware's old names are a deliberate difference: see test_model_retry.py.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ToolRetryMiddleware(on_failure="raise")  # type: ignore[arg-type]
        ToolRetryMiddleware(on_failure="return_message")  # type: ignore[arg-type]

    assert [w.filename for w in caught] == [__file__, __file__]


# -- options -------------------------------------------------------------------------------------


def test_defaults() -> None:
    retry = ToolRetryMiddleware()

    assert retry.max_retries == 2
    assert retry.on_failure == "continue"
    assert (retry.backoff_factor, retry.initial_delay, retry.max_delay) == (2.0, 1.0, 60.0)
    assert retry.jitter is True
    assert callable(retry.retry_on)
    assert list(retry.tools) == []
    assert retry.name == "ToolRetryMiddleware"


def test_the_tools_it_covers_are_not_tools_it_adds(how_call: str) -> None:
    retry = ToolRetryMiddleware(tools=["dead", dead], initial_delay=0, on_failure="continue")

    assert list(retry.tools) == []
    model = ScriptedChatModel([calls(("dead", {"query": "x"})), "done"])
    result = run_agent(create_agent(model, [dead], middleware=[retry]), how_call, GO)

    assert [call.tool_names for call in model.calls] == [("dead",), ("dead",)]
    assert result["messages"][-1].text == "done"


# -- attempts ------------------------------------------------------------------------------------


class Outcomes:
    """A tool named ``name`` that raises or returns the given outcomes in turn."""

    def __init__(self, name: str, outcomes: Iterable[Exception | str]) -> None:
        self.outcomes = list(outcomes)
        self.runs = 0

        @tool(name)
        def run_once(query: str) -> str:
            """Look something up."""
            outcome = self.outcomes[self.runs]
            self.runs += 1
            if isinstance(outcome, Exception):
                raise outcome
            return outcome

        self.tool: BaseTool = run_once


def calling(*names: str) -> ScriptedChatModel:
    """A model that calls each named tool once, then answers "done"."""
    return ScriptedChatModel([calls(*((n, {"query": "q"}) for n in names)), "done"])


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> Waits:
    return record_waits(monkeypatch)


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def test_a_failing_tool_runs_again_until_it_answers(how_call: str, waits: Waits) -> None:
    lookup = Outcomes("lookup", [ConnectionError("a"), TimeoutError("b"), "found it"])
    model = calling("lookup")
    agent = create_agent(model, [lookup.tool], middleware=[ToolRetryMiddleware()])

    result = run_agent(agent, how_call, GO)

    assert lookup.runs == 3
    [answer] = tool_messages(result)
    assert (answer.status, answer.content, answer.name) == ("success", "found it", "lookup")
    assert result["messages"][-1].text == "done"


def test_when_the_retries_run_out_an_error_tool_message_answers_the_call(
    how_call: str, waits: Waits
) -> None:
    lookup = Outcomes("lookup", [ConnectionError(f"down {i}") for i in range(3)])
    model = calling("lookup")
    agent = create_agent(model, [lookup.tool], middleware=[ToolRetryMiddleware()])

    result = run_agent(agent, how_call, GO)

    assert lookup.runs == 3
    [answer] = tool_messages(result)
    [call] = result["messages"][1].tool_calls
    assert answer.content == (
        "Tool 'lookup' failed after 3 attempts with ConnectionError: down 2. Please try again."
    )
    assert (answer.name, answer.tool_call_id, answer.status) == ("lookup", call["id"], "error")
    # The model reads it and the run goes on.
    assert model.calls[1].messages[-1].content == answer.content
    assert result["messages"][-1].text == "done"


def test_one_attempt_is_worded_in_the_singular(how_call: str) -> None:
    lookup = Outcomes("lookup", [TimeoutError("too slow")])
    retry = ToolRetryMiddleware(max_retries=0)
    agent = create_agent(calling("lookup"), [lookup.tool], middleware=[retry])

    [answer] = tool_messages(run_agent(agent, how_call, GO))

    assert answer.content == (
        "Tool 'lookup' failed after 1 attempt with TimeoutError: too slow. Please try again."
    )


def test_on_failure_function_writes_the_message_from_the_last_error(
    how_call: str, waits: Waits
) -> None:
    errors = [ConnectionError("first"), ConnectionError("second")]
    seen: list[Exception] = []

    def explain(exc: Exception) -> str:
        seen.append(exc)
        return "Database temporarily unavailable. Please try again later."

    lookup = Outcomes("lookup", errors)
    retry = ToolRetryMiddleware(max_retries=1, on_failure=explain)
    agent = create_agent(calling("lookup"), [lookup.tool], middleware=[retry])

    result = run_agent(agent, how_call, GO)

    assert seen == [errors[1]]
    [answer] = tool_messages(result)
    assert answer.content == "Database temporarily unavailable. Please try again later."
    assert (answer.name, answer.status) == ("lookup", "error")


def test_on_failure_error_re_raises_the_last_error(how_call: str, waits: Waits) -> None:
    errors = [ConnectionError("first"), ConnectionError("second"), ConnectionError("third")]
    lookup = Outcomes("lookup", errors)
    retry = ToolRetryMiddleware(on_failure="error")
    agent = create_agent(calling("lookup"), [lookup.tool], middleware=[retry])

    with pytest.raises(ConnectionError) as caught:
        run_agent(agent, how_call, GO)

    assert caught.value is errors[2]
    assert lookup.runs == 3


def test_an_error_outside_retry_on_propagates_at_once(how_call: str) -> None:
    lookup = Outcomes("lookup", [ValueError("bad query"), "never"])
    retry = ToolRetryMiddleware(retry_on=(ConnectionError,), on_failure=lambda e: "unused")
    agent = create_agent(calling("lookup"), [lookup.tool], middleware=[retry])

    with pytest.raises(ValueError, match="bad query"):
        run_agent(agent, how_call, GO)

    assert lookup.runs == 1


def test_a_retry_on_function_decides_for_each_error(how_call: str, waits: Waits) -> None:
    seen: list[str] = []

    def should_retry(exc: Exception) -> bool:
        seen.append(str(exc))
        return "5xx" in str(exc)

    lookup = Outcomes("lookup", [RuntimeError("5xx"), RuntimeError("4xx"), "never"])
    retry = ToolRetryMiddleware(max_retries=5, retry_on=should_retry)
    agent = create_agent(calling("lookup"), [lookup.tool], middleware=[retry])

    with pytest.raises(RuntimeError, match="4xx"):
        run_agent(agent, how_call, GO)

    assert seen == ["5xx", "4xx"]


def test_by_default_errors_marked_final_propagate_at_once(how_call: str) -> None:
    lookup = Outcomes("lookup", [ModelAuthenticationError("bad key"), "never"])
    agent = create_agent(calling("lookup"), [lookup.tool], middleware=[ToolRetryMiddleware()])

    with pytest.raises(ModelAuthenticationError, match="bad key"):
        run_agent(agent, how_call, GO)

    assert lookup.runs == 1


def test_waits_grow_by_backoff_factor(how_call: str, waits: Waits) -> None:
    lookup = Outcomes("lookup", [ConnectionError("down")] * 3 + ["found"])
    retry = ToolRetryMiddleware(max_retries=3, initial_delay=0.5, jitter=False)
    agent = create_agent(calling("lookup"), [lookup.tool], middleware=[retry])

    run_agent(agent, how_call, GO)

    assert seconds(waits, how_call) == [0.5, 1.0, 2.0]


# -- which tools ---------------------------------------------------------------------------------


@pytest.mark.parametrize("by", ["name", "tool"])
def test_tools_limits_retrying_to_the_tools_named(how_call: str, waits: Waits, by: str) -> None:
    lookup = Outcomes("lookup", [ConnectionError("down"), "found"])
    other = Outcomes("other", [ConnectionError("down"), "never"])
    retry = ToolRetryMiddleware(tools=["lookup" if by == "name" else lookup.tool])  # type: ignore[list-item]
    agent = create_agent(calling("lookup"), [lookup.tool, other.tool], middleware=[retry])

    [answer] = tool_messages(run_agent(agent, how_call, GO))

    assert (answer.content, lookup.runs) == ("found", 2)

    agent = create_agent(calling("other"), [lookup.tool, other.tool], middleware=[retry])

    with pytest.raises(ConnectionError, match="down"):
        run_agent(agent, how_call, GO)

    assert other.runs == 1


def test_an_empty_tools_list_retries_no_tool(how_call: str) -> None:
    lookup = Outcomes("lookup", [ConnectionError("down"), "never"])
    agent = create_agent(
        calling("lookup"), [lookup.tool], middleware=[ToolRetryMiddleware(tools=[])]
    )

    with pytest.raises(ConnectionError, match="down"):
        run_agent(agent, how_call, GO)

    assert lookup.runs == 1


# -- interrupts ----------------------------------------------------------------------------------


def test_an_interrupt_in_a_tool_passes_through_and_the_run_resumes(how_call: str) -> None:
    runs: list[str] = []

    @tool
    def confirm(query: str) -> str:
        """Ask a human first."""
        runs.append(query)
        return f"human says {interrupt('go ahead?')}"

    agent = create_agent(
        calling("confirm"),
        [confirm],
        middleware=[ToolRetryMiddleware(on_failure="continue")],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t"}}

    paused = run_agent(agent, how_call, GO, config=config)

    assert [i.value for i in paused["__interrupt__"]] == ["go ahead?"]
    assert runs == ["q"]
    assert tool_messages(paused) == []

    done = run_agent(agent, how_call, Command(resume="yes"), config=config)

    [answer] = tool_messages(done)
    assert (answer.status, answer.content) == ("success", "human says yes")
    assert isinstance(done["messages"][-1], AIMessage)


# -- deliberate differences ----------------------------------------------------------------------


def test_a_tool_name_the_agent_lacks_is_refused_when_the_agent_is_built() -> None:
    # Deliberate difference, "Building an agent and writing middleware": "A built-in's tool names
    # ... naming a tool the agent does not have". LangChain accepts the name; it never matches.
    with pytest.raises(ValueError, match="serach"):
        create_agent(calling("dead"), [dead], middleware=[ToolRetryMiddleware(tools=["serach"])])
