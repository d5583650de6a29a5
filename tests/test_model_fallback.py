"""ModelFallbackMiddleware: fallback order, the last error, model ids, interrupts."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command, interrupt

from graphagent import MiddlewareError, create_agent
from graphagent.middleware import ModelRequest, ModelResponse, model_fallback, wrap_model_call
from graphagent.middleware.model_fallback import ModelFallbackMiddleware
from graphagent.models import MissingIntegrationError
from graphagent.testing import ScriptedChatModel
from tests.conftest import Run, run_agent
from tests.test_models import install_fake_package

QUESTION = {"messages": [HumanMessage("hi")]}


def down(error: Exception) -> Callable[[list[BaseMessage]], str]:
    """A scripted reply that raises ``error``, as a provider that is down would."""

    def reply(messages: list[BaseMessage]) -> str:
        raise error

    return reply


def failing(*errors: Exception) -> ScriptedChatModel:
    """A model whose calls raise ``errors`` in turn."""
    return ScriptedChatModel([down(e) for e in errors])


def answer(result: dict[str, Any]) -> str:
    return str(result["messages"][-1].content)


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[], Any]:
    """A fake ``langchain_anthropic`` on sys.path; call the result for the imported module."""
    install_fake_package(monkeypatch, tmp_path, "langchain_anthropic", class_name="ChatAnthropic")
    return lambda: sys.modules.get("langchain_anthropic")


# -- fallback order ------------------------------------------------------------------------


def test_when_the_primary_fails_the_first_fallback_answers(run: Run) -> None:
    primary = failing(ConnectionError("primary down"))
    first, second = ScriptedChatModel(["from first"]), ScriptedChatModel(["from second"])
    agent = create_agent(primary, middleware=[ModelFallbackMiddleware(first, second)])

    result = run(agent, QUESTION)

    assert answer(result) == "from first"
    assert (primary.call_count, first.call_count, second.call_count) == (1, 1, 0)
    assert [m.content for m in first.calls[0].messages] == ["hi"]


def test_fallbacks_are_tried_in_order_until_one_answers(how_call: str) -> None:
    primary = failing(ConnectionError("a"))
    first = failing(TimeoutError("b"))
    second = ScriptedChatModel(["from second"])
    agent = create_agent(primary, middleware=[ModelFallbackMiddleware(first, second)])

    result = run_agent(agent, how_call, QUESTION)

    assert answer(result) == "from second"
    assert [m.call_count for m in (primary, first, second)] == [1, 1, 1]


def test_a_working_primary_never_touches_the_fallbacks(how_call: str) -> None:
    primary = ScriptedChatModel(["from primary"])
    fallback = ScriptedChatModel(["never"])
    agent = create_agent(primary, middleware=[ModelFallbackMiddleware(fallback)])

    assert answer(run_agent(agent, how_call, QUESTION)) == "from primary"
    assert fallback.call_count == 0


def test_when_every_model_fails_the_last_error_is_raised(how_call: str) -> None:
    last = RuntimeError("second fallback down")
    models = [failing(ConnectionError("a")), failing(TimeoutError("b")), failing(last)]
    agent = create_agent(models[0], middleware=[ModelFallbackMiddleware(*models[1:])])

    with pytest.raises(RuntimeError, match="second fallback down") as raised:
        run_agent(agent, how_call, QUESTION)

    assert raised.value is last
    assert [m.call_count for m in models] == [1, 1, 1]


def test_each_model_call_starts_again_from_the_primary(how_call: str) -> None:
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    primary = ScriptedChatModel([down(ConnectionError("down")), "primary is back"])
    fallback = ScriptedChatModel(
        [AIMessage("", tool_calls=[{"name": "ping", "args": {}, "id": "c1"}])]
    )
    agent = create_agent(primary, [ping], middleware=[ModelFallbackMiddleware(fallback)])

    result = run_agent(agent, how_call, QUESTION)

    assert answer(result) == "primary is back"
    assert (primary.call_count, fallback.call_count) == (2, 1)


def test_the_fallback_gets_the_same_request_but_its_own_model(how_call: str) -> None:
    seen: list[Any] = []

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    @wrap_model_call
    def spy(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        seen.append(request.model)
        return handler(request)

    primary = failing(ConnectionError("down"))
    fallback = ScriptedChatModel(["ok"])
    agent = create_agent(
        primary,
        [ping],
        system_prompt="Be brief.",
        middleware=[ModelFallbackMiddleware(fallback), spy],
    )

    run_agent(agent, how_call, QUESTION)

    # The inner middleware runs once per model tried.
    assert seen == [primary, fallback]
    sent = fallback.calls[0]
    assert sent.messages[0] == SystemMessage("Be brief.")
    assert sent.tool_names == ("ping",)
    assert sent.messages == primary.calls[0].messages


def test_a_failure_is_logged_naming_the_fallback(caplog: pytest.LogCaptureFixture) -> None:
    primary = failing(ConnectionError("down"))
    agent = create_agent(primary, middleware=[ModelFallbackMiddleware(ScriptedChatModel(["ok"]))])

    with caplog.at_level(logging.WARNING, logger="graphagent.middleware.model_fallback"):
        agent.invoke(QUESTION)

    [record] = caplog.records
    assert record.getMessage().startswith(
        "ModelFallbackMiddleware: model call failed (ConnectionError); trying fallback 1 of 1"
    )


# -- the hook alone ------------------------------------------------------------------------


def request_for(model: ScriptedChatModel, **changes: Any) -> ModelRequest:
    return ModelRequest(model=model, messages=[HumanMessage("hi")]).override(**changes)


def test_the_hook_tries_each_model_with_the_same_request_and_raises_the_last_error() -> None:
    primary, first, second = (ScriptedChatModel([]) for _ in range(3))
    fallback = ModelFallbackMiddleware(first, second)
    tried: list[ScriptedChatModel] = []
    last = OSError("last")

    def handler(request: ModelRequest) -> ModelResponse:
        tried.append(request.model)  # type: ignore[arg-type]
        raise last if request.model is second else ValueError("bad")

    async def ahandler(request: ModelRequest) -> ModelResponse:
        return handler(request)

    request = request_for(primary)
    with pytest.raises(OSError, match="last"):
        fallback.wrap_model_call(request, handler)
    with pytest.raises(OSError, match="last"):
        asyncio.run(fallback.awrap_model_call(request, ahandler))

    assert tried == [primary, first, second] * 2


@pytest.mark.parametrize("fails_first", [False, True], ids=["primary", "fallback"])
def test_control_flow_passes_through_untouched(fails_first: bool) -> None:
    signal = GraphBubbleUp("interrupt")
    primary, fallback_model = ScriptedChatModel([]), ScriptedChatModel([])
    fallback = ModelFallbackMiddleware(fallback_model, ScriptedChatModel([]))
    tried: list[Any] = []

    def handler(request: ModelRequest) -> ModelResponse:
        tried.append(request.model)
        if fails_first and request.model is primary:
            raise ValueError("primary down")
        raise signal

    async def ahandler(request: ModelRequest) -> ModelResponse:
        return handler(request)

    for call in (
        lambda: fallback.wrap_model_call(request_for(primary), handler),
        lambda: asyncio.run(fallback.awrap_model_call(request_for(primary), ahandler)),  # type: ignore[arg-type]
    ):
        tried.clear()
        with pytest.raises(GraphBubbleUp) as raised:
            call()
        assert raised.value is signal
        assert tried == ([primary, fallback_model] if fails_first else [primary])


def test_an_interrupt_in_the_model_pauses_the_run_instead_of_falling_back(how_call: str) -> None:
    def ask_first(messages: list[BaseMessage]) -> str:
        return f"go-ahead: {interrupt('call the model?')}"

    primary = ScriptedChatModel([ask_first], repeat_last=True)
    fallback = ScriptedChatModel(["never"])
    agent = create_agent(
        primary, middleware=[ModelFallbackMiddleware(fallback)], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": how_call}}

    paused = run_agent(agent, how_call, QUESTION, config=config)
    assert paused["__interrupt__"][0].value == "call the model?"

    done = run_agent(agent, how_call, Command(resume="yes"), config=config)
    assert answer(done) == "go-ahead: yes"
    assert fallback.call_count == 0


# -- model ids -------------------------------------------------------------------------------


def test_an_id_is_built_once_when_the_middleware_is(
    fake_anthropic: Callable[[], Any], how_call: str
) -> None:
    primary = ScriptedChatModel(["primary ok", down(ConnectionError("down"))], repeat_last=True)
    fallback = ModelFallbackMiddleware("anthropic:claude-sonnet-4-5")
    [(built, _)] = fake_anthropic().built  # as in LangChain, at once
    agent = create_agent(primary, middleware=[fallback])

    assert answer(run_agent(agent, how_call, QUESTION)) == "primary ok"
    assert answer(run_agent(agent, how_call, QUESTION)) == "fake answer"
    assert answer(run_agent(agent, how_call, QUESTION)) == "fake answer"
    assert built.model == "claude-sonnet-4-5"
    assert built.call_count == 2
    assert fallback.models == [built]
    assert len(fake_anthropic().built) == 1


def test_models_builds_every_fallback(fake_anthropic: Callable[[], Any]) -> None:
    ready = ScriptedChatModel([])
    fallback = ModelFallbackMiddleware(ready, "claude-haiku-4-5")

    built = fallback.models

    assert built[0] is ready
    assert type(built[1]) is fake_anthropic().ChatAnthropic
    assert fallback.models == built


@pytest.mark.parametrize(
    ("models", "message"),
    [
        (("foo:bar",), r"Unable to infer .*'foo' is no known[^\n]*\nKnown providers:"),
        (
            (ScriptedChatModel([]), "llama3"),
            r"Unable to infer model provider for model='llama3'.*'provider:model'",
        ),
    ],
)
def test_a_bad_model_id_is_init_chat_models_error_when_the_middleware_is_built(
    models: tuple[Any, ...], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        ModelFallbackMiddleware(*models)


def test_a_fallback_that_is_no_model_is_named() -> None:
    with pytest.raises(MiddlewareError, match=r"^ModelFallbackMiddleware: additional_models\[1\]"):
        ModelFallbackMiddleware(ScriptedChatModel([]), ScriptedChatModel([]), 42)  # type: ignore[arg-type]


def test_a_missing_integration_is_reported_when_the_middleware_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "langchain_groq", None)

    with pytest.raises(MissingIntegrationError) as raised:
        ModelFallbackMiddleware(ScriptedChatModel([]), "groq:llama-3.3-70b-versatile")

    assert "pip install langchain-groq" in str(raised.value)
    assert raised.value.package == "langchain-groq"


def test_a_fallback_that_cannot_be_built_fails_when_the_middleware_is(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    source = (
        "class ChatOpenAI:\n    def __init__(self, **kw):\n        raise ValueError('no API key')\n"
    )
    install_fake_package(monkeypatch, tmp_path, "langchain_openai", source)

    with pytest.raises(ValueError, match="no API key"):
        ModelFallbackMiddleware("openai:gpt-4o")


def test_a_sanitizer_error_is_not_taken_for_a_model_failure(
    how_call: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(request: ModelRequest, model: Any = None) -> ModelRequest:
        raise RuntimeError("sanitizer bug")

    monkeypatch.setattr(model_fallback, "_sanitize_request_for_fallback", broken)
    later = ScriptedChatModel(["never"])
    agent = create_agent(
        failing(ConnectionError("primary down")),
        middleware=[ModelFallbackMiddleware(ScriptedChatModel(["never"]), later)],
    )

    with pytest.raises(RuntimeError, match="sanitizer bug"):
        run_agent(agent, how_call, QUESTION)
    assert later.call_count == 0


# -- provider-specific settings ----------------------------------------------------------------


class AnthropicLike(ScriptedChatModel):
    @property
    def _llm_type(self) -> str:
        return "anthropic-chat"


CACHED_SETTINGS = {
    "cache_control": {"type": "ephemeral"},
    "prompt_cache_key": "k",
    "extra_headers": {"X-Session-Affinity": "s", "X-Other": "o"},
    "temperature": 0,
}


@wrap_model_call
def add_cache_settings(request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
    return handler(request.override(model_settings=CACHED_SETTINGS))


@pytest.mark.parametrize(
    ("model_class", "expected"),
    [
        (ScriptedChatModel, {"extra_headers": {"X-Other": "o"}, "temperature": 0}),
        (
            AnthropicLike,
            {
                "cache_control": {"type": "ephemeral"},
                "extra_headers": {"X-Other": "o"},
                "temperature": 0,
            },
        ),
    ],
    ids=["other", "anthropic"],
)
def test_settings_the_fallback_would_reject_are_removed(
    how_call: str, model_class: type[ScriptedChatModel], expected: dict[str, Any]
) -> None:
    primary, fallback = failing(ConnectionError("down")), model_class(["ok"])
    agent = create_agent(
        primary, middleware=[add_cache_settings, ModelFallbackMiddleware(fallback)]
    )

    run_agent(agent, how_call, QUESTION)

    assert dict(primary.calls[0].settings) == CACHED_SETTINGS
    assert dict(fallback.calls[0].settings) == expected


def test_cache_markers_are_removed_from_messages_and_tools_for_other_providers() -> None:
    @tool(extras={"cache_control": {"type": "ephemeral"}})
    def ping() -> str:
        """Ping."""
        return "pong"

    marked = {"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}
    nested = {"type": "text", "text": "x", "extras": {"cache_control": 1, "keep": 2}}
    plain = HumanMessage("untouched")
    request = ModelRequest(
        model=ScriptedChatModel([]),
        messages=[plain, HumanMessage([marked, nested])],
        system_message=SystemMessage([marked]),
        tools=[ping, {"name": "d", "cache_control": 1, "extras": {"cache_control": 1}}],
        model_settings={"temperature": 0},
    )
    seen: list[ModelRequest] = []

    def handler(req: ModelRequest) -> ModelResponse:
        seen.append(req)
        if len(seen) == 1:
            raise ValueError("down")
        return ModelResponse(result=[AIMessage("ok")])

    for fallback_model in (ScriptedChatModel([]), AnthropicLike([])):
        seen.clear()
        ModelFallbackMiddleware(fallback_model).wrap_model_call(request, handler)
        sent = seen[1]
        if isinstance(fallback_model, AnthropicLike):
            assert sent.override(model=request.model) == request
            continue
        assert sent.messages[0] is plain
        assert sent.messages[1].content == [
            {"type": "text", "text": "hello"},
            {"type": "text", "text": "x", "extras": {"keep": 2}},
        ]
        assert sent.system_message == SystemMessage([{"type": "text", "text": "hello"}])
        assert sent.tools[0].extras is None  # type: ignore[union-attr]
        assert sent.tools[1] == {"name": "d", "extras": None}
        assert sent.model_settings is request.model_settings
    # The original request and its parts are left as they were.
    assert request.messages[1].content == [marked, nested]
    assert ping.extras == {"cache_control": {"type": "ephemeral"}}
