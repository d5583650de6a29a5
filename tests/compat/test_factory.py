"""LangChain 1.5's ``langchain.agents.factory``: the exception types ``create_agent``'s agents
raise for the same mistakes, so ``except`` clauses written for LangChain keep working; tools a
``wrap_model_call`` hook adds, run by a ``wrap_tool_call`` hook or answered with an error; and
malformed tool calls (``invalid_tool_calls``), which end the run and are answered on the next
model call, so a model that only ever sends them cannot loop; what every run starts from (the
recursion limit, the metadata); and the calls a model makes beside its structured answer."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import ToolNode, ToolRuntime
from langgraph.types import Command
from pydantic import BaseModel

from graphagent import HookReturnError, UnregisteredToolError, create_agent
from graphagent.middleware import (
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    wrap_model_call,
    wrap_tool_call,
)
from graphagent.structured_output import ToolStrategy
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


def test_duplicate_middleware_names_raise_assertion_error_with_langchains_words() -> None:
    @wrap_tool_call
    def audit(request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request)

    with pytest.raises(AssertionError, match=r"^Please remove duplicate middleware instances"):
        create_agent(ScriptedChatModel([]), middleware=[audit, audit])


@pytest.mark.parametrize(
    ("command", "field"),
    [(Command(goto="tools"), "goto"), (Command(resume="yes"), "resume")],
)
def test_a_command_routing_from_wrap_model_call_raises_not_implemented_error(
    how_call: str, command: Command[Any], field: str
) -> None:
    @wrap_model_call
    def rogue(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        return ExtendedModelResponse(handler(request), command)

    agent = create_agent(ScriptedChatModel(["x"]), middleware=[rogue])

    with pytest.raises(NotImplementedError) as caught:
        run_agent(agent, how_call, {"messages": ["q"]})

    assert isinstance(caught.value, HookReturnError)
    message = str(caught.value)
    assert message.startswith(f"Command {field} is not yet supported in wrap_model_call middleware")
    assert "'rogue.wrap_model_call'" in message
    assert "jump_to" in message


def test_an_unregistered_tool_without_a_tool_wrapper_raises_value_error(how_call: str) -> None:
    @wrap_model_call
    def offer(request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        return handler(request.override(tools=[*request.tools, add]))

    agent = create_agent(ScriptedChatModel(["x"]), [multiply], middleware=[offer])

    with pytest.raises(
        ValueError, match=r"^Middleware added tools that the agent doesn't know"
    ) as caught:
        run_agent(agent, how_call, {"messages": ["q"]})

    assert isinstance(caught.value, UnregisteredToolError)
    assert isinstance(caught.value, LookupError), "graphagent's earlier base is kept"
    # LangChain's lines, which its users match: the unknown and the registered tools.
    assert "Unknown tools: ['add']" in str(caught.value)
    assert "Registered tools: ['multiply']" in str(caught.value)


def offer_add(request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
    return handler(request.override(tools=[*request.tools, add]))


def test_a_tool_added_by_wrap_model_call_runs_when_wrap_tool_call_answers_it(
    how_call: str,
) -> None:
    @wrap_tool_call
    def execute(request: Any, handler: Callable[[Any], Any]) -> Any:
        if request.tool_call["name"] == "add":
            return handler(request.override(tool=add))
        return handler(request)

    model = ScriptedChatModel([calls(("add", {"a": 2, "b": 3})), "5"])
    agent = create_agent(model, [multiply], middleware=[wrap_model_call(offer_add), execute])

    result = run_agent(agent, how_call, {"messages": ["q"]})

    assert model.calls[0].tool_names == ("multiply", "add")
    answer = result["messages"][2]
    assert isinstance(answer, ToolMessage)
    assert (answer.content, answer.status) == ("5", "success")


@pytest.mark.parametrize("tools", [[], None], ids=["no tools", "tools=None"])
def test_an_agent_without_tools_runs_a_tool_its_middleware_adds_and_executes(
    how_call: str, tools: list[Any] | None
) -> None:
    # LangChain gives an agent a tools node when a middleware has wrap_tool_call, tools or not.
    @wrap_tool_call
    def execute(request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request.override(tool=add))

    model = ScriptedChatModel([calls(("add", {"a": 2, "b": 3})), "5"])
    agent = create_agent(model, tools, middleware=[wrap_model_call(offer_add), execute])

    result = run_agent(agent, how_call, {"messages": ["q"]})

    assert "tools" in agent.get_graph().nodes
    [answer] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert (answer.name, answer.content) == ("add", "5")
    assert result["messages"][-1].content == "5"


def test_a_call_to_an_added_tool_nobody_runs_gets_an_error_tool_message(how_call: str) -> None:
    @wrap_tool_call
    def passthrough(request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request)

    model = ScriptedChatModel([calls(("add", {"a": 2, "b": 3})), "I cannot add."])
    agent = create_agent(model, [multiply], middleware=[wrap_model_call(offer_add), passthrough])

    result = run_agent(agent, how_call, {"messages": ["q"]})

    answer = result["messages"][2]
    assert isinstance(answer, ToolMessage)
    assert (answer.name, answer.status) == ("add", "error")
    assert answer.content == "Error: add is not a valid tool, try one of [multiply]."
    assert result["messages"][-1].content == "I cannot add."


# Malformed tool calls

THREAD = {"configurable": {"thread_id": "t"}}


def malformed(call_id: str | None = "bad") -> AIMessage:
    call: Any = {
        "type": "invalid_tool_call",
        "name": "add",
        "args": '{"a": 1, "b":',
        "id": call_id,
        "error": "truncated JSON",
    }
    return AIMessage("", invalid_tool_calls=[call])


# graphagent answers them at once and asks the model again (tests/test_broken_model.py), a listed
# deliberate difference; answer_malformed_tool_calls=False gives LangChain's handling, pinned here.


def test_a_malformed_reply_ends_the_run_on_that_message(how_call: str) -> None:
    model = ScriptedChatModel([malformed()], repeat_last=True)
    agent = create_agent(model, [add], answer_malformed_tool_calls=False)

    result = run_agent(agent, how_call, {"messages": ["1+2?"]})

    assert model.call_count == 1, "a model sending only malformed calls must not loop"
    last = result["messages"][-1]
    assert isinstance(last, AIMessage)
    assert [c["id"] for c in last.invalid_tool_calls] == ["bad"]
    assert not any(isinstance(m, ToolMessage) for m in result["messages"])


def test_the_next_turn_answers_the_malformed_calls_first(how_call: str) -> None:
    model = ScriptedChatModel([malformed(), "Sorry, 3."])
    agent = create_agent(
        model, [add], checkpointer=InMemorySaver(), answer_malformed_tool_calls=False
    )

    run_agent(agent, how_call, {"messages": ["1+2?"]}, config=THREAD)
    result = run_agent(agent, how_call, {"messages": ["Well?"]}, config=THREAD)

    kinds = [type(m).__name__ for m in result["messages"]]
    assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "HumanMessage", "AIMessage"]
    answer = result["messages"][2]
    assert (answer.tool_call_id, answer.name, answer.status) == ("bad", "add", "error")
    assert answer.content.startswith(
        "Tool call add with id bad could not be executed - arguments were malformed or truncated"
    )
    sent = model.calls[1].messages
    assert [type(m) for m in sent] == [HumanMessage, AIMessage, ToolMessage, HumanMessage]
    assert result["messages"][-1].content == "Sorry, 3."


@pytest.mark.parametrize(("call_id", "answered"), [("", True), (None, False)])
def test_a_malformed_call_in_the_history_is_answered_when_it_has_an_id(
    how_call: str, call_id: str | None, answered: bool
) -> None:
    # An empty id is an id, which an answer can name; a call without one can get no answer.
    model = ScriptedChatModel(["Sorry."])
    history = [HumanMessage("1+2?"), malformed(call_id)]

    run_agent(create_agent(model, [add]), how_call, {"messages": history})

    sent = model.calls[0].messages
    assert isinstance(sent[-1], ToolMessage) is answered
    if answered:
        assert (sent[-1].tool_call_id, sent[-1].status) == ("", "error")


def test_a_tool_node_given_as_tools_is_refused_with_pythons_words() -> None:
    with pytest.raises(TypeError, match=r"^'ToolNode' object is not iterable: .*tools_by_name"):
        create_agent(ScriptedChatModel([]), tools=ToolNode([add]))  # type: ignore[arg-type]


def test_a_run_starts_from_langchains_recursion_limit_and_metadata(how_call: str) -> None:
    seen: list[dict[str, Any]] = []

    @tool
    def look(runtime: ToolRuntime) -> str:
        """Look at the run's config."""
        seen.append(dict(runtime.config))
        return "seen"

    model = ScriptedChatModel([calls(("look", {})), "done"] * 2)
    agent = create_agent(model, [look], name="scout")

    run_agent(agent, how_call, {"messages": ["go"]})
    run_agent(agent, how_call, {"messages": ["go"]}, config={"recursion_limit": 7})

    assert [config["recursion_limit"] for config in seen] == [9_999, 7]
    metadata = seen[0]["metadata"]
    assert (metadata["ls_integration"], metadata["lc_agent_name"]) == (
        "langchain_create_agent",
        "scout",
    )


def test_calls_beside_the_structured_answer_run_before_the_run_ends(how_call: str) -> None:
    class Sum(BaseModel):
        total: int

    reply = calls(("Sum", {"total": 3}), ("add", {"a": 1, "b": 2}), ("multiply", {"a": 2, "b": 2}))
    model = ScriptedChatModel([reply])
    agent = create_agent(model, [add, multiply], response_format=ToolStrategy(Sum))

    result = run_agent(agent, how_call, {"messages": ["1+2?"]})

    assert model.call_count == 1
    assert result["structured_response"] == Sum(total=3)
    answers = {m.name: m.content for m in result["messages"] if isinstance(m, ToolMessage)}
    assert answers == {"Sum": "Returning structured response: total=3", "add": "3", "multiply": "4"}


def test_an_unnamed_agent_is_named_as_langchains_graph() -> None:
    # An app filtering astream_events by name, or finding its root run in a trace, matches.
    agent = create_agent(ScriptedChatModel(["hi"]))

    async def root_names() -> set[str]:
        events = agent.astream_events({"messages": ["q"]}, version="v2")
        return {e["name"] for e in [e async for e in events] if not e["parent_ids"]}

    assert agent.name == "LangGraph"
    assert asyncio.run(root_names()) == {"LangGraph"}
    assert "lc_agent_name" not in (agent.config or {}).get("metadata", {})
