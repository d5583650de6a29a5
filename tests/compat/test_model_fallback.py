"""LangChain 1.5's ``ModelFallbackMiddleware``: the order models are tried in, the error when
every model fails, the request each fallback gets, the provider-specific cache settings taken
out of it for a fallback of another provider, ``models``, and interrupts passing through.

Tests marked "Deliberate difference" assert graphagent's behaviour where
docs/migrating-from-langchain.md ("What graphagent does differently") lists it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from graphagent import create_agent
from graphagent.middleware import AgentMiddleware, ModelFallbackMiddleware, model_fallback
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent

GO = {"messages": [HumanMessage("hi")]}
CACHE = {"type": "ephemeral"}


def fails(error: Exception) -> Callable[[Any], str]:
    """A scripted reply that raises ``error`` instead of answering."""

    def reply(messages: Any) -> str:
        raise error

    return reply


def down(name: str) -> ScriptedChatModel:
    """A model whose every call fails with ``ConnectionError(f"{name} is down")``."""
    return ScriptedChatModel([fails(ConnectionError(f"{name} is down"))], repeat_last=True)


class Provider(ScriptedChatModel):
    """A scripted model that reports the ``_llm_type`` of a provider's chat model."""

    provider_type: str = "scripted-chat-model"

    @property
    def _llm_type(self) -> str:
        return self.provider_type


class Seen(AgentMiddleware):
    """Records each request that reaches it; listed after the fallback, it sees every attempt."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[Any] = []

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self.requests.append(request)
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        self.requests.append(request)
        return await handler(request)


class Settings(AgentMiddleware):
    """Adds model settings before the fallback runs, as a caching middleware would."""

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__()
        self.settings = settings

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request.override(model_settings=dict(self.settings)))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        return await handler(request.override(model_settings=dict(self.settings)))


# -- the order of the models ---------------------------------------------------------------------


def test_the_models_are_kept_in_order() -> None:
    first, second = ScriptedChatModel([]), ScriptedChatModel([])

    fallback = ModelFallbackMiddleware(first, second)

    assert fallback.models == [first, second]
    assert fallback.models[0] is first
    assert fallback.name == "ModelFallbackMiddleware"


def test_a_fallback_is_required() -> None:
    with pytest.raises(TypeError):
        ModelFallbackMiddleware()  # type: ignore[call-arg]


def test_model_ids_are_made_with_init_chat_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    backup = ScriptedChatModel([])

    fallback = ModelFallbackMiddleware("openai:gpt-4o-mini", backup)

    [made, given] = fallback.models
    assert (type(made).__name__, made.model_name) == ("ChatOpenAI", "gpt-4o-mini")  # type: ignore[attr-defined]
    assert given is backup


def test_a_working_primary_never_touches_the_fallbacks(how_call: str) -> None:
    primary, backup = ScriptedChatModel(["from primary"]), ScriptedChatModel(["never"])
    agent = create_agent(primary, middleware=[ModelFallbackMiddleware(backup)])

    result = run_agent(agent, how_call, GO)

    assert result["messages"][-1].text == "from primary"
    assert backup.call_count == 0


def test_when_the_primary_fails_the_fallbacks_are_tried_in_order(how_call: str) -> None:
    primary, first, second = down("primary"), down("first"), ScriptedChatModel(["from second"])
    third = ScriptedChatModel(["never"])
    agent = create_agent(primary, middleware=[ModelFallbackMiddleware(first, second, third)])

    result = run_agent(agent, how_call, GO)

    assert [(m.type, m.text) for m in result["messages"]] == [
        ("human", "hi"),
        ("ai", "from second"),
    ]
    assert [m.call_count for m in (primary, first, second, third)] == [1, 1, 1, 0]


def test_when_every_model_fails_the_last_models_error_is_raised(how_call: str) -> None:
    last_error = TimeoutError("second is slow")
    primary, first = down("primary"), down("first")
    second = ScriptedChatModel([fails(last_error)])
    agent = create_agent(primary, middleware=[ModelFallbackMiddleware(first, second)])

    with pytest.raises(TimeoutError) as caught:
        run_agent(agent, how_call, GO)

    assert caught.value is last_error
    assert [m.call_count for m in (primary, first, second)] == [1, 1, 1]


def test_each_model_call_starts_again_from_the_primary(how_call: str) -> None:
    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    primary = ScriptedChatModel([fails(ConnectionError("blip")), "primary again"])
    backup = ScriptedChatModel([calls(("echo", {"text": "x"})), "never"])
    agent = create_agent(primary, [echo], middleware=[ModelFallbackMiddleware(backup)])

    result = run_agent(agent, how_call, GO)

    assert result["messages"][-1].text == "primary again"
    assert (primary.call_count, backup.call_count) == (2, 1)


def test_the_fallback_gets_the_same_request_with_its_own_model(how_call: str) -> None:
    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    primary, backup, seen = down("primary"), ScriptedChatModel(["ok"]), Seen()
    agent = create_agent(
        primary,
        [echo],
        system_prompt="Be brief.",
        middleware=[ModelFallbackMiddleware(backup), seen],
    )

    run_agent(agent, how_call, GO)

    assert [r.model for r in seen.requests] == [primary, backup]
    [sent] = backup.calls
    assert [(m.type, m.text) for m in sent.messages] == [("system", "Be brief."), ("human", "hi")]
    assert sent.tool_names == ("echo",)
    assert primary.calls[0].messages == sent.messages


# -- provider-specific settings ------------------------------------------------------------------

SETTINGS = {
    "cache_control": CACHE,
    "prompt_cache_key": "key-1",
    "extra_headers": {"X-Session-Affinity": "session-1", "x-trace": "t"},
    "temperature": 0.2,
}


@pytest.mark.parametrize(
    ("provider_type", "kept"),
    [
        ("scripted-chat-model", {"temperature", "x-trace"}),
        ("anthropic-chat", {"temperature", "x-trace", "cache_control"}),
        ("anthropic-bedrock-chat", {"temperature", "x-trace", "cache_control"}),
        ("anthropic-chat-vertexai", {"temperature", "x-trace", "cache_control"}),
        ("openai-chat", {"temperature", "x-trace", "prompt_cache_key"}),
        ("azure-openai-chat", {"temperature", "x-trace", "prompt_cache_key"}),
        ("fireworks-chat", {"temperature", "x-trace", "prompt_cache_key", "X-Session-Affinity"}),
    ],
)
def test_a_fallback_gets_only_the_cache_settings_its_provider_takes(
    how_call: str, provider_type: str, kept: set[str]
) -> None:
    primary, seen = down("primary"), Seen()
    backup = Provider(["ok"], provider_type=provider_type)
    middleware = [Settings(SETTINGS), ModelFallbackMiddleware(backup), seen]

    run_agent(create_agent(primary, middleware=middleware), how_call, GO)

    tried, fell_back = (r.model_settings for r in seen.requests)
    assert tried == SETTINGS
    headers = {k: v for k, v in SETTINGS["extra_headers"].items() if k in kept}  # type: ignore[attr-defined]
    expected = {k: v for k, v in SETTINGS.items() if k in kept}
    assert fell_back == {**expected, "extra_headers": headers}


def test_headers_left_empty_are_removed(how_call: str) -> None:
    primary, backup, seen = down("primary"), ScriptedChatModel(["ok"]), Seen()
    settings = Settings({"extra_headers": {"x-session-affinity": "s"}, "max_tokens": 5})
    middleware = [settings, ModelFallbackMiddleware(backup), seen]

    run_agent(create_agent(primary, middleware=middleware), how_call, GO)

    assert seen.requests[1].model_settings == {"max_tokens": 5}


def cached_agent(backup: ScriptedChatModel, seen: Seen) -> tuple[Any, dict[str, Any]]:
    @tool(extras={"cache_control": CACHE, "note": "kept"})
    def echo(text: str) -> str:
        """Echo."""
        return text

    @tool(extras={"cache_control": CACHE})
    def shout(text: str) -> str:
        """Shout."""
        return text.upper()

    system = SystemMessage([{"type": "text", "text": "Be brief.", "cache_control": CACHE}])
    block = {
        "type": "text",
        "text": "hi",
        "cache_control": CACHE,
        "extras": {"cache_control": CACHE, "k": 1},
        "metadata": {"cache_control": CACHE},
    }
    agent = create_agent(
        down("primary"),
        [echo, shout],
        system_prompt=system,
        middleware=[ModelFallbackMiddleware(backup), seen],
    )
    return agent, {"messages": [HumanMessage([block])]}


def test_cache_markers_are_taken_out_of_messages_and_tools_for_other_providers(
    how_call: str,
) -> None:
    seen = Seen()
    agent, question = cached_agent(ScriptedChatModel(["ok"]), seen)

    result = run_agent(agent, how_call, question)

    tried, fell_back = seen.requests
    assert fell_back.system_message.content == [{"type": "text", "text": "Be brief."}]
    assert fell_back.messages[0].content == [
        {"type": "text", "text": "hi", "extras": {"k": 1}, "metadata": {}}
    ]
    assert [t.extras for t in fell_back.tools] == [{"note": "kept"}, None]
    # Nothing else is changed: the primary's request and the conversation keep them.
    assert tried.system_message.content[0]["cache_control"] == CACHE
    assert [t.extras["cache_control"] for t in tried.tools] == [CACHE, CACHE]
    assert result["messages"][0].content == question["messages"][0].content


def test_an_anthropic_fallback_keeps_the_cache_markers(how_call: str) -> None:
    seen = Seen()
    agent, question = cached_agent(Provider(["ok"], provider_type="anthropic-chat"), seen)

    run_agent(agent, how_call, question)

    tried, fell_back = seen.requests
    assert fell_back.system_message.content == tried.system_message.content
    assert fell_back.messages[0].content == question["messages"][0].content
    assert [t.extras for t in fell_back.tools] == [
        {"cache_control": CACHE, "note": "kept"},
        {"cache_control": CACHE},
    ]


# -- interrupts ----------------------------------------------------------------------------------


class AskFirst(AgentMiddleware):
    """Pauses the run with ``interrupt()`` before each model call."""

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        interrupt("call the model?")
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        interrupt("call the model?")
        return await handler(request)


def test_an_interrupt_passes_through_without_a_fallback(how_call: str) -> None:
    primary, backup = ScriptedChatModel(["from primary"]), ScriptedChatModel(["never"])
    agent = create_agent(
        primary,
        middleware=[ModelFallbackMiddleware(backup), AskFirst()],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t"}}

    paused = run_agent(agent, how_call, GO, config=config)

    assert [i.value for i in paused["__interrupt__"]] == ["call the model?"]
    assert (primary.call_count, backup.call_count) == (0, 0)

    done = run_agent(agent, how_call, Command(resume="yes"), config=config)

    assert done["messages"][-1].text == "from primary"
    assert backup.call_count == 0


# -- deliberate differences ----------------------------------------------------------------------


def test_a_model_id_is_built_by_the_modules_init_chat_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[str] = []
    model = ScriptedChatModel(["ok"])

    def fake_init(model_id: str) -> ScriptedChatModel:
        built.append(model_id)
        return model

    monkeypatch.setattr(model_fallback, "init_chat_model", fake_init)
    fallback = ModelFallbackMiddleware("openai:gpt-4o-mini")

    assert built == ["openai:gpt-4o-mini"]
    assert fallback.models == [model]


def test_a_fallback_that_is_not_a_model_is_refused() -> None:
    # Deliberate difference, "Building an agent and writing middleware": "Bad option values of a
    # built-in". LangChain keeps it and fails when it is first tried.
    with pytest.raises(TypeError, match="first_model"):
        ModelFallbackMiddleware(42)  # type: ignore[arg-type]


def test_a_fallback_is_logged_as_a_warning(how_call: str, caplog: pytest.LogCaptureFixture) -> None:
    # Deliberate difference, "Retries, fallbacks and tool errors": "A fallback happens". LangChain
    # falls back silently.
    agent = create_agent(
        down("primary"), middleware=[ModelFallbackMiddleware(ScriptedChatModel(["ok"]))]
    )

    with caplog.at_level(logging.WARNING):
        run_agent(agent, how_call, GO)

    [record] = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert "ConnectionError" in record.getMessage()
