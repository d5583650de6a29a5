"""An agent paused behind ``as_tool``: the outer agent's ``get_state(config, subgraphs=True)``
shows its state and pending interrupt in the paused ``tools`` task, at any depth, and reading its
namespace directly never says that nothing is pending."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from graphagent import create_agent
from graphagent.composition import as_tool
from graphagent.middleware import before_model
from graphagent.testing import ScriptedChatModel, calls
from tests.composition.parents import one_node, run

THREAD = {"configurable": {"thread_id": "t"}}


@tool
def publish(text: str) -> str:
    """Publish a text once an editor approves it."""
    return f"published ({interrupt({'publish': text})})"


@before_model
def note(state: Any, runtime: Any) -> None:
    return None


def writer() -> Any:
    model = ScriptedChatModel([calls(("publish", {"text": "Cats nap."})), "It is out."])
    return create_agent(model, [publish], middleware=[note], name="writer")


def delegating(name: str, inner: Any, tool_name: str, **kwargs: Any) -> Any:
    model = ScriptedChatModel([calls((tool_name, {"request": "go"})), f"{name} done"])
    delegate = as_tool(inner, name=tool_name, description="Delegate.")
    return create_agent(model, [delegate], middleware=[note], name=name, **kwargs)


def state_of(graph: Any, how: str, config: Any = THREAD, **kwargs: Any) -> Any:
    if how == "invoke":
        return graph.get_state(config, **kwargs)
    return asyncio.run(graph.aget_state(config, **kwargs))


def test_the_paused_tools_task_holds_the_inner_agents_state(how_call: str, hook_mode: str) -> None:
    boss = delegating("boss", writer(), "ask_writer", checkpointer=InMemorySaver())
    paused = run(boss, how_call, {"messages": [("user", "Publish.")]}, config=THREAD)

    (task,) = state_of(boss, how_call, subgraphs=True).tasks
    inner = task.state

    assert (task.name, task.interrupts) == ("tools", tuple(paused["__interrupt__"]))
    assert inner.next == ("tools",)
    assert inner.interrupts == task.interrupts
    assert inner.values["messages"][-1].tool_calls[0]["name"] == "publish"
    assert state_of(boss, how_call).tasks[0].state is None, "only with subgraphs=True"


def test_reading_the_inner_agents_namespace_shows_what_is_pending(how_call: str) -> None:
    boss = delegating("boss", writer(), "ask_writer", checkpointer=InMemorySaver())
    run(boss, how_call, {"messages": [("user", "Publish.")]}, config=THREAD)
    (task,) = state_of(boss, how_call).tasks

    namespace = {"configurable": {"thread_id": "t", "checkpoint_ns": f"tools:{task.id}"}}
    inner = state_of(boss, how_call, namespace)

    assert inner.next == ("tools",)
    assert [i.value for i in inner.interrupts] == [{"publish": "Cats nap."}]

    run(boss, how_call, Command(resume="approved"), config=THREAD)
    assert state_of(boss, how_call, subgraphs=True).tasks == ()


def test_three_levels_under_a_parent_graph(how_call: str, hook_mode: str) -> None:
    middle = delegating("middle", writer(), "ask_writer")
    top = delegating("top", middle, "ask_middle")
    parent = one_node(top, checkpointer=InMemorySaver())
    run(parent, how_call, {"messages": [("user", "Publish.")]}, config=THREAD)

    (top_task,) = state_of(parent, how_call, subgraphs=True).tasks
    (middle_task,) = top_task.state.tasks
    (writer_task,) = middle_task.state.tasks

    assert (top_task.name, middle_task.name, writer_task.name) == ("top", "tools", "tools")
    assert middle_task.state.values["messages"][-1].name == "middle"
    assert writer_task.state.next == ("tools",)
    assert [i.value for i in writer_task.state.interrupts] == [{"publish": "Cats nap."}]


def test_each_paused_call_shows_the_agent_its_tool_runs(how_call: str) -> None:
    helper = create_agent(ScriptedChatModel(["Helped."]), name="helper")
    model = ScriptedChatModel(
        [calls(("ask_helper", {"request": "a"}), ("ask_writer", {"request": "b"})), "done"]
    )
    tools = [
        as_tool(helper, name="ask_helper", description="Ask the helper."),
        as_tool(writer(), name="ask_writer", description="Ask the writer."),
    ]
    boss = create_agent(model, tools, name="boss", checkpointer=InMemorySaver())
    run(boss, how_call, {"messages": [("user", "Both.")]}, config=THREAD)

    tasks = state_of(boss, how_call, subgraphs=True).tasks
    paused = [t for t in tasks if t.interrupts]

    assert len(tasks) == 2
    assert len(paused) == 1
    assert paused[0].state.values["messages"][-1].name == "writer"
    assert paused[0].state.next == ("tools",)
