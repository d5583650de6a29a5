"""ToolTimeoutMiddleware: a call past its time limit is answered with an error ToolMessage and
the run goes on; an async tool is cancelled, a sync one runs to its end unobserved.

No test here races a clock. A tool that must time out waits on an event that is only set once
the run has ended, so even a tiny limit decides nothing; a tool that must not time out gets a
limit no healthy run reaches. Every wait is bounded, so a hang fails the test.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from graphagent import create_agent
from graphagent.errors import MiddlewareError, MiddlewareTypeError
from graphagent.middleware import (
    ToolRetryMiddleware,
    ToolTimeoutError,
    ToolTimeoutMiddleware,
)
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import ENTRY_POINTS, run_agent
from tests.test_bridge import LIMIT, _wait

QUESTION = {"messages": [("user", "go")]}
TINY = 0.01  # only for calls that cannot end before the run has: it decides nothing


class Held:
    """A sync tool held until the test lets it go, and what it did."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Semaphore(0)
        self.finished = threading.Semaphore(0)
        self.threads: list[str] = []

        @tool
        def hang(query: str) -> str:
            """Look something up in a service that does not answer."""
            self.threads.append(threading.current_thread().name)
            self.started.release()
            self.release.wait(LIMIT)
            self.finished.release()
            return "late answer"

        self.tool = hang


@tool
def quick(query: str) -> str:
    """Answer at once."""
    return f"quick: {query}"


def _run(agent: Any, how: str, release: threading.Event) -> dict[str, Any]:
    """The run's final state; ``release`` is set once the run has ended, and before an async
    run's loop closes (``asyncio.run`` waits for the executor thread a sync tool holds)."""
    if how in ("invoke", "stream"):
        try:
            return run_agent(agent, how, QUESTION)
        finally:
            release.set()

    async def scenario() -> dict[str, Any]:
        try:
            if how == "ainvoke":
                return await agent.ainvoke(QUESTION)  # type: ignore[no-any-return]
            chunks = [c async for c in agent.astream(QUESTION, stream_mode="values")]
            return chunks[-1]  # type: ignore[no-any-return]
        finally:
            release.set()

    return _wait(scenario())  # type: ignore[no-any-return]


def _answers(result: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_a_sync_tool_past_its_limit_is_answered_and_the_run_goes_on(how: str) -> None:
    held = Held()
    model = ScriptedChatModel(
        [
            calls(
                {"name": "hang", "args": {"query": "a"}, "id": "slow"},
                {"name": "quick", "args": {"query": "b"}, "id": "fast"},
            ),
            "the lookup timed out",
        ]
    )
    timeout = ToolTimeoutMiddleware(timeout=TINY, tools=["hang"])
    agent = create_agent(model, [held.tool, quick], middleware=[timeout])

    result = _run(agent, how, held.release)

    answers = _answers(result)
    assert answers["slow"].status == "error"
    assert answers["slow"].name == "hang"
    assert answers["slow"].content == (
        "Tool 'hang' timed out after 0.01 seconds, and its result was discarded. Try a smaller "
        "request, or a different approach."
    )
    assert answers["fast"].content == "quick: b"
    assert answers["fast"].status == "success"
    assert result["messages"][-1].content == "the lookup timed out"
    # The thread could not be stopped: it ran the tool to its end, and nobody read the result.
    assert held.finished.acquire(timeout=LIMIT)
    assert "late answer" not in str(result["messages"])


@pytest.mark.parametrize("how", ["ainvoke", "astream"])
def test_an_async_tool_past_its_limit_is_cancelled(how: str) -> None:
    seen: list[str] = []

    @tool
    async def wait_forever(query: str) -> str:
        """Wait for an answer that never comes."""
        seen.append("started")
        try:
            await asyncio.wait_for(asyncio.Event().wait(), LIMIT)  # nothing sets it
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return "never"

    model = ScriptedChatModel([calls(("wait_forever", {"query": "x"})), "gave up"])
    # Long enough for the tool to start, and it can only end by being cancelled.
    agent = create_agent(model, [wait_forever], middleware=[ToolTimeoutMiddleware(0.2)])

    result = _run(agent, how, threading.Event())

    (answer,) = _answers(result).values()
    assert answer.status == "error"
    assert "timed out after 0.2 seconds" in str(answer.content)
    assert result["messages"][-1].content == "gave up"
    assert seen in ([], ["started", "cancelled"])  # cancelled, whether it had started or not


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_a_call_that_ends_in_time_is_answered_as_usual(how: str) -> None:
    model = ScriptedChatModel([calls(("quick", {"query": "q"})), "done"])
    agent = create_agent(model, [quick], middleware=[ToolTimeoutMiddleware(LIMIT)])

    result = _run(agent, how, threading.Event())

    (answer,) = _answers(result).values()
    assert (answer.content, answer.status) == ("quick: q", "success")


def test_a_sync_run_makes_only_the_covered_calls_in_a_bridge_thread() -> None:
    held, other = Held(), Held()
    held.release.set()
    other.release.set()
    other.tool.name = "other"
    model = ScriptedChatModel(
        [calls(("hang", {"query": "a"})), calls(("other", {"query": "b"})), "ok"]
    )
    agent = create_agent(
        model, [held.tool, other.tool], middleware=[ToolTimeoutMiddleware(LIMIT, tools=["hang"])]
    )

    agent.invoke(QUESTION)

    assert held.threads[0].startswith("graphagent-bridge-")
    assert not other.threads[0].startswith("graphagent-bridge-")


def test_a_timeout_error_the_tool_raises_itself_is_not_a_time_limit(how_call: str) -> None:
    @tool
    def flaky(query: str) -> str:
        """Call a service with its own client timeout."""
        raise TimeoutError("the service's own timeout")

    model = ScriptedChatModel([calls(("flaky", {"query": "x"})), "unused"])
    agent = create_agent(model, [flaky], middleware=[ToolTimeoutMiddleware(LIMIT)])

    with pytest.raises(TimeoutError, match="the service's own timeout") as caught:
        _run(agent, how_call, threading.Event())
    assert not isinstance(caught.value, ToolTimeoutError)


def test_on_timeout_error_raises_for_the_caller(how_call: str) -> None:
    held = Held()
    model = ScriptedChatModel([calls(("hang", {"query": "a"})), "unused"])
    timeout = ToolTimeoutMiddleware(TINY, on_timeout="error")
    agent = create_agent(model, [held.tool], middleware=[timeout])

    with pytest.raises(ToolTimeoutError, match=r"timed out after 0\.01 seconds") as caught:
        _run(agent, how_call, held.release)
    assert (caught.value.tool_name, caught.value.seconds) == ("hang", TINY)
    assert isinstance(caught.value, TimeoutError)
    assert str(caught.value).startswith("ToolTimeoutMiddleware: Tool 'hang' timed out")


def test_a_retry_listed_before_it_retries_each_timed_out_attempt(how_call: str) -> None:
    held = Held()
    model = ScriptedChatModel([calls({"name": "hang", "args": {"query": "a"}, "id": "c"}), "ok"])
    retry = ToolRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)
    timeout = ToolTimeoutMiddleware(TINY, on_timeout="error")
    agent = create_agent(model, [held.tool], middleware=[retry, timeout])

    result = _run(agent, how_call, held.release)

    answer = _answers(result)["c"]
    assert answer.status == "error"
    assert str(answer.content).startswith(
        "Tool 'hang' failed after 3 attempts with ToolTimeoutError: ToolTimeoutMiddleware: "
        "Tool 'hang' timed out after 0.01 seconds"
    )
    if how_call == "invoke":  # each attempt's thread runs the tool once it gets to it
        assert all(held.finished.acquire(timeout=LIMIT) for _ in range(3))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"timeout": 0}, MiddlewareError, r"timeout must be a finite number of seconds > 0"),
        ({"timeout": -1}, MiddlewareError, r"timeout=-1\)"),
        ({"timeout": float("inf")}, MiddlewareError, r"timeout=inf\)"),
        ({"timeout": "30"}, MiddlewareTypeError, r"timeout='30'\)"),
        ({"timeout": True}, MiddlewareTypeError, r"timeout=True\)"),
        ({"timeout": 1, "tools": []}, MiddlewareError, r"tools=\[\]\) would cover no tool"),
        ({"timeout": 1, "on_timeout": "raise"}, MiddlewareError, r"on_timeout must be"),
    ],
)
def test_bad_options_fail_at_construction(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        ToolTimeoutMiddleware(**kwargs)


def test_a_tool_the_agent_lacks_fails_the_build() -> None:
    timeout = ToolTimeoutMiddleware(5, tools=["quik"])
    assert timeout.covered_tools == frozenset({"quik"})
    with pytest.raises(MiddlewareError, match=r"tools names \['quik'\], which the agent"):
        create_agent(ScriptedChatModel(["hi"]), [quick], middleware=[timeout])
