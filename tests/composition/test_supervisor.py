"""graphagent agents under a supervisor built by langgraph-supervisor's public API, handing off to
each other with ``handoff_tool``, and a swarm built by hand (langgraph-swarm depends on
langchain, so its pattern is rebuilt here: agents as nodes, ``active_agent`` routing the start)."""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

import pytest
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph_supervisor import create_supervisor
from typing_extensions import TypedDict

from graphagent import create_agent
from graphagent.composition import handoff_tool
from graphagent.middleware import before_model
from graphagent.testing import ScriptedChatModel, calls
from tests.composition.parents import run
from tests.composition.test_handoffs import answered_exactly_once

SEARCHED: list[str] = []


@tool
def search(query: str) -> str:
    """Search the web."""
    SEARCHED.append(query)
    return f"results for {query}"


@before_model
def note(state: Any, runtime: Any) -> None:
    return None


def workers() -> tuple[Any, Any]:
    researcher = create_agent(
        ScriptedChatModel([calls(("search", {"query": "cats"}), ("back_to_boss", {}))]),
        [search, handoff_tool("supervisor", name="back_to_boss")],
        middleware=[note],
        name="researcher",
    )
    writer = create_agent(ScriptedChatModel(["Cats nap a lot."]), name="writer")
    return researcher, writer


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # its create_react_agent
def test_an_agent_hands_back_to_a_supervisor_with_its_turns_results(
    how: str, hook_mode: str
) -> None:
    SEARCHED.clear()
    researcher, writer = workers()
    boss = ScriptedChatModel(
        [calls(("transfer_to_researcher", {})), calls(("transfer_to_writer", {})), "Here it is."]
    )
    supervisor = create_supervisor([researcher, writer], model=boss).compile()

    result = run(supervisor, how, {"messages": [("user", "Write about cats.")]})

    messages = result["messages"]
    answered_exactly_once(messages)
    assert SEARCHED == ["cats"]
    assert [m.text for m in messages if isinstance(m, ToolMessage)][:3] == [
        "Successfully transferred to researcher",
        "results for cats",
        "Transferred to supervisor.",
    ]
    assert [m.name for m in messages if isinstance(m, AIMessage) and m.text][-2:] == [
        "writer",
        "supervisor",
    ]
    assert shown_to(boss, 1)[-3:] == ["AIMessage", "ToolMessage", "ToolMessage"]


def shown_to(model: ScriptedChatModel, call: int) -> list[str]:
    return [type(m).__name__ for m in model.calls[call].messages]


class Swarm(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    active_agent: NotRequired[str]


def test_a_hand_built_swarm_resumes_at_the_active_agent(how_call: str, hook_mode: str) -> None:
    SEARCHED.clear()
    alice = create_agent(
        ScriptedChatModel([calls(("search", {"query": "x"}), ("transfer_to_bob", {}))]),
        [search, handoff_tool("bob", update={"active_agent": "bob"})],
        middleware=[note],
        name="alice",
    )
    bob = create_agent(ScriptedChatModel(["Bob: first.", "Bob: again."]), name="bob")
    graph = StateGraph(Swarm)
    graph.add_node(alice, destinations=("bob",))
    graph.add_node(bob)
    graph.add_conditional_edges(START, lambda s: s.get("active_agent", "alice"), ["alice", "bob"])
    swarm = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}

    run(swarm, how_call, {"messages": [("user", "one")]}, config=config)
    result = run(swarm, how_call, {"messages": [("user", "two")]}, config=config)

    answered_exactly_once(result["messages"])
    assert result["active_agent"] == "bob"
    assert [m.text for m in result["messages"]][-2:] == ["two", "Bob: again."]
    assert SEARCHED == ["x"]
