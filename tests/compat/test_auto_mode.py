"""``AutoModeMiddleware``, as LangChain 1.5 documents it: a decision model screens calls of the
chosen tools, and calls it finds risky are answered with an error instead of run."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.decisions import Noul, NoulCriteria
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import ValidationError

from graphagent import create_agent
from graphagent.errors import MiddlewareError, UnknownArgumentError
from graphagent.middleware import AutoModeMiddleware, wrap_tool_call
from graphagent.middleware.trace_policy import omit_payload
from graphagent.testing import ScriptedChatModel, calls, tool_call
from tests.compat.classifiers import (
    ChatBackedClassifier,
    ScriptedClassifier,
    answering,
    streamed_text,
)
from tests.conftest import run_agent

deleted: list[str] = []


@tool
def delete_file(path: str) -> str:
    """Delete the file at path."""
    deleted.append(path)
    return f"deleted {path}"


@tool
def read_file(path: str) -> str:
    """Read the file at path."""
    return f"contents of {path}"


@pytest.fixture(autouse=True)
def _nothing_deleted_yet() -> None:
    deleted.clear()


def risk_by_path(state: dict[str, Any]) -> float:
    return 0.9 if state["tool_call"]["args"]["path"].startswith("/etc") else 0.1


def agent_for(middleware: list[Any], *replies: Any) -> Any:
    model = ScriptedChatModel([*replies, "Done."])
    return create_agent(model, [delete_file, read_file], middleware=middleware)


def answers(result: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.name or "": m for m in result["messages"] if isinstance(m, ToolMessage)}


def test_risky_calls_are_blocked_and_the_others_run(how_call: str) -> None:
    classifier = ScriptedClassifier(decide=risk_by_path)
    guard = AutoModeMiddleware(tools=[delete_file], classifier=classifier)
    turn = calls(
        tool_call("delete_file", {"path": "/etc/passwd"}, id="risky"),
        tool_call("delete_file", {"path": "/tmp/scratch"}, id="safe"),
    )
    agent = agent_for([guard], turn)

    result = run_agent(agent, how_call, {"messages": [("user", "Clean up.")]})

    by_id = {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}
    assert by_id["risky"].content == (
        "The tool call `delete_file` was blocked because it was classified as risky "
        "(probability: 0.90). The tool was not executed."
    )
    assert (by_id["risky"].status, by_id["risky"].name) == ("error", "delete_file")
    assert by_id["safe"].content == "deleted /tmp/scratch"
    assert deleted == ["/tmp/scratch"]
    assert result["messages"][-1].content == "Done."
    assert {r.asynchronous for r in classifier.requests} == {how_call == "ainvoke"}


@pytest.mark.parametrize(("probability", "blocked"), [(0.5, True), (0.49, False)])
def test_the_threshold_is_one_half(how_call: str, probability: float, blocked: bool) -> None:
    guard = AutoModeMiddleware(tools=["delete_file"], classifier=answering(probability))
    agent = agent_for([guard], calls(("delete_file", {"path": "/x"})))

    result = run_agent(agent, how_call, {"messages": [("user", "Delete /x.")]})

    assert (answers(result)["delete_file"].status == "error") is blocked
    assert deleted == ([] if blocked else ["/x"])


def test_unguarded_tools_are_not_classified(how_call: str) -> None:
    classifier = answering(1.0)
    guard = AutoModeMiddleware(tools=["delete_file"], classifier=classifier)
    agent = agent_for([guard], calls(("read_file", {"path": "/etc/hosts"})))

    result = run_agent(agent, how_call, {"messages": [("user", "Read it.")]})

    assert answers(result)["read_file"].content == "contents of /etc/hosts"
    assert classifier.requests == []


def test_the_classifier_sees_the_call_the_tool_and_the_latest_30_messages(how_call: str) -> None:
    classifier = answering(0.0)
    criteria = NoulCriteria(true="Writes or deletes.", false="Only reads.")
    guard = AutoModeMiddleware(
        tools=[delete_file], instructions="Is it risky?", criteria=criteria, classifier=classifier
    )
    agent = agent_for([guard], calls(tool_call("delete_file", {"path": "/x"}, id="c1")))
    history = [HumanMessage(f"message {n}") for n in range(40)]

    run_agent(agent, how_call, {"messages": history})

    [request] = classifier.requests
    state = request.state
    assert state["tool_call"] == {"id": "c1", "name": "delete_file", "args": {"path": "/x"}}
    assert state["tool_description"] == "Delete the file at path."
    assert len(state["messages"]) == 30
    assert state["messages"][0].content == "message 11"
    assert isinstance(state["messages"][-1], AIMessage)  # the turn that made the call
    assert request.questions == {"is_risky": Noul(instructions="Is it risky?", criteria=criteria)}


def test_by_default_the_question_has_instructions_and_no_criteria() -> None:
    guard = AutoModeMiddleware(tools=["delete_file"], classifier=answering(0.0))

    assert guard.config.instructions
    assert guard.config.criteria is None
    assert guard.config.tools == ("delete_file",)


def test_a_blocked_call_reaches_no_inner_wrapper(how_call: str) -> None:
    reached: list[str] = []

    @wrap_tool_call
    def inner(request: Any, handler: Any) -> Any:
        reached.append(request.tool_call["name"])
        return handler(request)

    guard = AutoModeMiddleware(tools=["delete_file"], classifier=answering(0.8))
    agent = agent_for([guard, inner], calls(("delete_file", {"path": "/x"})))

    run_agent(agent, how_call, {"messages": [("user", "Delete /x.")]})

    assert reached == []
    assert deleted == []


def test_a_failing_classifier_fails_the_run_without_running_the_tool(how_call: str) -> None:
    def unavailable(state: Any) -> float:
        raise ConnectionError("classifier unavailable")

    guard = AutoModeMiddleware(
        tools=["delete_file"], classifier=ScriptedClassifier(decide=unavailable)
    )
    agent = agent_for([guard], calls(("delete_file", {"path": "/x"})))

    with pytest.raises(ConnectionError, match="classifier unavailable"):
        run_agent(agent, how_call, {"messages": [("user", "Delete /x.")]})
    assert deleted == []


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_the_classification_is_not_streamed_as_messages(how: str) -> None:
    judge = ScriptedChatModel(["0.25"])
    guard = AutoModeMiddleware(tools=["delete_file"], classifier=ChatBackedClassifier(chat=judge))
    agent = agent_for([guard], calls(("delete_file", {"path": "/x"})))

    text = streamed_text(agent, how, {"messages": [("user", "Delete /x.")]})

    assert text == "Done."
    assert judge.call_count == 1
    assert deleted == ["/x"]


# -- bad input --------------------------------------------------------------------------------


def test_a_misspelt_argument_names_the_class_and_the_closest_name() -> None:
    with pytest.raises(UnknownArgumentError, match="'tool'; did you mean 'tools'"):
        AutoModeMiddleware(tool=["delete_file"], classifier=answering(0.0))  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        # LangChain checks its configuration with pydantic: a ValidationError (a ValueError).
        ({"tools": []}, "at least 1 item.*list the tools whose calls are classified"),
        ({"tools": "delete_file"}, "valid list.*tools=\\['delete_file'\\]"),
        ({"tools": ["delete_file", 3]}, "item 1 is 3"),
        ({"instructions": 42}, "instructions must be text, got int"),
        ({"criteria": "risky"}, "criteria is str; pass NoulCriteria"),
    ],
)
def test_bad_options_raise_a_validation_error_when_built(
    options: dict[str, Any], message: str
) -> None:
    given: dict[str, Any] = {"tools": ["delete_file"], "classifier": answering(0.0), **options}

    with pytest.raises(ValidationError, match=message) as raised:
        AutoModeMiddleware(**given)
    assert "AutoModeMiddleware: " in str(raised.value)


def test_a_classifier_that_is_no_decision_model_is_refused() -> None:
    with pytest.raises(MiddlewareError, match="classifier is NoneType; pass a decision model"):
        AutoModeMiddleware(tools=["delete_file"], classifier=None)  # type: ignore[arg-type]


def test_empty_instructions_are_sent_as_given(how_call: str) -> None:
    classifier = ScriptedClassifier(decide=lambda state: 0.0)
    guard = AutoModeMiddleware(tools=["delete_file"], instructions="", classifier=classifier)
    agent = agent_for([guard], calls(("delete_file", {"path": "/x"})))

    run_agent(agent, how_call, {"messages": [HumanMessage("Go.")]})

    [request] = classifier.requests
    assert request.questions["is_risky"].instructions == ""


def test_a_guarded_tool_the_agent_lacks_is_noted_and_never_classified(
    how_call: str, caplog: pytest.LogCaptureFixture
) -> None:
    classifier = ScriptedClassifier(decide=lambda state: 0.9)
    guard = AutoModeMiddleware(tools=["delete_fiel"], classifier=classifier)

    with caplog.at_level(logging.INFO, logger="graphagent"):
        agent = agent_for([guard], calls(("delete_file", {"path": "/x"})))
    result = run_agent(agent, how_call, {"messages": [HumanMessage("Delete /x.")]})

    assert "tools names ['delete_fiel'], which the agent does not have" in caplog.text
    assert answers(result)["delete_file"].status == "success"
    assert classifier.requests == []


def test_the_trace_policy_leaves_the_request_out() -> None:
    assert AutoModeMiddleware.trace_policy is not None
    assert AutoModeMiddleware.trace_policy.process_inputs is omit_payload


def test_criteria_may_be_given_as_a_mapping() -> None:
    guard = AutoModeMiddleware(
        tools=["delete_file"],
        criteria={"true": "Deletes.", "false": "Reads."},
        classifier=answering(0),
    )

    assert guard.config.criteria == NoulCriteria(true="Deletes.", false="Reads.")
