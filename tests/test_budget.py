"""BudgetMiddleware: token and time caps per run and per thread, and the account of spending."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from graphagent import create_agent
from graphagent.errors import MiddlewareError
from graphagent.middleware.budget import (
    BudgetAccount,
    BudgetExceededError,
    BudgetLine,
    BudgetMiddleware,
    Spend,
)
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run, run_agent
from tests.tools import add


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def priced(reply: str | AIMessage, input_tokens: int, output_tokens: int) -> AIMessage:
    """A scripted reply that reports the given usage."""
    message = AIMessage(reply) if isinstance(reply, str) else reply
    usage = UsageMetadata(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
    )
    return message.model_copy(update={"usage_metadata": usage})


def adding(input_tokens: int = 10, output_tokens: int = 5) -> AIMessage:
    return priced(calls(("add", {"a": 1, "b": 2})), input_tokens, output_tokens)


def thread(name: str) -> Any:
    return {"configurable": {"thread_id": name}}


def record(
    input_tokens: int, output_tokens: int, seconds: float, model_calls: int, cost: float = 0.0
) -> Any:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "tokens": input_tokens + output_tokens,
        "seconds": seconds,
        "model_calls": model_calls,
        "cost": cost,
    }


def test_a_run_token_cap_ends_the_run_before_the_next_model_call(run: Run) -> None:
    script = [calls(("add", {"a": 1, "b": 2})) for _ in range(8)]
    model = ScriptedChatModel([*script, "unreached"], usage=True)
    budget = BudgetMiddleware(run_max_tokens=30, clock=FakeClock())
    agent = create_agent(model, [add], middleware=[budget])

    result = run(agent, {"messages": ["please add 1 and 2, again and again"]})

    usages = [m.usage_metadata for m in result["messages"] if isinstance(m, AIMessage)][:-1]
    spent_in, spent_out = (
        sum(u[k] for u in usages if u) for k in ("input_tokens", "output_tokens")
    )
    assert spent_in + spent_out - usages[-1]["total_tokens"] < 30 <= spent_in + spent_out  # type: ignore[index]
    assert model.call_count == len(usages)
    spent = result["budget_spent"]
    assert spent["run"] == spent["thread"] == record(spent_in, spent_out, 0.0, len(usages))
    stop = result["messages"][-1]
    assert isinstance(stop, AIMessage)
    assert stop.content == (
        f"Stopped before the next model call. Budget exceeded: run tokens: "
        f"{spent_in + spent_out} spent, cap 30. This run: {spent_in + spent_out} tokens "
        f"({spent_in} input + {spent_out} output) in {len(usages)} model calls over 0 s. "
        f"This thread: {spent_in + spent_out} tokens ({spent_in} input + {spent_out} output) "
        f"in {len(usages)} model calls over 0 s."
    )
    assert isinstance(result["messages"][-2], ToolMessage)  # the started tool calls finished


def test_the_error_behavior_raises_with_the_account(how_call: str) -> None:
    model = ScriptedChatModel([adding(20, 5), adding(30, 5), "unreached"])
    budget = BudgetMiddleware(run_max_tokens=60, exit_behavior="error", clock=FakeClock())
    agent = create_agent(model, [add], middleware=[budget])

    with pytest.raises(BudgetExceededError) as caught:
        run_agent(agent, how_call, {"messages": ["go"]})

    spend = Spend(input_tokens=50, output_tokens=10, model_calls=2)
    assert caught.value.account == BudgetAccount(
        run=spend, thread=spend, lines=(BudgetLine("run", "tokens", 60, 60),)
    )
    assert str(caught.value) == (
        "Budget exceeded: run tokens: 60 spent, cap 60. This run: 60 tokens (50 input + 10 "
        "output) in 2 model calls over 0 s. This thread: 60 tokens (50 input + 10 output) in 2 "
        "model calls over 0 s."
    )
    assert model.call_count == 2


def test_thread_totals_survive_invocations_and_run_totals_reset(how_call: str) -> None:
    model = ScriptedChatModel([adding(10, 5), priced("3", 20, 5), priced("hi", 30, 5), "unused"])
    budget = BudgetMiddleware(thread_max_tokens=70, clock=FakeClock())
    agent = create_agent(model, [add], middleware=[budget], checkpointer=InMemorySaver())
    config = thread("t1")

    first = run_agent(agent, how_call, {"messages": ["add"]}, config=config)
    second = run_agent(agent, how_call, {"messages": ["hello"]}, config=config)
    third = run_agent(agent, how_call, {"messages": ["anyone?"]}, config=config)

    assert first["budget_spent"] == {
        "run": record(30, 10, 0.0, 2),
        "thread": record(30, 10, 0.0, 2),
    }
    assert second["budget_spent"] == {
        "run": record(30, 5, 0.0, 1),
        "thread": record(60, 15, 0.0, 3),
    }
    assert second["messages"][-1].content == "hi"
    assert model.call_count == 3  # the third run stopped before calling the model
    assert third["budget_spent"] == {"run": record(0, 0, 0.0, 0), "thread": record(60, 15, 0.0, 3)}
    assert third["messages"][-1].content.startswith(
        "Stopped before the next model call. Budget exceeded: thread tokens: 75 spent, cap 70. "
        "This run: 0 tokens (0 input + 0 output) in 0 model calls over 0 s."
    )
    other = run_agent(agent, how_call, {"messages": ["hi"]}, config=thread("t2"))
    assert other["messages"][-1].content == "unused"


def test_without_a_checkpointer_each_invocation_is_its_own_thread(how_call: str) -> None:
    model = ScriptedChatModel([priced("one", 40, 10), priced("two", 40, 10)])
    agent = create_agent(model, middleware=[BudgetMiddleware(thread_max_tokens=60)])

    for expected in ("one", "two"):
        result = run_agent(agent, how_call, {"messages": ["go"]})
        assert result["messages"][-1].content == expected
        assert result["budget_spent"]["thread"] == result["budget_spent"]["run"]


def test_a_run_time_cap_counts_model_and_tool_time_with_an_injected_clock(how_call: str) -> None:
    clock = FakeClock()

    @tool
    def slow_add(a: int, b: int) -> int:
        """Add two integers, slowly."""
        clock.now += 3.0
        return a + b

    def thinking(seconds: float, reply: AIMessage) -> Any:
        def answer(messages: Any) -> AIMessage:
            clock.now += seconds
            return reply

        return answer

    step = calls(("slow_add", {"a": 1, "b": 2}))
    model = ScriptedChatModel([thinking(0.5, step), thinking(0.25, step), "unreached"])
    budget = BudgetMiddleware(run_max_seconds=5, clock=clock)
    agent = create_agent(model, [slow_add], middleware=[budget])

    result = run_agent(agent, how_call, {"messages": ["go"]})

    assert model.call_count == 2
    assert result["budget_spent"]["run"] == record(0, 0, 6.75, 2)
    assert budget.account(result).exceeded == (BudgetLine("run", "seconds", 6.75, 5.0),)
    assert "run seconds: 6.75 s spent, cap 5 s." in result["messages"][-1].content


def test_thread_time_counts_only_time_spent_running(how_call: str) -> None:
    clock = FakeClock()

    def slow(messages: Any) -> str:
        clock.now += 4.0
        return "done"

    model = ScriptedChatModel([slow], repeat_last=True)
    budget = BudgetMiddleware(thread_max_seconds=10, exit_behavior="error", clock=clock)
    agent = create_agent(model, middleware=[budget], checkpointer=InMemorySaver())
    config = thread("t")

    spent = []
    for _ in range(3):
        spent.append(run_agent(agent, how_call, {"messages": ["go"]}, config=config))
        clock.now += 1000.0  # idle time between invocations is free
    with pytest.raises(BudgetExceededError, match=r"thread seconds: 12 s spent, cap 10 s"):
        run_agent(agent, how_call, {"messages": ["go"]}, config=config)

    assert [r["budget_spent"]["thread"]["seconds"] for r in spent] == [4.0, 8.0, 12.0]
    assert [r["budget_spent"]["run"]["seconds"] for r in spent] == [4.0, 4.0, 4.0]


def test_time_paused_in_an_interrupt_is_not_counted(how_call: str) -> None:
    clock = FakeClock()

    @tool
    def approve(action: str) -> str:
        """Ask a human to approve an action."""
        return f"approved: {interrupt(action)}"

    def thinking(seconds: float, reply: AIMessage) -> Any:
        def answer(messages: Any) -> AIMessage:
            clock.now += seconds
            return reply

        return answer

    asking = priced(calls(("approve", {"action": "deploy"})), 10, 5)
    model = ScriptedChatModel([thinking(1.0, asking), thinking(0.5, priced("ok", 20, 5))])
    budget = BudgetMiddleware(run_max_seconds=60, clock=clock)
    agent = create_agent(model, [approve], middleware=[budget], checkpointer=InMemorySaver())
    config = thread("t")

    paused = run_agent(agent, how_call, {"messages": ["deploy"]}, config=config)
    assert "__interrupt__" in paused
    clock.now += 3600.0  # a human takes an hour to answer
    result = run_agent(agent, how_call, Command(resume="yes"), config=config)

    assert result["messages"][-1].content == "ok"
    # The resumed run is the same run: its totals carry on, the paused hour is not charged.
    assert result["budget_spent"]["run"] == record(30, 10, 1.5, 2)


def test_the_account_can_be_read_after_a_run_within_budget(how_call: str) -> None:
    clock = FakeClock()
    model = ScriptedChatModel([priced("fine", 100, 20)])
    budget = BudgetMiddleware(
        run_max_tokens=1000, thread_max_tokens=5000, run_max_seconds=30, clock=clock
    )
    agent = create_agent(model, middleware=[budget])

    account = budget.account(run_agent(agent, how_call, {"messages": ["go"]}))

    assert account.exceeded == ()
    assert account.lines == (
        BudgetLine("run", "tokens", 120, 1000),
        BudgetLine("thread", "tokens", 120, 5000),
        BudgetLine("run", "seconds", 0.0, 30.0),
    )
    assert str(account) == (
        "Within budget: run tokens: 120 spent, cap 1,000; thread tokens: 120 spent, cap 5,000; "
        "run seconds: 0 s spent, cap 30 s. This run: 120 tokens (100 input + 20 output) in 1 "
        "model call over 0 s. This thread: 120 tokens (100 input + 20 output) in 1 model call "
        "over 0 s."
    )


def test_a_model_without_usage_counts_calls_but_no_tokens(how_call: str) -> None:
    model = ScriptedChatModel(["no usage reported"])
    agent = create_agent(model, middleware=[BudgetMiddleware(run_max_tokens=1, clock=FakeClock())])

    result = run_agent(agent, how_call, {"messages": ["go"]})

    assert result["messages"][-1].content == "no usage reported"
    assert result["budget_spent"]["run"] == record(0, 0, 0.0, 1)


def test_the_caller_cannot_pass_spending_in_but_can_reset_a_thread(how_call: str) -> None:
    model = ScriptedChatModel([priced("one", 40, 10), priced("two", 40, 10)])
    budget = BudgetMiddleware(thread_max_tokens=50, clock=FakeClock())
    agent = create_agent(model, middleware=[budget], checkpointer=InMemorySaver())
    config = thread("t")
    run_agent(agent, how_call, {"messages": ["go"]}, config=config)

    forged = {"messages": ["go"], "budget_spent": {"thread": record(0, 0, 0.0, 0)}}
    refused = run_agent(agent, how_call, forged, config=config)
    assert refused["messages"][-1].content.startswith("Stopped before the next model call.")

    agent.update_state(config, {"budget_spent": None})
    assert run_agent(agent, how_call, {"messages": ["go"]}, config=config)["budget_spent"] == {
        "run": record(40, 10, 0.0, 1),
        "thread": record(40, 10, 0.0, 1),
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, r"needs at least one cap; pass run_max_tokens, thread_max_tokens"),
        ({"run_max_tokens": -1}, r"\(run_max_tokens=-1\) must be a whole number of tokens"),
        ({"thread_max_tokens": -5}, r"\(thread_max_tokens=-5\) must be a whole number"),
        ({"run_max_tokens": 2.5}, r"\(run_max_tokens=2\.5\) must be a whole number"),
        ({"run_max_tokens": True}, r"\(run_max_tokens=True\) must be a whole number"),
        ({"run_max_seconds": -0.5}, r"\(run_max_seconds=-0\.5\) must be a finite number"),
        ({"thread_max_seconds": float("inf")}, r"\(thread_max_seconds=inf\) must be a finite"),
        ({"run_max_seconds": "10"}, r"\(run_max_seconds='10'\) must be a finite number"),
        ({"run_max_tokens": 9, "exit_behavior": "continue"}, r"'continue'\) is not supported"),
        ({"run_max_tokens": 9, "clock": 3.0}, r"clock=\.\.\.\) got 3\.0, which is not callable"),
    ],
)
def test_bad_options_fail_at_construction(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(MiddlewareError, match=message):
        BudgetMiddleware(**kwargs)


def test_a_zero_cap_allows_no_model_call(how_call: str) -> None:
    model = ScriptedChatModel(["unreached"])
    agent = create_agent(model, middleware=[BudgetMiddleware(run_max_seconds=0)])

    result = run_agent(agent, how_call, {"messages": ["go"]})

    assert model.call_count == 0
    assert result["messages"][-1].content.startswith(
        "Stopped before the next model call. Budget exceeded: run seconds: "
    )


def test_integer_seconds_are_accepted() -> None:
    budget = BudgetMiddleware(run_max_seconds=2, thread_max_seconds=3.5)
    assert budget.account({}).lines == (
        BudgetLine("run", "seconds", 0.0, 2.0),
        BudgetLine("thread", "seconds", 0.0, 3.5),
    )
