"""Cache health on every model call: what it read and wrote, what it could have read, and why it
read less; on the reply, on the OpenTelemetry span, and a warning when a thread's reads collapse."""

from __future__ import annotations

import itertools
import logging
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from graphagent import create_agent
from graphagent._run.cache_health import ENTRY_LIFETIME, CacheHealth
from graphagent.middleware import SummarizationMiddleware, dynamic_prompt
from graphagent.middleware.otel import OtelTracingMiddleware
from graphagent.requests import ModelRequest
from tests.anthropic_stub import AnthropicStub
from tests.caching.conftest import SYSTEM, gpt, lookup, sonnet, turn
from tests.openai_stub import CachingOpenAIStub, text

THREAD = {"configurable": {"thread_id": "trip"}}


def cache(message: AIMessage) -> dict[str, Any]:
    return message.response_metadata["prompt_cache"]  # type: ignore[no-any-return]


def replies(state: dict[str, Any]) -> list[AIMessage]:
    return [m for m in state["messages"] if isinstance(m, AIMessage)]


def test_each_reply_says_what_its_call_read_wrote_and_could_read(claude: AnthropicStub) -> None:
    claude.script(*turn(0), *turn(1))
    agent = create_agent(
        sonnet(claude), [lookup], system_prompt=SYSTEM, checkpointer=InMemorySaver()
    )
    agent.invoke({"messages": ["Paris?"]}, THREAD)
    state = agent.invoke({"messages": ["Rome?"]}, THREAD)
    first, *later = (cache(m) for m in replies(state))
    assert first["read"] == 0
    assert first["written"] == first["input"] > 2000
    for previous, use in itertools.pairwise([first, *later]):
        assert use["expected"] == previous["input"]
        assert use["read"] == previous["input"]
        assert "miss" not in use


def test_a_changed_system_prompt_is_named_with_the_middleware_that_changes_it(
    openai: CachingOpenAIStub,
) -> None:
    clock = itertools.count()

    @dynamic_prompt
    def stamped(request: ModelRequest) -> str:
        return f"It is {next(clock)} o'clock. {SYSTEM}"

    openai.script(*turn(0))
    agent = create_agent(gpt(openai), [lookup], middleware=[stamped])
    first, second = replies(agent.invoke({"messages": ["Paris?"]}, THREAD))
    assert cache(second)["read"] == 0
    assert cache(second)["expected"] == cache(first)["input"]
    assert cache(second)["miss"] == "the system prompt changed (changed by stamped)"


def test_a_summarized_thread_is_named_and_reads_its_cache_again_after(
    claude: AnthropicStub,
) -> None:
    summarizer = sonnet(claude)
    summary = SummarizationMiddleware(summarizer, trigger=("messages", 6), keep=("messages", 2))
    asked, answered = turn(1)
    summarized = text("They talked about Paris.")
    claude.script(*turn(0), asked, summarized, answered, text("Oslo is sunny too."))
    agent = create_agent(
        sonnet(claude),
        [lookup],
        system_prompt=SYSTEM,
        middleware=[summary],
        checkpointer=InMemorySaver(),
    )
    for city in ("Paris?", "Rome?", "Oslo?"):
        state = agent.invoke({"messages": [city]}, THREAD)
    misses = [cache(m).get("miss") for m in replies(state)]
    assert misses == [
        None,
        "earlier messages changed (changed by SummarizationMiddleware)",  # right after it
        None,
    ]


def test_the_span_of_a_model_call_carries_its_cache_use(openai: CachingOpenAIStub) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    openai.script(*turn(0))
    tracing = OtelTracingMiddleware(tracer_provider=provider)
    agent = create_agent(gpt(openai), [lookup], system_prompt=SYSTEM, middleware=[tracing])
    agent.invoke({"messages": ["Paris?"]}, THREAD)
    chats = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
    first, second = (dict(s.attributes or {}) for s in chats)
    assert first["gen_ai.usage.cache_read.input_tokens"] == 0
    assert "graphagent.prompt_cache.expected_tokens" not in first
    assert second["gen_ai.usage.cache_read.input_tokens"] > 2000
    assert second["graphagent.prompt_cache.expected_tokens"] == first["gen_ai.usage.input_tokens"]
    assert "graphagent.prompt_cache.miss" not in second


def test_a_collapse_of_the_reads_is_warned_once_per_thread(
    openai: CachingOpenAIStub, caplog: pytest.LogCaptureFixture
) -> None:
    turns = itertools.count()

    @dynamic_prompt
    def drifting(request: ModelRequest) -> str:
        # Stable for two turns, then different on every call.
        n = len([m for m in request.messages if isinstance(m, HumanMessage)])
        return SYSTEM if n <= 2 else f"Call {next(turns)}. {SYSTEM}"

    openai.script(*(reply for index in range(6) for reply in turn(index)))
    agent = create_agent(gpt(openai), [lookup], middleware=[drifting], checkpointer=InMemorySaver())
    with caplog.at_level(logging.WARNING, logger="graphagent"):
        for index in range(6):
            agent.invoke({"messages": [f"City {index}?"]}, THREAD)
    warnings = [r.getMessage() for r in caplog.records if "collapsed" in r.getMessage()]
    assert warnings == [
        "LangGraph: prompt-cache reads collapsed on thread trip: the last 3 model calls read 0% of "
        "their input from cache; the last one because the system prompt changed (changed by "
        "drifting)"
    ]


def reply(total: int, read: int) -> AIMessage:
    details = {"cache_read": read, "cache_creation": 0}
    usage = {"input_tokens": total, "output_tokens": 1, "total_tokens": total + 1}
    return AIMessage("ok", usage_metadata={**usage, "input_token_details": details})  # type: ignore[typeddict-item]


def test_an_unchanged_prefix_read_late_is_an_expired_entry() -> None:
    now = [0.0]
    health = CacheHealth("agent", clock=lambda: now[0])
    request = ModelRequest(model=None, messages=[HumanMessage("hi")])  # type: ignore[arg-type]
    health.observe(request, reply(5000, 0), lambda: "t")
    now[0] += ENTRY_LIFETIME + 60
    late = reply(5000, 0)
    health.observe(request, late, lambda: "t")
    assert cache(late)["miss"] == "the cache entry expired (360 s since the previous call)"
    soon = reply(5000, 0)
    health.observe(request, soon, lambda: "t")
    assert cache(soon)["miss"] == (
        "the provider did not find the prefix (evicted, or routed to another cache)"
    )
