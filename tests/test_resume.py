"""A ``Command`` the thread cannot take as an answer is refused before anything runs: a resume
with no pending interrupt, and ``Command(resume=None)``. Real answers still resume, at the top
and inside a parent graph; other inputs pay no extra checkpoint read."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt

from graphagent import ResumeError, create_agent
from graphagent.middleware import (
    ToolErrorMiddleware,
    ToolRetryMiddleware,
    wrap_agent,
)
from graphagent.middleware.tool_error import error_type_message
from graphagent.state import FullHistoryState
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent

THREAD: RunnableConfig = {"configurable": {"thread_id": "t"}}
START_HINT = r"to start a run, send input: agent\.invoke\(\{'messages': \[\.\.\.\]\}, config\)"


@tool
def ask(question: str) -> str:
    """Ask a person and wait for the answer."""
    return f"they said {interrupt(question)}"


@tool
def note(text: str) -> str:
    """Write a note down."""
    return "noted"


def agent_on(*replies: Any, checkpointer: Any = None, middleware: Any = ()) -> Any:
    model = ScriptedChatModel(list(replies) or ["done"])
    agent = create_agent(model, [ask, note], middleware=list(middleware), checkpointer=checkpointer)
    return agent, model


def test_resuming_a_thread_that_never_ran_is_refused_and_calls_no_model(how: str) -> None:
    agent, model = agent_on(checkpointer=InMemorySaver())

    with pytest.raises(ResumeError, match=rf"thread 't' has no checkpoint yet\. .*{START_HINT}"):
        run_agent(agent, how, Command(resume="yes"), config=THREAD)

    assert model.call_count == 0
    assert agent.get_state(THREAD).created_at is None, "nothing was saved"


def test_resuming_a_finished_thread_is_refused_and_changes_nothing(how: str) -> None:
    agent, model = agent_on("done", "again", checkpointer=InMemorySaver())
    run_agent(agent, how, {"messages": ["hi"]}, config=THREAD)
    before = agent.get_state(THREAD)

    with pytest.raises(ResumeError, match=f"its last run finished. Nothing ran; {START_HINT}"):
        run_agent(agent, how, Command(resume="yes"), config=THREAD)

    assert model.call_count == 1
    assert agent.get_state(THREAD).config == before.config, "no new checkpoint"


def test_resuming_a_thread_stopped_by_an_error_points_to_invoke_none(how_call: str) -> None:
    def provider_down(messages: list[BaseMessage]) -> str:
        raise ConnectionError("provider down")

    agent, model = agent_on(provider_down, "recovered", checkpointer=InMemorySaver())
    with pytest.raises(ConnectionError):
        run_agent(agent, how_call, {"messages": ["hi"]}, config=THREAD)

    with pytest.raises(
        ResumeError,
        match=r"its last run failed at \['model'\].*agent\.invoke\(None, config\)",
    ):
        run_agent(agent, how_call, Command(resume="yes"), config=THREAD)
    assert model.call_count == 1

    result = run_agent(agent, how_call, None, config=THREAD)
    assert result["messages"][-1].content == "recovered"


class ProcessDied(Exception):
    """Stands for a crash between a finished step and the checkpoint after it."""


class DyingSaver(InMemorySaver):
    """Saves a step's results, then dies instead of writing the checkpoint of ``die_at_step``."""

    die_at_step: int | None = None

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if metadata.get("step") == self.die_at_step:
            raise ProcessDied
        return super().put(config, checkpoint, metadata, new_versions)


def test_a_run_cut_off_between_steps_takes_a_resume_and_carries_on(how_call: str) -> None:
    """Steps wait to run that did not fail (a crash, a breakpoint, a state updated after an
    interrupt): the resume value answers whatever interrupt they raise, as in LangGraph."""
    saver = DyingSaver()
    saver.die_at_step = 2  # the checkpoint after the tools step
    agent, model = agent_on(calls(("note", {"text": "x"})), "done", checkpointer=saver)
    with pytest.raises(ProcessDied):
        run_agent(agent, how_call, {"messages": ["hi"]}, config=THREAD, durability="sync")
    saver.die_at_step = None
    assert agent.get_state(THREAD).next == (), "the finished step is not in `next`"

    result = run_agent(agent, how_call, Command(resume="yes"), config=THREAD)

    assert result["messages"][-1].content == "done"
    assert model.call_count == 2


def test_a_refused_resume_never_starts_wrap_agent(how_call: str) -> None:
    log: list[str] = []

    @wrap_agent
    def audit(state: Any, runtime: Any) -> Generator[None, Any, None]:
        log.append("enter")
        yield
        log.append("exit")

    agent, _ = agent_on(checkpointer=InMemorySaver(), middleware=[audit])

    with pytest.raises(ResumeError):
        run_agent(agent, how_call, Command(resume="yes"), config=THREAD)

    assert log == []


def test_an_interrupt_still_takes_its_answer(how: str) -> None:
    agent, model = agent_on(
        calls(("ask", {"question": "Ship it?"})), "shipped", checkpointer=InMemorySaver()
    )
    paused = run_agent(agent, how, {"messages": ["ship"]}, config=THREAD)
    assert [i.value for i in paused["__interrupt__"]] == ["Ship it?"]

    result = run_agent(agent, how, Command(resume="yes"), config=THREAD)

    assert [m.text for m in result["messages"][-2:]] == ["they said yes", "shipped"]
    assert model.call_count == 2


def test_resume_none_is_refused_naming_what_waits_and_the_interrupt_stays_open(
    how_call: str,
) -> None:
    agent, _ = agent_on(
        calls(("ask", {"question": "Ship it?"})), "shipped", checkpointer=InMemorySaver()
    )
    run_agent(agent, how_call, {"messages": ["ship"]}, config=THREAD)

    with pytest.raises(
        ResumeError,
        match=r"reads a None resume value as no answer at all\. 'tools' waits for an answer\.",
    ):
        run_agent(agent, how_call, Command(resume=None), config=THREAD)

    result = run_agent(agent, how_call, Command(resume="yes"), config=THREAD)
    assert result["messages"][-1].text == "shipped"


def test_answers_keyed_by_ids_that_do_not_wait_are_refused(how_call: str) -> None:
    two_questions = calls(("ask", {"question": "Ship it?"}), ("ask", {"question": "Today?"}))
    agent, model = agent_on(two_questions, "shipped", checkpointer=InMemorySaver())
    paused = run_agent(agent, how_call, {"messages": ["ship"]}, config=THREAD)["__interrupt__"]
    stale = "f" * 32

    with pytest.raises(ResumeError, match=rf"id\(s\) \['{stale}'\], which do not wait"):
        run_agent(
            agent, how_call, Command(resume={paused[0].id: "yes", stale: "no"}), config=THREAD
        )
    with pytest.raises(ResumeError, match=r"Command\(resume=\{\}\) answers nothing"):
        run_agent(agent, how_call, Command(resume={}), config=THREAD)

    answers = {interrupt.id: "yes" for interrupt in paused}
    result = run_agent(agent, how_call, Command(resume=answers), config=THREAD)
    assert result["messages"][-1].text == "shipped"
    assert model.call_count == 2


def test_an_empty_command_is_refused_with_or_without_a_checkpointer(how_call: str) -> None:
    for checkpointer in (None, InMemorySaver()):
        agent, model = agent_on(checkpointer=checkpointer)

        with pytest.raises(ResumeError, match=f"carries nothing to do.*{START_HINT}"):
            run_agent(agent, how_call, Command(), config=THREAD)

        assert model.call_count == 0


def test_without_a_checkpointer_langgraph_says_a_resume_needs_one(how_call: str) -> None:
    agent, model = agent_on()

    with pytest.raises(
        RuntimeError, match=r"Cannot use Command\(resume=\.\.\.\) without checkpointer"
    ):
        run_agent(agent, how_call, Command(resume="yes"))

    assert model.call_count == 0


def test_an_agent_resumed_inside_a_parents_node_is_checked_against_its_own_thread(
    how_call: str,
) -> None:
    inner, model = agent_on()

    def delegate(state: MessagesState) -> dict[str, Any]:
        return {"messages": inner.invoke(Command(resume="yes"))["messages"][-1:]}

    async def adelegate(state: MessagesState) -> dict[str, Any]:
        return {"messages": (await inner.ainvoke(Command(resume="yes")))["messages"][-1:]}

    parent = StateGraph(MessagesState)
    parent.add_node("delegate", delegate if how_call == "invoke" else adelegate)
    parent.add_edge(START, "delegate")
    graph = parent.compile(checkpointer=InMemorySaver())

    with pytest.raises(ResumeError, match="has no checkpoint yet"):
        run_agent(graph, how_call, {"messages": ["hi"]}, config=THREAD)

    assert model.call_count == 0


class CountingSaver(InMemorySaver):
    """Counts checkpoint reads (``aget_tuple`` reads through ``get_tuple``)."""

    reads = 0

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        self.reads += 1
        return super().get_tuple(config)


def test_only_a_command_costs_a_checkpoint_read_before_the_run(how_call: str) -> None:
    """New input costs no read of its own where messages are stored whole; where they are stored
    as deltas, one read of the latest checkpoint (a run must not start from one whose steps are
    still pending: docs/deployment.md, "One run per thread at a time")."""
    saver = CountingSaver()
    agent, _ = agent_on("one", "two", "three", checkpointer=saver)
    full = create_agent(
        ScriptedChatModel(["one"]), checkpointer=saver, state_schema=FullHistoryState
    )
    # langgraph's own run, without the agent's entry points
    list(
        CompiledStateGraph.stream(agent, {"messages": ["hi"]}, {"configurable": {"thread_id": "a"}})
    )
    langgraph_reads, saver.reads = saver.reads, 0

    run_agent(full, how_call, {"messages": ["hi"]}, config={"configurable": {"thread_id": "f"}})
    assert saver.reads == langgraph_reads
    saver.reads = 0
    run_agent(agent, how_call, {"messages": ["hi"]}, config={"configurable": {"thread_id": "b"}})
    assert saver.reads == langgraph_reads + 1
    saver.reads = 0

    with pytest.raises(ResumeError):
        run_agent(
            agent, how_call, Command(resume="yes"), config={"configurable": {"thread_id": "b"}}
        )
    assert saver.reads == 1


@tool
def pay(payee: str) -> str:
    """Pay a bill after asking a person how much."""
    amount = interrupt(f"How much to {payee}?", response_schema=int)
    return f"paid {amount} to {payee}"


@pytest.mark.parametrize(
    "handler",
    [
        lambda: ToolRetryMiddleware(max_retries=2, initial_delay=0),
        lambda: ToolErrorMiddleware(error_type_message),
    ],
    ids=["retry", "error"],
)
def test_an_answer_a_tools_interrupt_refuses_is_no_tool_failure(
    how_call: str, handler: Callable[[], Any]
) -> None:
    model = ScriptedChatModel([calls(("pay", {"payee": "Ann"})), "done"])
    agent = create_agent(model, [pay], middleware=[handler()], checkpointer=InMemorySaver())
    run_agent(agent, how_call, {"messages": ["pay Ann"]}, config=THREAD)

    # No retry and no error message: the answer is refused and the question stays open.
    with pytest.raises(ValueError, match="int"):
        run_agent(agent, how_call, Command(resume="a lot"), config=THREAD)
    result = run_agent(agent, how_call, Command(resume=12), config=THREAD)

    assert [m.text for m in result["messages"][-2:]] == ["paid 12 to Ann", "done"]
