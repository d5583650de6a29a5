"""The ceiling on model calls per run: a model or a hook that loops stops early, with an error
naming the loop; langgraph's recursion limit gives the same error."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.errors import GraphRecursionError
from langgraph.graph import START, MessagesState, StateGraph

from graphagent import RunawayRunError, create_agent
from graphagent.middleware import (
    ModelFallbackMiddleware,
    ModelRetryMiddleware,
    after_model,
    before_model,
)
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run, run_agent

pytestmark = pytest.mark.usefixtures("hook_mode")


@tool
def noop() -> str:
    """Do nothing."""
    return "done"


def looping_model() -> ScriptedChatModel:
    """A model that asks for the same tool on every turn, for ever."""
    return ScriptedChatModel([calls(("noop", {}))], repeat_last=True)


def test_a_model_that_keeps_calling_a_tool_stops_at_the_ceiling(run: Run) -> None:
    model = looping_model()
    agent = create_agent(model, [noop], max_model_calls=5)

    with pytest.raises(RunawayRunError) as caught:
        run(agent, {"messages": ["go"]})

    assert len(model.calls) == 5
    assert isinstance(caught.value, GraphRecursionError), "existing except clauses still catch it"
    assert str(caught.value) == (
        "The agent 'LangGraph' reached its ceiling of 5 model calls in one run (retries and "
        "fallbacks count): the model kept calling tools ('noop' 5 times). A run that needs more "
        "can raise the ceiling with create_agent(max_model_calls=...), or for one run with "
        'config={"configurable": {"max_model_calls": ...}}; None removes it.'
    )


def test_a_hook_that_always_jumps_back_is_named(run: Run) -> None:
    @after_model(can_jump_to=["model"], name="Loop")
    def loop(state: Any, runtime: Any) -> dict[str, Any]:
        return {"jump_to": "model"}

    model = ScriptedChatModel(["again"], repeat_last=True)
    agent = create_agent(model, middleware=[loop], max_model_calls=4, name="looper")

    with pytest.raises(RunawayRunError, match=r"'Loop\.after_model' jumped to 'model' 4 times"):
        run(agent, {"messages": ["go"]})
    assert len(model.calls) == 4


def test_the_default_ceiling_is_250(run: Run) -> None:
    model = looping_model()
    agent = create_agent(model, [noop])

    with pytest.raises(RunawayRunError, match="ceiling of 250 model calls"):
        run(agent, {"messages": ["go"]})
    assert agent.max_model_calls == 250
    assert len(model.calls) == 250


def test_one_run_sets_its_own_ceiling_and_a_run_under_it_is_untouched(run: Run) -> None:
    model = ScriptedChatModel([calls(("noop", {})), calls(("noop", {})), "finished"])
    agent = create_agent(model, [noop], max_model_calls=2)

    with pytest.raises(RunawayRunError, match="ceiling of 2 model calls"):
        run(agent, {"messages": ["go"]})

    model = ScriptedChatModel([calls(("noop", {})), calls(("noop", {})), "finished"])
    agent = create_agent(model, [noop], max_model_calls=2)
    result = run(agent, {"messages": ["go"]}, config={"configurable": {"max_model_calls": 3}})
    assert result["messages"][-1].content == "finished"


def test_each_run_counts_afresh(run: Run) -> None:
    model = ScriptedChatModel([calls(("noop", {})), "first"] * 3)
    agent = create_agent(model, [noop], max_model_calls=2)

    for _ in range(3):
        assert run(agent, {"messages": ["go"]})["messages"][-1].content == "first"


def _fail(messages: Any) -> AIMessage:
    raise ValueError("flaky")


def test_retries_count_and_never_retry_the_ceiling(run: Run) -> None:
    model = ScriptedChatModel([_fail], repeat_last=True)
    retry = ModelRetryMiddleware(max_retries=10, initial_delay=0, jitter=False)
    agent = create_agent(model, middleware=[retry], max_model_calls=3)

    with pytest.raises(RunawayRunError, match="ceiling of 3 model calls"):
        run(agent, {"messages": ["go"]})
    assert len(model.calls) == 3


def test_fallbacks_count(run: Run) -> None:
    primary = ScriptedChatModel([_fail], repeat_last=True)
    fallback = ScriptedChatModel([calls(("noop", {}))], repeat_last=True)
    agent = create_agent(
        primary, [noop], middleware=[ModelFallbackMiddleware(fallback)], max_model_calls=6
    )

    with pytest.raises(RunawayRunError, match="ceiling of 6 model calls"):
        run(agent, {"messages": ["go"]})
    assert len(primary.calls) + len(fallback.calls) == 6


def test_none_removes_the_ceiling_and_the_recursion_limit_names_the_loop(run: Run) -> None:
    model = looping_model()
    agent = create_agent(model, [noop], max_model_calls=None)

    with pytest.raises(RunawayRunError) as caught:
        run(agent, {"messages": ["go"]}, config={"recursion_limit": 12})

    assert str(caught.value).startswith(
        "The agent 'LangGraph' stopped at langgraph's recursion limit (Recursion limit of 12 "
        "reached without hitting a stop condition."
    )
    assert "after 6 model call(s): the model kept calling tools ('noop' 6 times)" in str(
        caught.value
    )
    assert 'raise the limit with config={"recursion_limit": ...}' in str(caught.value)
    assert isinstance(caught.value.__cause__, GraphRecursionError)


def test_a_hook_looping_without_model_calls_is_named_at_the_recursion_limit(run: Run) -> None:
    @before_model(can_jump_to=["model"], name="Spin")
    def spin(state: Any, runtime: Any) -> dict[str, Any]:
        return {"jump_to": "model"}

    model = ScriptedChatModel(["never"])
    agent = create_agent(model, middleware=[spin])

    with pytest.raises(RunawayRunError, match=r"'Spin\.before_model' jumped to 'model'"):
        run(agent, {"messages": ["go"]}, config={"recursion_limit": 10})
    assert model.calls == []


def test_a_parent_graph_gets_the_agents_error(how_call: str) -> None:
    agent = create_agent(looping_model(), [noop], max_model_calls=3, name="worker")
    parent = StateGraph(MessagesState)
    parent.add_node("worker", agent)
    parent.add_edge(START, "worker")
    graph = parent.compile()

    with pytest.raises(RunawayRunError, match="The agent 'worker' reached its ceiling of 3"):
        run_agent(graph, how_call, {"messages": ["go"]})


@pytest.mark.parametrize(
    ("value", "error", "words"),
    [
        (0, ValueError, "create_agent(max_model_calls=...) must be at least 1"),
        ("many", TypeError, "must be a whole number of model calls, or None"),
        (True, TypeError, "got bool"),
    ],
)
def test_a_ceiling_that_cannot_be_is_refused_when_the_agent_is_built(
    value: Any, error: type[Exception], words: str
) -> None:
    with pytest.raises(error) as caught:
        create_agent(looping_model(), [noop], max_model_calls=value)
    assert words in str(caught.value)


def test_a_runs_ceiling_that_cannot_be_is_refused_before_the_run(run: Run) -> None:
    model = looping_model()
    agent = create_agent(model, [noop])
    with pytest.raises(ValueError, match=r'config\["configurable"\]\["max_model_calls"\]'):
        run(agent, {"messages": ["go"]}, config={"configurable": {"max_model_calls": -1}})
    assert model.calls == []


def test_an_agent_behind_a_tool_counts_its_own_calls(how_call: str) -> None:
    inner_model = ScriptedChatModel(["inner answer"], repeat_last=True)
    inner = create_agent(inner_model, name="inner", max_model_calls=1)

    @tool
    def ask_inner(question: str) -> str:
        """Ask the inner agent."""
        return str(inner.invoke({"messages": [question]})["messages"][-1].content)

    outer_model = ScriptedChatModel(
        [calls(("ask_inner", {"question": "a"})), calls(("ask_inner", {"question": "b"})), "ok"]
    )
    outer = create_agent(outer_model, [ask_inner], max_model_calls=3)

    result = run_agent(outer, how_call, {"messages": ["go"]})
    assert result["messages"][-1].content == "ok"
    assert isinstance(result["messages"][-1], AIMessage)
    assert len(inner_model.calls) == 2, "each inner run has its own ceiling of 1"
