"""Typed state: custom fields in and out, visibility markers, merged schemas."""

from __future__ import annotations

import logging
import operator
from typing import Annotated, Any, NotRequired, get_type_hints

import pytest
from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.message import add_messages

from graphagent import create_agent
from graphagent.middleware import (
    AgentState,
    ModelCallLimitMiddleware,
    OmitFromInput,
    OmitFromOutput,
    PrivateStateAttr,
    after_model,
    before_model,
)
from graphagent.testing import ScriptedChatModel
from tests.conftest import Run, run_agent

pytestmark = pytest.mark.usefixtures("hook_mode")


class Visibility(AgentState):
    public: NotRequired[str]
    computed: NotRequired[Annotated[str, OmitFromInput]]
    config: NotRequired[Annotated[str, OmitFromOutput]]
    secret: NotRequired[Annotated[str, PrivateStateAttr]]
    log: NotRequired[Annotated[list[str], operator.add, OmitFromInput]]


def make_agent(seen: list[dict[str, Any]]) -> Any:
    @before_model(state_schema=Visibility)
    def look(state: Any, runtime: Any) -> dict[str, Any]:
        seen.append(dict(state))
        return {"computed": "c", "secret": "s", "log": ["before"]}

    @after_model(state_schema=Visibility)
    def more(state: Any, runtime: Any) -> dict[str, Any]:
        return {"log": ["after"]}

    return create_agent(ScriptedChatModel(["ok"], repeat_last=True), middleware=[look, more])


def test_custom_fields_come_back_and_markers_filter_input_and_output(how_call: str) -> None:
    seen: list[dict[str, Any]] = []
    agent = make_agent(seen)
    inputs = {
        "messages": [HumanMessage("hi")],
        "public": "p",
        "computed": "ignored",
        "config": "cfg",
        "secret": "ignored",
    }

    result = run_agent(agent, how_call, inputs)

    before_model_saw = {k: v for k, v in seen[0].items() if k != "messages"}
    assert before_model_saw == {"public": "p", "config": "cfg", "log": []}
    assert set(result) == {"messages", "public", "computed", "log"}
    assert result["log"] == ["before", "after"]
    assert result["computed"] == "c"


def test_schemas_exposed_by_the_graph() -> None:
    agent = make_agent([])
    input_fields = set(agent.get_input_jsonschema()["properties"])
    output_fields = set(agent.get_output_jsonschema()["properties"])

    assert input_fields == {"messages", "public", "config"}
    assert output_fields == {"messages", "public", "computed", "log", "structured_response"}


def test_user_state_schema_fields_pass_through(run: Run) -> None:
    class Ticket(AgentState):
        ticket_id: NotRequired[str]

    agent = create_agent(ScriptedChatModel(["ok"]), state_schema=Ticket)
    result = run(agent, {"messages": ["hi"], "ticket_id": "T-1"})

    assert result["ticket_id"] == "T-1"


class ReadsTheCount(AgentState):
    """An app re-declaring a middleware's private counter, only to read it."""

    thread_model_call_count: NotRequired[int]


def test_a_redeclared_private_field_still_cannot_be_passed_in(run: Run) -> None:
    model = ScriptedChatModel(["ok"], repeat_last=True)
    limit = ModelCallLimitMiddleware(thread_limit=1, exit_behavior="end")
    agent = create_agent(
        model, middleware=[limit], state_schema=ReadsTheCount, checkpointer=InMemorySaver()
    )
    thread = {"configurable": {"thread_id": "t"}}

    for _ in range(3):
        result = run(agent, {"messages": ["hi"], "thread_model_call_count": 0}, config=thread)

    assert len(model.calls) == 1, "the caller's count of 0 must not reset the limit"
    assert "thread limit (1/1)" in result["messages"][-1].content
    assert "thread_model_call_count" not in result
    assert agent.get_state(thread).values["thread_model_call_count"] == 1
    assert "thread_model_call_count" not in agent.get_input_jsonschema()["properties"]
    assert "thread_model_call_count" not in agent.get_output_jsonschema()["properties"]


@pytest.mark.parametrize("app_first", [True, False], ids=["app-first", "middleware-first"])
def test_the_most_restrictive_declaration_decides_the_schemas(app_first: bool) -> None:
    class Loose(AgentState):
        a: NotRequired[int]
        b: NotRequired[Annotated[int, OmitFromInput]]
        c: NotRequired[int]

    class Strict(AgentState):
        a: NotRequired[Annotated[int, PrivateStateAttr]]
        b: NotRequired[Annotated[int, OmitFromOutput]]
        c: NotRequired[Annotated[int, OmitFromOutput]]

    @before_model(state_schema=Strict if app_first else Loose)
    def hook(state: Any, runtime: Any) -> None:
        return None

    agent = create_agent(
        ScriptedChatModel(["ok"]), middleware=[hook], state_schema=Loose if app_first else Strict
    )
    input_fields = set(agent.get_input_jsonschema()["properties"])
    output_fields = set(agent.get_output_jsonschema()["properties"])

    assert input_fields == {"messages", "c"}
    assert output_fields == {"messages", "structured_response"}


def _append_batches(state: list[Any] | None, writes: Any) -> list[Any]:
    """A batching-invariant messages reducer, as langgraph's DeltaChannel needs."""
    merged = list(state or [])
    for write in writes:
        merged = add_messages(merged, write)
    return merged


class DeltaMessages(AgentState):
    """A caller's state with ``messages`` on langgraph's delta channel (deepagents does this)."""

    messages: Annotated[list[AnyMessage], DeltaChannel(_append_batches)]  # type: ignore[misc]


def test_the_callers_state_schema_may_put_messages_on_a_delta_channel(run: Run) -> None:
    model = ScriptedChatModel(["one", "two"])
    agent = create_agent(model, state_schema=DeltaMessages, checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "delta"}}

    run(agent, {"messages": ["hi"]}, config=thread)
    result = run(agent, {"messages": ["again"]}, config=thread)

    assert [m.content for m in result["messages"]] == ["hi", "one", "again", "two"]
    assert [m.content for m in agent.get_state(thread).values["messages"]] == [
        "hi",
        "one",
        "again",
        "two",
    ]
    assert type(agent.builder.channels["messages"]).__name__ == "DeltaChannel"


class CountsAsText(AgentState):
    thread_model_call_count: NotRequired[str]


def test_the_callers_declaration_wins_over_a_middlewares_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    limit = ModelCallLimitMiddleware(thread_limit=3)
    with caplog.at_level(logging.INFO, logger="graphagent"):
        agent = create_agent(
            ScriptedChatModel(["ok"]), middleware=[limit], state_schema=CountsAsText
        )

    hints = get_type_hints(agent.builder.state_schema, include_extras=True)
    assert hints["thread_model_call_count"] == NotRequired[str]
    assert (
        "State field 'thread_model_call_count': the state_schema's declaration str replaces "
        "int from 'ModelCallLimitMiddleware'."
    ) in caplog.text
    assert "thread_model_call_count" not in agent.get_input_jsonschema()["properties"]
