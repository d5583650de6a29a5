"""How a thread is stored: ``messages`` as deltas by default, ``FullHistoryState`` for the whole
history in every checkpoint, and everything that reads or rewrites a history seeing the same
values either way, in both hook modes, sync and async.

A checkpointer stores a delta channel as the writes of each step plus, every
``snapshot_frequency`` updates, the whole value; reading a checkpoint replays the writes since
the last snapshot. ``Often`` snapshots every 3 updates, so a short thread crosses many.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, NotRequired, Required

import pytest
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langgraph.channels import BinaryOperatorAggregate
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send
from typing_extensions import TypedDict

from graphagent import create_agent
from graphagent.middleware import AgentMiddleware, AgentState, before_model
from graphagent.middleware.context_editing import ClearToolUsesEdit, ContextEditingMiddleware
from graphagent.middleware.summarization import SummarizationMiddleware
from graphagent.state import MESSAGES_SNAPSHOT_FREQUENCY, FullHistoryState, add_message_batches
from graphagent.storage import acompact_thread, compact_thread
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent

pytestmark = pytest.mark.usefixtures("hook_mode")


class Often(AgentState):
    """Deltas with a snapshot every 3 updates."""

    messages: Required[  # type: ignore[misc]
        Annotated[list[AnyMessage], DeltaChannel(add_message_batches, snapshot_frequency=3)]
    ]


LAYOUTS = {"deltas": None, "often": Often, "full": FullHistoryState}


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


@before_model
def look(state: Any, runtime: Any) -> None:
    """A hook, so that the two hook modes build different graphs."""


def model() -> ScriptedChatModel:
    """Per turn: one lookup, then an answer naming the question."""

    def reply(messages: list[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(f"answer to {last_question(messages)}")
        return calls(("lookup", {"query": last_question(messages)}))

    return ScriptedChatModel([reply], repeat_last=True)


def last_question(messages: list[BaseMessage]) -> str:
    """The last human message's text; a summary (marked with ``lc_source``) is not one."""
    questions = [m for m in messages if isinstance(m, HumanMessage)]
    return next((m.text for m in reversed(questions) if "lc_source" not in m.additional_kwargs), "")


def agent_on(layout: str, checkpointer: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("middleware", [look])
    return create_agent(
        model(), [lookup], state_schema=LAYOUTS[layout], checkpointer=checkpointer, **kwargs
    )


def thread(name: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


def shape(messages: list[BaseMessage]) -> list[tuple[str, str]]:
    """A history as comparable data: message ids differ between two agents' runs."""
    return [(m.type, m.text) for m in messages]


class Thread:
    """One agent's thread, driven sync or async (``how_call``)."""

    def __init__(self, agent: Any, how_call: str, name: str = "t") -> None:
        self.agent = agent
        self.is_async = how_call == "ainvoke"
        self.how_call = how_call
        self.config = thread(name)

    def say(self, text: str, config: Any = None) -> dict[str, Any]:
        return run_agent(
            self.agent,
            self.how_call,
            {"messages": [HumanMessage(text)]},
            config=config or self.config,
        )

    def state(self, config: Any = None) -> Any:
        config = config or self.config
        if self.is_async:
            return asyncio.run(self.agent.aget_state(config))
        return self.agent.get_state(config)

    def history(self) -> list[Any]:
        if self.is_async:

            async def collect() -> list[Any]:
                return [s async for s in self.agent.aget_state_history(self.config)]

            return asyncio.run(collect())
        return list(self.agent.get_state_history(self.config))

    def update(self, config: Any, values: dict[str, Any], **kwargs: Any) -> Any:
        if self.is_async:
            return asyncio.run(self.agent.aupdate_state(config, values, **kwargs))
        return self.agent.update_state(config, values, **kwargs)

    def messages(self, config: Any = None) -> list[tuple[str, str]]:
        return shape(self.state(config).values["messages"])


def test_messages_are_stored_as_deltas_unless_the_state_asks_for_the_whole_history() -> None:
    deltas = agent_on("deltas", None).builder.channels["messages"]
    full = agent_on("full", None).builder.channels["messages"]

    assert isinstance(deltas, DeltaChannel)
    assert deltas.reducer is add_message_batches
    assert deltas.snapshot_frequency == MESSAGES_SNAPSHOT_FREQUENCY
    assert isinstance(full, BinaryOperatorAggregate)


@pytest.mark.parametrize("layout", ["deltas", "often"])
def test_a_checkpoint_holds_the_whole_history_only_at_a_snapshot(
    layout: str, how_call: str
) -> None:
    saver = InMemorySaver()
    ours = Thread(agent_on(layout, saver), how_call)
    full = Thread(agent_on("full", InMemorySaver()), how_call)
    for question in ("one", "two", "three"):
        ours.say(question)
        full.say(question)

    stored = [s.checkpoint["channel_values"].get("messages") for s in saver.list(ours.config)]
    whole = [value for value in stored if value is not None]
    assert all(isinstance(value, _DeltaSnapshot) for value in whole)
    # 12 updates of messages: fewer than the default frequency, several times "often"'s.
    assert len(whole) == 0 if layout == "deltas" else len(whole) >= 3
    assert ours.messages() == full.messages()


@pytest.mark.parametrize("layout", ["deltas", "often"])
def test_every_checkpoint_of_the_history_reads_back_as_in_the_full_layout(
    layout: str, how_call: str
) -> None:
    ours = Thread(agent_on(layout, InMemorySaver()), how_call)
    full = Thread(agent_on("full", InMemorySaver()), how_call)
    for question in ("one", "two", "three", "four"):
        assert shape(ours.say(question)["messages"]) == shape(full.say(question)["messages"])

    ours_history, full_history = ours.history(), full.history()

    assert len(ours_history) == len(full_history)
    for mine, theirs in zip(ours_history, full_history, strict=True):
        assert shape(mine.values.get("messages", [])) == shape(theirs.values.get("messages", []))
        assert mine.next == theirs.next
        # An old checkpoint addressed by its config reads back the same as in the history.
        assert ours.messages(mine.config) == shape(mine.values.get("messages", []))


@pytest.mark.parametrize("layout", ["deltas", "often", "full"])
def test_updating_an_old_checkpoint_forks_the_thread_and_leaves_the_branch_it_left(
    layout: str, how_call: str
) -> None:
    ours = Thread(agent_on(layout, InMemorySaver()), how_call)
    for question in ("one", "two", "three"):
        ours.say(question)
    after_one = next(
        s for s in ours.history() if not s.next and len(s.values["messages"]) == 4
    ).config
    latest = ours.messages()

    fork = ours.update(after_one, {"messages": [HumanMessage("instead")]})
    forked = ours.say("and then", config=fork)

    assert shape(forked["messages"]) == [
        *latest[:4],
        ("human", "instead"),
        ("human", "and then"),
        ("ai", ""),
        ("tool", "found and then"),
        ("ai", "answer to and then"),
    ]
    assert ours.messages(after_one) == latest[:4], "the old checkpoint is as it was"
    # The thread now continues from the fork; the branch it left keeps its checkpoints.
    assert ours.messages() == shape(forked["messages"])
    assert latest in [shape(s.values.get("messages", [])) for s in ours.history()]


@pytest.mark.parametrize("layout", ["deltas", "often", "full"])
def test_remove_message_and_remove_all_through_update_state(layout: str, how_call: str) -> None:
    ours = Thread(agent_on(layout, InMemorySaver()), how_call)
    ours.say("one")
    ours.say("two")
    first, *_ = ours.state().values["messages"]
    before = ours.messages()

    ours.update(ours.config, {"messages": [RemoveMessage(id=first.id)]})
    assert ours.messages() == before[1:]

    ours.update(
        ours.config, {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage("fresh")]}
    )
    assert ours.messages() == [("human", "fresh")]
    assert shape(ours.say("three")["messages"])[:2] == [("human", "fresh"), ("human", "three")]
    assert ours.messages()[-1] == ("ai", "answer to three")


@pytest.mark.parametrize("layout", ["deltas", "often"])
def test_summarization_rewrites_a_delta_history_that_reads_back_whole(
    layout: str, how_call: str
) -> None:
    summary = SummarizationMiddleware(
        ScriptedChatModel(["the earlier turns"], repeat_last=True),
        trigger=("messages", 8),
        keep=("messages", 4),
    )
    saver = InMemorySaver()
    ours = Thread(agent_on(layout, saver, middleware=[summary, look]), how_call)
    for question in ("one", "two", "three"):
        ours.say(question)

    messages = ours.state().values["messages"]
    # Read by an agent built afresh on the same checkpoints, as another process would.
    rebuilt = Thread(agent_on(layout, saver, middleware=[summary, look]), how_call)

    assert "the earlier turns" in messages[0].text
    assert shape(messages)[-1] == ("ai", "answer to three")
    assert len(messages) == 8, "the summary, the 4 kept and the last turn's 3"
    assert rebuilt.messages() == shape(messages)


def test_context_editing_changes_what_the_model_sees_not_the_stored_deltas(how_call: str) -> None:
    editing = ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=0, keep=1)])
    the_model = model()
    agent = create_agent(
        the_model, [lookup], middleware=[editing, look], checkpointer=InMemorySaver()
    )
    ours = Thread(agent, how_call)
    for question in ("one", "two", "three"):
        ours.say(question)

    sent = the_model.calls[-1].messages
    tool_texts = [m.text for m in sent if isinstance(m, ToolMessage)]
    assert tool_texts[-1] == "found three"
    assert "found one" not in tool_texts
    assert [t for _, t in ours.messages() if t.startswith("found")] == [
        "found one",
        "found two",
        "found three",
    ]


class PlainParent(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


class DeltaParent(TypedDict):
    messages: Annotated[list[AnyMessage], DeltaChannel(add_message_batches)]


@pytest.mark.parametrize(
    ("parent_state", "layout"),
    [(PlainParent, "deltas"), (PlainParent, "often"), (DeltaParent, "full")],
    ids=["plain-parent-delta-agent", "plain-parent-often-agent", "delta-parent-full-agent"],
)
@pytest.mark.parametrize("sent", [False, True], ids=["edge", "send"])
def test_an_agent_as_a_node_of_a_parent_storing_messages_the_other_way(
    parent_state: type[Any], layout: str, sent: bool, how_call: str
) -> None:
    """Both merge messages by id, so the agent's history written back through the parent's
    reducer adds only what is new, whether the agent is reached by an edge or a Send."""
    agent = agent_on(layout, None, name="helper")
    graph = StateGraph(parent_state)
    graph.add_node(agent)
    if sent:
        graph.add_conditional_edges(START, lambda state: [Send("helper", state)], ["helper"])
    else:
        graph.add_edge(START, "helper")
    graph.add_edge("helper", END)
    parent = Thread(graph.compile(checkpointer=InMemorySaver()), how_call)

    parent.say("one")
    result = parent.say("two")

    expected = [
        ("human", "one"),
        ("ai", ""),
        ("tool", "found one"),
        ("ai", "answer to one"),
        ("human", "two"),
        ("ai", ""),
        ("tool", "found two"),
        ("ai", "answer to two"),
    ]
    assert shape(result["messages"]) == expected
    assert parent.messages() == expected
    assert len({m.id for m in result["messages"]}) == len(expected)


class OwnMessages(TypedDict):
    """A middleware's own schema declaring messages with add_messages, as LangChain's allows."""

    messages: Annotated[list[AnyMessage], add_messages]
    seen: NotRequired[int]


class Counts(AgentMiddleware):
    state_schema = OwnMessages

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        return {"seen": len(state["messages"])}


def test_a_middleware_declaring_messages_with_add_messages_keeps_the_delta_channel(
    how_call: str,
) -> None:
    agent = create_agent(ScriptedChatModel(["ok"]), middleware=[Counts()])

    result = run_agent(agent, how_call, {"messages": ["hi"]})

    assert isinstance(agent.builder.channels["messages"], DeltaChannel)
    assert result["seen"] == 1


@pytest.mark.parametrize(("before", "after"), [("full", "deltas"), ("deltas", "full")])
def test_a_thread_continues_when_the_layout_changes(before: str, after: str, how_call: str) -> None:
    saver = InMemorySaver()
    first = Thread(agent_on(before, saver), how_call)
    first.say("one")
    first.say("two")

    then = Thread(agent_on(after, saver), how_call)
    result = then.say("three")

    assert [t for k, t in shape(result["messages"]) if k == "human"] == ["one", "two", "three"]
    assert then.messages() == shape(result["messages"])
    assert len(result["messages"]) == 12


def test_ids_of_messages_written_without_one_are_the_same_on_every_read(how_call: str) -> None:
    ours = Thread(agent_on("deltas", InMemorySaver()), how_call)
    run_agent(
        ours.agent, how_call, {"messages": ["plain text", ("user", "a pair")]}, config=ours.config
    )
    ours.update(ours.config, {"messages": ["noted"]})

    first = [m.id for m in ours.state().values["messages"]]
    again = [m.id for m in ours.state().values["messages"]]

    assert all(first)
    assert first == again
    assert len(set(first)) == len(first)


@pytest.mark.parametrize("layout", ["deltas", "often"])
def test_the_v3_stream_of_a_later_turn_streams_it_and_outputs_the_whole_history(
    layout: str, how_call: str
) -> None:
    ours = Thread(agent_on(layout, InMemorySaver()), how_call)
    ours.say("one")
    turn = {"messages": [HumanMessage("two")]}

    if ours.is_async:

        async def stream() -> tuple[list[str], dict[str, Any]]:
            run = await ours.agent.astream_events(turn, ours.config, version="v3")
            texts = [str(await m.text) async for m in run.messages]
            return texts, await run.output()

        texts, output = asyncio.run(asyncio.wait_for(stream(), 30))
    else:
        run = ours.agent.stream_events(turn, ours.config, version="v3")
        texts = [str(m.text) for m in run.messages]
        output = run.output

    assert texts == ["", "answer to two"]
    assert shape(output["messages"]) == ours.messages()
    assert [t for k, t in ours.messages() if k == "human"] == ["one", "two"]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_compacting_stores_the_history_in_the_latest_checkpoint_only_once(
    layout: str, how_call: str
) -> None:
    saver = InMemorySaver()
    ours = Thread(agent_on(layout, saver), how_call)
    for text in ("one", "two", "three"):
        ours.say(text)
    before = ours.state()

    def compact() -> bool:
        if ours.is_async:
            return asyncio.run(acompact_thread(ours.agent, ours.config))
        return compact_thread(ours.agent, ours.config)

    assert compact() is (layout == "deltas"), "'often' and 'full' hold it already"
    assert compact() is False
    latest = saver.get_tuple(ours.config)
    assert latest is not None
    assert latest.checkpoint["id"] == before.config["configurable"]["checkpoint_id"]
    assert isinstance(latest.checkpoint["channel_values"]["messages"], _DeltaSnapshot | list)
    assert ours.state().values == before.values
    assert ours.state().next == before.next
    ours.say("four")
    assert [t for k, t in ours.messages() if k == "human"] == ["one", "two", "three", "four"]


def test_compacting_needs_a_checkpointer_and_a_thread() -> None:
    with pytest.raises(ValueError, match="has no checkpointer to compact a thread of"):
        compact_thread(agent_on("deltas", None), thread())
    with pytest.raises(ValueError, match="the config names no thread"):
        compact_thread(agent_on("deltas", InMemorySaver()), {})
    assert compact_thread(agent_on("deltas", InMemorySaver()), thread("new")) is False


def _same_snapshots(ours: list[Any], theirs: list[Any]) -> None:
    assert [s.config for s in ours] == [s.config for s in theirs]
    for mine, langgraphs in zip(ours, theirs, strict=True):
        assert mine.values == langgraphs.values
        assert (mine.next, mine.metadata, mine.parent_config, mine.created_at) == (
            langgraphs.next,
            langgraphs.metadata,
            langgraphs.parent_config,
            langgraphs.created_at,
        )
        assert [(t.id, t.name, t.interrupts) for t in mine.tasks] == [
            (t.id, t.name, t.interrupts) for t in langgraphs.tasks
        ]


@pytest.mark.parametrize("layout", ["deltas", "often"])
def test_the_history_of_a_forked_thread_is_langgraphs_own_read_one_walk_for_all(
    layout: str, how_call: str
) -> None:
    """Each snapshot of the history is rebuilt from the one before it (one walk for the whole
    history): it reads back exactly as langgraph rebuilds each checkpoint on its own, forks,
    ``before``, ``limit`` and ``filter`` included."""
    ours = Thread(agent_on(layout, InMemorySaver()), how_call)
    for question in ("one", "two", "three"):
        ours.say(question)
    early = ours.history()[-6].config
    ours.update(early, {"messages": [HumanMessage("aside")]})
    ours.say("four")
    agent, config = ours.agent, ours.config

    def both(**options: Any) -> tuple[list[Any], list[Any]]:
        if ours.is_async:

            async def collect(read: Any) -> list[Any]:
                return [s async for s in read(config, **options)]

            own = CompiledStateGraph.aget_state_history
            mine = asyncio.run(collect(agent.aget_state_history))
            return mine, asyncio.run(collect(lambda c, **o: own(agent, c, **o)))
        own_sync = CompiledStateGraph.get_state_history
        return list(agent.get_state_history(config, **options)), list(
            own_sync(agent, config, **options)
        )

    everything = both()
    assert len(everything[0]) > 20
    _same_snapshots(*everything)
    middle = everything[0][12].config
    _same_snapshots(*both(limit=5))
    _same_snapshots(*both(before=middle, limit=7))
    _same_snapshots(*both(filter={"source": "update"}))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_turns_one_after_another_start_from_the_latest_checkpoint_itself(
    layout: str, how_call: str
) -> None:
    """A run starts from a copy of the latest checkpoint only when that one has steps pending
    (another run's, or an unfinished one): turns taken one after another make no copy."""
    ours = Thread(agent_on(layout, InMemorySaver()), how_call)
    for text in ("one", "two", "three"):
        ours.say(text)

    sources = [s.metadata["source"] for s in ours.history()]
    assert "fork" not in sources
    assert sources.count("input") == 3
