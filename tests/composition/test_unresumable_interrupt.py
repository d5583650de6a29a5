"""An interrupt inside a ``checkpointer=False`` agent that runs as a node of a checkpointed parent
could never resume where it paused (resuming runs the agent again, and its model may then make
another call): it is refused when raised, from a tool or from a hook, before anyone answers it."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from graphagent import create_agent
from graphagent.errors import CompositionError, MiddlewareError
from graphagent.middleware import HumanInTheLoopMiddleware, before_model
from graphagent.testing import ScriptedChatModel, calls
from tests.composition.parents import one_node, run

SENT: list[str] = []
THREAD = {"configurable": {"thread_id": "t"}}
FIX = "Pass a checkpointer (or leave it None under a parent graph that has one)."


@tool
def announce(text: str) -> str:
    """Announce a text once someone confirms it."""
    interrupt({"announce": text})
    SENT.append(text)
    return "sent"


@pytest.fixture(autouse=True)
def _empty_log() -> None:
    SENT.clear()


def announcer(**kwargs: Any) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel([calls(("announce", {"text": "ann1"})), "done"])
    return create_agent(model, [announce], name="announcer", checkpointer=False, **kwargs), model


def test_an_interrupt_from_a_tool_is_refused(how: str, hook_mode: str) -> None:
    @before_model
    def note(state: Any, runtime: Any) -> None:
        return None

    agent, model = announcer(middleware=[note])
    parent = one_node(agent, checkpointer=InMemorySaver())

    with pytest.raises(CompositionError) as refused:
        run(parent, how, {"messages": [("user", "go")]}, config=THREAD)

    message = str(refused.value)
    assert message.startswith("The agent 'announcer' was interrupted ({'announce': 'ann1'})")
    assert "checkpointer=False" in message
    assert message.endswith(FIX)
    assert (SENT, model.call_count) == ([], 1)


def test_an_interrupt_from_a_hook_is_refused(how: str, hook_mode: str) -> None:
    @before_model
    def confirm(state: Any, runtime: Any) -> None:
        interrupt("may the model be called?")

    model = ScriptedChatModel(["done"])
    agent = create_agent(model, middleware=[confirm], name="careful", checkpointer=False)
    parent = one_node(agent, checkpointer=InMemorySaver())

    with pytest.raises(CompositionError, match="'careful' was interrupted \\('may the model"):
        run(parent, how, {"messages": [("user", "go")]}, config=THREAD)
    assert model.call_count == 0


def test_the_same_agent_with_a_checkpointer_of_its_parents_resumes(how_call: str) -> None:
    model = ScriptedChatModel([calls(("announce", {"text": "ann1"})), "done"])
    agent = create_agent(model, [announce], name="announcer")
    parent = one_node(agent, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}

    run(parent, how_call, {"messages": [("user", "go")]}, config=config)
    result = run(parent, how_call, Command(resume="yes"), config=config)

    assert (SENT, model.call_count, result["messages"][-1].text) == (["ann1"], 2, "done")


def test_human_in_the_loop_is_still_refused_when_the_agent_is_built() -> None:
    review = HumanInTheLoopMiddleware({"announce": True})
    with pytest.raises(MiddlewareError, match="checkpointer=False") as refused:
        create_agent(ScriptedChatModel(["x"]), [announce], middleware=[review], checkpointer=False)
    assert str(refused.value).endswith(FIX[0].lower() + FIX[1:]), "the same fix as for a raw one"
