"""Handoffs with ``Command(goto=..., graph=Command.PARENT, update=...)``: the parent receives the AI
message that made the calls and an answer for every call of that turn (the real result where the
tool ran), unless the update already carries them; ``handoff_tool`` does this by itself."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Annotated, Any, NotRequired

import pytest
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import InjectedState
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from graphagent import create_agent
from graphagent._core.history import RESULT_NOT_KEPT
from graphagent.composition import HANDOFF_DESTINATION, as_tool, handoff_tool
from graphagent.errors import CompositionError
from graphagent.middleware import before_model, wrap_agent, wrap_tool_call
from graphagent.testing import ScriptedChatModel, calls
from tests.composition.parents import run

LOOKED_UP: list[str] = []


@pytest.fixture(autouse=True)
def _empty_log() -> None:
    LOOKED_UP.clear()


@tool
def lookup(query: str) -> str:
    """Look something up."""
    LOOKED_UP.append(query)
    return f"found {query}"


@before_model
def note(state: Any, runtime: Any) -> None:
    return None


class Team(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    active_agent: NotRequired[str]


def team(alice: Any, bob: Any, **compile: Any) -> Any:
    """alice first; she may hand off to bob, who ends the run."""
    graph = StateGraph(Team)
    graph.add_node(alice, destinations=("bob",))
    graph.add_node(bob)
    graph.add_edge(START, "alice")
    graph.add_edge("alice", END)
    graph.add_edge("bob", END)
    return graph.compile(**compile)


def agents(handoff: Any, *extra_tools: Any) -> tuple[Any, Any, ScriptedChatModel]:
    alice_model = ScriptedChatModel([calls(("lookup", {"query": "flights"}), (handoff.name, {}))])
    alice = create_agent(
        alice_model, [lookup, handoff, *extra_tools], middleware=[note], name="alice"
    )
    bob_model = ScriptedChatModel(["Bob: booked."])
    return alice, create_agent(bob_model, name="bob"), bob_model


def answered_exactly_once(messages: list[BaseMessage]) -> None:
    """Every call has one answer, right after its AI message's other answers."""
    pending: list[str] = []
    seen: list[str] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            assert message.tool_call_id in pending, f"orphan answer {message.tool_call_id}"
            pending.remove(message.tool_call_id)
            seen.append(message.tool_call_id)
            continue
        assert not pending, f"unanswered {pending} before {type(message).__name__}"
        if isinstance(message, AIMessage):
            pending = [call["id"] for call in message.tool_calls]
    assert not pending, f"unanswered {pending}"
    assert len(seen) == len(set(seen))


def shown(messages: list[BaseMessage]) -> list[tuple[str, str]]:
    def text(m: BaseMessage) -> str:
        return m.text or ", ".join(c["name"] for c in getattr(m, "tool_calls", []))

    return [(type(m).__name__, text(m)) for m in messages]


def test_handoff_tool_keeps_the_turns_other_results(how: str, hook_mode: str) -> None:
    alice, bob, bob_model = agents(handoff_tool("bob"))

    result = run(team(alice, bob), how, {"messages": [("user", "Book a flight.")]})

    assert shown(result["messages"]) == [
        ("HumanMessage", "Book a flight."),
        ("AIMessage", "lookup, transfer_to_bob"),
        ("ToolMessage", "found flights"),
        ("ToolMessage", "Transferred to bob."),
        ("AIMessage", "Bob: booked."),
    ]
    answered_exactly_once(result["messages"])
    assert LOOKED_UP == ["flights"]
    assert shown(bob_model.calls[0].messages) == shown(result["messages"][:4])


def hand_written(update: Callable[[str, list[BaseMessage]], dict[str, Any]]) -> Any:
    @tool
    def to_bob(
        tool_call_id: Annotated[str, InjectedToolCallId],
        state: Annotated[dict[str, Any], InjectedState],
    ) -> Command[Any]:
        """Hand the conversation to Bob."""
        return Command(
            goto="bob", graph=Command.PARENT, update=update(tool_call_id, state["messages"])
        )

    return to_bob


def answer(tool_call_id: str) -> ToolMessage:
    return ToolMessage("Bob takes over.", tool_call_id=tool_call_id)


UPDATES = {
    "only its answer": lambda call_id, history: {"messages": [answer(call_id)]},
    "the whole history": lambda call_id, history: {"messages": [*history, answer(call_id)]},
    "no messages": lambda call_id, history: {"active_agent": "bob"},
}


@pytest.mark.parametrize("update", list(UPDATES), ids=list(UPDATES))
def test_a_hand_written_handoff_leaves_no_call_unanswered(
    how: str, hook_mode: str, update: str
) -> None:
    alice, bob, _ = agents(hand_written(UPDATES[update]))

    result = run(team(alice, bob), how, {"messages": [("user", "Book a flight.")]})

    messages = result["messages"]
    answered_exactly_once(messages)
    assert [m.text for m in messages if isinstance(m, ToolMessage)] == [
        "found flights",
        RESULT_NOT_KEPT if update == "no messages" else "Bob takes over.",
    ]
    assert [m.name for m in messages if isinstance(m, AIMessage)] == ["alice", "bob"]
    assert LOOKED_UP == ["flights"]
    if update == "no messages":
        assert result["active_agent"] == "bob"


def test_wrap_hooks_see_the_command_and_stay_balanced(how_call: str) -> None:
    log: list[str] = []

    @wrap_tool_call
    def watch(request: Any, handler: Any) -> Any:
        log.append(f"enter {request.tool_call['name']}")
        result = handler(request)
        log.append(f"leave {type(result).__name__}")
        return result

    @wrap_agent
    def around(state: Any, runtime: Any) -> Iterator[None]:
        log.append("run")
        try:
            yield
        finally:
            log.append("run ended")

    alice_model = ScriptedChatModel([calls(("transfer_to_bob", {}))])
    alice = create_agent(
        alice_model, [handoff_tool("bob")], middleware=[watch, around], name="alice"
    )
    bob = create_agent(ScriptedChatModel(["Bob here."]), name="bob")

    run(team(alice, bob), how_call, {"messages": [("user", "hi")]})

    assert log == ["run", "enter transfer_to_bob", "leave Command", "run ended"]


@tool
def confirm(what: str) -> str:
    """Confirm something with a person."""
    return f"confirmed {what} ({interrupt(what)})"


def test_a_sibling_interrupt_holds_the_handoff_until_it_is_answered(
    how_call: str, hook_mode: str
) -> None:
    alice_model = ScriptedChatModel(
        [calls(("confirm", {"what": "dates"}), ("transfer_to_bob", {}))]
    )
    alice = create_agent(
        alice_model,
        [confirm, handoff_tool("bob", update={"active_agent": "bob"})],
        middleware=[note],
        name="alice",
    )
    bob = create_agent(ScriptedChatModel(["Bob: done."]), name="bob")
    graph = team(alice, bob, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}

    paused = run(graph, how_call, {"messages": [("user", "Plan it.")]}, config=config)
    result = run(graph, how_call, Command(resume="yes"), config=config)

    assert [i.value for i in paused["__interrupt__"]] == ["dates"]
    answered_exactly_once(result["messages"])
    assert shown(result["messages"])[2:] == [
        ("ToolMessage", "confirmed dates (yes)"),
        ("ToolMessage", "Transferred to bob."),
        ("AIMessage", "Bob: done."),
    ]
    assert result["active_agent"] == "bob"


def test_a_return_direct_sibling_does_not_cut_the_handoff_short(how_call: str) -> None:
    @tool(return_direct=True)
    def final(text: str) -> str:
        """Answer the user directly."""
        return text

    alice_model = ScriptedChatModel([calls(("final", {"text": "bye"}), ("transfer_to_bob", {}))])
    alice = create_agent(alice_model, [final, handoff_tool("bob")], name="alice")
    bob = create_agent(ScriptedChatModel(["Bob here."]), name="bob")

    result = run(team(alice, bob), how_call, {"messages": [("user", "hi")]})

    answered_exactly_once(result["messages"])
    assert result["messages"][-1].text == "Bob here."


def test_handoff_tool_options_and_checks() -> None:
    swarm = handoff_tool("bob", name="ask_bob", description="Bob books.", update={"x": 1})

    assert (swarm.name, swarm.description, swarm.args) == ("ask_bob", "Bob books.", {})
    assert swarm.metadata == {HANDOFF_DESTINATION: "bob"}
    with pytest.raises(ValueError, match="handoff_tool\\(\\) got to=''"):
        handoff_tool("")
    with pytest.raises(ValueError, match="writes 'messages'"):
        handoff_tool("bob", update={"messages": []})


def test_a_handoff_from_an_agent_behind_as_tool_is_refused(how_call: str) -> None:
    inner = create_agent(
        ScriptedChatModel([calls(("transfer_to_bob", {}))]), [handoff_tool("bob")], name="inner"
    )
    outer_model = ScriptedChatModel([calls(("ask_inner", {"request": "x"})), "done"])
    outer = create_agent(
        outer_model, [as_tool(inner, name="ask_inner", description="Ask.")], name="outer"
    )

    with pytest.raises(CompositionError) as refused:
        run(outer, how_call, {"messages": [("user", "hi")]})

    assert str(refused.value).startswith(
        "The agent behind tool 'ask_inner' handed off to its parent graph (goto='bob'), but it "
        "runs inside a tool call, not as a node of a parent graph"
    )
    assert outer_model.call_count == 1


def test_a_call_whose_id_is_empty_keeps_its_answer_in_the_handoff() -> None:
    """``""`` is an id, as in LangChain: the call it names is answered once, with its result."""
    handoff = handoff_tool(to="bob")
    turn = AIMessage(
        "",
        tool_calls=[
            {"name": "lookup", "args": {"query": "flights"}, "id": ""},
            {"name": handoff.name, "args": {}, "id": "to-bob"},
        ],
    )
    alice = create_agent(ScriptedChatModel([turn]), [lookup, handoff], name="alice")
    bob = create_agent(ScriptedChatModel(["Bob: booked."]), name="bob")

    messages = team(alice, bob).invoke({"messages": [("user", "Book a flight")]})["messages"]

    answered_exactly_once(messages)
    answers = {m.tool_call_id: m.content for m in messages if isinstance(m, ToolMessage)}
    assert answers[""] == "found flights"
