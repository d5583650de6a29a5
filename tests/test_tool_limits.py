"""Parallel tool calls: at most so many at once per run and per tool, and one call's failure
stays in its branch: its siblings run to their end and keep their answers."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver

from graphagent import ToolLimits, as_tool, create_agent
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent

LIMIT = 30  # seconds any wait in these tests may take at most
GO = {"messages": [("user", "go")]}


class InFlight:
    """Counts the calls in flight, and the most there were at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.now = 0
        self.most = 0

    def tool(self, name: str) -> BaseTool:
        def run(n: int) -> str:
            with self._lock:
                self.now += 1
                self.most = max(self.most, self.now)
            time.sleep(0.02)  # long enough for the other calls to start, were they allowed
            with self._lock:
                self.now -= 1
            return f"{name} {n}"

        return tool(name, description=f"The {name} tool.")(run)


def fan_out(name: str, count: int) -> ScriptedChatModel:
    return ScriptedChatModel([calls(*((name, {"n": n}) for n in range(count))), "done"])


@pytest.mark.timeout(60)
def test_a_reply_with_many_calls_runs_at_most_per_run_at_once(how_call: str) -> None:
    flight = InFlight()
    agent = create_agent(
        fan_out("fetch", 6), [flight.tool("fetch")], tool_limits=ToolLimits(per_run=2)
    )

    result = run_agent(agent, how_call, GO)

    answers = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
    assert sorted(answers) == [f"fetch {n}" for n in range(6)]
    assert flight.most <= 2


@pytest.mark.timeout(60)
def test_a_tools_limit_holds_across_the_runs_of_the_agent() -> None:
    flight = InFlight()
    model = ScriptedChatModel([calls(("fetch", {"n": 0}), ("fetch", {"n": 1})), "done"] * 3)
    agent = create_agent(
        model, [flight.tool("fetch")], tool_limits=ToolLimits(per_tool={"fetch": 1})
    )

    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda _: agent.invoke(GO), range(3)))

    assert [r["messages"][-1].content for r in results] == ["done"] * 3
    assert flight.most == 1


@pytest.mark.parametrize(
    ("given", "error"),
    [
        ({"per_run": 0}, r"per_run=0\): give a whole number of at least 1, or None"),
        ({"per_tool": {"fetch": 0}}, r"per_tool=\{'fetch': 0\}\): give a tool's name"),
    ],
)
def test_limits_that_cannot_be_kept_are_refused(given: dict[str, Any], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        ToolLimits(**given)


def test_a_limit_on_a_tool_the_agent_lacks_fails_when_it_is_built() -> None:
    flight = InFlight()
    with pytest.raises(ValueError, match=r"names \['fecth'\].*its tools are \['fetch'\]"):
        create_agent(
            fan_out("fetch", 1),
            [flight.tool("fetch")],
            tool_limits=ToolLimits(per_tool={"fecth": 2}),
        )


class Sibling:
    """Two parallel calls: ``slow`` is still working when ``boom`` fails (once)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.failed = threading.Event()
        self.slow_runs = 0
        self.boom_runs = 0

    def tools(self) -> list[Callable[..., str]]:
        def slow() -> str:
            """Slow work."""
            self.slow_runs += 1
            self.started.set()
            assert self.failed.wait(LIMIT)
            time.sleep(0.05)  # still working when boom's error reaches the run
            return "slow done"

        def boom() -> str:
            """Fails the first time."""
            self.boom_runs += 1
            if self.boom_runs == 1:
                assert self.started.wait(LIMIT)
                self.failed.set()
                raise ConnectionError("boom")
            return "boom done"

        return [slow, boom]


def fail_then_resume(agent: Any, how_call: str) -> dict[str, Any]:
    """Run ``agent`` until ``boom`` fails, then resume it: the tool answers by tool name."""
    config = {"configurable": {"thread_id": "t"}}
    with pytest.raises(ConnectionError, match="boom"):
        run_agent(agent, how_call, GO, config=config)
    result = run_agent(agent, how_call, None, config=config)
    return {m.name: m.content for m in result["messages"] if isinstance(m, ToolMessage)}


@pytest.mark.timeout(60)
def test_a_failing_call_lets_its_sibling_finish_and_keep_its_answer(how_call: str) -> None:
    sibling = Sibling()
    model = ScriptedChatModel([calls(("slow", {}), ("boom", {})), "done"])
    agent = create_agent(model, sibling.tools(), checkpointer=InMemorySaver())

    answers = fail_then_resume(agent, how_call)

    assert answers == {"slow": "slow done", "boom": "boom done"}
    assert (sibling.slow_runs, sibling.boom_runs) == (1, 2), "only the failed call ran again"


@pytest.mark.timeout(60)
def test_a_failing_sub_agent_lets_its_sibling_sub_agent_finish(how_call: str) -> None:
    sibling = Sibling()
    slow, boom = sibling.tools()
    researcher = create_agent(
        ScriptedChatModel([calls(("slow", {})), "researched"]), [slow], name="researcher"
    )
    checker = create_agent(
        ScriptedChatModel([calls(("boom", {})), "checked"]),  # resumed where it failed
        [boom],
        name="checker",
    )
    lead = create_agent(
        ScriptedChatModel(
            [calls(("research", {"request": "a"}), ("check", {"request": "b"})), "done"]
        ),
        [
            as_tool(researcher, name="research", description="Research."),
            as_tool(checker, name="check", description="Check."),
        ],
        checkpointer=InMemorySaver(),
    )

    answers = fail_then_resume(lead, how_call)

    assert answers == {"research": "researched", "check": "checked"}
    assert (sibling.slow_runs, sibling.boom_runs) == (1, 2), "only the failed sub-agent ran again"
