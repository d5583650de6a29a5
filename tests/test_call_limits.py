"""ModelCallLimitMiddleware and ToolCallLimitMiddleware: exit behaviours, run and thread counts,
parallel calls, several limiters in one agent, interrupts, subgraphs and construction errors."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

from graphagent import create_agent
from graphagent.errors import GraphAgentError, MiddlewareError
from graphagent.middleware import ModelRequest, ModelResponse, wrap_model_call
from graphagent.middleware.model_call_limit import (
    ModelCallLimitExceededError,
    ModelCallLimitMiddleware,
    ModelCallLimitState,
)
from graphagent.middleware.tool_call_limit import (
    ExitBehavior,
    ToolCallLimitExceededError,
    ToolCallLimitMiddleware,
    ToolCallLimitState,
)
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run, run_agent


def logging_tool(name: str, log: list[str]) -> BaseTool:
    """A tool called ``name`` that records each run in ``log``."""

    def run(q: str) -> str:
        log.append(f"{name}({q})")
        return f"{name}: {q}"

    return tool(name, description=f"The {name} tool.")(run)


def thread(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def tool_replies(messages: list[Any]) -> list[tuple[str, str]]:
    return [(m.status, m.content) for m in messages if isinstance(m, ToolMessage)]


# -- ModelCallLimitMiddleware ----------------------------------------------------------------------


def test_run_limit_end_stops_a_runaway_loop(run: Run) -> None:
    log: list[str] = []
    model = ScriptedChatModel([calls(("search", {"q": "again"}))], repeat_last=True)
    limiter = ModelCallLimitMiddleware(run_limit=3)
    agent = create_agent(model, [logging_tool("search", log)], middleware=[limiter])

    result = run(agent, {"messages": ["loop"]})

    assert model.call_count == 3
    assert len(log) == 3
    last = result["messages"][-1]
    assert isinstance(last, AIMessage)
    assert last.content == "Model call limits exceeded: run limit (3/3)"
    assert not last.tool_calls


def test_error_raises_with_the_counts_and_limits(how_call: str) -> None:
    model = ScriptedChatModel([calls(("search", {"q": "x"}))], repeat_last=True)
    limiter = ModelCallLimitMiddleware(run_limit=2, exit_behavior="error")
    agent = create_agent(model, [logging_tool("search", [])], middleware=[limiter])

    with pytest.raises(ModelCallLimitExceededError) as caught:
        run_agent(agent, how_call, {"messages": ["loop"]})

    error = caught.value
    assert (error.thread_count, error.run_count) == (2, 2)
    assert (error.thread_limit, error.run_limit) == (None, 2)
    assert str(error) == "Model call limits exceeded: run limit (2/2)"
    assert isinstance(error, GraphAgentError)
    assert model.call_count == 2


def test_zero_allows_no_model_call(how_call: str) -> None:
    model = ScriptedChatModel(["never"])
    agent = create_agent(model, middleware=[ModelCallLimitMiddleware(thread_limit=0)])

    result = run_agent(agent, how_call, {"messages": ["hi"]})

    assert model.call_count == 0
    assert result["messages"][-1].content == "Model call limits exceeded: thread limit (0/0)"


def test_the_run_count_restarts_with_each_invocation(how_call: str) -> None:
    model = ScriptedChatModel(
        [calls(("search", {"q": "a"})), "first", calls(("search", {"q": "b"})), "second"]
    )
    limiter = ModelCallLimitMiddleware(run_limit=2, exit_behavior="error")
    agent = create_agent(
        model, [logging_tool("search", [])], middleware=[limiter], checkpointer=InMemorySaver()
    )

    first = run_agent(agent, how_call, {"messages": ["one"]}, config=thread("t"))
    second = run_agent(agent, how_call, {"messages": ["two"]}, config=thread("t"))

    assert first["messages"][-1].content == "first"
    assert second["messages"][-1].content == "second"
    state = agent.get_state(thread("t")).values
    assert (state["thread_model_call_count"], state["run_model_call_count"]) == (4, 2)


def test_the_thread_count_persists_per_thread(how_call: str) -> None:
    model = ScriptedChatModel([calls(("search", {"q": "a"})), "first", "second", "fresh"])
    limiter = ModelCallLimitMiddleware(thread_limit=3)
    agent = create_agent(
        model, [logging_tool("search", [])], middleware=[limiter], checkpointer=InMemorySaver()
    )

    run_agent(agent, how_call, {"messages": ["one"]}, config=thread("a"))
    second = run_agent(agent, how_call, {"messages": ["two"]}, config=thread("a"))
    third = run_agent(agent, how_call, {"messages": ["three"]}, config=thread("a"))
    other = run_agent(agent, how_call, {"messages": ["hello"]}, config=thread("b"))

    assert second["messages"][-1].content == "second"
    assert third["messages"][-1].content == "Model call limits exceeded: thread limit (3/3)"
    assert other["messages"][-1].content == "fresh"
    assert model.call_count == 4


def test_the_counts_are_private(how_call: str) -> None:
    model = ScriptedChatModel(["hi"])
    agent = create_agent(model, middleware=[ModelCallLimitMiddleware(run_limit=5)])

    result = run_agent(agent, how_call, {"messages": ["hello"]})

    assert set(result) == {"messages"}
    assert "run_model_call_count" not in agent.get_input_jsonschema()["properties"]


def test_both_limits_named_when_both_are_reached(how_call: str) -> None:
    model = ScriptedChatModel([calls(("search", {"q": "x"}))], repeat_last=True)
    limiter = ModelCallLimitMiddleware(thread_limit=2, run_limit=2, exit_behavior="error")
    agent = create_agent(model, [logging_tool("search", [])], middleware=[limiter])

    with pytest.raises(ModelCallLimitExceededError) as caught:
        run_agent(agent, how_call, {"messages": ["loop"]})

    assert str(caught.value) == ("Model call limits exceeded: thread limit (2/2), run limit (2/2)")


def ask_user_tool() -> BaseTool:
    @tool
    def ask_user(question: str) -> str:
        """Ask the user a question."""
        return str(interrupt(question))

    return ask_user


def test_the_run_count_survives_interrupt_and_resume(how_call: str) -> None:
    model = ScriptedChatModel([calls(("ask_user", {"question": "ok?"}))], repeat_last=True)
    agent = create_agent(
        model,
        [ask_user_tool()],
        middleware=[ModelCallLimitMiddleware(run_limit=2)],
        checkpointer=InMemorySaver(),
    )

    assert_stops_after_two_resumes(agent, model, how_call)


def test_the_run_count_survives_interrupt_and_resume_in_a_subgraph(how_call: str) -> None:
    model = ScriptedChatModel([calls(("ask_user", {"question": "ok?"}))], repeat_last=True)
    inner = create_agent(
        model, [ask_user_tool()], middleware=[ModelCallLimitMiddleware(run_limit=2)]
    )
    parent = StateGraph(MessagesState)
    parent.add_node("agent", inner)
    parent.add_edge(START, "agent")

    assert_stops_after_two_resumes(parent.compile(checkpointer=InMemorySaver()), model, how_call)


def assert_stops_after_two_resumes(graph: Any, model: ScriptedChatModel, how: str) -> None:
    config = thread("hitl")
    paused = run_agent(graph, how, {"messages": ["go"]}, config=config)
    assert "__interrupt__" in paused
    paused = run_agent(graph, how, Command(resume="yes"), config=config)
    assert "__interrupt__" in paused

    done = run_agent(graph, how, Command(resume="yes"), config=config)

    assert "__interrupt__" not in done
    assert done["messages"][-1].content == "Model call limits exceeded: run limit (2/2)"
    assert model.call_count == 2


def test_a_subgraph_counts_each_call_as_a_new_run(how_call: str) -> None:
    model = ScriptedChatModel(["one", "two"])
    inner = create_agent(
        model, middleware=[ModelCallLimitMiddleware(run_limit=1, exit_behavior="error")]
    )
    parent = StateGraph(MessagesState)
    parent.add_node("first", inner)
    parent.add_node("second", inner)
    parent.add_edge(START, "first")
    parent.add_edge("first", "second")
    graph = parent.compile(checkpointer=InMemorySaver())

    result = run_agent(graph, how_call, {"messages": ["go"]}, config=thread("sub"))

    assert [m.content for m in result["messages"]] == ["go", "one", "two"]


def test_a_later_after_model_jump_does_not_skip_the_count(how_call: str) -> None:
    # The tool limiter ends the first run from its after_model hook, which runs before the model
    # limiter's place in the after_model chain: the model call must still be counted.
    model = ScriptedChatModel([calls(("search", {"q": "x"})), "answer", "never"])
    agent = create_agent(
        model,
        [logging_tool("search", [])],
        middleware=[
            ModelCallLimitMiddleware(thread_limit=2),
            ToolCallLimitMiddleware(run_limit=0, exit_behavior="end"),
        ],
        checkpointer=InMemorySaver(),
    )

    for text in ("one", "two"):
        run_agent(agent, how_call, {"messages": [text]}, config=thread("t"))
    third = run_agent(agent, how_call, {"messages": ["three"]}, config=thread("t"))

    assert third["messages"][-1].content == "Model call limits exceeded: thread limit (2/2)"
    assert model.call_count == 2


def test_a_retried_model_call_counts_once(how_call: str) -> None:
    @wrap_model_call
    def call_twice(
        request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        handler(request)
        return handler(request)

    model = ScriptedChatModel(["dropped", "kept", "never"])
    agent = create_agent(
        model,
        middleware=[call_twice, ModelCallLimitMiddleware(thread_limit=1)],
        checkpointer=InMemorySaver(),
    )

    first = run_agent(agent, how_call, {"messages": ["one"]}, config=thread("t"))
    second = run_agent(agent, how_call, {"messages": ["two"]}, config=thread("t"))

    assert first["messages"][-1].content == "kept"
    assert agent.get_state(thread("t")).values["thread_model_call_count"] == 1
    assert second["messages"][-1].content == "Model call limits exceeded: thread limit (1/1)"


def test_two_model_limiters_do_not_count_a_call_twice(how_call: str) -> None:
    model = ScriptedChatModel([calls(("search", {"q": "x"}))], repeat_last=True)
    run_cap = ModelCallLimitMiddleware(run_limit=3)
    thread_cap = ModelCallLimitMiddleware(thread_limit=10, exit_behavior="error")
    thread_cap.name = "ThreadCap"
    agent = create_agent(model, [logging_tool("search", [])], middleware=[run_cap, thread_cap])

    result = run_agent(agent, how_call, {"messages": ["loop"]})

    assert result["messages"][-1].content == "Model call limits exceeded: run limit (3/3)"
    assert model.call_count == 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {},
            "At least one limit must be specified (thread_limit or run_limit): pass "
            "thread_limit=..., run_limit=... or both to ModelCallLimitMiddleware.",
        ),
        (
            {"run_limit": -1},
            "ModelCallLimitMiddleware: run_limit must be 0 or more, got -1; pass the number of "
            "calls to allow (0 allows none), or None for no limit.",
        ),
        (
            {"thread_limit": 2.5},
            "ModelCallLimitMiddleware: thread_limit must be a whole number of calls or None, "
            "got 2.5 (float); pass e.g. thread_limit=5.",
        ),
        (
            {"run_limit": True},
            "ModelCallLimitMiddleware: run_limit must be a whole number of calls or None, "
            "got True (bool); pass e.g. run_limit=5.",
        ),
        (
            {"run_limit": 1, "exit_behavior": "continue"},
            "Invalid exit_behavior: continue. Must be 'end' or 'error'. ModelCallLimitMiddleware "
            "got exit_behavior='continue'; pass one of 'end', 'error'.",
        ),
    ],
)
def test_model_limit_construction_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(MiddlewareError) as caught:
        ModelCallLimitMiddleware(**kwargs)
    assert str(caught.value) == message


def test_model_limit_defaults() -> None:
    limiter = ModelCallLimitMiddleware(run_limit=4)
    assert (limiter.thread_limit, limiter.run_limit, limiter.exit_behavior) == (None, 4, "end")
    assert limiter.name == "ModelCallLimitMiddleware"
    assert limiter.state_schema is ModelCallLimitState
    assert ModelCallLimitMiddleware(run_limit=5, thread_limit=3).run_limit == 5


def test_model_limit_error_pickles() -> None:
    error = ModelCallLimitExceededError(3, 2, 3, None)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.thread_count, copy.run_count, copy.thread_limit, copy.run_limit) == (3, 2, 3, None)
    assert str(copy) == str(error) == "Model call limits exceeded: thread limit (3/3)"


# -- ToolCallLimitMiddleware -----------------------------------------------------------------------


def test_continue_blocks_only_the_excess_of_parallel_calls(run: Run) -> None:
    log: list[str] = []
    reply = calls(("search", {"q": "a"}), ("search", {"q": "b"}), ("search", {"q": "c"}))
    model = ScriptedChatModel([reply, "done"])
    agent = create_agent(
        model, [logging_tool("search", log)], middleware=[ToolCallLimitMiddleware(run_limit=2)]
    )

    result = run(agent, {"messages": ["go"]})

    assert sorted(log) == ["search(a)", "search(b)"]  # parallel: any order
    answers = {m.tool_call_id: (m.status, m.content) for m in result["messages"][2:5]}
    ids = [c["id"] for c in reply.tool_calls]
    assert answers == {
        ids[0]: ("success", "search: a"),
        ids[1]: ("success", "search: b"),
        ids[2]: (
            "error",
            "Tool call limit exceeded. Do not make additional tool calls.",
        ),
    }
    assert result["messages"][-1].content == "done"
    assert {m.tool_call_id for m in model.calls[1].messages[2:]} == set(ids)


def test_continue_lets_the_model_answer_when_every_call_is_refused(how_call: str) -> None:
    model = ScriptedChatModel([calls(("search", {"q": "a"})), "gave up"])
    agent = create_agent(
        model, [logging_tool("search", [])], middleware=[ToolCallLimitMiddleware(run_limit=0)]
    )

    result = run_agent(agent, how_call, {"messages": ["go"]})

    assert result["messages"][-1].content == "gave up"


def test_error_raises_with_counts_including_the_refused_calls(how_call: str) -> None:
    log: list[str] = []
    model = ScriptedChatModel(
        [calls(("search", {"q": "a"})), calls(("search", {"q": "b"}), ("search", {"q": "c"}))]
    )
    limiter = ToolCallLimitMiddleware(tool_name="search", run_limit=2, exit_behavior="error")
    agent = create_agent(model, [logging_tool("search", log)], middleware=[limiter])

    with pytest.raises(ToolCallLimitExceededError) as caught:
        run_agent(agent, how_call, {"messages": ["go"]})

    error = caught.value
    assert (error.thread_count, error.run_count) == (3, 3)
    assert (error.thread_limit, error.run_limit, error.tool_name) == (None, 2, "search")
    assert str(error) == "'search' tool call limit reached: run limit exceeded (3/2 calls)."
    assert log == ["search(a)"]  # nothing of the offending reply ran


def test_end_answers_every_pending_call_and_stops(run: Run) -> None:
    log: list[str] = []
    reply = calls(("search", {"q": "a"}), ("search", {"q": "b"}), ("calc", {"q": "1+1"}))
    model = ScriptedChatModel([reply, "never"])
    limiter = ToolCallLimitMiddleware(tool_name="search", run_limit=1, exit_behavior="end")
    tools = [logging_tool("search", log), logging_tool("calc", log)]
    agent = create_agent(model, tools, middleware=[limiter])

    result = run(agent, {"messages": ["go"]})

    assert log == []
    assert model.call_count == 1
    not_run = (
        "Execution stopped before this tool call could run because another tool call in the same "
        "batch exceeded the limit."
    )
    answers = {m.tool_call_id: (m.status, m.content) for m in result["messages"][2:5]}
    ids = [c["id"] for c in reply.tool_calls]
    assert answers == {
        ids[1]: (
            "error",
            "Tool call limit exceeded. Do not call 'search' again.",
        ),
        ids[0]: ("error", not_run),
        ids[2]: ("error", not_run),
    }
    assert result["messages"][-1].content == (
        "'search' tool call limit reached: run limit exceeded (2/1 calls)."
    )


def test_end_stops_a_runaway_tool_loop(run: Run) -> None:
    log: list[str] = []
    model = ScriptedChatModel([calls(("search", {"q": "more"}))], repeat_last=True)
    limiter = ToolCallLimitMiddleware(run_limit=3, exit_behavior="end")
    agent = create_agent(model, [logging_tool("search", log)], middleware=[limiter])

    result = run(agent, {"messages": ["go"]})

    assert len(log) == 3
    assert model.call_count == 4
    assert result["messages"][-1].content == (
        "Tool call limit reached: run limit exceeded (4/3 calls)."
    )


def test_continue_with_a_model_limit_stops_a_runaway_loop(run: Run) -> None:
    # "continue" hands every refusal back to the model; a model that never stops calling is
    # stopped by the model call limit.
    log: list[str] = []
    model = ScriptedChatModel([calls(("search", {"q": "more"}))], repeat_last=True)
    middleware = [
        ModelCallLimitMiddleware(run_limit=4),
        ToolCallLimitMiddleware(tool_name="search", run_limit=2),
    ]
    agent = create_agent(model, [logging_tool("search", log)], middleware=middleware)

    result = run(agent, {"messages": ["go"]})

    assert len(log) == 2
    assert [status for status, _ in tool_replies(result["messages"])] == [
        "success",
        "success",
        "error",
        "error",
    ]
    assert result["messages"][-1].content == "Model call limits exceeded: run limit (4/4)"


def test_a_per_tool_limit_leaves_other_tools_alone(how_call: str) -> None:
    log: list[str] = []
    model = ScriptedChatModel(
        [
            calls(("search", {"q": "a"}), ("calc", {"q": "1"}), ("search", {"q": "b"})),
            calls(("calc", {"q": "2"}), ("search", {"q": "c"})),
            "done",
        ]
    )
    limiter = ToolCallLimitMiddleware(tool_name="search", run_limit=1)
    tools = [logging_tool("search", log), logging_tool("calc", log)]
    agent = create_agent(model, tools, middleware=[limiter])

    result = run_agent(agent, how_call, {"messages": ["go"]})

    assert sorted(log) == ["calc(1)", "calc(2)", "search(a)"]
    refusal = "Tool call limit exceeded. Do not call 'search' again."
    assert [reply for reply in tool_replies(result["messages"]) if reply[0] == "error"] == [
        ("error", refusal),
        ("error", refusal),
    ]


def test_a_global_limit_counts_every_tool(how_call: str) -> None:
    log: list[str] = []
    model = ScriptedChatModel(
        [calls(("search", {"q": "a"}), ("calc", {"q": "1"})), calls(("calc", {"q": "2"})), "done"]
    )
    tools = [logging_tool("search", log), logging_tool("calc", log)]
    agent = create_agent(model, tools, middleware=[ToolCallLimitMiddleware(run_limit=2)])

    run_agent(agent, how_call, {"messages": ["go"]})

    assert sorted(log) == ["calc(1)", "search(a)"]


def test_two_limiters_for_different_tools_in_one_agent(how_call: str) -> None:
    log: list[str] = []
    model = ScriptedChatModel(
        [
            calls(("search", {"q": "a"}), ("calc", {"q": "1"}), ("calc", {"q": "2"})),
            calls(("search", {"q": "b"}), ("calc", {"q": "3"})),
            "done",
        ]
    )
    search_cap = ToolCallLimitMiddleware(tool_name="search", run_limit=1)
    calc_cap = ToolCallLimitMiddleware(tool_name="calc", thread_limit=2)
    tools = [logging_tool("search", log), logging_tool("calc", log)]
    agent = create_agent(
        model, tools, middleware=[search_cap, calc_cap], checkpointer=InMemorySaver()
    )

    result = run_agent(agent, how_call, {"messages": ["go"]}, config=thread("t"))

    assert (search_cap.name, calc_cap.name) == (
        "ToolCallLimitMiddleware[search]",
        "ToolCallLimitMiddleware[calc]",
    )
    assert sorted(log) == ["calc(1)", "calc(2)", "search(a)"]
    assert len([r for r in tool_replies(result["messages"]) if r[0] == "error"]) == 2
    state = agent.get_state(thread("t")).values
    assert state["thread_tool_call_count"] == {"search": 1, "calc": 2}
    assert state["run_tool_call_count"] == {"search": 2, "calc": 3}


def test_limiters_of_one_tool_share_its_count_as_in_langchain(how_call: str) -> None:
    # Both write the "search" key, each adding the calls it lets through, so a call counts
    # once per limiter; one limiter with both limits counts each call once.
    log: list[str] = []
    model = ScriptedChatModel(
        [calls(("search", {"q": "a"})), calls(("search", {"q": "b"})), "done"]
    )
    strict = ToolCallLimitMiddleware(tool_name="search", thread_limit=5, exit_behavior="error")
    strict.name = "SearchThreadCap"
    loose = ToolCallLimitMiddleware(tool_name="search", run_limit=2)
    agent = create_agent(
        model,
        [logging_tool("search", log)],
        middleware=[strict, loose],
        checkpointer=InMemorySaver(),
    )

    result = run_agent(agent, how_call, {"messages": ["go"]}, config=thread("t"))

    assert log == ["search(a)"]
    assert result["messages"][-1].content == "done"
    state = agent.get_state(thread("t")).values
    assert state["thread_tool_call_count"] == {"search": 2}


def test_tool_run_count_restarts_and_thread_count_persists(how_call: str) -> None:
    log: list[str] = []
    model = ScriptedChatModel(
        [
            calls(("search", {"q": "1"})),
            "first",
            calls(("search", {"q": "2"})),
            "second",
            calls(("search", {"q": "3"})),
            calls(("search", {"q": "other"})),
            "other",
        ]
    )
    limiter = ToolCallLimitMiddleware(thread_limit=2, run_limit=1, exit_behavior="end")
    agent = create_agent(
        model, [logging_tool("search", log)], middleware=[limiter], checkpointer=InMemorySaver()
    )

    for text in ("one", "two"):
        run_agent(agent, how_call, {"messages": [text]}, config=thread("a"))
    third = run_agent(agent, how_call, {"messages": ["three"]}, config=thread("a"))
    other = run_agent(agent, how_call, {"messages": ["hello"]}, config=thread("b"))

    assert log == ["search(1)", "search(2)", "search(other)"]
    assert third["messages"][-1].content == (
        "Tool call limit reached: thread limit exceeded (3/2 calls)."
    )
    assert other["messages"][-1].content == "other"
    state = agent.get_state(thread("a")).values
    assert state["thread_tool_call_count"] == {"__all__": 2}
    assert state["run_tool_call_count"] == {"__all__": 1}


def test_tool_limit_error_carries_the_thread_count(how_call: str) -> None:
    model = ScriptedChatModel(
        [calls(("search", {"q": "1"})), "first", calls(("search", {"q": "2"}))]
    )
    limiter = ToolCallLimitMiddleware(thread_limit=1, exit_behavior="error")
    agent = create_agent(
        model, [logging_tool("search", [])], middleware=[limiter], checkpointer=InMemorySaver()
    )
    run_agent(agent, how_call, {"messages": ["one"]}, config=thread("a"))

    with pytest.raises(ToolCallLimitExceededError) as caught:
        run_agent(agent, how_call, {"messages": ["two"]}, config=thread("a"))

    error = caught.value
    assert (error.thread_count, error.run_count, error.tool_name) == (2, 1, None)
    assert str(error) == "Tool call limit reached: thread limit exceeded (2/1 calls)."


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"tool_name": "search"},
            "At least one limit must be specified (thread_limit or run_limit): pass "
            "thread_limit=..., run_limit=... or both to ToolCallLimitMiddleware.",
        ),
        (
            {"thread_limit": 2, "run_limit": 3},
            "run_limit (3) cannot exceed thread_limit (2): ToolCallLimitMiddleware could never "
            "reach it; lower run_limit or raise thread_limit.",
        ),
        (
            {"thread_limit": -2},
            "ToolCallLimitMiddleware: thread_limit must be 0 or more, got -2; pass the number "
            "of calls to allow (0 allows none), or None for no limit.",
        ),
        (
            {"run_limit": 1, "exit_behavior": "stop"},
            "Invalid exit_behavior: 'stop'. Must be one of ('continue', 'error', 'end'). "
            "ToolCallLimitMiddleware got exit_behavior='stop'; pass one of 'continue', 'error', "
            "'end'.",
        ),
        (
            {"run_limit": 1, "tool_name": ""},
            "ToolCallLimitMiddleware: tool_name must be a tool's name, or None to limit all "
            "tools, got ''.",
        ),
    ],
)
def test_tool_limit_construction_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(MiddlewareError) as caught:
        ToolCallLimitMiddleware(**kwargs)
    assert str(caught.value) == message


def test_tool_limit_defaults_and_names() -> None:
    limiter = ToolCallLimitMiddleware(run_limit=3)
    assert (limiter.tool_name, limiter.thread_limit, limiter.run_limit) == (None, None, 3)
    assert limiter.exit_behavior == "continue"
    assert limiter.name == "ToolCallLimitMiddleware"
    assert limiter.state_schema is ToolCallLimitState
    limiter.name = "Renamed"
    assert limiter.name == "Renamed"
    behaviours: tuple[ExitBehavior, ...] = ("continue", "error", "end")
    for behaviour in behaviours:
        assert ToolCallLimitMiddleware(run_limit=0, exit_behavior=behaviour).run_limit == 0


def test_tool_limit_error_pickles() -> None:
    error = ToolCallLimitExceededError(4, 4, None, 3, "search")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.thread_count, copy.run_count, copy.run_limit, copy.tool_name) == (
        4,
        4,
        3,
        "search",
    )
    assert str(copy) == str(error)
