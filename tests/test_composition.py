"""Composition: an agent as a node of a parent graph, an agent as another agent's tool, two agents
in one parent, and interrupts raised inside an agent that surface and resume on the parent."""

from __future__ import annotations

import asyncio
import operator
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, NotRequired
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from graphagent import create_agent
from graphagent.composition import as_tool
from graphagent.middleware import (
    AgentMiddleware,
    AgentState,
    OmitFromInput,
    OmitFromOutput,
    PrivateStateAttr,
    before_model,
    hook_config,
)
from graphagent.testing import ScriptedChatModel, ScriptExhaustedError, calls
from tests.conftest import Run, run_agent


class Parent(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    topic: NotRequired[str]
    report: NotRequired[str]


class ResearchState(AgentState):
    topic: NotRequired[str]
    report: NotRequired[str]
    searches: NotRequired[Annotated[int, PrivateStateAttr]]


class Research(AgentMiddleware):
    """Counts model calls in a private field and writes the final answer to ``report``."""

    state_schema = ResearchState

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        self.seen.append({k: state.get(k) for k in ("topic", "report", "searches")})
        return {"searches": state.get("searches", 0) + 1}

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        return {"report": f"{state.get('topic')}: {state['messages'][-1].text}"}


def parent_of(*agents: Any, checkpointer: Any = None, state: type[Any] = Parent) -> Any:
    """A parent graph running ``agents`` one after another, each as one node named after it."""
    graph = StateGraph(state)
    previous = START
    for agent in agents:
        graph.add_node(agent)
        graph.add_edge(previous, agent.name)
        previous = agent.name
    graph.add_edge(previous, END)
    return graph.compile(checkpointer=checkpointer)


def updates(graph: Any, how: str, inputs: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """The ``stream_mode="updates"`` chunks of a run, through ``stream`` or ``astream``."""
    if how == "invoke":
        return list(graph.stream(inputs, stream_mode="updates", **kwargs))

    async def collect() -> list[Any]:
        return [c async for c in graph.astream(inputs, stream_mode="updates", **kwargs)]

    return asyncio.run(collect())


def streamed(graph: Any, how: str, inputs: Any, **kwargs: Any) -> list[Any]:
    """The chunks of ``stream(..., subgraphs=True)`` or ``astream``: ``(namespace, chunk)``."""
    if how == "invoke":
        return list(graph.stream(inputs, subgraphs=True, **kwargs))

    async def collect() -> list[Any]:
        return [c async for c in graph.astream(inputs, subgraphs=True, **kwargs)]

    return asyncio.run(collect())


def texts(messages: Sequence[BaseMessage]) -> list[tuple[str, str]]:
    return [(type(m).__name__, m.text) for m in messages]


# -- 1. an agent as a node of a parent graph ---------------------------------------------------


def test_agent_node_reads_shared_keys_and_writes_them_back(run: Run) -> None:
    research = Research()
    model = ScriptedChatModel(["Cats sleep a lot."])
    agent = create_agent(model, middleware=[research], name="researcher")
    parent = parent_of(agent)

    result = run(parent, {"messages": [HumanMessage("Tell me")], "topic": "cats", "report": "-"})

    assert research.seen == [{"topic": "cats", "report": "-", "searches": None}]
    assert result["topic"] == "cats"
    assert result["report"] == "cats: Cats sleep a lot."
    assert texts(result["messages"]) == [
        ("HumanMessage", "Tell me"),
        ("AIMessage", "Cats sleep a lot."),
    ]
    assert result["messages"][-1].name == "researcher"
    assert set(result) == {"messages", "topic", "report"}
    assert list(parent.get_graph().nodes) == ["__start__", "researcher", "__end__"]


def test_private_fields_and_jump_to_never_reach_the_parent(how_call: str) -> None:
    class Stop(AgentMiddleware):
        state_schema = ResearchState

        @hook_config(can_jump_to=["end"])
        def after_model(self, state: Any, runtime: Any) -> dict[str, Any]:
            return {"searches": 99, "jump_to": "end"}

    class Nosy(Parent):
        searches: int
        jump_to: str

    agent = create_agent(
        ScriptedChatModel(["done"], repeat_last=True), middleware=[Research(), Stop()], name="r"
    )
    parent = parent_of(agent, state=Nosy)
    inputs = {"messages": ["hi"], "searches": -1, "jump_to": "parent's own"}

    chunks = updates(parent, how_call, inputs)
    result = run_agent(parent, how_call, inputs)

    assert [set(chunk) for chunk in chunks] == [{"r"}]
    assert set(chunks[0]["r"]) == {"messages", "report"}
    assert (result["searches"], result["jump_to"]) == (-1, "parent's own")


class PlainNote(AgentState):
    note: NotRequired[str]


class NoteNotTakenIn(AgentState):
    note: NotRequired[Annotated[str, OmitFromInput]]


class NoteNotSentOut(AgentState):
    note: NotRequired[Annotated[str, OmitFromOutput]]


class PrivateNote(AgentState):
    note: NotRequired[Annotated[str, PrivateStateAttr]]


@pytest.mark.parametrize(
    ("note_state", "seen_inside", "parent_ends_with"),
    [
        (PlainNote, "from parent", "from agent"),
        (NoteNotTakenIn, None, "from agent"),
        (NoteNotSentOut, "from parent", "from parent"),
        (PrivateNote, None, "from parent"),
    ],
    ids=["plain", "OmitFromInput", "OmitFromOutput", "PrivateStateAttr"],
)
def test_a_same_named_field_crosses_as_its_marker_says(
    how_call: str, note_state: type[Any], seen_inside: str | None, parent_ends_with: str
) -> None:
    seen: list[str | None] = []

    class Note(AgentMiddleware):
        state_schema = note_state

        def before_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
            seen.append(state.get("note"))
            return {"note": "from agent"}

    class WithNote(Parent):
        note: str

    agent = create_agent(ScriptedChatModel(["ok"]), middleware=[Note()], name="noter")
    result = run_agent(
        parent_of(agent, state=WithNote), how_call, {"messages": ["hi"], "note": "from parent"}
    )

    assert seen == [seen_inside]
    assert result["note"] == parent_ends_with


def test_output_fields_the_parent_lacks_are_dropped(how_call: str) -> None:
    class SourcesState(AgentState):
        sources: NotRequired[list[str]]

    class Sources(AgentMiddleware):
        state_schema = SourcesState

        def after_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
            return {"sources": ["a book"]}

    agent = create_agent(
        ScriptedChatModel(["ok"], repeat_last=True), middleware=[Sources()], name="s"
    )
    parent = parent_of(agent)

    alone = run_agent(agent, how_call, {"messages": ["hi"]})
    (chunk,) = updates(parent, how_call, {"messages": ["hi"]})
    result = run_agent(parent, how_call, {"messages": ["hi"]})

    assert alone["sources"] == ["a book"]
    assert set(chunk["s"]) == {"messages"}
    assert "sources" not in result


def test_a_shared_field_with_an_adding_reducer_gets_the_agents_whole_value_again(
    how_call: str,
) -> None:
    """LangGraph writes a subgraph's whole output to the parent, not a diff: messages merge by
    id, but a list with ``operator.add`` receives what the agent was given a second time."""

    class NotesState(AgentState):
        notes: NotRequired[Annotated[list[str], operator.add]]

    class Notes(AgentMiddleware):
        state_schema = NotesState

        def after_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
            return {"notes": ["agent"]}

    class WithNotes(Parent):
        notes: Annotated[list[str], operator.add]

    agent = create_agent(ScriptedChatModel(["ok"]), middleware=[Notes()], name="n")
    result = run_agent(
        parent_of(agent, state=WithNotes), how_call, {"messages": ["hi"], "notes": ["p"]}
    )

    assert result["notes"] == ["p", "p", "agent"]
    assert texts(result["messages"]) == [("HumanMessage", "hi"), ("AIMessage", "ok")]


def test_the_parents_checkpointer_continues_the_agents_conversation(how_call: str) -> None:
    research = Research()
    model = ScriptedChatModel(["First answer.", "Second answer."])
    agent = create_agent(model, middleware=[research], name="researcher")
    parent = parent_of(agent, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}

    run_agent(parent, how_call, {"messages": ["one"], "topic": "cats"}, config=config)
    result = run_agent(parent, how_call, {"messages": ["two"]}, config=config)

    assert texts(model.calls[1].messages) == [
        ("HumanMessage", "one"),
        ("AIMessage", "First answer."),
        ("HumanMessage", "two"),
    ]
    assert len(result["messages"]) == 4
    assert result["report"] == "cats: Second answer."
    # Without a checkpointer of its own the agent starts each invocation from the parent's state:
    # its private fields begin anew.
    assert [seen["searches"] for seen in research.seen] == [None, None]


def test_checkpointer_true_keeps_the_agents_own_state_per_thread(how_call: str) -> None:
    research = Research()
    model = ScriptedChatModel(["First answer.", "Second answer."])
    agent = create_agent(model, middleware=[research], name="researcher", checkpointer=True)
    parent = parent_of(agent, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}

    run_agent(parent, how_call, {"messages": ["one"]}, config=config)
    run_agent(parent, how_call, {"messages": ["two"]}, config=config)

    assert [seen["searches"] for seen in research.seen] == [None, 1]
    inside = parent.get_state({"configurable": {"thread_id": "t1", "checkpoint_ns": "researcher"}})
    assert inside.values["searches"] == 2
    assert len(inside.values["messages"]) == 4


def test_context_and_store_reach_the_agents_hooks(how_call: str) -> None:
    @dataclass
    class Reader:
        name: str

    seen: list[tuple[str, bool]] = []

    @before_model
    def look(state: Any, runtime: Any) -> None:
        seen.append((runtime.context.name, runtime.store is store))

    store = InMemoryStore()
    agent = create_agent(
        ScriptedChatModel(["ok"]), middleware=[look], context_schema=Reader, name="r"
    )
    graph = StateGraph(Parent, context_schema=Reader)
    graph.add_node(agent)
    graph.add_edge(START, "r")
    parent = graph.compile(store=store)

    run_agent(parent, how_call, {"messages": ["hi"]}, context=Reader("ada"))

    assert seen == [("ada", True)]


def test_an_agent_node_streams_under_its_own_namespace(how_call: str) -> None:
    parent = parent_of(create_agent(ScriptedChatModel(["two words"]), name="writer"))

    chunks = streamed(parent, how_call, {"messages": ["hi"]}, stream_mode="messages")

    assert [(ns[0].split(":")[0], token.text) for ns, (token, _) in chunks] == [
        ("writer", "two"),
        ("writer", " words"),
    ]


# -- 2. an agent as another agent's tool -------------------------------------------------------


def helper_agent(*replies: Any, **kwargs: Any) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(list(replies))
    return create_agent(model, name="helper", **kwargs), model


def boss_agent(helper: Any, *replies: Any, **kwargs: Any) -> Any:
    delegate = as_tool(helper, name="ask_helper", description="Ask the helper agent.")
    return create_agent(ScriptedChatModel(list(replies)), [delegate], name="boss", **kwargs)


def test_as_tool_runs_the_inner_agent_afresh_and_returns_its_final_text(run: Run) -> None:
    helper, helper_model = helper_agent("Paris.", "Rome.")
    boss = boss_agent(
        helper,
        calls(("ask_helper", {"request": "Capital of France?"})),
        calls(("ask_helper", {"request": "Capital of Italy?"})),
        "Paris and Rome.",
    )

    result = run(boss, {"messages": ["Two capitals, please."]})

    answers = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [(m.name, m.text) for m in answers] == [
        ("ask_helper", "Paris."),
        ("ask_helper", "Rome."),
    ]
    assert [texts(c.messages) for c in helper_model.calls] == [
        [("HumanMessage", "Capital of France?")],
        [("HumanMessage", "Capital of Italy?")],
    ]
    assert result["messages"][-1].text == "Paris and Rome."


def test_as_tool_offers_the_model_one_request_argument() -> None:
    delegate = as_tool(helper_agent("x")[0], name="ask_helper", description="Ask the helper.")

    offered = convert_to_openai_tool(delegate)["function"]

    assert (offered["name"], offered["description"]) == ("ask_helper", "Ask the helper.")
    assert list(offered["parameters"]["properties"]) == ["request"]
    assert offered["parameters"]["required"] == ["request"]
    assert delegate.return_direct is False


def test_as_tool_return_direct_ends_the_outer_agent(how_call: str) -> None:
    helper, _ = helper_agent("The final word.")
    delegate = as_tool(helper, name="ask_helper", description="Ask.", return_direct=True)
    boss_model = ScriptedChatModel([calls(("ask_helper", {"request": "go"}))])
    boss = create_agent(boss_model, [delegate])

    result = run_agent(boss, how_call, {"messages": ["hi"]})

    assert result["messages"][-1].text == "The final word."
    assert boss_model.call_count == 1


def test_as_tool_awaits_the_inner_agent_on_the_event_loop() -> None:
    """Under ainvoke the inner agent runs through ainvoke on the loop's thread: an async-only
    hook works, and the inner model is not pushed to a worker thread."""
    threads: list[threading.Thread] = []

    def answer(messages: list[BaseMessage]) -> str:
        threads.append(threading.current_thread())
        return "async answer"

    class AsyncOnly(AgentMiddleware):
        async def abefore_model(self, state: Any, runtime: Any) -> None:
            await asyncio.sleep(0)

    helper, _ = helper_agent(answer, middleware=[AsyncOnly()])
    boss = boss_agent(helper, calls(("ask_helper", {"request": "go"})), "done")

    result = asyncio.run(boss.ainvoke({"messages": ["hi"]}))

    assert [m.text for m in result["messages"] if isinstance(m, ToolMessage)] == ["async answer"]
    assert threads == [threading.main_thread()]


class RunTree(BaseCallbackHandler):
    """Records every chain, tool and chat-model run with its parent run."""

    def __init__(self) -> None:
        self.runs: dict[UUID, tuple[str, UUID | None]] = {}

    def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
        self.runs[kw["run_id"]] = (str(kw.get("name")), kw.get("parent_run_id"))

    def on_tool_start(self, serialized: Any, input_str: str, **kw: Any) -> None:
        self.runs[kw["run_id"]] = (f"tool {serialized['name']}", kw.get("parent_run_id"))

    def on_chat_model_start(self, serialized: Any, messages: Any, **kw: Any) -> None:
        self.runs[kw["run_id"]] = ("chat model", kw.get("parent_run_id"))

    def ancestry(self, name: str) -> list[str]:
        run_id: UUID | None = next(i for i, (n, _) in self.runs.items() if n == name)
        names: list[str] = []
        while run_id is not None:
            found, run_id = self.runs[run_id]
            names.append(found)
        return names


def test_as_tool_nests_the_inner_run_under_the_tool_call(how_call: str) -> None:
    helper, _ = helper_agent("hi")
    boss = boss_agent(helper, calls(("ask_helper", {"request": "go"})), "done")
    tree = RunTree()

    run_agent(boss, how_call, {"messages": ["hi"]}, config={"callbacks": [tree]})

    assert tree.ancestry("helper") == ["helper", "tool ask_helper", "tools", "boss"]


def test_as_tool_streams_the_inner_agents_tokens_as_a_subgraph(how_call: str) -> None:
    helper, _ = helper_agent("inner words")
    boss = boss_agent(helper, calls(("ask_helper", {"request": "go"})), "outer")
    chunks = streamed(boss, how_call, {"messages": ["hi"]}, stream_mode="messages")

    inner = [
        (token.text, meta["langgraph_node"])
        for namespace, (token, meta) in chunks
        if namespace and namespace[0].startswith("tools:")
    ]
    assert inner == [("inner", "model"), (" words", "model")]


def test_an_interrupt_inside_an_agent_tool_surfaces_and_resumes(how_call: str) -> None:
    @tool
    def confirm(action: str) -> str:
        """Ask a person to confirm an action."""
        return f"person said {interrupt({'confirm': action})}"

    helper, helper_model = helper_agent(
        calls(("confirm", {"action": "deploy"})), "Deployed.", tools=[confirm]
    )
    boss = boss_agent(
        helper,
        calls(("ask_helper", {"request": "deploy"})),
        "It is deployed.",
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t"}}

    paused = run_agent(boss, how_call, {"messages": ["go"]}, config=config)
    result = run_agent(boss, how_call, Command(resume="yes"), config=config)

    assert [i.value for i in paused["__interrupt__"]] == [{"confirm": "deploy"}]
    assert [m.text for m in result["messages"] if isinstance(m, ToolMessage)] == ["Deployed."]
    assert helper_model.call_count == 2  # resumed where it stopped, not started over
    assert texts(helper_model.calls[1].messages)[-1] == ("ToolMessage", "person said yes")


def test_an_error_inside_an_agent_tool_propagates(how_call: str) -> None:
    helper, _ = helper_agent()  # no replies: the inner model call fails
    boss = boss_agent(helper, calls(("ask_helper", {"request": "go"})), "never reached")

    with pytest.raises(ScriptExhaustedError):
        run_agent(boss, how_call, {"messages": ["hi"]})


def test_as_tool_rejects_what_it_cannot_offer() -> None:
    with pytest.raises(TypeError, match="needs a runnable agent"):
        as_tool(object(), name="x", description="y")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="name=''"):
        as_tool(helper_agent("x")[0], name="", description="y")
    with pytest.raises(ValueError, match="description=' '"):
        as_tool(helper_agent("x")[0], name="x", description=" ")


def test_as_tool_names_a_runnable_without_messages(how_call: str) -> None:
    delegate = as_tool(RunnableLambda(lambda _: "plain"), name="odd", description="Odd.")

    def call() -> Any:
        if how_call == "invoke":
            return delegate.invoke({"request": "go"})
        return asyncio.run(delegate.ainvoke({"request": "go"}))

    with pytest.raises(TypeError, match="tool 'odd' returned str without messages"):
        call()


# -- 3. two agents with their own middleware and state in one parent ---------------------------


class DraftState(AgentState):
    report: NotRequired[str]
    drafts: NotRequired[Annotated[int, PrivateStateAttr]]


class Draft(AgentMiddleware):
    """A writer's middleware: a private draft counter and the report it writes."""

    state_schema = DraftState

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        return {"drafts": state.get("drafts", 0) + 1}

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        return {"report": f"{state['messages'][-1].text} (draft {state['drafts']})"}


@before_model
def audit(state: Any, runtime: Any) -> None:
    """The same middleware in both agents: its nodes live inside each agent, so never collide."""


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


def routed_parent(researcher: Any, writer: Any) -> Any:
    def route(state: Parent) -> str:
        return "writer" if state["messages"][-1].text.startswith("READY") else END

    graph = StateGraph(Parent)
    graph.add_node(researcher)
    graph.add_node(writer)
    graph.add_edge(START, "researcher")
    graph.add_conditional_edges("researcher", route, ["writer", END])
    graph.add_edge("writer", END)
    return graph.compile()


def test_two_agents_keep_their_own_middleware_and_state(run: Run) -> None:
    research_model = ScriptedChatModel([calls(("search", {"query": "cats"})), "READY: cats nap"])
    write_model = ScriptedChatModel(["Cats nap daily."])
    researcher = create_agent(
        research_model, [search], middleware=[Research(), audit], name="researcher"
    )
    writer = create_agent(
        write_model, middleware=[Draft(), audit], system_prompt="Write it up.", name="writer"
    )
    parent = routed_parent(researcher, writer)

    result = run(parent, {"messages": ["cats?"], "topic": "cats"})

    assert result["report"] == "Cats nap daily. (draft 1)"
    assert [(m.name, m.text) for m in result["messages"] if isinstance(m, AIMessage)] == [
        ("researcher", ""),
        ("researcher", "READY: cats nap"),
        ("writer", "Cats nap daily."),
    ]
    assert research_model.calls[0].tool_names == ("search",)
    assert write_model.calls[0].tool_names == ()
    assert texts(write_model.calls[0].messages)[0] == ("SystemMessage", "Write it up.")
    inner_nodes = set(parent.get_graph(xray=True).nodes)
    assert {"researcher:audit.before_model", "writer:audit.before_model"} <= inner_nodes
    assert {"researcher:Research.before_model", "writer:Draft.after_model"} <= inner_nodes


def test_the_router_can_skip_the_second_agent(how_call: str) -> None:
    writer_model = ScriptedChatModel([])
    researcher = create_agent(ScriptedChatModel(["nothing found"]), name="researcher")
    parent = routed_parent(researcher, create_agent(writer_model, name="writer"))

    result = run_agent(parent, how_call, {"messages": ["cats?"]})

    assert result["messages"][-1].text == "nothing found"
    assert writer_model.call_count == 0


def test_each_agent_node_sends_only_its_own_output_fields(how_call: str) -> None:
    researcher = create_agent(
        ScriptedChatModel(["READY"]), middleware=[Research()], name="researcher"
    )
    writer = create_agent(ScriptedChatModel(["text"]), middleware=[Draft()], name="writer")

    chunks = updates(routed_parent(researcher, writer), how_call, {"messages": ["cats?"]})

    assert [{node: set(update)} for chunk in chunks for node, update in chunk.items()] == [
        {"researcher": {"messages", "report"}},
        {"writer": {"messages", "report"}},
    ]


def test_agents_added_by_name_need_distinct_names() -> None:
    graph = StateGraph(Parent)
    graph.add_node(create_agent(ScriptedChatModel(["a"])))

    with pytest.raises(ValueError, match="Node `LangGraph` already present"):
        graph.add_node(create_agent(ScriptedChatModel(["b"])))


# -- 4. interrupts inside an agent node --------------------------------------------------------


@tool
def publish(text: str) -> str:
    """Publish a text once a person approves it."""
    verdict = interrupt({"publish": text})
    return f"published ({verdict})"


def test_an_interrupt_in_an_agent_node_surfaces_on_the_parent_and_resumes(how_call: str) -> None:
    model = ScriptedChatModel([calls(("publish", {"text": "draft"})), "Published."])
    writer = create_agent(model, [publish], name="writer")
    parent = parent_of(writer, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}

    paused = run_agent(parent, how_call, {"messages": ["write"]}, config=config)

    assert [i.value for i in paused["__interrupt__"]] == [{"publish": "draft"}]
    snapshot = parent.get_state(config, subgraphs=True)
    (task,) = snapshot.tasks
    assert (snapshot.next, task.name, task.state.next) == (("writer",), "writer", ("tools",))
    assert task.state.values["messages"][-1].tool_calls[0]["name"] == "publish"

    result = run_agent(parent, how_call, Command(resume="approved"), config=config)

    assert texts(result["messages"])[-2:] == [
        ("ToolMessage", "published (approved)"),
        ("AIMessage", "Published."),
    ]
    assert model.call_count == 2
    assert parent.get_state(config, subgraphs=True).tasks == ()


def test_an_interrupt_in_a_hook_of_an_agent_node_resumes_through_the_parent(
    how_call: str,
) -> None:
    answers: list[str] = []

    @before_model
    def gate(state: Any, runtime: Any) -> None:
        answers.append(interrupt("May I call the model?"))

    agent = create_agent(ScriptedChatModel(["Hello."]), middleware=[gate], name="gated")
    parent = parent_of(agent, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}

    paused = run_agent(parent, how_call, {"messages": ["hi"]}, config=config)
    result = run_agent(parent, how_call, Command(resume="yes"), config=config)

    assert [i.value for i in paused["__interrupt__"]] == ["May I call the model?"]
    assert answers == ["yes"]
    assert result["messages"][-1].text == "Hello."
