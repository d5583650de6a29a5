"""The ``graphagent`` logger: silent by default; at DEBUG the build plan and every step."""

from __future__ import annotations

import logging
import subprocess
import sys
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command

from graphagent import create_agent
from graphagent._core import log as _log
from graphagent.middleware import after_model, before_model, wrap_tool_call
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run, run_agent


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@before_model
def look(state: Any, runtime: Any) -> None:
    return None


@after_model(can_jump_to=["end"])
def stop_at_ten(state: Any, runtime: Any) -> dict[str, Any] | None:
    return {"jump_to": "end"} if "10" in state["messages"][-1].text else None


def steps(records: list[logging.LogRecord]) -> list[str]:
    return [r.getMessage() for r in records if r.name == "graphagent"]


def test_debug_logs_the_plan_then_each_hook_model_and_tool_step(
    run: Run, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedChatModel([calls(("add", {"a": 4, "b": 6})), "4 + 6 = 10", "unused"])
    with caplog.at_level(logging.DEBUG, logger="graphagent"):
        agent = create_agent(model, [add], middleware=[look, stop_at_ten])
        run(agent, {"messages": [("user", "4 + 6?")]})

    plan, *rest = steps(caplog.records)
    assert plan.startswith("create_agent built this plan:\nAgent 'LangGraph' with tools: add\n")
    assert "  before_model     look\n" in plan
    assert rest == [
        "hook look.before_model: no update",
        "model: calls add({'a': 4, 'b': 6})",
        "hook stop_at_ten.after_model: no update",
        "tool add({'a': 4, 'b': 6}): '10'",
        "hook look.before_model: no update",
        "model: '4 + 6 = 10'",
        "hook stop_at_ten.after_model: updates jump_to='end'",
    ]


def test_a_tool_answered_with_a_command_is_named(
    how_call: str, caplog: pytest.LogCaptureFixture
) -> None:
    @wrap_tool_call
    def answer_with_command(request: Any, handler: Any) -> Command[Any]:
        reply = ToolMessage("done", tool_call_id=request.tool_call["id"])
        return Command(update={"messages": [reply]})

    model = ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "ok"])
    agent = create_agent(model, [add], middleware=[answer_with_command])
    with caplog.at_level(logging.DEBUG, logger="graphagent"):
        run_agent(agent, how_call, {"messages": [("user", "go")]})

    assert "tool add({'a': 1, 'b': 2}): Command" in steps(caplog.records)


def test_nothing_is_described_when_debug_is_off(
    run: Run, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def not_now(*args: Any) -> str:
        raise AssertionError("formatted a step with DEBUG off")

    for name in ("_update", "_message"):
        monkeypatch.setattr(_log, name, not_now)
    monkeypatch.setattr("graphagent.factory.explain", not_now)

    with caplog.at_level(logging.INFO, logger="graphagent"):
        agent = create_agent(ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "3"]), [add])
        result = run(agent, {"messages": [("user", "1 + 2?")]})

    assert result["messages"][-1].content == "3"
    assert steps(caplog.records) == []


def test_silent_unless_the_application_configures_logging() -> None:
    script = (
        "import logging\n"
        "from graphagent import create_agent\n"
        "from graphagent.testing import ScriptedChatModel\n"
        "agent = create_agent(ScriptedChatModel(['hi']))\n"
        "agent.invoke({'messages': [('user', 'hello')]})\n"
        "logging.getLogger('graphagent.middleware.model_fallback').warning('unseen')\n"
        "print('ran')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )

    assert (done.stdout, done.stderr) == ("ran\n", "")
