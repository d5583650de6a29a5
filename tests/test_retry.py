"""ModelRetryMiddleware and ToolRetryMiddleware: attempts, delays, failure handling, scope,
interrupts passing through, and async runs that wait without blocking the event loop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core import exceptions as core_exceptions
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command, interrupt

from graphagent import create_agent
from graphagent._core.bridge import ASYNC, SYNC, Mode, run_sync
from graphagent.errors import MiddlewareError
from graphagent.middleware._kit import retry as _retry
from graphagent.middleware._kit.retry import Exhausted, RetryPolicy, call_with_retries, retry_policy
from graphagent.middleware.model_retry import ModelRetryMiddleware
from graphagent.middleware.tool_retry import ToolRetryMiddleware
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run, run_agent

Delays = list[tuple[str, float]]


@pytest.fixture
def delays(monkeypatch: pytest.MonkeyPatch) -> Delays:
    """Every wait the retry loops ask for, as ``("sync" | "async", seconds)``; nobody waits."""
    recorded: Delays = []

    async def record(mode: Mode, seconds: float) -> None:
        recorded.append(("async" if mode.asynchronous else "sync", seconds))

    monkeypatch.setattr(_retry, "wait", record)
    return recorded


def waits(delays: Delays, how: str) -> list[float]:
    """The recorded seconds, after checking each wait used the twin matching the entry point."""
    mode = "async" if how.startswith("a") else "sync"
    assert {m for m, _ in delays} <= {mode}, f"{how} waited with {delays}"
    return [seconds for _, seconds in delays]


class FailingTimes:
    """A callable that raises ``error`` for its first ``failures`` calls, then returns ``value``."""

    def __init__(self, failures: int, error: Exception, value: Any = "ok") -> None:
        self.failures, self.error, self.value = failures, error, value
        self.calls = 0

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return self.value


def tool_agent(behaviour: FailingTimes, *middleware: Any, name: str = "flaky", **kw: Any) -> Any:
    @tool(name)
    def the_tool(query: str) -> str:
        """Look something up."""
        return str(behaviour())

    model = ScriptedChatModel([calls((name, {"query": "middleware"})), "done"])
    return create_agent(model, [the_tool], middleware=list(middleware), **kw)


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


# -- the seed's experiment -----------------------------------------------------------------------


def test_a_tool_failing_twice_succeeds_on_the_third_call(
    run: Run, how: str, delays: Delays
) -> None:
    flaky = FailingTimes(2, ConnectionError("temporarily down"), value=42)
    retry = ToolRetryMiddleware(
        max_retries=3,
        retry_on=(ConnectionError,),
        initial_delay=0.5,
        backoff_factor=2.0,
        jitter=False,
        on_failure="continue",
    )

    result = run(tool_agent(flaky, retry), {"messages": ["look up middleware"]})

    assert flaky.calls == 3
    assert waits(delays, how) == [0.5, 1.0]
    [answer] = tool_messages(result)
    assert (answer.status, answer.content) == ("success", "42")
    assert result["messages"][-1].content == "done"


def test_a_tool_that_never_recovers_answers_with_an_error_message(
    run: Run, how: str, delays: Delays
) -> None:
    dead = FailingTimes(99, ConnectionError("service down"))
    model = ScriptedChatModel([calls(("dead", {"query": "x"})), "the tool is down"])

    @tool
    def dead_tool(query: str) -> str:
        """Never works."""
        return str(dead())

    dead_tool.name = "dead"
    retry = ToolRetryMiddleware(max_retries=2, jitter=False)
    result = run(create_agent(model, [dead_tool], middleware=[retry]), {"messages": ["go"]})

    assert dead.calls == 3
    assert waits(delays, how) == [1.0, 2.0]
    [failure] = tool_messages(result)
    assert failure.content == (
        "Tool 'dead' failed after 3 attempts with ConnectionError: service down. Please try again."
    )
    assert (failure.status, failure.name) == ("error", "dead")
    assert failure.tool_call_id == result["messages"][1].tool_calls[0]["id"]
    assert model.calls[1].messages[-1] == failure
    assert result["messages"][-1].content == "the tool is down"


def test_one_attempt_is_worded_in_the_singular(how_call: str, delays: Delays) -> None:
    dead = FailingTimes(99, TimeoutError("slow"))
    result = run_agent(
        tool_agent(dead, ToolRetryMiddleware(max_retries=0)), how_call, {"messages": ["go"]}
    )
    assert dead.calls == 1
    assert delays == []
    assert tool_messages(result)[0].content == (
        "Tool 'flaky' failed after 1 attempt with TimeoutError: slow. Please try again."
    )


def test_on_failure_error_re_raises_the_last_error(how_call: str, delays: Delays) -> None:
    errors = iter([ConnectionError("first"), ConnectionError("second"), ConnectionError("last")])

    @tool
    def dead(query: str) -> str:
        """Never works."""
        raise next(errors)

    model = ScriptedChatModel([calls(("dead", {"query": "x"})), "unreachable"])
    retry = ToolRetryMiddleware(max_retries=2, on_failure="error", jitter=False)
    agent = create_agent(model, [dead], middleware=[retry])

    with pytest.raises(ConnectionError) as caught:
        run_agent(agent, how_call, {"messages": ["go"]})
    assert caught.value.args == ("last",)
    assert waits(delays, how_call) == [1.0, 2.0]
    assert model.call_count == 1


def test_a_callable_on_failure_writes_the_message(how_call: str, delays: Delays) -> None:
    seen: list[Exception] = []

    def explain(exc: Exception) -> str:
        seen.append(exc)
        return f"Lookup unavailable ({type(exc).__name__}); answer without it."

    error = ConnectionError("secret-host:5432 refused")
    retry = ToolRetryMiddleware(max_retries=1, on_failure=explain)
    result = run_agent(tool_agent(FailingTimes(9, error), retry), how_call, {"messages": ["go"]})

    [failure] = tool_messages(result)
    assert failure.content == "Lookup unavailable (ConnectionError); answer without it."
    assert failure.status == "error"
    assert seen == [error]


# -- which errors are retried ------------------------------------------------------------------


@pytest.mark.parametrize(
    "retry_on",
    [(ConnectionError,), ConnectionError, lambda exc: "retry" in str(exc)],
    ids=["tuple", "one-class", "predicate"],
)
def test_errors_retry_on_rejects_propagate_at_once(
    how_call: str, delays: Delays, retry_on: Any
) -> None:
    broken = FailingTimes(9, ValueError("bad input"))
    retry = ToolRetryMiddleware(retry_on=retry_on, on_failure="continue")
    with pytest.raises(ValueError, match="bad input"):
        run_agent(tool_agent(broken, retry), how_call, {"messages": ["go"]})
    assert broken.calls == 1
    assert delays == []


def test_a_predicate_sees_each_error(how_call: str, delays: Delays) -> None:
    asked: list[str] = []

    def transient(exc: Exception) -> bool:
        asked.append(str(exc))
        return isinstance(exc, ConnectionError)

    flaky = FailingTimes(2, ConnectionError("blip"))
    retry = ToolRetryMiddleware(retry_on=transient, jitter=False)
    result = run_agent(tool_agent(flaky, retry), how_call, {"messages": ["go"]})
    assert asked == ["blip", "blip"]
    assert tool_messages(result)[0].content == "ok"


@pytest.mark.skipif(
    not hasattr(core_exceptions, "ModelRateLimitError"), reason="langchain-core without ModelError"
)
def test_by_default_provider_errors_marked_final_are_not_retried(
    how_call: str, delays: Delays
) -> None:
    denied = FailingTimes(9, core_exceptions.ModelAuthenticationError("bad key"))
    with pytest.raises(core_exceptions.ModelAuthenticationError):
        run_agent(tool_agent(denied, ToolRetryMiddleware()), how_call, {"messages": ["go"]})
    assert denied.calls == 1

    limited = FailingTimes(1, core_exceptions.ModelRateLimitError("slow down"))
    result = run_agent(tool_agent(limited, ToolRetryMiddleware()), how_call, {"messages": ["go"]})
    assert limited.calls == 2
    assert tool_messages(result)[0].content == "ok"


# -- which tools are retried -------------------------------------------------------------------


def test_tools_limits_retrying_to_the_named_tools(how_call: str, delays: Delays) -> None:
    covered = FailingTimes(1, ConnectionError("blip"), value="covered ok")
    uncovered = FailingTimes(1, ConnectionError("blip"), value="uncovered ok")

    @tool
    def search(query: str) -> str:
        """Search."""
        return str(covered())

    @tool
    def fetch(query: str) -> str:
        """Fetch."""
        return str(uncovered())

    model = ScriptedChatModel([calls(("search", {"query": "a"})), calls(("fetch", {"query": "b"}))])
    retry = ToolRetryMiddleware(tools=["search"], jitter=False)
    agent = create_agent(model, [search, fetch], middleware=[retry])

    with pytest.raises(ConnectionError, match="blip"):
        run_agent(agent, how_call, {"messages": ["go"]})
    assert (covered.calls, uncovered.calls) == (2, 1)
    assert waits(delays, how_call) == [1.0]


def test_tools_given_by_name_or_instance_are_not_registered_with_the_agent() -> None:
    @tool
    def search(query: str) -> str:
        """Search."""
        return query

    retry = ToolRetryMiddleware(tools=[search, "fetch"])
    assert retry.covered_tools == frozenset({"search", "fetch"})
    assert ToolRetryMiddleware().covered_tools is None
    assert tuple(retry.tools) == ()


# -- delays --------------------------------------------------------------------------------------


def policy(**options: Any) -> _retry.RetryPolicy:
    defaults: dict[str, Any] = {
        "max_retries": 2,
        "retry_on": (Exception,),
        "on_failure": "continue",
        "backoff_factor": 2.0,
        "initial_delay": 1.0,
        "max_delay": 60.0,
        "jitter": False,
    }
    return retry_policy("Test", **{**defaults, **options})


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]),
        ({"initial_delay": 0.5, "backoff_factor": 3}, [0.5, 1.5, 4.5, 13.5]),
        ({"backoff_factor": 0, "initial_delay": 2}, [2.0, 2.0, 2.0]),
        ({"backoff_factor": 1, "initial_delay": 2}, [2.0, 2.0, 2.0]),
        ({"backoff_factor": 0.5, "initial_delay": 4}, [4.0, 2.0, 1.0]),
        ({"initial_delay": 0}, [0.0, 0.0, 0.0]),
        ({"initial_delay": 10, "max_delay": 3}, [3.0, 3.0]),
        ({"max_delay": float("inf")}, [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]),
    ],
)
def test_delays_grow_by_the_backoff_factor_up_to_max_delay(
    options: dict[str, Any], expected: list[float]
) -> None:
    chosen = policy(**options)
    assert [chosen.delay(n) for n in range(len(expected))] == expected


def test_a_huge_retry_number_waits_max_delay_instead_of_overflowing() -> None:
    assert policy(max_delay=7).delay(100_000) == 7.0
    assert policy(initial_delay=0).delay(100_000) == 0.0


def test_jitter_varies_each_delay_by_at_most_a_quarter() -> None:
    jittered = policy(jitter=True, max_delay=10.0)
    for n, base in enumerate([1.0, 2.0, 4.0, 8.0]):
        samples = [jittered.delay(n) for _ in range(300)]
        assert all(0.75 * base <= s <= 1.25 * base for s in samples)
        assert max(samples) - min(samples) > 0.25 * base  # spread, not a constant
        assert min(samples) < base < max(samples)


def test_jitter_never_exceeds_max_delay() -> None:
    jittered = policy(jitter=True, initial_delay=10.0, max_delay=5.0)
    samples = [jittered.delay(0) for _ in range(300)]
    assert min(samples) >= 0.75 * 5.0
    assert max(samples) == 5.0


def test_max_delay_caps_the_waits_of_a_run(how_call: str, delays: Delays) -> None:
    retry = ToolRetryMiddleware(max_retries=4, initial_delay=1, backoff_factor=10, max_delay=5)
    retry_without_jitter = ToolRetryMiddleware(
        max_retries=4, initial_delay=1, backoff_factor=10, max_delay=5, jitter=False
    )
    run_agent(
        tool_agent(FailingTimes(9, OSError("x")), retry_without_jitter),
        how_call,
        {"messages": ["go"]},
    )
    assert waits(delays, how_call) == [1.0, 5.0, 5.0, 5.0]

    delays.clear()
    run_agent(tool_agent(FailingTimes(9, OSError("x")), retry), how_call, {"messages": ["go"]})
    first, *capped = waits(delays, how_call)
    assert 0.75 <= first <= 1.25
    assert len(capped) == 3
    assert all(3.75 <= d <= 5.0 for d in capped)


# -- the retry loop on its own -------------------------------------------------------------------


def outcomes(*steps: Exception | str) -> Callable[[], str]:
    pending: Iterator[Exception | str] = iter(steps)

    def attempt() -> str:
        step = next(pending)
        if isinstance(step, Exception):
            raise step
        return step

    return attempt


def sync_loop(chosen: RetryPolicy, attempt: Callable[[], str]) -> Any:
    return run_sync(call_with_retries(SYNC, chosen, attempt), "'Retry.wrap_model_call'")


def test_the_loop_stops_at_the_first_success(delays: Delays) -> None:
    assert sync_loop(policy(), outcomes(OSError("a"), "ok")) == "ok"
    assert delays == [("sync", 1.0)]


def test_the_loop_reports_exhaustion_with_the_last_error(delays: Delays) -> None:
    last = OSError("c")
    result = sync_loop(policy(), outcomes(OSError("a"), OSError("b"), last, "never"))
    assert result == Exhausted(last, 3)
    assert result.describe() == "3 attempts with OSError: c"


def test_control_flow_signals_pass_through_without_a_retry(delays: Delays) -> None:
    signal = GraphBubbleUp("interrupt")
    for chosen in (policy(), policy(retry_on=lambda exc: True), policy(retry_on=(Exception,))):
        with pytest.raises(GraphBubbleUp) as caught:
            sync_loop(chosen, outcomes(signal, "never"))
        assert caught.value is signal
        attempt = _async(outcomes(OSError("a"), signal, "no"))
        with pytest.raises(GraphBubbleUp) as caught:
            asyncio.run(call_with_retries(ASYNC, chosen, attempt))
        assert caught.value is signal
    assert delays == [("async", 1.0)] * 3


def _async(attempt: Callable[[], str]) -> Callable[[], Any]:
    async def run() -> str:
        return attempt()

    return run


# -- model retries -----------------------------------------------------------------------------


def failing(error: Exception) -> Callable[[list[BaseMessage]], str]:
    def reply(messages: list[BaseMessage]) -> str:
        raise error

    return reply


def test_a_flaky_model_is_called_again(run: Run, how: str, delays: Delays) -> None:
    boom = failing(TimeoutError("model timed out"))
    model = ScriptedChatModel([boom, boom, "answer"])
    retry = ModelRetryMiddleware(initial_delay=0.25, jitter=False)

    result = run(create_agent(model, middleware=[retry]), {"messages": ["q"]})

    assert model.call_count == 3
    assert waits(delays, how) == [0.25, 0.5]
    assert [m.content for m in result["messages"]] == ["q", "answer"]


def test_a_model_that_never_recovers_ends_with_a_failure_message(
    run: Run, how: str, delays: Delays
) -> None:
    model = ScriptedChatModel([failing(TimeoutError("model timed out"))], repeat_last=True)
    retry = ModelRetryMiddleware(max_retries=2, jitter=False)

    result = run(create_agent(model, middleware=[retry]), {"messages": ["q"]})

    assert model.call_count == 3
    assert waits(delays, how) == [1.0, 2.0]
    last = result["messages"][-1]
    assert isinstance(last, AIMessage)
    assert last.content == "Model call failed after 3 attempts with TimeoutError: model timed out"
    assert not last.tool_calls


def test_the_run_goes_on_after_a_model_failure_message(how_call: str, delays: Delays) -> None:
    seen: list[str] = []

    @tool
    def note(text: str) -> str:
        """Write a note."""
        seen.append(text)
        return "noted"

    model = ScriptedChatModel([calls(("note", {"text": "hi"})), failing(OSError("gone"))])
    retry = ModelRetryMiddleware(max_retries=0, on_failure=lambda exc: f"Sorry: {exc}")
    result = run_agent(
        create_agent(model, [note], middleware=[retry]), how_call, {"messages": ["q"]}
    )
    assert seen == ["hi"]
    assert result["messages"][-1].content == "Sorry: gone"
    assert delays == []


def test_model_on_failure_error_re_raises(how_call: str, delays: Delays) -> None:
    model = ScriptedChatModel([failing(TimeoutError("model timed out"))], repeat_last=True)
    retry = ModelRetryMiddleware(max_retries=1, on_failure="error", jitter=False)
    with pytest.raises(TimeoutError, match="model timed out"):
        run_agent(create_agent(model, middleware=[retry]), how_call, {"messages": ["q"]})
    assert model.call_count == 2
    assert waits(delays, how_call) == [1.0]


def test_model_errors_retry_on_rejects_propagate_at_once(how_call: str, delays: Delays) -> None:
    model = ScriptedChatModel([failing(KeyError("bad request"))], repeat_last=True)
    retry = ModelRetryMiddleware(retry_on=(TimeoutError, ConnectionError))
    with pytest.raises(KeyError, match="bad request"):
        run_agent(create_agent(model, middleware=[retry]), how_call, {"messages": ["q"]})
    assert model.call_count == 1
    assert delays == []


def test_retry_layers_nest_with_other_wrappers(how_call: str, delays: Delays) -> None:
    """An outer retry sees the inner retry's failure message as an answer: nothing to retry."""
    model = ScriptedChatModel([failing(OSError("down"))], repeat_last=True)
    outer = ModelRetryMiddleware(max_retries=5, jitter=False)
    inner = ModelRetryMiddleware(max_retries=1, jitter=False)
    inner.name = "InnerRetry"
    result = run_agent(
        create_agent(model, middleware=[outer, inner]), how_call, {"messages": ["q"]}
    )
    assert model.call_count == 2
    assert result["messages"][-1].content.startswith("Model call failed after 2 attempts")


# -- interrupts ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "retry_on", [None, (Exception,), lambda exc: True], ids=["default", "Exception", "always"]
)
def test_an_interrupt_in_a_tool_passes_through_and_resumes(
    how_call: str, delays: Delays, retry_on: Any
) -> None:
    attempts: list[str] = []

    @tool
    def approve(action: str) -> str:
        """Ask a human."""
        attempts.append(action)
        return f"{action}: {interrupt({'action': action})}"

    options = {} if retry_on is None else {"retry_on": retry_on}
    model = ScriptedChatModel([calls(("approve", {"action": "deploy"})), "deployed"])
    agent = create_agent(
        model,
        [approve],
        middleware=[ToolRetryMiddleware(**options), ModelRetryMiddleware(**options)],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": how_call}}

    paused = run_agent(agent, how_call, {"messages": ["deploy it"]}, config=config)
    assert paused["__interrupt__"][0].value == {"action": "deploy"}
    assert attempts == ["deploy"]
    assert tool_messages(paused) == []

    done = run_agent(agent, how_call, Command(resume="yes"), config=config)
    assert attempts == ["deploy", "deploy"]  # the resumed run, not a retry
    assert tool_messages(done)[0].content == "deploy: yes"
    assert done["messages"][-1].content == "deployed"
    assert delays == []


def test_an_interrupt_in_the_model_passes_through_and_resumes(
    how_call: str, delays: Delays
) -> None:
    def ask_first(messages: list[BaseMessage]) -> str:
        return f"go-ahead: {interrupt('call the model?')}"

    model = ScriptedChatModel([ask_first], repeat_last=True)
    agent = create_agent(model, middleware=[ModelRetryMiddleware()], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}

    paused = run_agent(agent, how_call, {"messages": ["q"]}, config=config)
    assert paused["__interrupt__"][0].value == "call the model?"
    assert model.call_count == 1

    done = run_agent(agent, how_call, Command(resume="yes"), config=config)
    assert done["messages"][-1].content == "go-ahead: yes"
    assert model.call_count == 2
    assert delays == []


# -- async runs never block the event loop -------------------------------------------------------


REAL_DELAY = 0.15
"""The first real wait below, in seconds."""


def test_a_blocking_sleep_on_the_event_loop_fails_the_test() -> None:
    """The suite's blocking-call guard (conftest.py) is what the test below relies on: the
    sync mode's sleep, run on an event loop, is refused instead of blocking it."""
    from blockbuster import BlockingError

    with pytest.raises(BlockingError):
        asyncio.run(SYNC.sleep(REAL_DELAY))


def flaky_agent(**options: Any) -> tuple[Any, FailingTimes]:
    """A model failing once, then asking for a tool failing twice; both retried."""
    flaky_tool = FailingTimes(2, ConnectionError("blip"), value=42)
    model = ScriptedChatModel(
        [failing(TimeoutError("t")), calls(("flaky", {"query": "q"})), "done"]
    )

    @tool
    def flaky(query: str) -> str:
        """Flaky lookup."""
        return str(flaky_tool())

    middleware = [ModelRetryMiddleware(**options), ToolRetryMiddleware(**options)]
    return create_agent(model, [flaky], middleware=middleware), flaky_tool


def test_async_waits_do_not_block_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    real_wait = _retry.wait

    async def async_only(mode: Mode, seconds: float) -> None:
        if not mode.asynchronous:
            raise AssertionError("the synchronous sleep ran inside an async run")
        await real_wait(mode, seconds)

    monkeypatch.setattr(_retry, "wait", async_only)
    options: dict[str, Any] = {"initial_delay": REAL_DELAY, "jitter": False}
    agent, flaky_tool = flaky_agent(**options)

    started = time.perf_counter()
    result = asyncio.run(agent.ainvoke({"messages": ["go"]}))
    elapsed = time.perf_counter() - started

    assert result["messages"][-1].content == "done"
    assert flaky_tool.calls == 3
    # The waits were real (a lower bound holds on any machine): the model's first, then the
    # tool's first and second.
    assert elapsed >= 0.9 * (REAL_DELAY + REAL_DELAY + 2 * REAL_DELAY)


# -- options -------------------------------------------------------------------------------------


def test_defaults_match_langchain() -> None:
    for retry in (ModelRetryMiddleware(), ToolRetryMiddleware()):
        assert (retry.max_retries, retry.on_failure, retry.jitter) == (2, "continue", True)
        assert (retry.backoff_factor, retry.initial_delay, retry.max_delay) == (2.0, 1.0, 60.0)
        assert retry.retry_on is _retry.retry_by_default
        assert retry.name == type(retry).__name__


@pytest.mark.parametrize("cls", [ModelRetryMiddleware, ToolRetryMiddleware])
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_retries": -1}, "max_retries=-1): max_retries must be a whole number >= 0"),
        ({"max_retries": 1.5}, "max_retries=1.5)"),
        ({"max_retries": True}, "max_retries=True)"),
        ({"initial_delay": -0.1}, "initial_delay=-0.1): initial_delay must be a finite number"),
        ({"initial_delay": float("nan")}, "initial_delay=nan)"),
        ({"initial_delay": float("inf")}, "initial_delay=inf)"),
        ({"max_delay": -1}, "max_delay=-1): max_delay must be a number >= 0"),
        ({"backoff_factor": -2}, "backoff_factor=-2): backoff_factor must be a finite number"),
        ({"backoff_factor": "2"}, "backoff_factor='2')"),
        ({"jitter": "yes"}, "jitter='yes'): jitter must be True or False"),
        ({"on_failure": "ignore"}, "on_failure='ignore'): on_failure must be 'continue', 'error'"),
        ({"on_failure": None}, "on_failure=None)"),
        ({"retry_on": [ConnectionError]}, "retry_on must be a tuple of exception classes"),
        ({"retry_on": (ConnectionError, "Timeout")}, "holds 'Timeout', which is not an Exc"),
        ({"retry_on": (KeyboardInterrupt,)}, "holds <class 'KeyboardInterrupt'>"),
        ({"retry_on": "ConnectionError"}, "retry_on='ConnectionError')"),
    ],
)
def test_invalid_options_are_refused_when_built(
    cls: type[Any], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(MiddlewareError) as caught:
        cls(**options)
    assert f"{cls.__name__}(" in str(caught.value)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("options", "wrong_type"),
    [
        ({"max_retries": "3"}, True),
        ({"initial_delay": "1"}, True),
        ({"jitter": "yes"}, True),
        ({"retry_on": "ConnectionError"}, True),
        ({"on_failure": None}, True),
        ({"max_retries": -1}, False),
        ({"max_delay": -1}, False),
        ({"on_failure": "ignore"}, False),
    ],
)
def test_a_value_of_the_wrong_type_is_also_a_type_error(
    options: dict[str, Any], wrong_type: bool
) -> None:
    # LangChain compares or calls such a value, which raises TypeError; keep `except TypeError`.
    with pytest.raises(ValueError, match=r"^(.* must be >= 0: )?ModelRetryMiddleware\(") as caught:
        ModelRetryMiddleware(**options)
    assert isinstance(caught.value, TypeError) is wrong_type


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ("search", "tools='search'): tools is not a list"),
        (["search", 3], "item 1 is 3; give tool names"),
        (7, "tools=7)"),
    ],
)
def test_invalid_tools_are_refused_when_built(tools: Any, message: str) -> None:
    with pytest.raises(MiddlewareError, match=r"^ToolRetryMiddleware\(") as caught:
        ToolRetryMiddleware(tools=tools)
    assert message in str(caught.value)


def test_edge_options_are_accepted() -> None:
    retry = ToolRetryMiddleware(
        max_retries=0,
        backoff_factor=0,
        initial_delay=0,
        max_delay=float("inf"),
        retry_on=(),
        tools=[],
    )
    assert retry.max_retries == 0
    assert retry.covered_tools == frozenset()
    assert ModelRetryMiddleware(retry_on=TimeoutError).retry_on == (TimeoutError,)
