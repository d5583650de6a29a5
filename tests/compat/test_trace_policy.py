"""LangChain 1.5's trace policy (``TracePolicy``, ``omit_payload``, ``configure_trace_policy``,
``AgentMiddleware.trace_policy``): what the traces of a middleware's hook calls record, in the
callback (LangSmith) runs of node hooks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import langgraph.types
import pytest
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from langchain_core.tracers.schemas import Run

from graphagent import MiddlewareError, create_agent
from graphagent.middleware import (
    AgentMiddleware,
    ModelRefusalMiddleware,
    ToolErrorMiddleware,
    TracePolicy,
    configure_trace_policy,
    omit_payload,
)
from graphagent.testing import ScriptedChatModel
from tests.conftest import run_agent


@pytest.fixture(autouse=True)
def _no_default_policy() -> Iterator[None]:
    configure_trace_policy(None)
    yield
    configure_trace_policy(None)


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
    for built_in in (ToolErrorMiddleware(), ModelRefusalMiddleware()):
        assert built_in.trace_policy == TracePolicy(process_inputs=omit_payload)


# -- callback (LangSmith) runs of node hooks ------------------------------------------------------


def hook_runs(agent: Any, how: str) -> list[Run]:
    """The tracer runs of ``Audit.before_model`` in one run of ``agent``."""
    collector = RunCollectorCallbackHandler()
    run_agent(agent, how, QUESTION, config={"callbacks": [collector]})
    found: list[Run] = []

    def walk(run: Run) -> None:
        if run.name == "Audit.before_model":
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
    def first_message(state: Any) -> dict[str, Any]:
        return {"first": state["messages"][0].content}

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


# -- bad input ------------------------------------------------------------------------------------


def test_a_misspelled_argument_names_the_class_and_the_closest_name() -> None:
    with pytest.raises(
        TypeError,
        match=r"TracePolicy.__init__\(\) .* 'process_input'; did you mean 'process_inputs'",
    ):
        TracePolicy(process_input=omit_payload)  # type: ignore[call-arg]


def test_processors_and_policies_that_are_not_are_refused() -> None:
    with pytest.raises(TypeError, match=r"TracePolicy\(process_inputs='omit'\) is not callable"):
        TracePolicy(process_inputs="omit")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"configure_trace_policy\(\{\}\) got dict"):
        configure_trace_policy({})  # type: ignore[arg-type]


def test_a_trace_policy_attribute_that_is_not_a_policy_fails_when_the_agent_is_built() -> None:
    audit = Audit()
    audit.trace_policy = omit_payload  # type: ignore[assignment]

    with pytest.raises(MiddlewareError, match=r"'Audit' has trace_policy=<function omit_payload"):
        create_agent(ScriptedChatModel(["hi"]), middleware=[audit])
