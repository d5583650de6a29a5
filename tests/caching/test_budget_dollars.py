"""BudgetMiddleware in dollars: spend at each model's prices (cache reads and writes at theirs),
a call that could cross the cap not made, tool batches that declare a cost, the default table."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from graphagent import create_agent
from graphagent.errors import MiddlewareError
from graphagent.middleware.budget import (
    DEFAULT_PRICES,
    BudgetExceededError,
    BudgetMiddleware,
    ModelPrice,
)
from graphagent.middleware.otel import OtelTracingMiddleware
from graphagent.testing import ScriptedChatModel, calls
from tests.anthropic_stub import AnthropicStub
from tests.caching.conftest import SYSTEM, lookup, sonnet, turn
from tests.conftest import Run

PRICE = ModelPrice(input=2.0, output=10.0, cache_read=0.2, cache_write=2.5)


class Priced(ScriptedChatModel):
    """A scripted model with a name to price it by."""

    model_name: str = "scripted-1"


def test_a_thread_on_anthropic_is_charged_at_the_default_prices(claude: AnthropicStub) -> None:
    claude.script(*turn(0), *turn(1))
    budget = BudgetMiddleware(thread_max_cost=5.0)
    model = sonnet(claude, model="claude-sonnet-4-5-20250929")
    agent = create_agent(
        model, [lookup], system_prompt=SYSTEM, middleware=[budget], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": ["Paris?"]}, config)
    state = agent.invoke({"messages": ["Rome?"]}, config)
    price = DEFAULT_PRICES["claude-sonnet-4-5"]
    expected = 0.0
    for reply in (m for m in state["messages"] if isinstance(m, AIMessage)):
        usage = reply.usage_metadata or {}
        details = usage.get("input_token_details") or {}
        expected += price.cost(
            usage["input_tokens"],
            usage["output_tokens"],
            details.get("cache_read", 0),
            details.get("cache_creation", 0),
        )
    spent = budget.account(state).thread.cost
    assert spent == pytest.approx(expected)
    full_price = sum(
        price.cost((m.usage_metadata or {})["input_tokens"], 5)
        for m in state["messages"]
        if isinstance(m, AIMessage)
    )
    assert spent < 0.5 * full_price  # what the cache saved, over four calls


def test_a_call_that_could_cross_the_cap_is_not_made(run: Run) -> None:
    model = Priced(["never"], usage=True)
    budget = BudgetMiddleware(run_max_cost=0.01, prices={"scripted": PRICE})
    agent = create_agent(model, middleware=[budget])
    result = run(agent, {"messages": ["hi"]})
    assert model.call_count == 0
    assert result["messages"][-1].content.startswith(
        "Stopped before a model call that could cost up to $0.041"
    )


def test_the_error_behaviour_raises_before_the_call() -> None:
    model = Priced(["never"], usage=True)
    budget = BudgetMiddleware(run_max_cost=0.01, prices={"scripted": PRICE}, exit_behavior="error")
    with pytest.raises(BudgetExceededError, match=r"run cost: \$0.041"):
        create_agent(model, middleware=[budget]).invoke({"messages": ["hi"]})
    assert model.call_count == 0


def test_a_batch_of_tool_calls_that_would_cross_the_cap_is_not_run(run: Run) -> None:
    ran: list[str] = []

    @tool
    def paid(query: str) -> str:
        """Search the paid index."""
        ran.append(query)
        return "found"

    paid.metadata = {"cost": 0.25}  # dollars per call

    replies = [calls(("paid", {"query": str(i)}), ("paid", {"query": f"{i}b"})) for i in range(3)]
    model = Priced([*replies, "done"], usage=True)
    cheap = ModelPrice(input=0.0, output=0.0)
    budget = BudgetMiddleware(run_max_cost=1.2, prices={"scripted": cheap})
    result = run(create_agent(model, [paid], middleware=[budget]), {"messages": ["go"]})
    assert ran == ["0", "0b", "1", "1b"]
    answers = [m for m in result["messages"] if isinstance(m, ToolMessage)][-2:]
    assert all(a.content.startswith("Not run: the budget") for a in answers)
    assert result["messages"][-1].content.startswith(
        "Stopped before running tools that cost $0.5 (counted as spent):"
    )
    assert result["budget_spent"]["run"]["cost"] == pytest.approx(1.0)


def test_a_dollar_cap_needs_a_price_for_the_model() -> None:
    budget = BudgetMiddleware(run_max_cost=1.0)
    agent = create_agent(Priced(["x"]), middleware=[budget])
    with pytest.raises(MiddlewareError, match="no price for the model 'scripted-1'"):
        agent.invoke({"messages": ["hi"]})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"run_max_cost": -1}, "must be a finite number of dollars"),
        ({"run_max_cost": 1, "prices": {"m": 3.0}}, "must map model names to ModelPrice"),
    ],
)
def test_bad_dollar_settings_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(MiddlewareError, match=message):
        BudgetMiddleware(**kwargs)


def test_a_price_is_found_by_the_longest_name_the_model_name_contains() -> None:
    from graphagent.middleware._budget.prices import price_for

    assert price_for("gpt-4o-mini-2024-07-18", {}) is DEFAULT_PRICES["gpt-4o-mini"]
    assert (
        price_for("us.anthropic.claude-sonnet-4-5-v1:0", {}) is DEFAULT_PRICES["claude-sonnet-4-5"]
    )
    assert price_for("gpt-4o", {"gpt-4o": PRICE}) is PRICE
    assert price_for("llama-3", {}) is None
    with pytest.raises(MiddlewareError, match=r"ModelPrice\(input=-1"):
        ModelPrice(input=-1, output=1)


def test_each_chat_span_carries_what_its_call_cost(claude: AnthropicStub) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    claude.script(*turn(0))
    budget = BudgetMiddleware(run_max_cost=5.0)
    tracing = OtelTracingMiddleware(tracer_provider=provider)
    model = sonnet(claude, model="claude-sonnet-4-5")
    agent = create_agent(model, [lookup], system_prompt=SYSTEM, middleware=[tracing, budget])
    state = agent.invoke({"messages": ["Paris?"]})
    chats = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
    costs = [(s.attributes or {})["graphagent.usage.cost"] for s in chats]
    assert sum(costs) == pytest.approx(state["budget_spent"]["run"]["cost"])
    assert costs[1] < costs[0]  # the second call read the first one's prefix from cache
