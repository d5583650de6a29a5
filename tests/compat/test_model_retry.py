"""LangChain 1.5's ``ModelRetryMiddleware``: its defaults, how many times the model is called,
the waits between calls, the ``AIMessage`` that ends a call whose retries ran out, which errors
propagate at once, and the ``ValueError`` for each bad option.

Tests marked "Deliberate difference" assert graphagent's behaviour where
docs/migrating-from-langchain.md ("What graphagent does differently") lists it.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from langchain_core.exceptions import ModelAuthenticationError, ModelRateLimitError
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from graphagent import create_agent
from graphagent.middleware import AgentMiddleware, ModelRetryMiddleware, ToolRetryMiddleware
from graphagent.testing import ScriptedChatModel
from tests.compat.waits import Waits, record_waits, seconds
from tests.conftest import run_agent

GO = {"messages": [HumanMessage("hi")]}


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> Waits:
    return record_waits(monkeypatch)


def fails(error: Exception) -> Callable[[Any], str]:
    """A scripted reply that raises ``error`` instead of answering."""

    def reply(messages: Any) -> str:
        raise error

    return reply


def agent_with(model: ScriptedChatModel, *middleware: Any, **kwargs: Any) -> Any:
    return create_agent(model, middleware=list(middleware), **kwargs)


def texts(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m.type, m.text) for m in result["messages"]]


# -- options -------------------------------------------------------------------------------------


def test_defaults() -> None:
    retry = ModelRetryMiddleware()

    assert retry.max_retries == 2
    assert retry.on_failure == "continue"
    assert (retry.backoff_factor, retry.initial_delay, retry.max_delay) == (2.0, 1.0, 60.0)
    assert retry.jitter is True
    assert callable(retry.retry_on)
    assert retry.tools == []
    assert retry.tools is not ModelRetryMiddleware().tools, "each instance has a list of its own"
    assert retry.name == "ModelRetryMiddleware"


def test_options_are_readable_under_their_names() -> None:
    def explain(exc: Exception) -> str:
        return "sorry"

    retry = ModelRetryMiddleware(
        max_retries=4,
        retry_on=(TimeoutError, ConnectionError),
        on_failure=explain,
        backoff_factor=1.5,
        initial_delay=0.25,
        max_delay=10.0,
        jitter=False,
    )

    assert retry.max_retries == 4
    assert retry.retry_on == (TimeoutError, ConnectionError)
    assert retry.on_failure is explain
    assert (retry.backoff_factor, retry.initial_delay, retry.max_delay) == (1.5, 0.25, 10.0)
    assert retry.jitter is False


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"max_retries": -1}, "max_retries must be >= 0"),
        ({"initial_delay": -0.5}, "initial_delay must be >= 0"),
        ({"max_delay": -1.0}, "max_delay must be >= 0"),
        ({"backoff_factor": -2.0}, "backoff_factor must be >= 0"),
    ],
)
@pytest.mark.parametrize("retry", [ModelRetryMiddleware, ToolRetryMiddleware])
def test_a_negative_option_is_a_value_error(
    retry: type[Any], option: dict[str, Any], message: str
) -> None:
    # LangChain's _retry.py makes this check for both retry middleware.
    with pytest.raises(ValueError, match=r"^" + message):
        retry(**option)


def test_zero_is_a_valid_value_for_every_number() -> None:
    retry = ModelRetryMiddleware(max_retries=0, initial_delay=0, max_delay=0, backoff_factor=0)

    assert (retry.max_retries, retry.initial_delay, retry.max_delay) == (0, 0, 0)


# -- attempts ------------------------------------------------------------------------------------


def test_a_failing_call_is_made_again_until_the_model_answers(how_call: str, waits: Waits) -> None:
    model = ScriptedChatModel([fails(ConnectionError("a")), fails(TimeoutError("b")), "hello"])

    result = run_agent(agent_with(model, ModelRetryMiddleware()), how_call, GO)

    assert model.call_count == 3
    # The failed attempts leave nothing in the conversation.
    assert texts(result) == [("human", "hi"), ("ai", "hello")]
    # Every attempt sends the same messages.
    assert [[m.text for m in call.messages] for call in model.calls] == [["hi"]] * 3


def test_when_the_retries_run_out_an_ai_message_says_why_and_the_run_ends(
    how_call: str, waits: Waits
) -> None:
    model = ScriptedChatModel([fails(ConnectionError(f"down {i}")) for i in range(3)])

    result = run_agent(agent_with(model, ModelRetryMiddleware()), how_call, GO)

    assert model.call_count == 3
    last = result["messages"][-1]
    assert isinstance(last, AIMessage)
    assert last.tool_calls == []
    # The last error is the one described.
    assert texts(result) == [
        ("human", "hi"),
        ("ai", "Model call failed after 3 attempts with ConnectionError: down 2"),
    ]


def test_one_attempt_is_worded_in_the_singular(how_call: str) -> None:
    model = ScriptedChatModel([fails(TimeoutError("too slow"))])
    retry = ModelRetryMiddleware(max_retries=0)

    result = run_agent(agent_with(model, retry), how_call, GO)

    assert model.call_count == 1
    assert (
        result["messages"][-1].text
        == "Model call failed after 1 attempt with TimeoutError: too slow"
    )


def test_on_failure_function_writes_the_message_from_the_last_error(
    how_call: str, waits: Waits
) -> None:
    seen: list[Exception] = []

    def apologise(exc: Exception) -> str:
        seen.append(exc)
        return f"Model temporarily unavailable ({exc})."

    errors = [ConnectionError("first"), ConnectionError("second")]
    model = ScriptedChatModel([fails(e) for e in errors])
    retry = ModelRetryMiddleware(max_retries=1, on_failure=apologise)

    result = run_agent(agent_with(model, retry), how_call, GO)

    assert seen == [errors[1]]
    assert texts(result)[-1] == ("ai", "Model temporarily unavailable (second).")


def test_on_failure_error_re_raises_the_last_error(how_call: str, waits: Waits) -> None:
    errors = [ConnectionError("first"), ConnectionError("second"), ConnectionError("third")]
    model = ScriptedChatModel([fails(e) for e in errors])

    with pytest.raises(ConnectionError) as caught:
        run_agent(agent_with(model, ModelRetryMiddleware(on_failure="error")), how_call, GO)

    assert caught.value is errors[2]
    assert model.call_count == 3


def test_an_error_outside_retry_on_propagates_at_once_without_on_failure(how_call: str) -> None:
    called: list[Exception] = []
    model = ScriptedChatModel([fails(ValueError("bad request")), "never"])
    retry = ModelRetryMiddleware(
        retry_on=(ConnectionError, TimeoutError), on_failure=lambda e: str(called.append(e))
    )

    with pytest.raises(ValueError, match="bad request"):
        run_agent(agent_with(model, retry), how_call, GO)

    assert model.call_count == 1
    assert called == []


def test_errors_in_retry_on_are_retried(how_call: str, waits: Waits) -> None:
    model = ScriptedChatModel([fails(TimeoutError("slow")), "hello"])
    retry = ModelRetryMiddleware(retry_on=(ConnectionError, TimeoutError))

    result = run_agent(agent_with(model, retry), how_call, GO)

    assert texts(result)[-1] == ("ai", "hello")
    assert model.call_count == 2


def test_a_retry_on_function_decides_for_each_error(how_call: str, waits: Waits) -> None:
    seen: list[str] = []

    def should_retry(exc: Exception) -> bool:
        seen.append(str(exc))
        return "5xx" in str(exc)

    model = ScriptedChatModel([fails(RuntimeError("5xx")), fails(RuntimeError("4xx")), "never"])
    retry = ModelRetryMiddleware(max_retries=5, retry_on=should_retry)

    with pytest.raises(RuntimeError, match="4xx"):
        run_agent(agent_with(model, retry), how_call, GO)

    assert seen == ["5xx", "4xx"]
    assert model.call_count == 2


def test_by_default_provider_errors_marked_final_propagate_at_once(how_call: str) -> None:
    model = ScriptedChatModel([fails(ModelAuthenticationError("bad key")), "never"])

    with pytest.raises(ModelAuthenticationError, match="bad key"):
        run_agent(agent_with(model, ModelRetryMiddleware()), how_call, GO)

    assert model.call_count == 1


def test_by_default_retryable_provider_errors_and_other_errors_are_retried(
    how_call: str, waits: Waits
) -> None:
    model = ScriptedChatModel(
        [fails(ModelRateLimitError("slow down")), fails(KeyError("odd")), "hello"]
    )

    result = run_agent(agent_with(model, ModelRetryMiddleware()), how_call, GO)

    assert texts(result)[-1] == ("ai", "hello")
    assert model.call_count == 3


# -- waits ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, [1.0, 2.0, 4.0]),
        ({"initial_delay": 0.5, "backoff_factor": 3.0}, [0.5, 1.5, 4.5]),
        ({"max_delay": 3.0}, [1.0, 2.0, 3.0]),
        ({"backoff_factor": 0.0, "initial_delay": 2.0}, [2.0, 2.0, 2.0]),
        ({"initial_delay": 0.0}, []),
    ],
)
def test_waits_grow_by_backoff_factor_up_to_max_delay(
    how_call: str, waits: Waits, options: dict[str, Any], expected: list[float]
) -> None:
    model = ScriptedChatModel([fails(ConnectionError("down"))] * 3 + ["hello"])
    retry = ModelRetryMiddleware(max_retries=3, jitter=False, **options)

    run_agent(agent_with(model, retry), how_call, GO)

    assert seconds(waits, how_call) == expected


def test_jitter_varies_each_wait_by_at_most_a_quarter(how_call: str, waits: Waits) -> None:
    model = ScriptedChatModel([fails(ConnectionError("down"))] * 3 + ["hello"])

    run_agent(agent_with(model, ModelRetryMiddleware(max_retries=3)), how_call, GO)

    nominal = [1.0, 2.0, 4.0]
    waited = seconds(waits, how_call)
    assert len(waited) == 3
    assert all(0.75 * n <= w <= 1.25 * n for n, w in zip(nominal, waited, strict=True))


def test_no_wait_after_the_last_attempt(how_call: str, waits: Waits) -> None:
    model = ScriptedChatModel([fails(ConnectionError("down"))] * 2)
    retry = ModelRetryMiddleware(max_retries=1, jitter=False)

    run_agent(agent_with(model, retry), how_call, GO)

    assert seconds(waits, how_call) == [1.0]


# -- the retry among other middleware -------------------------------------------------------------


class Counting(AgentMiddleware):
    """Counts the model calls passing through this layer."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self.count += 1
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        self.count += 1
        return await handler(request)


class Outer(Counting):
    pass


class Inner(Counting):
    pass


def test_layers_inside_the_retry_see_every_attempt_and_layers_outside_one(
    how_call: str, waits: Waits
) -> None:
    outer, inner = Outer(), Inner()
    model = ScriptedChatModel([fails(ConnectionError("down"))] * 2 + ["hello"])
    agent = agent_with(model, outer, ModelRetryMiddleware(), inner)

    run_agent(agent, how_call, GO)

    assert (outer.count, inner.count) == (1, 3)


class AskFirst(AgentMiddleware):
    """Pauses the run with ``interrupt()`` before each model call."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = 0

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self.entered += 1
        interrupt("call the model?")
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        self.entered += 1
        interrupt("call the model?")
        return await handler(request)


def test_an_interrupt_passes_through_the_retry_and_the_run_resumes(how_call: str) -> None:
    ask = AskFirst()
    model = ScriptedChatModel(["hello"])
    agent = agent_with(model, ModelRetryMiddleware(), ask, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}

    paused = run_agent(agent, how_call, GO, config=config)

    assert [i.value for i in paused["__interrupt__"]] == ["call the model?"]
    assert (ask.entered, model.call_count) == (1, 0)

    done = run_agent(agent, how_call, Command(resume="yes"), config=config)

    assert texts(done)[-1] == ("ai", "hello")
    assert model.call_count == 1


# -- deliberate differences ----------------------------------------------------------------------


def test_a_lone_exception_class_as_retry_on_retries_that_class_only(how_call: str) -> None:
    # Deliberate difference, "Retries, fallbacks and tool errors": "`retry_on=SomeError` (a lone
    # class)". LangChain calls the class as a predicate, so every error is retried.
    model = ScriptedChatModel([fails(ValueError("bad request")), "never"])
    retry = ModelRetryMiddleware(retry_on=ConnectionError, initial_delay=0)  # type: ignore[arg-type]

    with pytest.raises(ValueError, match="bad request"):
        run_agent(agent_with(model, retry), how_call, GO)

    assert model.call_count == 1


def test_max_delay_bounds_every_wait_jitter_included(how_call: str, waits: Waits) -> None:
    # Deliberate difference, "Retries, fallbacks and tool errors": "`max_delay`". LangChain adds
    # the jitter after the cap, so half its waits exceed max_delay.
    model = ScriptedChatModel([fails(ConnectionError("down"))] * 20 + ["hello"])
    retry = ModelRetryMiddleware(max_retries=20, initial_delay=5.0, max_delay=5.0)

    run_agent(agent_with(model, retry), how_call, GO)

    waited = seconds(waits, how_call)
    assert len(waited) == 20
    assert all(3.75 <= w <= 5.0 for w in waited)


def test_many_retries_wait_max_delay_instead_of_overflowing(how_call: str, waits: Waits) -> None:
    # Deliberate difference, "Retries, fallbacks and tool errors": "Many retries". In LangChain
    # `backoff_factor ** n` overflows a float at the 32nd retry here: OverflowError.
    model = ScriptedChatModel([fails(ConnectionError("down"))] * 35 + ["hello"])
    retry = ModelRetryMiddleware(
        max_retries=35, backoff_factor=1e10, initial_delay=0.5, max_delay=7.0, jitter=False
    )

    result = run_agent(agent_with(model, retry), how_call, GO)

    assert texts(result)[-1] == ("ai", "hello")
    assert seconds(waits, how_call) == [0.5] + [7.0] * 34


@pytest.mark.parametrize(("old", "new"), [("raise", "error"), ("return_message", "continue")])
def test_the_old_on_failure_names_mean_the_new_ones(old: str, new: str) -> None:
    # Deliberate difference, "Retries, fallbacks and tool errors":
    # "`ModelRetryMiddleware(on_failure="raise" / "return_message")`". LangChain maps them for
    # ToolRetryMiddleware only; its model retry keeps the string and answers with a message.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        retry = ModelRetryMiddleware(on_failure=old)  # type: ignore[arg-type]

    assert retry.on_failure == new
    [warning] = caught
    assert warning.category is DeprecationWarning
    assert f"on_failure={old!r}" in str(warning.message)
    assert warning.filename == __file__


def test_an_unknown_on_failure_is_refused() -> None:
    # Deliberate difference, "Building an agent and writing middleware": "Bad option values of a
    # built-in". LangChain accepts any string and treats it as "continue".
    with pytest.raises(ValueError, match="on_failure"):
        ModelRetryMiddleware(on_failure="ignore")  # type: ignore[arg-type]
