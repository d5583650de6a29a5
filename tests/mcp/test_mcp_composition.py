"""MCP tools are tools like any other: ``wrap_tool_call`` layers (retries, tool errors, human
review, call limits, PII, tracing) wrap their calls in sync and async runs, and an interrupt
asking the server's question passes through them all."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.types import Command
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from graphagent.mcp import MCPAdapter
from graphagent.mcp.errors import MCPElicitationAnswerError
from graphagent.middleware import (
    HumanInTheLoopMiddleware,
    PIIMiddleware,
    ToolCallLimitMiddleware,
    ToolErrorMiddleware,
    ToolRetryMiddleware,
    wrap_tool_call,
)
from graphagent.middleware.otel import OtelTracingMiddleware
from graphagent.middleware.tool_error import error_type_message
from tests.conftest import Run
from tests.mcp import servers
from tests.mcp.helpers import THREAD, calling, texts, tool_messages, with_memory

BOOK = ("book_table", {})
PARTY_OF_TWO = {"responses": {"party": {"action": "accept", "content": {"guests": 2}}}}
ASK = {"messages": [("user", "Book a table")]}


def tools_of(server: Any) -> list[Any]:
    return asyncio.run(MCPAdapter(server).list_tools())


def test_a_retry_sends_a_failing_call_to_the_server_again(run: Run) -> None:
    counts = servers.Counts()
    retry = ToolRetryMiddleware(max_retries=2, initial_delay=0, retry_on=(NotImplementedError,))
    agent = calling(tools_of(servers.directory(counts)), ("voicemail", {}), middleware=[retry])

    result = run(agent, {"messages": [("user", "Play my voicemail")]})

    [answer] = tool_messages(result)
    assert answer.status == "error"
    assert "failed after 3 attempts" in answer.text
    assert counts["voicemail"] == 3
    assert result["messages"][-1].content == "done"


def test_a_tool_error_layer_answers_for_a_call_that_raised(run: Run) -> None:
    counts = servers.Counts()
    agent = calling(
        tools_of(servers.directory(counts)),
        ("voicemail", {}),
        middleware=[ToolErrorMiddleware(error_type_message)],
    )

    result = run(agent, {"messages": [("user", "Play my voicemail")]})

    [answer] = tool_messages(result)
    assert answer.status == "error"
    assert "NotImplementedError" in answer.text
    assert result["messages"][-1].content == "done"


def test_a_question_passes_retry_and_error_layers_and_a_bad_answer_too(run: Run) -> None:
    counts = servers.Counts()
    layers = [
        ToolRetryMiddleware(max_retries=3, initial_delay=0),
        ToolErrorMiddleware(error_type_message),
    ]
    agent = with_memory(tools_of(servers.process_server(counts)), BOOK, middleware=layers)

    paused = run(agent, ASK, config=THREAD)
    assert paused["__interrupt__"][0].value["tool_name"] == "book_table"
    asked = counts["asked"]

    with pytest.raises(MCPElicitationAnswerError):
        run(agent, Command(resume={"responses": {}}), config=THREAD)
    assert counts["asked"] == asked + 1  # asked once again, not retried
    assert agent.get_state(THREAD).interrupts

    resumed = run(agent, Command(resume=PARTY_OF_TWO), config=THREAD)
    assert texts(tool_messages(resumed)[0]) == ["Booked a table for 2."]


@pytest.mark.parametrize("mode", ["batched", "per_call"])
def test_a_reviewed_call_asks_the_reviewer_then_the_server(run: Run, mode: str) -> None:
    counts = servers.Counts()
    review = HumanInTheLoopMiddleware(interrupt_on={"book_table": True}, interrupt_mode=mode)
    agent = with_memory(tools_of(servers.process_server(counts)), BOOK, middleware=[review])

    run(agent, ASK, config=THREAD)
    [approval] = agent.get_state(THREAD).interrupts
    assert approval.value.get("type") != "mcp_elicitation"  # the review comes first
    assert counts["asked"] == 0

    decision = {"type": "approve"}
    answer = {"decisions": [decision]} if mode == "batched" else {approval.id: decision}
    run(agent, Command(resume=answer), config=THREAD)
    [question] = agent.get_state(THREAD).interrupts
    assert question.value["type"] == "mcp_elicitation"

    resumed = run(agent, Command(resume=PARTY_OF_TWO), config=THREAD)
    assert texts(tool_messages(resumed)[0]) == ["Booked a table for 2."]
    assert counts["booked"] == 1


def test_a_rejected_call_never_reaches_the_server(run: Run) -> None:
    counts = servers.Counts()
    review = HumanInTheLoopMiddleware(interrupt_on={"book_table": True})
    agent = with_memory(tools_of(servers.process_server(counts)), BOOK, middleware=[review])
    run(agent, ASK, config=THREAD)

    result = run(agent, Command(resume={"decisions": [{"type": "reject"}]}), config=THREAD)

    assert tool_messages(result)[0].status == "error"
    assert counts["asked"] == 0


def test_a_call_over_the_limit_never_reaches_the_server(run: Run) -> None:
    counts = servers.Counts()
    limit = ToolCallLimitMiddleware(tool_name="email_of", run_limit=1)
    tools = tools_of(servers.directory(counts))
    agent = calling(
        tools, [("email_of", {"name": "Ann"}), ("email_of", {"name": "Bo"})], middleware=[limit]
    )

    result = run(agent, {"messages": [("user", "Mail Ann and Bo")]})

    answers = {m.status for m in tool_messages(result)}
    assert answers == {"success", "error"}
    assert counts["email_of"] == 1


def test_personal_data_in_a_result_is_redacted_before_the_model_sees_it(run: Run) -> None:
    pii = PIIMiddleware("email", strategy="redact", apply_to_tool_results=True)
    agent = calling(
        tools_of(servers.directory(servers.Counts())),
        ("email_of", {"name": "Ann"}),
        middleware=[pii],
    )

    result = run(agent, {"messages": [("user", "Ann's address?")]})

    [answer] = tool_messages(result)
    assert texts(answer) == ["Ann can be reached at [REDACTED_EMAIL]."]


def test_each_call_is_traced_with_its_outcome(run: Run) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing = OtelTracingMiddleware(provider)
    tools = tools_of(servers.calculator())
    agent = calling(
        tools, ("add", {"a": 1, "b": 2}), ("divide", {"a": 1, "b": 0}), middleware=[tracing]
    )

    run(agent, {"messages": [("user", "sums")]})

    spans = {s.name: s for s in exporter.get_finished_spans() if s.name.startswith("execute_tool")}
    assert spans["execute_tool add"].status.status_code is StatusCode.UNSET
    assert spans["execute_tool divide"].status.status_code is StatusCode.ERROR
    provider.shutdown()


def test_a_sync_only_layer_wraps_calls_of_async_runs_too(run: Run) -> None:
    seen: list[str] = []

    @wrap_tool_call
    def audit(request: Any, handler: Any) -> Any:
        result = handler(request)
        seen.append(f"{request.tool_call['name']} -> {result.text}")
        return result

    agent = calling(tools_of(servers.calculator()), ("add", {"a": 2, "b": 2}), middleware=[audit])

    run(agent, {"messages": [("user", "2 + 2")]})

    assert seen == ["add -> 4"]


def test_a_layer_sees_the_tool_message_with_blocks_and_artifact(run: Run) -> None:
    seen: list[ToolMessage] = []

    @wrap_tool_call
    def keep(request: Any, handler: Any) -> Any:
        result = handler(request)
        seen.append(result)
        return result

    agent = calling(tools_of(servers.gallery()), ("forecast", {"city": "Oslo"}), middleware=[keep])

    run(agent, {"messages": [("user", "Weather?")]})

    [message] = seen
    assert message.artifact == {"structured_content": {"city": "Oslo", "high": 21, "sky": "clear"}}
    assert message.content[0]["type"] == "text"  # type: ignore[index]
