"""Tools: functions, provider dicts, return_direct, injection, malformed calls, unpaired history."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, NotRequired

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import InjectedState, InjectedStore, ToolRuntime
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from graphagent import UnregisteredToolError, create_agent
from graphagent._core.history import UNANSWERED
from graphagent.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    OmitFromInput,
    PrivateStateAttr,
    after_agent,
    before_model,
    wrap_model_call,
    wrap_tool_call,
)
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run, run_agent
from tests.tools import add


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


WEB_SEARCH = {"type": "web_search_preview"}


def test_plain_functions_become_tools(run: Run) -> None:
    model = ScriptedChatModel([calls(("multiply", {"a": 6, "b": 7})), "42"])
    result = run(create_agent(model, [multiply]), {"messages": ["6*7"]})

    assert result["messages"][2].content == "42"
    assert model.calls[0].tool_names == ("multiply",)


def test_provider_tool_dicts_are_sent_not_executed(run: Run) -> None:
    model = ScriptedChatModel(["searched"])
    agent = create_agent(model, [WEB_SEARCH])

    run(agent, {"messages": ["news?"]})

    assert model.calls[0].tools == (WEB_SEARCH,)
    assert "tools" not in agent.get_graph().nodes


def test_override_tools_narrows_what_the_model_sees(run: Run) -> None:
    @wrap_model_call
    def only_add(request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        return handler(request.override(tools=[t for t in request.tools if t.name == "add"]))

    model = ScriptedChatModel(["ok"])
    run(create_agent(model, [add, multiply], middleware=[only_add]), {"messages": ["x"]})

    assert model.calls[0].tool_names == ("add",)


def test_return_direct_ends_the_run_after_the_tool(run: Run) -> None:
    @tool(return_direct=True)
    def final_answer(text: str) -> str:
        """Answer the user directly."""
        return text.upper()

    closed: list[str] = []

    @after_agent
    def close(state: Any, runtime: Any) -> None:
        closed.append(state["messages"][-1].content)

    model = ScriptedChatModel([calls(("final_answer", {"text": "done"}))])
    agent = create_agent(model, [final_answer, add], middleware=[close])

    result = run(agent, {"messages": ["go"]})

    assert isinstance(result["messages"][-1], ToolMessage)
    assert result["messages"][-1].content == "DONE"
    assert model.call_count == 1
    assert closed == ["DONE"]


def test_parallel_calls_keep_every_answer_where_a_tool_may_end_the_run(run: Run) -> None:
    # The router after the tools reads each parallel task's answer on its own; the answers must
    # not come out with one id there, or one would replace the other.
    @tool(return_direct=True)
    def final_answer(text: str) -> str:
        """Answer the user directly."""
        return text

    model = ScriptedChatModel([calls(("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})), "7"])
    agent = create_agent(model, [final_answer, add])

    result = run(agent, {"messages": ["go"]})

    answers = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
    assert sorted(answers) == ["3", "7"]
    assert len({m.id for m in result["messages"]}) == len(result["messages"])


def test_a_turn_that_also_ran_another_tool_goes_back_to_the_model(run: Run) -> None:
    @tool(return_direct=True)
    def final_answer(text: str) -> str:
        """Answer the user directly."""
        return text.upper()

    model = ScriptedChatModel(
        [calls(("final_answer", {"text": "early"}), ("add", {"a": 1, "b": 2})), "3, then done"]
    )
    agent = create_agent(model, [final_answer, add])

    result = run(agent, {"messages": ["go"]})

    assert model.call_count == 2, "the model reads the other tool's result, as in LangChain"
    assert result["messages"][-1].content == "3, then done"


def test_parallel_calls_of_return_direct_tools_alone_end_the_run(run: Run) -> None:
    @tool(return_direct=True)
    def final_answer(text: str) -> str:
        """Answer the user directly."""
        return text.upper()

    model = ScriptedChatModel(
        [calls(("final_answer", {"text": "one"}), ("final_answer", {"text": "two"}))]
    )
    agent = create_agent(model, [final_answer, add])

    result = run(agent, {"messages": ["go"]})

    assert model.call_count == 1
    assert [m.content for m in result["messages"][-2:]] == ["ONE", "TWO"]


@pytest.mark.parametrize(
    ("called", "ran", "model_calls"),
    [("final_answer", "add", 2), ("add", "final_answer", 1)],
    ids=["away from a return_direct tool", "to one"],
)
def test_return_direct_follows_the_tool_a_wrapper_ran(
    called: str, ran: str, model_calls: int, run: Run
) -> None:
    @tool(return_direct=True)
    def final_answer(a: int, b: int) -> str:
        """Answer the user directly."""
        return f"{a} and {b}"

    tools = {"add": add, "final_answer": final_answer}

    @wrap_tool_call
    def redirect(request: Any, handler: Callable[[Any], Any]) -> Any:
        call = {**request.tool_call, "name": ran}
        return handler(request.override(tool_call=call, tool=tools[ran]))

    model = ScriptedChatModel([calls((called, {"a": 1, "b": 2})), "done"])
    agent = create_agent(model, [final_answer, add], middleware=[redirect])

    result = run(agent, {"messages": ["go"]})

    assert [m.name for m in result["messages"] if isinstance(m, ToolMessage)] == [ran]
    assert model.call_count == model_calls


def test_state_store_and_runtime_are_injected(run: Run) -> None:
    @tool
    def inspect(
        key: str,
        state: Annotated[dict[str, Any], InjectedState],
        store: Annotated[BaseStore, InjectedStore()],
        runtime: ToolRuntime,
    ) -> str:
        """Inspect the run."""
        item = store.get(("prefs",), key)
        value = item.value["v"] if item else None
        return f"{len(state['messages'])} messages, {key}={value}, call {runtime.tool_call_id}"

    seen: list[Any] = []

    @before_model
    def look(state: Any, runtime: Any) -> None:
        seen.append(runtime.store.get(("prefs",), "color").value)

    store = InMemoryStore()
    store.put(("prefs",), "color", {"v": "blue"})
    model = ScriptedChatModel([calls(("inspect", {"key": "color"})), "ok"])
    result = run(
        create_agent(model, [inspect], middleware=[look], store=store), {"messages": ["x"]}
    )

    call_id = result["messages"][1].tool_calls[0]["id"]
    assert result["messages"][2].content == f"2 messages, color=blue, call {call_id}"
    assert seen == [{"v": "blue"}, {"v": "blue"}]


@dataclass
class Ctx:
    user: str


def test_runtime_context_reaches_hooks_and_tools(how_call: str) -> None:
    @tool
    def whoami(runtime: ToolRuntime[Ctx]) -> str:
        """Who is asking."""
        return runtime.context.user

    @wrap_model_call
    def prompt(request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        return handler(request.override(system_prompt=f"user={request.runtime.context.user}"))

    model = ScriptedChatModel([calls(("whoami", {})), "hi ada"])
    agent = create_agent(model, [whoami], middleware=[prompt], context_schema=Ctx)

    result = run_agent(agent, how_call, {"messages": ["x"]}, context=Ctx(user="ada"))

    assert result["messages"][2].content == "ada"
    assert model.calls[0].messages[0].content == "user=ada"


def test_malformed_tool_arguments_are_answered_and_the_model_tries_again(run: Run) -> None:
    broken = AIMessage(
        "",
        invalid_tool_calls=[
            {
                "name": "add",
                "args": '{"a": 1, "b":',
                "id": "bad1",
                "error": "truncated JSON",
                "type": "invalid_tool_call",
            }
        ],
    )
    model = ScriptedChatModel([broken, calls(("add", {"a": 1, "b": 2})), "3"])
    agent = create_agent(model, [add], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}

    result = run(agent, {"messages": ["1+2"]}, config=config)

    error = result["messages"][2]
    assert isinstance(error, ToolMessage)
    assert (error.tool_call_id, error.status) == ("bad1", "error")
    assert error.content.startswith(
        "Tool call add with id bad1 could not be executed - arguments were malformed or "
        "truncated (truncated JSON)."
    )
    assert list(model.calls[1].messages[1:3]) == [result["messages"][1], error]
    assert [type(m).__name__ for m in result["messages"][3:]] == [
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]
    assert result["messages"][-1].content == "3"


def test_unpaired_history_is_repaired_before_the_model_sees_it(run: Run) -> None:
    history = [
        HumanMessage("first"),
        AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 1}, "id": "lost"}]),
        HumanMessage("never mind"),
        ToolMessage("orphan", tool_call_id="nobody"),
    ]
    model = ScriptedChatModel(["fine"])
    result = run(create_agent(model, [add]), {"messages": history})

    sent = model.calls[0].messages
    assert [type(m).__name__ for m in sent] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "HumanMessage",
    ]
    assert (sent[2].tool_call_id, sent[2].content, sent[2].status) == ("lost", UNANSWERED, "error")
    assert len(result["messages"]) == 5, "the stored history itself is left as it was"


def test_an_unregistered_tool_without_a_tool_wrapper_is_an_error(how_call: str) -> None:
    @wrap_model_call
    def offer(request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        return handler(request.override(tools=[*request.tools, add]))

    agent = create_agent(ScriptedChatModel(["x"]), [multiply], middleware=[offer])
    with pytest.raises(
        UnregisteredToolError,
        match=r"Unknown tools: \['add'\]\. Registered tools: \['multiply'\]\. .* no wrap_tool_call",
    ):
        run_agent(agent, how_call, {"messages": ["x"]})


def test_an_unregistered_tool_executed_by_a_tool_wrapper(run: Run) -> None:
    @wrap_model_call
    def offer(request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        return handler(request.override(tools=[*request.tools, add]))

    @wrap_tool_call
    def execute(request: Any, handler: Callable[[Any], Any]) -> Any:
        if request.tool_call["name"] == "add":
            return handler(request.override(tool=add))
        return handler(request)

    model = ScriptedChatModel([calls(("add", {"a": 2, "b": 2})), "4"])
    result = run(create_agent(model, [multiply], middleware=[offer, execute]), {"messages": ["x"]})

    assert result["messages"][2].content == "4"


def test_an_unregistered_tool_no_wrapper_handles_gets_an_error_answer(how_call: str) -> None:
    # As in LangChain: the call is answered like a call to any unknown tool, and the run goes on.
    @wrap_model_call
    def offer(request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        return handler(request.override(tools=[*request.tools, add]))

    @wrap_tool_call
    def passthrough(request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request)

    model = ScriptedChatModel([calls(("add", {"a": 2, "b": 2})), "no add then"])
    agent = create_agent(model, [multiply], middleware=[offer, passthrough])

    result = run_agent(agent, how_call, {"messages": ["x"]})

    answer = result["messages"][2]
    assert (answer.name, answer.status) == ("add", "error")
    assert answer.content == "Error: add is not a valid tool, try one of [multiply]."
    assert result["messages"][-1].content == "no add then"


# Concurrent runs: a hook's decisions are its own per run.


def add_whenever_asked(messages: list[Any]) -> Any:
    """The model calls 'add' on every turn that does not follow a tool answer."""
    return "done" if isinstance(messages[-1], ToolMessage) else calls(("add", {"a": 2, "b": 2}))


def asked_for(state: Any) -> str:
    return str(state["messages"][0].content)


def test_concurrent_runs_do_not_see_each_others_offers() -> None:
    offered = asyncio.Event()

    @wrap_model_call
    async def offer(request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        if asked_for(request.state) != "offer add":
            return await handler(request)
        response = await handler(request.override(tools=[*request.tools, add]))
        offered.set()
        return response

    @wrap_tool_call
    async def execute_when_offered(request: Any, handler: Callable[[Any], Any]) -> Any:
        await asyncio.wait_for(offered.wait(), 60)  # the other run has offered 'add' by now
        if request.tool is None and asked_for(request.state) == "offer add":
            request = request.override(tool=add)
        return await handler(request)

    model = ScriptedChatModel([add_whenever_asked], repeat_last=True)
    agent = create_agent(model, [multiply], middleware=[offer, execute_when_offered])

    async def both() -> list[Any]:
        runs = (agent.ainvoke({"messages": [text]}) for text in ("offer add", "no offer"))
        return await asyncio.wait_for(asyncio.gather(*runs), 60)

    offering, plain = asyncio.run(both())

    assert offering["messages"][2].content == "4"
    assert plain["messages"][2].status == "error"
    assert "add is not a valid tool" in plain["messages"][2].content


def test_pending_tool_calls_are_checkpointed_without_a_copy_of_the_state(run: Run) -> None:
    saver = InMemorySaver()
    history = [("user", f"earlier message {n}") for n in range(50)]
    model = ScriptedChatModel([calls(("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})), "3, 7"])
    agent = create_agent(model, [add], checkpointer=saver)

    run(agent, {"messages": history}, config={"configurable": {"thread_id": "t"}})

    sends = [
        value
        for saved in saver.list({"configurable": {"thread_id": "t"}})
        for _, channel, value in saved.pending_writes or ()
        if channel == "__pregel_tasks"
    ]
    sent_calls = [send.arg for send in sends]
    assert [[call["args"] for call in arg] for arg in sent_calls] == [
        [{"a": 1, "b": 2}],
        [{"a": 3, "b": 4}],
    ]


def test_tools_and_tool_wrappers_see_every_state_field(run: Run) -> None:
    class Notes(AgentState):
        secret: Annotated[NotRequired[str], PrivateStateAttr]
        shown: Annotated[NotRequired[str], OmitFromInput]

    class Seed(AgentMiddleware):
        state_schema = Notes

        def before_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
            return {"secret": "s", "shown": "o"}

    seen: dict[str, list[str]] = {}

    @tool
    def look(state: Annotated[dict[str, Any], InjectedState], runtime: ToolRuntime) -> str:
        """Look at the state."""
        seen["injected"], seen["runtime"] = sorted(state), sorted(runtime.state)
        return "ok"

    @wrap_tool_call
    def watch(request: Any, handler: Callable[[Any], Any]) -> Any:
        seen["request"] = sorted(request.state)
        return handler(request)

    model = ScriptedChatModel([calls(("look", {})), "done"])
    run(create_agent(model, [look], middleware=[Seed(), watch]), {"messages": ["x"]})

    fields = ["messages", "secret", "shown"]
    assert seen == {"injected": fields, "runtime": fields, "request": fields}
