"""A state field an agent shares with its parent graph, declared with clashing types or reducers:
refused where graphagent sees both declarations (``add_agent``, and the parent's state at the
agent's run as a node), and named by the failing reducer where it does not."""

from __future__ import annotations

import operator
from typing import Annotated, Any, NotRequired

import pytest
from langchain_core.messages import AnyMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Send
from typing_extensions import TypedDict

from graphagent import create_agent
from graphagent.composition import add_agent
from graphagent.errors import StateSchemaConflictError
from graphagent.middleware import AgentMiddleware, AgentState, before_model
from graphagent.testing import ScriptedChatModel
from tests.composition.parents import one_node, run


class Scored(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    score: int


class Tagged(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    tags: Annotated[list[str], operator.add]


class TextScore(AgentState):
    score: NotRequired[str]


class TagList(AgentState):
    tags: NotRequired[list[str]]


class Scoring(AgentMiddleware):
    state_schema = TextScore

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        return {"score": "high"}


@before_model
def note(state: Any, runtime: Any) -> None:
    return None


def scorer() -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(["ok"])
    return create_agent(model, middleware=[Scoring(), note], name="scorer"), model


TYPE_CLASH = (
    "The state field 'score' clashes between the parent graph (node 'scorer') and the agent "
    "'scorer': the parent declares score: int (the last value written wins), and the agent "
    "(the state_schema of middleware 'Scoring') declares score: str (the last value written "
    "wins); one side would receive values of a type it does not declare. Rename the field on "
    "one side, or give it the same type and reducer on both, or run the agent from a node of "
    "your own that maps the fields"
)


def test_add_agent_refuses_a_type_clash_naming_both_declarations(hook_mode: str) -> None:
    agent, _ = scorer()
    graph = StateGraph(Scored)

    with pytest.raises(StateSchemaConflictError) as refused:
        add_agent(graph, agent)

    assert str(refused.value).startswith(TYPE_CLASH)
    assert "scorer" not in graph.nodes


def test_add_agent_refuses_a_parent_reducer_the_agent_does_not_share() -> None:
    agent = create_agent(ScriptedChatModel(["ok"]), state_schema=TagList, name="tagger")

    with pytest.raises(StateSchemaConflictError) as refused:
        add_agent(StateGraph(Tagged), agent)

    message = str(refused.value)
    assert "the parent declares tags: Annotated[list[str], add]" in message
    assert "the agent (its state_schema) declares tags: list[str] (the last value" in message
    assert "reduces what it already holds a second time" in message


def test_add_agent_adds_an_agent_whose_shared_fields_agree(how_call: str) -> None:
    class Notes(AgentState):
        tags: NotRequired[Annotated[list[str], operator.add]]

    agent = create_agent(ScriptedChatModel(["ok"]), state_schema=Notes, name="noter")
    graph = add_agent(StateGraph(Tagged), agent, name="notes")
    graph.add_edge(START, "notes")

    result = run(graph.compile(), how_call, {"messages": [("user", "hi")], "tags": []})

    assert result["messages"][-1].text == "ok"
    with pytest.raises(TypeError, match="needs an agent from create_agent"):
        add_agent(StateGraph(Tagged), graph.compile())


def test_a_clash_is_refused_at_the_agents_first_run_as_a_node(how: str, hook_mode: str) -> None:
    agent, model = scorer()
    parent = one_node(agent, state=Scored)

    with pytest.raises(StateSchemaConflictError) as refused:
        run(parent, how, {"messages": [("user", "hi")], "score": 3})

    assert str(refused.value).startswith(TYPE_CLASH)
    assert model.call_count == 0


def test_a_clash_is_refused_for_a_plain_node_even_when_the_parent_has_not_set_the_field(
    how: str, hook_mode: str
) -> None:
    # The agent would write 'high' into the parent's int field: nothing of the parent's crosses
    # in, but the agent's value crosses out.
    agent, model = scorer()
    parent = one_node(agent, state=Scored)

    with pytest.raises(StateSchemaConflictError) as refused:
        run(parent, how, {"messages": [("user", "hi")]})

    assert str(refused.value).startswith(TYPE_CLASH)
    assert model.call_count == 0


def test_a_reducer_clash_is_refused_when_an_edge_starts_the_agent(how_call: str) -> None:
    agent = create_agent(ScriptedChatModel(["ok"]), state_schema=TagList, name="tagger")
    graph = StateGraph(Tagged)
    graph.add_node(agent)
    graph.add_edge(START, "tagger")

    with pytest.raises(StateSchemaConflictError) as refused:
        run(graph.compile(), how_call, {"messages": [("user", "hi")], "tags": ["a"]})

    message = str(refused.value)
    assert message.startswith("The state field 'tags' clashes between the parent graph (node ")
    assert "the parent declares tags: Annotated[list[str], add]" in message
    assert "the agent (its state_schema) declares tags: list[str]" in message
    assert "Rename the field on one side" in message


def test_an_agent_run_by_a_node_function_is_not_checked_against_the_parent(how_call: str) -> None:
    agent, _ = scorer()
    graph = StateGraph(Scored)

    def score(state: Any) -> dict[str, Any]:
        return {"score": len(agent.invoke({"messages": state["messages"]})["score"])}

    graph.add_node("score", score)
    graph.add_edge(START, "score")

    result = run(graph.compile(), how_call, {"messages": [("user", "hi")], "score": 3})

    assert result["score"] == len("high")


def test_a_reducer_failure_names_its_field(how_call: str, hook_mode: str) -> None:
    class AddedTags(AgentState):
        tags: NotRequired[Annotated[list[str], operator.add]]

    agent = create_agent(
        ScriptedChatModel(["ok"]), middleware=[note], state_schema=AddedTags, name="tagger"
    )

    with pytest.raises(TypeError, match="can only concatenate list") as failed:
        run(agent, how_call, {"messages": [("user", "hi")], "tags": "urgent"})

    assert failed.value.__notes__[0] == (
        "graphagent: raised in the reducer add of the state field 'tags', given list and str"
    )


def test_a_reducer_clash_is_refused_when_a_send_starts_the_agent(how_call: str) -> None:
    agent = create_agent(ScriptedChatModel(["ok"]), state_schema=TagList, name="tagger")
    graph = StateGraph(Tagged)
    graph.add_node(agent)
    graph.add_conditional_edges(
        START, lambda state: [Send("tagger", {"messages": state["messages"]})], ["tagger"]
    )

    with pytest.raises(StateSchemaConflictError, match="tags: Annotated\\[list\\[str\\], add\\]"):
        run(graph.compile(), how_call, {"messages": [("user", "hi")], "tags": []})
