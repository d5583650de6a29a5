"""ToolCallDeduplicationMiddleware: identical calls of one model reply run once, and every call
id is answered with the result; sync and async, in parallel, with retries, errors, commands and
human review around it.

No test waits on a clock: a call that must be in flight while another waits for it is held on
an event until the other has claimed it, under a limit only a hang reaches.
"""

from __future__ import annotations

import threading
from typing import Annotated, Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graphagent import AgentState, create_agent
from graphagent.errors import MiddlewareError
from graphagent.middleware import (
    HumanInTheLoopMiddleware,
    ToolCallDeduplicationMiddleware,
    ToolErrorMiddleware,
    ToolRetryMiddleware,
)
from graphagent.middleware.tool_call_deduplication import ANSWERED_BY, _Table
from graphagent.middleware.tool_error import error_type_message
from graphagent.testing import ScriptedChatModel, calls, tool_call
from tests.conftest import Run, run_agent
from tests.test_bridge import LIMIT

QUESTION = {"messages": [("user", "look it up")]}


class Counter:
    """A tool that counts its runs, by arguments."""

    def __init__(self, fail_first: bool = False) -> None:
        self.ran: list[str] = []
        self.fail_first = fail_first

        @tool
        def lookup(query: str, limit: int = 1) -> str:
            """Look a query up."""
            self.ran.append(query)
            if self.fail_first and len(self.ran) == 1:
                raise ConnectionError("the service dropped the connection")
            return f"found {query}"

        self.tool = lookup


def _call(query: str, call_id: str, **more: Any) -> Any:
    return tool_call("lookup", {"query": query, **more}, id=call_id)


def _answers(result: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}


def _ran_for(answers: dict[str, ToolMessage], ids: list[str]) -> str:
    """The one call of ``ids`` that ran: the others name it as the call that answered them."""
    ran = [i for i in ids if ANSWERED_BY not in answers[i].response_metadata]
    assert len(ran) == 1, ran
    for other in set(ids) - set(ran):
        assert answers[other].response_metadata[ANSWERED_BY] == ran[0]
    return ran[0]


def test_identical_calls_run_once_and_each_call_id_gets_the_answer(run: Run) -> None:
    counter = Counter()
    reply = calls(
        _call("a", "c1", limit=2),
        _call("b", "c2"),
        tool_call("lookup", {"limit": 2, "query": "a"}, id="c3"),  # the same, keys reordered
        _call("a", "c4", limit=2),
    )
    model = ScriptedChatModel([reply, "done"])
    agent = create_agent(model, [counter.tool], middleware=[ToolCallDeduplicationMiddleware()])

    result = run(agent, QUESTION)

    assert sorted(counter.ran) == ["a", "b"]
    answers = _answers(result)
    assert sorted(answers) == ["c1", "c2", "c3", "c4"]
    assert {answers[i].content for i in ("c1", "c3", "c4")} == {"found a"}
    assert answers["c2"].content == "found b"
    assert ANSWERED_BY not in answers["c2"].response_metadata
    _ran_for(answers, ["c1", "c3", "c4"])
    tool_messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert len({m.id for m in tool_messages}) == 4  # four answers, none replacing another
    # The model's next call saw every call answered once.
    assert result["messages"][-1].content == "done"


def test_a_call_in_flight_serves_the_identical_call_waiting_for_it(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    claimed = threading.Semaphore(0)
    original = _Table.claim

    def counting_claim(self: _Table, *args: Any) -> Any:
        outcome = original(self, *args)
        claimed.release()
        return outcome

    monkeypatch.setattr(_Table, "claim", counting_claim)
    both_claimed = threading.Event()
    ran: list[str] = []

    @tool
    def lookup(query: str) -> str:
        """Look a query up, once the identical call is waiting for this one."""
        ran.append(query)
        # Both calls have claimed: the other one now waits for this one, still running.
        assert claimed.acquire(timeout=LIMIT)
        assert claimed.acquire(timeout=LIMIT)
        both_claimed.set()
        return f"found {query}"

    model = ScriptedChatModel([calls(_call("a", "c1"), _call("a", "c2")), "done"])
    agent = create_agent(model, [lookup], middleware=[ToolCallDeduplicationMiddleware()])

    result = run(agent, QUESTION)

    assert both_claimed.is_set()
    assert ran == ["a"]
    answers = _answers(result)
    assert answers["c1"].content == answers["c2"].content == "found a"
    _ran_for(answers, ["c1", "c2"])


def test_calls_of_different_replies_run_again(how: str) -> None:
    counter = Counter()
    model = ScriptedChatModel([calls(_call("a", "c1")), calls(_call("a", "c2")), "done"])
    agent = create_agent(model, [counter.tool], middleware=[ToolCallDeduplicationMiddleware()])

    run_agent(agent, how, QUESTION)

    assert counter.ran == ["a", "a"]


def test_tools_chooses_which_tools_run_once(how_call: str) -> None:
    counter = Counter()

    @tool
    def roll(sides: int) -> int:
        """Roll a die: identical rolls are meant to roll again."""
        counter.ran.append(f"roll {sides}")
        return 4

    model = ScriptedChatModel(
        [
            calls(
                _call("a", "c1"),
                _call("a", "c2"),
                tool_call("roll", {"sides": 6}, id="r1"),
                tool_call("roll", {"sides": 6}, id="r2"),
            ),
            "done",
        ]
    )
    dedup = ToolCallDeduplicationMiddleware(tools=[counter.tool])
    agent = create_agent(model, [counter.tool, roll], middleware=[dedup])

    run_agent(agent, how_call, QUESTION)

    assert sorted(counter.ran) == ["a", "roll 6", "roll 6"]
    assert dedup.covered_tools == frozenset({"lookup"})


def test_a_retry_beneath_it_retries_the_one_call(how_call: str) -> None:
    counter = Counter(fail_first=True)
    retry = ToolRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)
    model = ScriptedChatModel([calls(_call("a", "c1"), _call("a", "c2")), "done"])
    agent = create_agent(
        model, [counter.tool], middleware=[ToolCallDeduplicationMiddleware(), retry]
    )

    result = run_agent(agent, how_call, QUESTION)

    assert counter.ran == ["a", "a"]  # one failure, one success, for both calls
    answers = _answers(result)
    assert answers["c1"].content == answers["c2"].content == "found a"


def test_a_retry_around_it_runs_the_retried_call_once(how_call: str) -> None:
    counter = Counter(fail_first=True)
    retry = ToolRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)
    model = ScriptedChatModel([calls(_call("a", "c1"), _call("a", "c2")), "done"])
    agent = create_agent(
        model, [counter.tool], middleware=[retry, ToolCallDeduplicationMiddleware()]
    )

    result = run_agent(agent, how_call, QUESTION)

    # Both calls got the failure, and their retries ran the call once more, for both.
    assert counter.ran == ["a", "a"]
    answers = _answers(result)
    assert answers["c1"].content == answers["c2"].content == "found a"
    assert {a.status for a in answers.values()} == {"success"}


def test_an_error_is_raised_for_every_identical_call(how_call: str) -> None:
    ran: list[str] = []

    @tool
    def lookup(query: str) -> str:
        """Look a query up in a service that is down."""
        ran.append(query)
        raise ConnectionError("service down")

    model = ScriptedChatModel([calls(_call("a", "c1"), _call("a", "c2")), "done"])
    middleware = [
        ToolErrorMiddleware(on_error=error_type_message),
        ToolCallDeduplicationMiddleware(),
    ]
    agent = create_agent(model, [lookup], middleware=middleware)

    result = run_agent(agent, how_call, QUESTION)

    answers = _answers(result)
    assert {answers[i].status for i in ("c1", "c2")} == {"error"}
    assert answers["c1"].content == answers["c2"].content
    assert "ConnectionError" in str(answers["c1"].content)
    assert ran == ["a"]


class Searches(AgentState[Any]):
    last_query: str


def test_a_command_updates_the_state_once(how_call: str) -> None:
    ran: list[str] = []

    @tool
    def lookup(query: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        """Look a query up and remember it."""
        ran.append(query)
        answer = ToolMessage(f"found {query}", tool_call_id=tool_call_id)
        return Command(update={"messages": [answer], "last_query": query})

    model = ScriptedChatModel([calls(_call("a", "c1"), _call("a", "c2")), "done"])
    agent = create_agent(
        model,
        [lookup],
        middleware=[ToolCallDeduplicationMiddleware()],
        state_schema=Searches,
    )

    # Two updates of the plain field `last_query` in one step would fail the run.
    result = run_agent(agent, how_call, QUESTION)

    assert ran == ["a"]
    assert result["last_query"] == "a"
    answers = _answers(result)
    assert answers["c1"].content == answers["c2"].content == "found a"
    _ran_for(answers, ["c1", "c2"])


def _reviewed(
    how: str, mode: str, decisions: list[dict[str, Any]], counter: Counter
) -> dict[str, Any]:
    model = ScriptedChatModel([calls(_call("a", "c1"), _call("a", "c2")), "done"])
    hitl = HumanInTheLoopMiddleware({"lookup": True}, interrupt_mode=mode)
    agent = create_agent(
        model,
        [counter.tool],
        middleware=[hitl, ToolCallDeduplicationMiddleware()],
        checkpointer=InMemorySaver(),
    )
    config: dict[str, Any] = {"configurable": {"thread_id": f"review-{how}-{mode}"}}
    if mode == "per_call":
        # One tool task at a time: two per-call reviews building their answer schemas in
        # parallel threads can trip over pydantic ("dictionary changed size during iteration"),
        # a race of the review, not of this middleware; calls in flight are tested above.
        config["max_concurrency"] = 1
    paused = run_agent(agent, how, QUESTION, config=config)
    interrupts = paused["__interrupt__"]
    assert counter.ran == []
    if mode == "batched":
        resume: Any = {"decisions": decisions}
    else:
        assert len(interrupts) == 2  # each call reviewed on its own
        by_call = dict(zip(["c1", "c2"], decisions, strict=True))
        resume = {i.id: by_call[i.value["tool_call_id"]] for i in interrupts}
    return run_agent(agent, how, Command(resume=resume), config=config)


@pytest.mark.parametrize("mode", ["batched", "per_call"])
def test_calls_a_reviewer_approved_run_once(how_call: str, mode: str) -> None:
    counter = Counter()
    result = _reviewed(how_call, mode, [{"type": "approve"}, {"type": "approve"}], counter)

    assert counter.ran == ["a"]
    answers = _answers(result)
    assert answers["c1"].content == answers["c2"].content == "found a"


def test_a_call_a_reviewer_edited_is_no_longer_identical(how_call: str) -> None:
    counter = Counter()
    edit = {"type": "edit", "edited_action": {"name": "lookup", "args": {"query": "b"}}}
    result = _reviewed(how_call, "batched", [{"type": "approve"}, edit], counter)

    assert sorted(counter.ran) == ["a", "b"]
    answers = _answers(result)
    assert answers["c1"].content == "found a"
    assert answers["c2"].content.endswith("Tool response:\nfound b")  # after the edit notice


def test_a_call_a_reviewer_rejected_does_not_run(how_call: str) -> None:
    counter = Counter()
    reject = {"type": "reject", "message": "not that one"}
    result = _reviewed(how_call, "per_call", [reject, {"type": "approve"}], counter)

    assert counter.ran == ["a"]
    answers = _answers(result)
    assert answers["c1"].status == "error"
    assert answers["c2"].content == "found a"


def test_bad_options_fail_at_construction() -> None:
    with pytest.raises(MiddlewareError, match=r"tools=\[\]\) would cover no tool"):
        ToolCallDeduplicationMiddleware(tools=[])
    with pytest.raises(MiddlewareError, match=r"tools=\.\.\.\): item 0 is 3"):
        ToolCallDeduplicationMiddleware(tools=[3])  # type: ignore[list-item]


def test_a_tool_the_agent_lacks_fails_the_build() -> None:
    dedup = ToolCallDeduplicationMiddleware(tools=["lookpu"])
    with pytest.raises(MiddlewareError, match=r"tools names \['lookpu'\], which the agent"):
        create_agent(ScriptedChatModel(["hi"]), [Counter().tool], middleware=[dedup])
