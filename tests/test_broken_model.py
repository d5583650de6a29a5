"""A broken model gets named answers, never a bare Python error: tool calls whose arguments are
not an object, calls without an id, two calls with one id, and replies made only of malformed
calls."""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.messages.tool import tool_call
from langchain_core.tools import tool

from graphagent import RunawayRunError, create_agent
from graphagent.errors import MalformedToolCallError
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run

pytestmark = pytest.mark.usefixtures("hook_mode")

RAN: list[str] = []


@tool
def noop(x: int = 0) -> str:
    """Do nothing, and say so."""
    RAN.append(f"noop({x})")
    return "done"


@pytest.fixture(autouse=True)
def _clean() -> None:
    RAN.clear()


def broken(*tool_calls: dict[str, Any], invalid: list[dict[str, Any]] | None = None) -> AIMessage:
    """An AI message as a broken integration builds it: unchecked, as ``model_construct`` does."""
    return AIMessage.model_construct(
        content="",
        tool_calls=list(tool_calls),
        invalid_tool_calls=invalid or [],
        additional_kwargs={},
        response_metadata={},
        type="ai",
        id=None,
    )


@pytest.mark.parametrize("args", ["x=1", [1], None], ids=["a str", "a list", "None"])
def test_arguments_that_are_not_an_object_are_answered_not_run(run: Run, args: Any) -> None:
    call = {"name": "noop", "args": args, "id": "c1", "type": "tool_call"}
    valid = {"name": "noop", "args": {"x": 1}, "id": "c2", "type": "tool_call"}
    model = ScriptedChatModel([broken(call, valid), "sorry"])
    result = run(create_agent(model, [noop]), {"messages": ["go"]})

    answer = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert answer.tool_call_id == "c1"
    assert answer.status == "error"
    assert "its arguments must be a JSON object, got " in answer.content
    assert RAN == ["noop(1)"], "the valid call runs, the broken one does not"
    assert result["messages"][-1].content == "sorry", "the model was told, and answered"
    assert any(isinstance(m, ToolMessage) for m in model.calls[1].messages)


def test_a_call_without_an_id_is_a_named_error(run: Run) -> None:
    call = {"name": "noop", "args": {}, "id": None, "type": "tool_call"}
    model = ScriptedChatModel([AIMessage("", tool_calls=[call])])

    words = "Tool call `noop` has no ID, so its result can't be matched to it. The model returned"
    with pytest.raises(MalformedToolCallError, match=re.escape(words)):
        run(create_agent(model, [noop]), {"messages": ["go"]})
    assert RAN == []


def test_two_calls_with_one_id_run_once_and_get_one_answer(run: Run) -> None:
    twice = AIMessage(
        "",
        tool_calls=[
            {"name": "noop", "args": {"x": 1}, "id": "same"},
            {"name": "noop", "args": {"x": 1}, "id": "same"},
        ],
    )
    model = ScriptedChatModel([twice, "done"])
    result = run(create_agent(model, [noop]), {"messages": ["go"]})

    answers = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert RAN == ["noop(1)"]
    assert [a.tool_call_id for a in answers] == ["same"]
    assert [c["id"] for c in result["messages"][1].tool_calls] == ["same"]


INVALID_JSON = {"name": "noop", "args": '{"x": ', "id": "c1", "error": "truncated JSON"}


def only_malformed(args: Any) -> AIMessage:
    """A reply whose one call to ``noop`` has ``args`` that are not an object, or (for
    ``INVALID_JSON``) arguments the provider could not parse."""
    if args is INVALID_JSON:
        return broken(invalid=[{**INVALID_JSON, "type": "invalid_tool_call"}])
    return broken({"name": "noop", "args": args, "id": "c1", "type": "tool_call"})


MALFORMED = pytest.mark.parametrize(
    ("args", "said"),
    [
        ("x=1", "its arguments must be a JSON object, got str 'x=1'"),
        (None, "its arguments must be a JSON object, got NoneType None"),
        ([1], "its arguments must be a JSON object, got list [1]"),
        (INVALID_JSON, "truncated JSON"),
    ],
    ids=["a str", "None", "a list", "invalid JSON"],
)


@MALFORMED
def test_a_reply_of_only_malformed_calls_is_answered_and_the_model_asked_again(
    run: Run, args: Any, said: str
) -> None:
    model = ScriptedChatModel([only_malformed(args), calls(("noop", {"x": 2})), "fixed"])
    result = run(create_agent(model, [noop]), {"messages": ["go"]})

    answer = result["messages"][2]
    assert isinstance(answer, ToolMessage)
    assert (answer.tool_call_id, answer.name, answer.status) == ("c1", "noop", "error")
    assert answer.content.startswith("Tool call noop with id c1 could not be executed")
    assert said in answer.content
    assert model.calls[1].messages[-1] == answer, "the model reads why, and can correct itself"
    assert RAN == ["noop(2)"]
    assert result["messages"][-1].content == "fixed"


def test_a_model_that_never_corrects_itself_stops_at_the_ceiling(run: Run) -> None:
    model = ScriptedChatModel([only_malformed("x=1")], repeat_last=True)
    agent = create_agent(model, [noop], max_model_calls=3)

    with pytest.raises(RunawayRunError, match="ceiling of 3 model calls"):
        run(agent, {"messages": ["go"]})
    assert model.call_count == 3


@MALFORMED
def test_langchains_handling_is_one_setting_away(run: Run, args: Any, said: str) -> None:
    model = ScriptedChatModel([only_malformed(args), "never"])
    agent = create_agent(model, [noop], answer_malformed_tool_calls=False)

    result = run(agent, {"messages": ["go"]})

    assert len(model.calls) == 1, "the run ends on the reply; the next model call answers it"
    assert [c["id"] for c in result["messages"][-1].invalid_tool_calls] == ["c1"]
    assert RAN == []


def test_an_empty_id_is_an_id(run: Run) -> None:
    model = ScriptedChatModel(
        [AIMessage("", tool_calls=[tool_call(name="noop", args={"x": 3}, id="")]), "done"]
    )
    result = run(create_agent(model, [noop]), {"messages": ["go"]})

    assert RAN == ["noop(3)"]
    assert [m.tool_call_id for m in result["messages"] if isinstance(m, ToolMessage)] == [""]
