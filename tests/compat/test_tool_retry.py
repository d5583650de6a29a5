"""LangChain 1.5's ``ToolRetryMiddleware`` arguments: the deprecated ``on_failure`` values
``"raise"`` and ``"return_message"`` mean ``"error"`` and ``"continue"``, with a warning."""

from __future__ import annotations

import warnings

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from graphagent import create_agent
from graphagent.middleware import ModelRetryMiddleware, ToolRetryMiddleware
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent


@tool
def dead(query: str) -> str:
    """Never works."""
    raise ConnectionError("down")


def agent_with(retry: ToolRetryMiddleware) -> object:
    model = ScriptedChatModel([calls(("dead", {"query": "x"})), "answered anyway"])
    return create_agent(model, [dead], middleware=[retry])


def test_raise_is_the_old_name_of_error(how_call: str) -> None:
    with pytest.warns(DeprecationWarning, match="on_failure='raise'.*on_failure='error'"):
        retry = ToolRetryMiddleware(max_retries=0, on_failure="raise")  # type: ignore[arg-type]
    assert retry.on_failure == "error"

    with pytest.raises(ConnectionError, match="down"):
        run_agent(agent_with(retry), how_call, {"messages": ["go"]})


def test_return_message_is_the_old_name_of_continue(how_call: str) -> None:
    with pytest.warns(
        DeprecationWarning, match="on_failure='return_message'.*on_failure='continue'"
    ):
        retry = ToolRetryMiddleware(max_retries=0, on_failure="return_message")  # type: ignore[arg-type]
    assert retry.on_failure == "continue"

    result = run_agent(agent_with(retry), how_call, {"messages": ["go"]})

    [failure] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert failure.status == "error"
    assert "ConnectionError" in failure.text
    assert result["messages"][-1].text == "answered anyway"


def test_the_warning_points_at_the_callers_line() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ToolRetryMiddleware(on_failure="raise")  # type: ignore[arg-type]
        ModelRetryMiddleware(on_failure="return_message")  # type: ignore[arg-type]

    assert [w.filename for w in caught] == [__file__, __file__]
