"""Fan-out with ``Send`` to one agent node: a ``checkpointer=True`` agent would keep both branches
in one saved state, so two branches are refused before anything runs; other agents fan out."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, Send, interrupt

from graphagent import create_agent
from graphagent.errors import CompositionError
from graphagent.middleware import before_model
from graphagent.testing import ScriptedChatModel, calls
from tests.composition.parents import fan_out, run

RAN: list[str] = []


@tool
def work(task: str) -> str:
    """Do one task once someone approves it."""
    approval = interrupt({"task": task})
    RAN.append(task)
    return f"did {task} ({approval})"


def worker_reply(messages: list[BaseMessage]) -> Any:
    last = messages[-1]
    if isinstance(last, HumanMessage):
        return calls(("work", {"task": last.text}))
    return f"done: {last.text}"


@before_model
def note(state: Any, runtime: Any) -> None:
    return None


def worker(**kwargs: Any) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel([worker_reply], repeat_last=True)
    return create_agent(model, [work], middleware=[note], name="worker", **kwargs), model


def two_tasks(state: Any) -> list[Send]:
    return [Send("worker", {"messages": [HumanMessage(f"task-{i}")]}) for i in (1, 2)]


@pytest.fixture(autouse=True)
def _empty_log() -> None:
    RAN.clear()


def test_two_branches_to_a_checkpointer_true_agent_are_refused_before_it_runs(
    how: str, hook_mode: str
) -> None:
    agent, model = worker(checkpointer=True)
    parent = fan_out(agent, two_tasks, checkpointer=InMemorySaver())

    with pytest.raises(CompositionError) as refused:
        run(parent, how, {"messages": []}, config={"configurable": {"thread_id": "t"}})

    message = str(refused.value)
    assert "sends 2 tasks to the node 'worker'" in message
    assert "checkpointer=True" in message
    assert "graph.add_node('worker_1', agent)" in message
    assert model.call_count == 0


def test_one_branch_to_a_checkpointer_true_agent_runs_and_resumes(how: str) -> None:
    agent, _ = worker(checkpointer=True)
    parent = fan_out(
        agent,
        lambda s: [Send("worker", {"messages": [HumanMessage("task-1")]})],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t"}}

    run(parent, how, {"messages": []}, config=config)
    pending = parent.get_state(config).interrupts
    result = run(parent, how, Command(resume="ok"), config=config)

    assert [i.value for i in pending] == [{"task": "task-1"}]
    assert RAN == ["task-1"]
    assert result["messages"][-1].text == "done: did task-1 (ok)"


def test_without_checkpointer_true_each_branch_keeps_its_own_state(
    how: str, hook_mode: str
) -> None:
    agent, _ = worker()
    parent = fan_out(agent, two_tasks, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}

    run(parent, how, {"messages": []}, config=config)
    pending = parent.get_state(config).interrupts
    answers = {i.id: f"ok {i.value['task']}" for i in pending}
    result = run(parent, how, Command(resume=answers), config=config)

    assert len(pending) == 2
    assert sorted(RAN) == ["task-1", "task-2"]
    finals = sorted(m.text for m in result["messages"] if m.text.startswith("done"))
    assert finals == ["done: did task-1 (ok task-1)", "done: did task-2 (ok task-2)"]
