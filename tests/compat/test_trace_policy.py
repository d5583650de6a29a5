"""LangChain 1.5's trace policy (``TracePolicy``, ``omit_payload``, ``configure_trace_policy``,
``AgentMiddleware.trace_policy``): what the traces of a middleware's hook calls record, in the
callback (LangSmith) runs of node hooks and in ``OtelTracingMiddleware``'s hook spans."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import langgraph.types
import pytest
from langchain_core.tools import tool
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from langchain_core.tracers.schemas import Run
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.trace import StatusCode

from graphagent import MiddlewareError, create_agent
from graphagent.middleware import (
    AgentMiddleware,
    ModelRefusalMiddleware,
    OtelTracingMiddleware,
    ToolErrorMiddleware,
    TracePolicy,
    configure_trace_policy,
    omit_payload,
    wrap_model_call,
)
from graphagent.middleware.tool_error import error_type_message
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent
from tests.test_otel import Tracing


@pytest.fixture(autouse=True)
def _no_default_policy() -> Iterator[None]:
    configure_trace_policy(None)
    yield
    configure_trace_policy(None)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Audit(AgentMiddleware):
    """A node hook and a wrap hook that change nothing."""

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return {"messages": [("user", "be brief")]} if len(state["messages"]) == 1 else None

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request)


def audited(policy: langgraph.types.TracePolicy | None = None) -> Audit:
    audit = Audit()
    audit.trace_policy = policy
    return audit


QUESTION = {"messages": [("user", "What is 1+2?")]}


# -- the names ------------------------------------------------------------------------------------


def test_the_policy_names_are_langgraphs_as_in_langchain() -> None:
    assert omit_payload is langgraph.types.omit_payload
    assert issubclass(TracePolicy, langgraph.types.TracePolicy)
    assert omit_payload({"messages": ["hi"]}) == {}
    policy = TracePolicy(process_inputs=omit_payload)
    assert (policy.process_inputs, policy.process_outputs) == (omit_payload, None)


def test_middleware_have_no_policy_by_default_and_some_built_ins_omit_their_inputs() -> None:
    assert AgentMiddleware.trace_policy is None
    assert Audit().trace_policy is None
    for built_in in (ToolErrorMiddleware(on_error=error_type_message), ModelRefusalMiddleware()):
        assert built_in.trace_policy == TracePolicy(process_inputs=omit_payload)


# -- callback (LangSmith) runs of node hooks ------------------------------------------------------


def hook_runs(agent: Any, how: str, node: str = "Audit.before_model") -> list[Run]:
    """The tracer runs of the node ``node`` in one run of ``agent``."""
    collector = RunCollectorCallbackHandler()
    run_agent(agent, how, QUESTION, config={"callbacks": [collector]})
    found: list[Run] = []

    def walk(run: Run) -> None:
        if run.name == node:
            found.append(run)
        for child in run.child_runs:
            walk(child)

    for run in collector.traced_runs:
        walk(run)
    assert found, "the node hook was traced"
    return found


def simple_agent(*middleware: AgentMiddleware) -> Any:
    return create_agent(ScriptedChatModel(["3"], repeat_last=True), middleware=list(middleware))


def test_without_a_policy_a_node_hook_run_records_the_state_and_the_update(how_call: str) -> None:
    (run, *_) = hook_runs(simple_agent(audited()), how_call)

    assert [m.content for m in run.inputs["messages"]] == ["What is 1+2?"]
    assert run.outputs == {"messages": [("user", "be brief")]}


def test_omit_payload_drops_what_the_node_hook_run_records(how_call: str) -> None:
    policy = TracePolicy(process_inputs=omit_payload, process_outputs=omit_payload)
    agent = simple_agent(audited(policy))

    (run, *_) = hook_runs(agent, how_call)
    result = run_agent(agent, how_call, QUESTION)

    assert (run.inputs, run.outputs) == ({}, {})
    assert [m.content for m in result["messages"][:2]] == ["What is 1+2?", "be brief"]


def test_a_policy_only_changes_what_tracers_record(how_call: str) -> None:
    (run, *_) = hook_runs(
        simple_agent(audited(TracePolicy(process_inputs=first_message))), how_call
    )

    assert run.inputs == {"first": "What is 1+2?"}
    assert run.outputs == {"messages": [("user", "be brief")]}


def test_the_default_applies_to_middleware_without_a_policy_even_if_set_after_building(
    how_call: str,
) -> None:
    agent = simple_agent(audited())
    configure_trace_policy(TracePolicy(process_inputs=omit_payload))

    (run, *_) = hook_runs(agent, how_call)

    assert run.inputs == {}
    assert run.outputs == {"messages": [("user", "be brief")]}


def test_a_middlewares_policy_replaces_the_default_as_a_whole(how_call: str) -> None:
    configure_trace_policy(TracePolicy(process_inputs=omit_payload))
    agent = simple_agent(audited(TracePolicy(process_outputs=omit_payload)))

    (run, *_) = hook_runs(agent, how_call)

    assert [m.content for m in run.inputs["messages"]] == ["What is 1+2?"]
    assert run.outputs == {}


def test_configuring_none_clears_the_default(how_call: str) -> None:
    configure_trace_policy(TracePolicy(process_inputs=omit_payload))
    configure_trace_policy(None)

    (run, *_) = hook_runs(simple_agent(audited()), how_call)

    assert [m.content for m in run.inputs["messages"]] == ["What is 1+2?"]


def test_langgraphs_own_trace_policy_is_accepted(how_call: str) -> None:
    policy = langgraph.types.TracePolicy(process_inputs=omit_payload)

    (run, *_) = hook_runs(simple_agent(audited(policy)), how_call)

    assert run.inputs == {}


class Second(AgentMiddleware):
    def before_model(self, state: Any, runtime: Any) -> None:
        return None


def first_message(state: Any) -> dict[str, Any]:
    return {"first": state["messages"][0].content}


def test_a_fused_node_records_what_each_of_its_hooks_policies_lets_through(how_call: str) -> None:
    second = Second()
    second.trace_policy = TracePolicy(process_inputs=first_message)
    audit = audited(TracePolicy(process_outputs=omit_payload))
    model = ScriptedChatModel(["3"], repeat_last=True)
    agent = create_agent(model, middleware=[audit, second], fuse_hooks=True)

    (run, *_) = hook_runs(agent, how_call, node="before_model")

    assert run.inputs == {"first": "What is 1+2?"}
    assert run.outputs == {}


# -- OpenTelemetry hook spans ---------------------------------------------------------------------


@pytest.fixture
def spans() -> Iterator[Tracing]:
    traced = Tracing(TracerProvider())
    yield traced
    assert not traced.open.ids, "every span ends"
    traced.provider.shutdown()


def first(spans: Tracing, name: str) -> ReadableSpan:
    return spans.named(name)[0]


@wrap_model_call
def passthrough(request: Any, handler: Callable[[Any], Any]) -> Any:
    return handler(request)


def tool_agent(spans: Tracing, *middleware: AgentMiddleware, **tracing: Any) -> Any:
    model = ScriptedChatModel([calls({"name": "add", "args": {"a": 1, "b": 2}, "id": "c1"}), "3"])
    otel = OtelTracingMiddleware(spans.provider, **tracing)
    return create_agent(model, [add], middleware=[otel, *middleware])


def payload(span: ReadableSpan, key: str) -> Any:
    return json.loads(str((span.attributes or {})[f"graphagent.hook.{key}"]))


def test_hook_spans_are_off_by_default(how_call: str, spans: Tracing) -> None:
    run_agent(tool_agent(spans, audited(), passthrough), how_call, QUESTION)

    assert spans.tree() == [
        "invoke_agent",
        "  chat ScriptedChatModel",
        "  execute_tool add",
        "  chat ScriptedChatModel",
    ]


def test_trace_hooks_gives_every_other_middlewares_hook_call_a_span(
    how_call: str, spans: Tracing
) -> None:
    run_agent(tool_agent(spans, audited(), passthrough, trace_hooks=True), how_call, QUESTION)

    assert spans.tree() == [
        "invoke_agent",
        "  Audit.before_model",
        "  chat ScriptedChatModel",
        "    passthrough.wrap_model_call",
        "  execute_tool add",
        "    Audit.wrap_tool_call",
        "  Audit.before_model",
        "  chat ScriptedChatModel",
        "    passthrough.wrap_model_call",
    ]
    hook = first(spans, "Audit.before_model")
    assert hook.attributes == {
        "graphagent.middleware.name": "Audit",
        "graphagent.hook.name": "before_model",
    }


def test_fused_hooks_get_a_span_each(how_call: str, spans: Tracing) -> None:
    fused = create_agent(
        ScriptedChatModel(["3"]),
        middleware=[OtelTracingMiddleware(spans.provider, trace_hooks=True), audited(), Second()],
        fuse_hooks=True,
    )
    run_agent(fused, how_call, QUESTION)

    assert spans.tree() == [
        "invoke_agent",
        "  Audit.before_model",
        "  Second.before_model",
        "  chat ScriptedChatModel",
    ]


def test_with_record_content_a_hook_span_records_what_the_hook_got_and_returned(
    how_call: str, spans: Tracing
) -> None:
    agent = tool_agent(spans, audited(), record_content=True, trace_hooks=True)
    run_agent(agent, how_call, QUESTION)

    node = first(spans, "Audit.before_model")
    assert payload(node, "input")["messages"] == [
        {"role": "user", "parts": [{"type": "text", "content": "What is 1+2?"}]}
    ]
    assert payload(node, "output") == {"messages": [["user", "be brief"]]}
    wrap = spans.one("Audit.wrap_tool_call")
    assert payload(wrap, "input")["request"]["tool_call"]["args"] == {"a": 1, "b": 2}
    assert payload(wrap, "output")["parts"][0]["response"] == "3"


def test_the_policy_decides_what_a_hook_span_records(how_call: str, spans: Tracing) -> None:
    policy = TracePolicy(process_inputs=omit_payload)
    agent = tool_agent(spans, audited(policy), record_content=True, trace_hooks=True)
    run_agent(agent, how_call, QUESTION)

    for name in ("Audit.before_model", "Audit.wrap_tool_call"):
        assert payload(first(spans, name), "input") == {}
    assert payload(spans.one("Audit.wrap_tool_call"), "output")["role"] == "tool"
    last_chat = max(
        (s for s in spans.spans() if s.name.startswith("chat")), key=lambda s: s.start_time or 0
    )
    assert "gen_ai.input.messages" in (last_chat.attributes or {})


def test_wrap_hook_processors_get_the_request_as_langchains_traces_give_it(
    how_call: str, spans: Tracing
) -> None:
    def keys(inputs: Any) -> Any:
        return {"fields": sorted(inputs["request"])}

    agent = tool_agent(
        spans, audited(TracePolicy(process_inputs=keys)), record_content=True, trace_hooks=True
    )
    run_agent(agent, how_call, QUESTION)

    assert payload(spans.one("Audit.wrap_tool_call"), "input") == {
        "fields": ["state", "tool", "tool_call"]
    }


def test_the_default_policy_shapes_hook_spans_and_a_middlewares_own_replaces_it(
    how_call: str, spans: Tracing
) -> None:
    agent = tool_agent(
        spans,
        audited(TracePolicy(process_outputs=omit_payload)),
        passthrough,
        record_content=True,
        trace_hooks=True,
    )
    configure_trace_policy(TracePolicy(process_inputs=omit_payload))
    run_agent(agent, how_call, QUESTION)

    default = first(spans, "passthrough.wrap_model_call")
    assert payload(default, "input") == {}
    assert payload(default, "output")["result"][0]["role"] == "assistant"
    own = first(spans, "Audit.before_model")
    assert payload(own, "input")["messages"][0]["role"] == "user"
    assert payload(own, "output") == {}


def test_without_record_content_hook_spans_record_no_payload(how_call: str, spans: Tracing) -> None:
    run_agent(tool_agent(spans, audited(), trace_hooks=True), how_call, QUESTION)

    for span in spans.spans():
        assert not {"graphagent.hook.input", "graphagent.hook.output"} & set(span.attributes or {})


def test_a_failing_processor_records_no_payload_and_never_fails_the_run(
    how_call: str, spans: Tracing, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(value: Any) -> Any:
        raise KeyError("nope")

    agent = tool_agent(
        spans, audited(TracePolicy(process_inputs=broken)), record_content=True, trace_hooks=True
    )
    with caplog.at_level(logging.WARNING):
        result = run_agent(agent, how_call, QUESTION)

    assert result["messages"][-1].content == "3"
    hook = first(spans, "Audit.before_model")
    assert "graphagent.hook.input" not in (hook.attributes or {})
    assert payload(hook, "output") == {"messages": [["user", "be brief"]]}
    assert "The trace policy of 'Audit' (process_inputs) failed" in caplog.text


def test_a_hook_that_raises_ends_its_span_with_the_error(how_call: str, spans: Tracing) -> None:
    class Broken(AgentMiddleware):
        def before_model(self, state: Any, runtime: Any) -> None:
            raise LookupError("no such account")

    with pytest.raises(LookupError):
        run_agent(tool_agent(spans, Broken(), trace_hooks=True), how_call, QUESTION)

    span = spans.one("Broken.before_model")
    assert span.status.status_code is StatusCode.ERROR
    assert (span.attributes or {})["error.type"] == "LookupError"
    assert spans.tree() == ["invoke_agent", "  Broken.before_model"]


# -- bad input ------------------------------------------------------------------------------------


def test_a_misspelled_argument_names_the_class_and_the_closest_name() -> None:
    with pytest.raises(
        TypeError,
        match=r"TracePolicy.__init__\(\) .* 'process_input'; did you mean 'process_inputs'",
    ):
        TracePolicy(process_input=omit_payload)  # type: ignore[call-arg]
    with pytest.raises(
        TypeError,
        match=r"OtelTracingMiddleware.__init__\(\) .* 'trace_hook'; did you mean 'trace_hooks'",
    ):
        OtelTracingMiddleware(trace_hook=True)  # type: ignore[call-arg]


def test_processors_and_policies_that_are_not_are_refused() -> None:
    with pytest.raises(TypeError, match=r"TracePolicy\(process_inputs='omit'\) is not callable"):
        TracePolicy(process_inputs="omit")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"configure_trace_policy\(\{\}\) got dict"):
        configure_trace_policy({})  # type: ignore[arg-type]
    with pytest.raises(MiddlewareError, match=r"trace_hooks='yes' must be True or False"):
        OtelTracingMiddleware(trace_hooks="yes")  # type: ignore[arg-type]


def test_a_trace_policy_attribute_that_is_not_a_policy_fails_when_the_agent_is_built() -> None:
    audit = Audit()
    audit.trace_policy = omit_payload  # type: ignore[assignment]

    with pytest.raises(MiddlewareError, match=r"'Audit' has trace_policy=<function omit_payload"):
        create_agent(ScriptedChatModel(["hi"]), middleware=[audit])
