"""OtelTracingMiddleware: span tree, GenAI attributes, every path out of a run, context
propagation across threads, tasks and nested agents, content opt-in, the no-op path."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import SpanKind, StatusCode

from graphagent import MiddlewareError, RateLimits, as_tool, create_agent
from graphagent.middleware import (
    ToolErrorMiddleware,
    otel as otel_module,
    wrap_model_call,
    wrap_tool_call,
)
from graphagent.middleware.model_retry import ModelRetryMiddleware
from graphagent.middleware.otel import OtelTracingMiddleware
from graphagent.middleware.tool_error import error_type_message
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import ENTRY_POINTS, run_agent
from tests.tools import add, ask, boom


class OpenSpans(SpanProcessor):
    """Remembers the spans started and not yet ended."""

    def __init__(self) -> None:
        self.ids: set[int] = set()
        self.lock = threading.Lock()

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        with self.lock:
            self.ids.add(span.context.span_id)

    def on_end(self, span: ReadableSpan) -> None:
        with self.lock:
            self.ids.discard(span.context.span_id)


@dataclass
class Tracing:
    provider: TracerProvider
    exporter: InMemorySpanExporter = field(default_factory=InMemorySpanExporter)
    open: OpenSpans = field(default_factory=OpenSpans)

    def __post_init__(self) -> None:
        self.provider.add_span_processor(self.open)
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        (span,) = self.named(name)
        return span

    def tree(self) -> list[str]:
        """Span names indented under their parents, children in start order."""
        spans = self.spans()
        ids = {s.context.span_id for s in spans}
        children: dict[int | None, list[ReadableSpan]] = {}
        for span in spans:
            parent = span.parent.span_id if span.parent and span.parent.span_id in ids else None
            children.setdefault(parent, []).append(span)
        lines: list[str] = []

        def walk(parent: int | None, depth: int) -> None:
            for span in sorted(children.get(parent, []), key=lambda s: s.start_time or 0):
                lines.append("  " * depth + span.name)
                walk(span.context.span_id, depth + 1)

        walk(None, 0)
        return lines


@pytest.fixture
def tracing() -> Iterator[Tracing]:
    traced = Tracing(TracerProvider())
    yield traced
    assert not traced.open.ids, "every span ends"
    traced.provider.shutdown()


@pytest.fixture(autouse=True)
def _context_is_left_clean(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """No run leaves a span current behind it, nor fails to detach its context."""
    with caplog.at_level(logging.ERROR, logger="opentelemetry.context"):
        yield
    assert not caplog.get_records("call"), caplog.text
    assert trace.get_current_span() is trace.INVALID_SPAN


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def with_usage(message: AIMessage, inputs: int, outputs: int, **metadata: Any) -> AIMessage:
    """``message`` as a provider returns it: token usage and response metadata filled in."""
    total = inputs + outputs
    message.usage_metadata = {
        "input_tokens": inputs,
        "output_tokens": outputs,
        "total_tokens": total,
    }
    message.response_metadata = {"model_name": "scripted-1", **metadata}
    return message


def two_rounds(tracing: Tracing, **kwargs: Any) -> Any:
    model = ScriptedChatModel(
        [
            with_usage(calls(("add", {"a": 1, "b": 2})), 10, 3, finish_reason="tool_calls"),
            with_usage(calls(("add", {"a": 3, "b": 4})), 20, 4, finish_reason="tool_calls"),
            with_usage(AIMessage("3 and 7"), 30, 5, finish_reason="stop"),
        ]
    )
    middleware = OtelTracingMiddleware(tracing.provider, **kwargs)
    return create_agent(model, [add], middleware=[middleware], name="calculator")


TWO_ROUNDS_TREE = [
    "invoke_agent calculator",
    "  chat ScriptedChatModel",
    "  execute_tool add",
    "  chat ScriptedChatModel",
    "  execute_tool add",
    "  chat ScriptedChatModel",
]


# -- shape and attributes -----------------------------------------------------------------------


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_a_two_round_tool_run_is_one_tree_under_the_run_span(how: str, tracing: Tracing) -> None:
    result = run_agent(two_rounds(tracing), how, {"messages": ["1+2, 3+4?"]})

    assert result["messages"][-1].content == "3 and 7"
    assert tracing.tree() == TWO_ROUNDS_TREE
    assert len({s.context.trace_id for s in tracing.spans()}) == 1


def test_spans_carry_the_genai_attributes(tracing: Tracing) -> None:
    result = two_rounds(tracing).invoke({"messages": ["1+2, 3+4?"]})

    root = tracing.one("invoke_agent calculator")
    assert root.kind is SpanKind.INTERNAL
    assert root.status.status_code is StatusCode.UNSET
    assert attrs(root) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "calculator",
        "gen_ai.usage.input_tokens": 60,
        "gen_ai.usage.output_tokens": 12,
    }
    first, _, last = tracing.named("chat ScriptedChatModel")
    assert first.kind is SpanKind.CLIENT
    assert attrs(first) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "ScriptedChatModel",
        "gen_ai.provider.name": "scriptedchatmodel",
        "gen_ai.response.model": "scripted-1",
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.usage.input_tokens": 10,
        "gen_ai.usage.output_tokens": 3,
    }
    assert attrs(last)["gen_ai.response.finish_reasons"] == ("stop",)
    tool_span = tracing.named("execute_tool add")[0]
    assert tool_span.kind is SpanKind.INTERNAL
    assert attrs(tool_span) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.call.id": result["messages"][1].tool_calls[0]["id"],
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Add two integers.",
    }


def test_the_tool_call_id_is_the_models_and_the_thread_is_the_conversation(
    tracing: Tracing,
) -> None:
    model = ScriptedChatModel([calls({"name": "add", "args": {"a": 1, "b": 1}, "id": "c-7"}), "2"])
    middleware = OtelTracingMiddleware(tracing.provider)
    agent = create_agent(model, [add], middleware=[middleware], checkpointer=InMemorySaver())

    agent.invoke({"messages": ["1+1"]}, {"configurable": {"thread_id": "thread-42"}})

    assert attrs(tracing.one("execute_tool add"))["gen_ai.tool.call.id"] == "c-7"
    for span in tracing.named("chat ScriptedChatModel"):
        assert attrs(span)["gen_ai.conversation.id"] == "thread-42"


def test_the_model_name_comes_from_the_model(tracing: Tracing) -> None:
    class NamedModel(ScriptedChatModel):
        model_name: str = "gpt-test-1"

    agent = create_agent(
        NamedModel(["hi"]), middleware=[OtelTracingMiddleware(tracing.provider)], name="named"
    )
    agent.invoke({"messages": ["x"]})

    assert tracing.tree() == ["invoke_agent named", "  chat gpt-test-1"]
    assert attrs(tracing.one("chat gpt-test-1"))["gen_ai.request.model"] == "gpt-test-1"


def test_an_unnamed_agent_gets_the_bare_span_name(tracing: Tracing) -> None:
    agent = create_agent(
        ScriptedChatModel(["hi"]), middleware=[OtelTracingMiddleware(tracing.provider)]
    )
    agent.invoke({"messages": ["x"]})

    assert tracing.tree() == ["invoke_agent", "  chat ScriptedChatModel"]
    assert "gen_ai.agent.name" not in attrs(tracing.one("invoke_agent"))


# -- every path out of a run --------------------------------------------------------------------


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_a_tool_failure_marks_the_tool_and_the_run_as_errors(how: str, tracing: Tracing) -> None:
    model = ScriptedChatModel([calls(("boom", {}))])
    agent = create_agent(model, [boom], middleware=[OtelTracingMiddleware(tracing.provider)])

    with pytest.raises(ConnectionError):
        run_agent(agent, how, {"messages": ["go"]})

    assert tracing.tree() == ["invoke_agent", "  chat ScriptedChatModel", "  execute_tool boom"]
    for name in ("invoke_agent", "execute_tool boom"):
        span = tracing.one(name)
        assert span.status.status_code is StatusCode.ERROR, name
        assert attrs(span)["error.type"] == "ConnectionError"
        assert [e.name for e in span.events] == ["exception"]
    assert tracing.one("chat ScriptedChatModel").status.status_code is StatusCode.UNSET


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
def test_a_model_failure_names_the_exception_class_with_its_module(
    how: str, tracing: Tracing
) -> None:
    agent = create_agent(
        ScriptedChatModel([]), middleware=[OtelTracingMiddleware(tracing.provider)]
    )

    with pytest.raises(Exception, match="scripted"):
        run_agent(agent, how, {"messages": ["go"]})

    for name in ("invoke_agent", "chat ScriptedChatModel"):
        span = tracing.one(name)
        assert span.status.status_code is StatusCode.ERROR
        assert attrs(span)["error.type"] == "graphagent.testing.ScriptExhaustedError"


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_a_run_that_fails_before_any_reply_still_has_the_agent_name(
    how: str, tracing: Tracing
) -> None:
    agent = create_agent(
        ScriptedChatModel([]), middleware=[OtelTracingMiddleware(tracing.provider)], name="helper"
    )

    with pytest.raises(Exception, match="scripted"):
        run_agent(agent, how, {"messages": ["go"]})

    assert tracing.tree() == ["invoke_agent helper", "  chat ScriptedChatModel"]
    assert attrs(tracing.one("invoke_agent helper"))["gen_ai.agent.name"] == "helper"


def test_a_tool_error_answered_by_an_inner_wrapper_still_marks_the_tool_span(
    tracing: Tracing,
) -> None:
    model = ScriptedChatModel([calls(("boom", {})), "the service is down"])
    middleware = [
        ToolErrorMiddleware(on_error=error_type_message),
        OtelTracingMiddleware(tracing.provider),
    ]
    agent = create_agent(model, [boom], middleware=middleware)

    agent.invoke({"messages": ["go"]})

    tool_span = tracing.one("execute_tool boom")
    assert tool_span.status.status_code is StatusCode.ERROR
    assert attrs(tool_span)["error.type"] == "tool_error"
    assert tracing.one("invoke_agent").status.status_code is StatusCode.UNSET


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_an_interrupt_ends_the_run_normally_and_says_so(how: str, tracing: Tracing) -> None:
    model = ScriptedChatModel([calls(("ask", {"question": "ok?"})), "thanks"])
    agent = create_agent(
        model,
        [ask],
        middleware=[OtelTracingMiddleware(tracing.provider)],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": how}}

    run_agent(agent, how, {"messages": ["go"]}, config=config)

    paused = tracing.one("invoke_agent")
    assert paused.status.status_code is StatusCode.UNSET
    assert attrs(paused)["graphagent.interrupted"] is True
    (event,) = paused.events
    assert event.name == "graphagent.interrupt"
    assert "graphagent.interrupt.value" not in (event.attributes or {})
    asked = tracing.one("execute_tool ask")
    assert asked.status.status_code is StatusCode.UNSET
    assert attrs(asked)["graphagent.interrupted"] is True

    tracing.exporter.clear()
    done = run_agent(agent, how, Command(resume="yes"), config=config)

    assert done["messages"][-1].content == "thanks"
    assert tracing.tree() == [
        "invoke_agent",
        "  execute_tool ask",
        "  chat ScriptedChatModel",
    ]
    resumed = tracing.one("invoke_agent")
    assert "graphagent.interrupted" not in attrs(resumed)


def test_closing_a_stream_early_ends_every_span(tracing: Tracing) -> None:
    agent = two_rounds(tracing)

    stream = agent.stream({"messages": ["go"]}, stream_mode="updates")
    next(stream)
    current = trace.get_current_span()
    stream.close()
    assert current is trace.INVALID_SPAN, "the run's span stays inside the run, not the consumer"

    root = tracing.one("invoke_agent calculator")
    assert attrs(root)["graphagent.closed_early"] is True
    assert root.status.status_code is StatusCode.UNSET


def test_closing_an_async_stream_early_and_cancelling_end_every_span(tracing: Tracing) -> None:
    async def close_early() -> None:
        stream = two_rounds(tracing).astream({"messages": ["go"]}, stream_mode="updates")
        await anext(stream)
        await stream.aclose()

    asyncio.run(close_early())
    assert attrs(tracing.one("invoke_agent calculator"))["graphagent.closed_early"] is True

    tracing.exporter.clear()
    started = asyncio.Event()

    @tool
    async def slow() -> str:
        """Takes forever."""
        started.set()
        await asyncio.sleep(60)
        return "late"

    model = ScriptedChatModel([calls(("slow", {}))])
    agent = create_agent(model, [slow], middleware=[OtelTracingMiddleware(tracing.provider)])

    async def cancel() -> None:
        task = asyncio.create_task(agent.ainvoke({"messages": ["go"]}))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel())
    for name in ("invoke_agent", "execute_tool slow"):
        span = tracing.one(name)
        assert span.status.status_code is StatusCode.ERROR
        assert attrs(span)["error.type"] == "asyncio.exceptions.CancelledError"


def test_a_stream_stepped_from_different_tasks_still_ends_cleanly(tracing: Tracing) -> None:
    async def step_by_step() -> None:
        stream = two_rounds(tracing).astream({"messages": ["go"]}, stream_mode="updates")
        with contextlib.suppress(StopAsyncIteration):
            while True:  # on Python 3.11 wait_for runs each step in a task of its own
                await asyncio.wait_for(anext(stream), timeout=30)

    asyncio.run(step_by_step())

    assert tracing.spans()[-1].name == "invoke_agent calculator"


# -- context propagation ------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
def test_parallel_tool_calls_each_run_under_their_own_span(how: str, tracing: Tracing) -> None:
    seen: dict[int, int] = {}
    barrier = threading.Barrier(3, timeout=5) if how == "invoke" else None

    @tool
    def where(i: int) -> str:
        """Report the current span."""
        seen[i] = trace.get_current_span().get_span_context().span_id
        if barrier is not None:
            barrier.wait()  # the three calls really overlap
        return "ok"

    model = ScriptedChatModel([calls(*[("where", {"i": i}) for i in range(3)]), "done"])
    agent = create_agent(model, [where], middleware=[OtelTracingMiddleware(tracing.provider)])

    run_agent(agent, how, {"messages": ["go"]})

    root = tracing.one("invoke_agent")
    tool_spans = tracing.named("execute_tool where")
    assert len(tool_spans) == 3
    assert {s.parent.span_id for s in tool_spans if s.parent} == {root.context.span_id}
    assert set(seen.values()) == {s.context.span_id for s in tool_spans}


@pytest.mark.parametrize("how", ["ainvoke", "astream"])
def test_sync_only_wrappers_bridged_to_threads_keep_the_spans(how: str, tracing: Tracing) -> None:
    seen: list[tuple[str, str]] = []

    def current() -> str:
        return getattr(trace.get_current_span(), "name", "?")

    @wrap_model_call
    def around_model(request: Any, handler: Callable[[Any], Any]) -> Any:
        seen.append(("wrap_model_call", current()))
        return handler(request)

    @wrap_tool_call
    def around_tool(request: Any, handler: Callable[[Any], Any]) -> Any:
        seen.append(("wrap_tool_call", current()))
        return handler(request)

    @tool
    def where() -> str:
        """Report the current span."""
        seen.append(("tool", current()))
        return "ok"

    model = ScriptedChatModel([calls(("where", {})), "done"])
    middleware = [around_model, around_tool, OtelTracingMiddleware(tracing.provider)]
    agent = create_agent(model, [where], middleware=middleware)

    run_agent(agent, how, {"messages": ["go"]})

    assert seen == [
        ("wrap_model_call", "chat ScriptedChatModel"),
        ("wrap_tool_call", "execute_tool where"),
        ("tool", "execute_tool where"),
        ("wrap_model_call", "chat ScriptedChatModel"),
    ]
    assert tracing.tree() == [
        "invoke_agent",
        "  chat ScriptedChatModel",
        "  execute_tool where",
        "  chat ScriptedChatModel",
    ]


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_an_agent_used_as_a_tool_nests_under_the_tool_span(how: str, tracing: Tracing) -> None:
    inner = create_agent(
        ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "3"], repeat_last=True),
        [add],
        middleware=[OtelTracingMiddleware(tracing.provider)],
        name="calculator",
    )
    outer = create_agent(
        ScriptedChatModel([calls(("calc", {"request": "1+2"})), "it is 3"]),
        [as_tool(inner, name="calc", description="Does arithmetic.")],
        middleware=[OtelTracingMiddleware(tracing.provider)],
        name="boss",
    )

    run_agent(outer, how, {"messages": ["what is 1+2?"]})

    assert tracing.tree() == [
        "invoke_agent boss",
        "  chat ScriptedChatModel",
        "  execute_tool calc",
        "    invoke_agent calculator",
        "      chat ScriptedChatModel",
        "      execute_tool add",
        "      chat ScriptedChatModel",
        "  chat ScriptedChatModel",
    ]
    assert len({s.context.trace_id for s in tracing.spans()}) == 1


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
def test_an_interrupt_inside_a_nested_agent_is_no_error_anywhere(
    how: str, tracing: Tracing
) -> None:
    inner = create_agent(
        ScriptedChatModel([calls(("ask", {"question": "ok?"})), "confirmed"]),
        [ask],
        middleware=[OtelTracingMiddleware(tracing.provider)],
        name="asker",
    )
    outer = create_agent(
        ScriptedChatModel([calls(("delegate", {"request": "confirm"})), "done"]),
        [as_tool(inner, name="delegate", description="Asks the user.")],
        middleware=[OtelTracingMiddleware(tracing.provider)],
        name="boss",
        checkpointer=InMemorySaver(),
    )

    paused = run_agent(
        outer, how, {"messages": ["go"]}, config={"configurable": {"thread_id": "1"}}
    )

    assert "__interrupt__" in paused
    assert tracing.tree() == [
        "invoke_agent boss",
        "  chat ScriptedChatModel",
        "  execute_tool delegate",
        "    invoke_agent asker",
        "      chat ScriptedChatModel",
        "      execute_tool ask",
    ]
    for span in tracing.spans():
        assert span.status.status_code is StatusCode.UNSET, span.name
    interrupted = [s.name for s in tracing.spans() if attrs(s).get("graphagent.interrupted")]
    assert sorted(interrupted) == [
        "execute_tool ask",
        "execute_tool delegate",
        "invoke_agent asker",
        "invoke_agent boss",
    ]


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
def test_an_agent_node_nests_under_the_span_current_in_the_parent_graph(
    how: str, tracing: Tracing
) -> None:
    agent = create_agent(
        ScriptedChatModel(["from the agent"]),
        middleware=[OtelTracingMiddleware(tracing.provider)],
        name="helper",
    )
    parent = StateGraph(MessagesState)
    parent.add_node("helper", agent)
    parent.add_edge(START, "helper")
    parent.add_edge("helper", END)
    graph = parent.compile()

    with tracing.provider.get_tracer("app").start_as_current_span("handle request"):
        result = run_agent(graph, how, {"messages": ["hi"]})

    assert result["messages"][-1].content == "from the agent"
    assert tracing.tree() == [
        "handle request",
        "  invoke_agent helper",
        "    chat ScriptedChatModel",
    ]


def test_concurrent_runs_get_separate_traces(tracing: Tracing) -> None:
    model = ScriptedChatModel(
        [lambda m: calls(("add", {"a": 1, "b": 1})) if len(m) == 1 else "2"], repeat_last=True
    )
    agent = create_agent(model, [add], middleware=[OtelTracingMiddleware(tracing.provider)])

    async def main() -> None:
        await asyncio.gather(*[agent.ainvoke({"messages": [f"run {i}"]}) for i in range(20)])

    asyncio.run(main())

    traces: dict[int, list[str]] = {}
    for span in tracing.spans():
        traces.setdefault(span.context.trace_id, []).append(span.name)
    assert len(traces) == 20
    for names in traces.values():
        assert sorted(names) == [
            "chat ScriptedChatModel",
            "chat ScriptedChatModel",
            "execute_tool add",
            "invoke_agent",
        ]


# -- content ------------------------------------------------------------------------------------

CONTENT_KEYS = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
}


def test_content_is_not_recorded_by_default(tracing: Tracing) -> None:
    agent = two_rounds(tracing)
    agent.invoke({"messages": ["1+2, 3+4?"]})

    recorded = {key for span in tracing.spans() for key in attrs(span)}
    assert recorded & CONTENT_KEYS == set()


def test_record_content_records_messages_and_tool_io_as_json(tracing: Tracing) -> None:
    model = ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "3"])
    middleware = [OtelTracingMiddleware(tracing.provider, record_content=True)]
    agent = create_agent(model, [add], system_prompt="Be brief.", middleware=middleware)

    agent.invoke({"messages": ["1+2?"]})

    root = attrs(tracing.one("invoke_agent"))
    assert json.loads(root["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "1+2?"}]}
    ]
    assert json.loads(root["gen_ai.output.messages"]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "3"}], "finish_reason": "stop"}
    ]
    first, second = (attrs(s) for s in tracing.named("chat ScriptedChatModel"))
    assert json.loads(first["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "Be brief."}
    ]
    (call,) = json.loads(first["gen_ai.output.messages"])[0]["parts"]
    assert call["type"] == "tool_call"
    assert (call["name"], call["arguments"]) == ("add", {"a": 1, "b": 2})
    assert json.loads(first["gen_ai.output.messages"])[0]["finish_reason"] == "tool_call"
    roles = [m["role"] for m in json.loads(second["gen_ai.input.messages"])]
    assert roles == ["user", "assistant", "tool"]
    answer = json.loads(second["gen_ai.input.messages"])[2]["parts"][0]
    assert answer == {"type": "tool_call_response", "id": call["id"], "response": "3"}
    tool_span = attrs(tracing.one("execute_tool add"))
    assert json.loads(tool_span["gen_ai.tool.call.arguments"]) == {"a": 1, "b": 2}
    assert tool_span["gen_ai.tool.call.result"] == "3"


def test_record_content_records_interrupt_values(tracing: Tracing) -> None:
    model = ScriptedChatModel([calls(("ask", {"question": "ok?"}))])
    agent = create_agent(
        model,
        [ask],
        middleware=[OtelTracingMiddleware(tracing.provider, record_content=True)],
        checkpointer=InMemorySaver(),
    )
    agent.invoke({"messages": ["go"]}, {"configurable": {"thread_id": "1"}})

    (event,) = tracing.one("invoke_agent").events
    assert (event.attributes or {})["graphagent.interrupt.value"] == '"ok?"'


SECRET = "jane.doe@example.com"


@tool
def find_account(name: str) -> str:
    """Fails, quoting personal data."""
    raise LookupError(f"no account for {SECRET}")


def fail_quoting_the_secret(messages: Any) -> str:
    raise ValueError(f"the provider refused a prompt mentioning {SECRET}")


def everything_recorded(span: ReadableSpan) -> str:
    """All a span says: name, attributes, status, events and their attributes."""
    events = [(e.name, dict(e.attributes or {})) for e in span.events]
    return repr((span.name, attrs(span), span.status.description, events))


@pytest.mark.parametrize("how", ENTRY_POINTS)
@pytest.mark.parametrize("failing", ["tool", "model"])
def test_an_exception_is_recorded_by_type_not_by_message(
    how: str, failing: str, tracing: Tracing
) -> None:
    script = [calls(("find_account", {"name": "Jane"}))] if failing == "tool" else []
    model = ScriptedChatModel([*script, fail_quoting_the_secret])
    middleware = [OtelTracingMiddleware(tracing.provider)]
    agent = create_agent(model, [find_account], middleware=middleware)

    with pytest.raises((LookupError, ValueError), match=SECRET):
        run_agent(agent, how, {"messages": ["Find Jane"]})

    failed = [s for s in tracing.spans() if s.status.status_code is StatusCode.ERROR]
    assert {s.name.split()[0] for s in failed} == {
        "invoke_agent",
        "execute_tool" if failing == "tool" else "chat",
    }
    kind = "LookupError" if failing == "tool" else "ValueError"
    for span in failed:
        assert SECRET not in everything_recorded(span), span.name
        assert span.status.description == kind
        (event,) = span.events
        assert event.name == "exception"
        assert (event.attributes or {})["exception.type"] == kind
        assert "exception.message" not in (event.attributes or {})
        stacktrace = str((event.attributes or {})["exception.stacktrace"])
        assert stacktrace.startswith("Traceback (most recent call last):\n  File ")
        assert stacktrace.endswith(f"\n{kind}\n")


def test_record_content_records_the_exception_message(tracing: Tracing) -> None:
    model = ScriptedChatModel([calls(("find_account", {"name": "Jane"}))])
    middleware = [OtelTracingMiddleware(tracing.provider, record_content=True)]
    agent = create_agent(model, [find_account], middleware=middleware)

    with pytest.raises(LookupError):
        agent.invoke({"messages": ["Find Jane"]})

    span = tracing.one("execute_tool find_account")
    assert span.status.description == f"LookupError: no account for {SECRET}"
    (event,) = span.events
    assert (event.attributes or {})["exception.message"] == f"no account for {SECRET}"


# -- the tracer provider and the no-op path -------------------------------------------------------


@pytest.fixture
def no_attribute_building(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a span's attributes are built."""

    def forbidden(*args: Any) -> Any:
        raise AssertionError("attributes were built while tracing is a no-op")

    for name in ("_chat_attributes", "_end_chat", "_end_tool", "_record_run_result"):
        monkeypatch.setattr(otel_module, name, forbidden)


@pytest.mark.usefixtures("no_attribute_building")
@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_the_default_global_provider_is_a_cheap_no_op(how: str) -> None:
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider), "no SDK set up"
    model = ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "3"])
    agent = create_agent(model, [add], middleware=[OtelTracingMiddleware()])

    assert run_agent(agent, how, {"messages": ["go"]})["messages"][-1].content == "3"


@pytest.mark.usefixtures("no_attribute_building")
@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
def test_a_noop_or_sampled_out_provider_records_nothing(how: str, tracing: Tracing) -> None:
    sampled_out = Tracing(TracerProvider(sampler=ALWAYS_OFF))
    for provider in (trace.NoOpTracerProvider(), sampled_out.provider):
        model = ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "3"])
        agent = create_agent(model, [add], middleware=[OtelTracingMiddleware(provider)])
        assert run_agent(agent, how, {"messages": ["go"]})["messages"][-1].content == "3"
    assert sampled_out.spans() == []


def test_a_sampled_out_run_keeps_nested_agents_out_too() -> None:
    sampled_out = Tracing(TracerProvider(sampler=ALWAYS_OFF))
    recorded = Tracing(TracerProvider())
    inner = create_agent(
        ScriptedChatModel(["3"]), middleware=[OtelTracingMiddleware(recorded.provider)]
    )
    outer = create_agent(
        ScriptedChatModel([calls(("calc", {"request": "1+2"})), "3"]),
        [as_tool(inner, name="calc", description="Does arithmetic.")],
        middleware=[OtelTracingMiddleware(sampled_out.provider)],
    )

    assert outer.invoke({"messages": ["go"]})["messages"][-1].content == "3"

    # The inner agent's provider samples by the parent too, and the outer run said no.
    assert recorded.spans() == []


def test_the_global_provider_is_looked_up_at_each_run(
    monkeypatch: pytest.MonkeyPatch, tracing: Tracing
) -> None:
    agent = create_agent(
        ScriptedChatModel(["hi"], repeat_last=True), middleware=[OtelTracingMiddleware()]
    )
    agent.invoke({"messages": ["before"]})  # the global no-op provider

    monkeypatch.setattr(trace, "get_tracer_provider", lambda: tracing.provider)
    agent.invoke({"messages": ["after"]})

    assert tracing.tree() == ["invoke_agent", "  chat ScriptedChatModel"]


# -- configuration ------------------------------------------------------------------------------


def test_it_sits_outermost_by_default(tracing: Tracing) -> None:
    attempts = iter([TimeoutError("slow"), None])

    def flaky(messages: Any) -> str:
        error = next(attempts)
        if error is not None:
            raise error
        return "ok"

    retry = ModelRetryMiddleware(initial_delay=0, jitter=False)
    agent = create_agent(
        ScriptedChatModel([flaky, flaky]),
        middleware=[retry, OtelTracingMiddleware(tracing.provider)],
    )

    agent.invoke({"messages": ["go"]})

    assert OtelTracingMiddleware.order == 1000
    chat = tracing.one("chat ScriptedChatModel")  # one span: the retry happened inside it
    assert chat.status.status_code is StatusCode.UNSET


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tracer_provider": "global"}, "tracer_provider='global' is not a TracerProvider"),
        ({"record_content": "yes"}, "record_content='yes' must be True or False"),
    ],
)
def test_bad_options_are_refused_when_built(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(MiddlewareError, match=message):
        OtelTracingMiddleware(**kwargs)


def test_without_opentelemetry_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    monkeypatch.delitem(sys.modules, "graphagent.middleware.otel")

    with pytest.raises(ImportError, match=r"pip install 'graphagent-langgraph\[otel\]'"):
        importlib.import_module("graphagent.middleware.otel")


def test_the_middleware_package_imports_without_opentelemetry() -> None:
    script = (
        "import sys; sys.modules['opentelemetry'] = None; "
        "import graphagent, graphagent.middleware; print('imported')"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout == "imported\n", done.stderr


def test_tool_messages_from_commands_are_left_alone(tracing: Tracing) -> None:
    @tool
    def jump() -> Command[Any]:
        """Answers with a command."""
        return Command(update={"messages": [ToolMessage("jumped", tool_call_id="c-1")]})

    model = ScriptedChatModel([calls({"name": "jump", "args": {}, "id": "c-1"}), "done"])
    middleware = [OtelTracingMiddleware(tracing.provider, record_content=True)]
    agent = create_agent(model, [jump], middleware=middleware)

    agent.invoke({"messages": ["go"]})

    span = tracing.one("execute_tool jump")
    assert span.status.status_code is StatusCode.UNSET
    assert "gen_ai.tool.call.result" not in attrs(span)


def test_a_model_call_that_waited_for_its_rate_limits_says_how_long(tracing: Tracing) -> None:
    class PacedModel(ScriptedChatModel):  # a class of its own: its limiter is its class's
        pass

    @tool
    def lookup(q: str) -> str:
        """Look it up."""
        return q

    model = PacedModel([calls(("lookup", {"q": "a"})), "done"])
    agent = create_agent(
        model,
        [lookup],
        middleware=[OtelTracingMiddleware(tracing.provider)],
        rate_limits=RateLimits(requests_per_second=1),  # far longer than a call takes
    )
    agent.invoke({"messages": ["x"]})

    chats = [s for s in tracing.spans() if attrs(s).get("gen_ai.operation.name") == "chat"]
    waits = [attrs(s).get("graphagent.rate_limit.wait_seconds") for s in chats]
    assert waits[0] is None
    assert isinstance(waits[1], float)
    assert waits[1] > 0
