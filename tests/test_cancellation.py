"""Cancellation reaches every layer: a cancelled or timed-out run cancels the async work beneath
a bridged sync wrapper, and closing a stream, the agent's own or a sync parent's, stops the agent
at its next step with wrap_agent closed.

None of these tests is timed; each waits under a generous limit so a hang fails the test.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

import pytest
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph

from graphagent import AgentState, create_agent
from graphagent.middleware import AgentMiddleware
from graphagent.testing import ScriptedChatModel, calls
from tests.test_bridge import LIMIT, SyncWrappers, _wait


class Watch(AgentMiddleware):
    """Records how each run of the agent ended."""

    def __init__(self) -> None:
        self.record: list[str] = []

    def wrap_agent(self, state: Any, runtime: Any) -> Generator[None, Any, None]:
        try:
            yield
        except BaseException as error:
            self.record.append(type(error).__name__)
            raise
        self.record.append("finished")


class Ledger:
    """What the async tool did, as events the test waits on: it started, and it was cancelled.
    It never finishes by itself, so a cancellation that misses it fails the test at ``LIMIT``."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.runs = 0
        self.moved = 0


def _transfer_agent(ledger: Ledger, wrapper: AgentMiddleware, watch: Watch) -> Any:
    @tool
    async def transfer(x: int) -> str:
        """Move money."""
        ledger.runs += 1
        ledger.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            ledger.cancelled.set()
            raise
        ledger.moved += 1
        return "money moved"

    model = ScriptedChatModel([calls(("transfer", {"x": 1})), "done"])
    return create_agent(model, [transfer], middleware=[watch, wrapper])


def test_a_timeout_cancels_an_async_tool_beneath_a_sync_wrapper() -> None:
    ledger, watch = Ledger(), Watch()
    agent = _transfer_agent(ledger, SyncWrappers(), watch)

    async def scenario() -> None:
        run = asyncio.ensure_future(agent.ainvoke({"messages": [("user", "pay")]}))
        await ledger.started.wait()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(run, 0.01)  # the tool waits for ever: the timeout fires
        await ledger.cancelled.wait()

    _wait(scenario())

    assert ledger.runs == 1
    assert ledger.moved == 0
    assert watch.record == ["CancelledError"]


def test_a_sync_retry_wrapper_cannot_run_a_cancelled_call_again() -> None:
    class RetryEverything(AgentMiddleware):
        """A careless retry loop: it even catches CancelledError."""

        def __init__(self) -> None:
            self.failures: list[str] = []
            self.gave_up = threading.Event()

        def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            try:
                for _ in range(3):
                    try:
                        return handler(request)
                    except BaseException as error:
                        self.failures.append(type(error).__name__)
                raise RuntimeError("gave up")
            finally:
                self.gave_up.set()

    ledger, watch = Ledger(), Watch()
    retry = RetryEverything()
    agent = _transfer_agent(ledger, retry, watch)

    async def scenario() -> None:
        task = asyncio.ensure_future(agent.ainvoke({"messages": [("user", "pay")]}))
        await ledger.started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await ledger.cancelled.wait()
        assert await asyncio.to_thread(retry.gave_up.wait, LIMIT)

    _wait(scenario())

    assert ledger.runs == 1  # the retries never reached the tool
    assert ledger.moved == 0
    assert retry.failures == ["CancelledError"] * 3
    assert watch.record == ["CancelledError"]


def test_cancelling_a_run_cancels_an_async_model_beneath_a_sync_wrapper() -> None:
    seen: list[str] = []
    called, cancelled = asyncio.Event(), asyncio.Event()

    class SlowModel(ScriptedChatModel):
        async def _agenerate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            seen.append("called")
            called.set()
            try:
                await asyncio.Event().wait()  # answers only if never cancelled: never
            except asyncio.CancelledError:
                seen.append("cancelled")
                cancelled.set()
                raise
            seen.append("answered")
            return await super()._agenerate(messages, *args, **kwargs)

    agent = create_agent(SlowModel(["hi"]), middleware=[SyncWrappers()])

    async def scenario() -> None:
        run = asyncio.ensure_future(agent.ainvoke({"messages": [("user", "hi")]}))
        await called.wait()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(run, 0.01)
        await cancelled.wait()

    _wait(scenario())

    assert seen == ["called", "cancelled"]


# --- closing a parent's stream ----------------------------------------------------------------


def _parent_of(agent: Any) -> Any:
    parent = StateGraph(AgentState)
    parent.add_node("agent", agent)
    parent.add_edge(START, "agent")
    parent.add_edge("agent", END)
    return parent.compile()


def _drain_requested() -> bool:
    from langgraph._internal._constants import CONFIG_KEY_RUNTIME
    from langgraph.config import get_config

    return bool(get_config()["configurable"][CONFIG_KEY_RUNTIME].control.drain_requested)


def test_closing_a_sync_parents_stream_stops_the_agent_at_its_next_step() -> None:
    tool_runs: list[str] = []
    started = threading.Event()

    @tool
    def work(x: int) -> str:
        """Work until the consumer has gone."""
        tool_runs.append("started")
        started.set()
        deadline = time.monotonic() + LIMIT
        while not _drain_requested():
            assert time.monotonic() < deadline, "closing the stream never reached the agent"
            time.sleep(0.01)
        return "worked"

    watch = Watch()
    model = ScriptedChatModel([calls(("work", {"x": i})) for i in range(5)] + ["done"])
    parent = _parent_of(create_agent(model, [work], middleware=[watch]))

    stream = parent.stream({"messages": [("user", "go")]}, stream_mode="updates", subgraphs=True)
    for _namespace, update in stream:
        if "model" in update:
            break
    assert started.wait(LIMIT), "the tool never started"  # it runs in a thread of its own
    stream.close()

    assert model.call_count == 1  # nothing after the step that was running
    assert tool_runs == ["started"]
    assert watch.record == ["GeneratorExit"]


def test_closing_an_async_parents_stream_stops_the_agent() -> None:
    tool_runs: list[str] = []
    started = asyncio.Event()

    @tool
    async def work(x: int) -> str:
        """Work for a long time."""
        tool_runs.append("started")
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            tool_runs.append("cancelled")
            raise
        return "worked"

    watch = Watch()
    model = ScriptedChatModel([calls(("work", {"x": i})) for i in range(5)] + ["done"])
    parent = _parent_of(create_agent(model, [work], middleware=[watch]))

    async def scenario() -> None:
        inputs = {"messages": [("user", "go")]}
        stream = parent.astream(inputs, stream_mode="updates", subgraphs=True)
        async for _namespace, update in stream:
            if "model" in update:
                break
        await started.wait()  # the agent runs on in its own task meanwhile
        await stream.aclose()  # type: ignore[attr-defined]

    _wait(scenario())

    assert model.call_count == 1
    assert tool_runs == ["started", "cancelled"]
    assert watch.record == ["CancelledError"]


def test_closing_the_agents_own_sync_stream_stops_it() -> None:
    watch = Watch()
    model = ScriptedChatModel([calls(("echo", {"x": i})) for i in range(5)] + ["done"])

    @tool
    def echo(x: int) -> int:
        """Echo."""
        return x

    agent = create_agent(model, [echo], middleware=[watch])
    stream = agent.stream({"messages": [("user", "go")]}, stream_mode="updates")
    for update in stream:
        if "model" in update:
            break
    stream.close()

    assert model.call_count == 1
    assert watch.record == ["GeneratorExit"]


def _work_until_drained(runs: list[str], stopped: threading.Event | None = None) -> Any:
    """A tool that works until the agent running it is drained, then sets ``stopped``."""

    @tool
    def work(x: int) -> str:
        """Work until the consumer has gone."""
        runs.append("started")
        deadline = time.monotonic() + LIMIT
        while not _drain_requested():
            assert time.monotonic() < deadline, "closing the stream never reached the agent"
            time.sleep(0.01)
        if stopped is not None:
            stopped.set()
        return "worked"

    return work


def test_closing_a_sync_parents_stream_stops_an_agent_nested_two_graphs_deep() -> None:
    tool_runs: list[str] = []

    work = _work_until_drained(tool_runs)

    watch = Watch()
    model = ScriptedChatModel([calls(("work", {"x": i})) for i in range(5)] + ["done"])
    middle = StateGraph(AgentState)
    middle.add_node("agent", create_agent(model, [work], middleware=[watch]))
    middle.add_edge(START, "agent")
    middle.add_edge("agent", END)
    root = _parent_of(middle.compile())

    stream = root.stream({"messages": [("user", "go")]}, stream_mode="updates", subgraphs=True)
    for _namespace, update in stream:
        if "model" in update:
            break
    stream.close()

    assert model.call_count == 1
    assert tool_runs == ["started"]
    assert watch.record == ["GeneratorExit"]


def test_closing_a_parents_stream_stops_the_agent_and_leaves_its_siblings_alone() -> None:
    """The drain is the agent's own: a plain node running beside it in the parent's step sees
    no drain, so it finishes as it would without graphagent."""
    agent_stopped = threading.Event()
    sibling_started = threading.Event()
    sibling_saw: list[bool] = []

    work = _work_until_drained([], agent_stopped)

    def sibling(state: Any) -> dict[str, Any]:
        sibling_started.set()
        assert agent_stopped.wait(LIMIT), "the agent was never stopped"
        sibling_saw.append(_drain_requested())
        return {}

    model = ScriptedChatModel([calls(("work", {"x": 1})), "done"])
    parent = StateGraph(AgentState)
    parent.add_node("agent", create_agent(model, [work]))
    parent.add_node("sibling", sibling)
    parent.add_edge(START, "agent")
    parent.add_edge(START, "sibling")
    compiled = parent.compile()

    stream = compiled.stream({"messages": [("user", "go")]}, stream_mode="updates", subgraphs=True)
    for _namespace, update in stream:
        if "model" in update:
            break
    # A task still queued when the stream closes never starts: close once the sibling runs.
    assert sibling_started.wait(LIMIT), "the sibling never started"
    stream.close()

    assert sibling_saw == [False]


_PLAIN_GRAPH_CLOSED = """
import sys
from typing import TypedDict

from langgraph._internal._constants import CONFIG_KEY_RUNTIME
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.pregel._loop import SyncPregelLoop

exit_before = SyncPregelLoop.__exit__
loop_attributes = sorted(vars(SyncPregelLoop))
if "with_graphagent" in sys.argv:
    import graphagent
    from graphagent.testing import ScriptedChatModel

    agent = graphagent.create_agent(ScriptedChatModel(["hi", "hi", "hi"]))
    agent.invoke({"messages": [("user", "hi")]})
    stream = agent.stream({"messages": [("user", "hi")]}, stream_mode="updates")
    next(stream)
    stream.close()
    holder = StateGraph(graphagent.AgentState)
    holder.add_node("agent", agent)
    holder.add_edge(START, "agent")
    holder.add_edge("agent", END)
    holder.compile().invoke({"messages": [("user", "hi")]})


class State(TypedDict):
    steps: list[str]


controls = []


def first(state: State) -> dict[str, list[str]]:
    controls.append(get_config()["configurable"][CONFIG_KEY_RUNTIME].control)
    return {"steps": ["first"]}


inner = StateGraph(State)
inner.add_node("first", first)
inner.add_node("second", lambda state: {"steps": ["second"]})
inner.add_edge(START, "first")
inner.add_edge("first", "second")
inner.add_edge("second", END)
outer = StateGraph(State)
outer.add_node("inner", inner.compile())
outer.add_edge(START, "inner")
outer.add_edge("inner", END)
stream = outer.compile().stream({"steps": []}, stream_mode="updates", subgraphs=True)
for namespace, update in stream:
    if "first" in update:
        break
stream.close()
print("drain requested:", controls[0].drain_requested, controls[0].drain_reason)
print("__exit__ unchanged:", SyncPregelLoop.__exit__ is exit_before)
print("attributes unchanged:", sorted(vars(SyncPregelLoop)) == loop_attributes)
"""


@pytest.mark.timeout(300)
def test_a_plain_graph_runs_as_without_graphagent() -> None:
    """Importing graphagent and running agents changes nothing of langgraph's for a graph
    holding no agent: closing its sync stream drains nothing, and langgraph's loop class is the
    one langgraph defines."""

    def run(*arguments: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", _PLAIN_GRAPH_CLOSED, *arguments],
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    without = run()
    assert without == (
        "drain requested: False None\n__exit__ unchanged: True\nattributes unchanged: True\n"
    )
    assert run("with_graphagent") == without


def test_importing_graphagent_leaves_langgraphs_loop_as_it_is() -> None:
    from langgraph.pregel import _loop

    assert "_graphagent_drains_on_close" not in vars(_loop.SyncPregelLoop)
    assert _loop.SyncPregelLoop.__exit__.__module__ == "langgraph.pregel._loop"
