"""``ProviderToolSearchMiddleware``, as LangChain 1.5 documents it: chosen tools are marked
``defer_loading`` and the provider's own tool-search tool is added to the model call."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.tools import BaseTool, tool
from langchain_openai import ChatOpenAI

from graphagent import create_agent
from graphagent.errors import MiddlewareError, UnknownArgumentError
from graphagent.middleware import ProviderToolSearchMiddleware, wrap_model_call
from graphagent.requests import ModelRequest, ModelResponse
from graphagent.testing import ScriptedChatModel, calls
from tests.configurable_models import choose, configurable
from tests.conftest import run_agent
from tests.openai_stub import OpenAIStub, text

OPENAI_SEARCH = {"type": "tool_search"}
ANTHROPIC_SEARCH = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}


class ProviderModel(ScriptedChatModel):
    """A scripted model that reports a provider for tracing, as ChatOpenAI and ChatAnthropic do."""

    provider: str | None = "openai"

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        params = dict(super()._get_ls_params(stop=stop, **kwargs))
        params.pop("ls_provider")
        return params if self.provider is None else {**params, "ls_provider": self.provider}


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id} shipped"


@tool(extras={"defer_loading": True})
def send_email(to: str) -> str:
    """Send an email."""
    return f"sent to {to}"


class Recorder:
    """An inner wrap_model_call layer that keeps the tools of each request it sees."""

    def __init__(self) -> None:
        self.tools: list[list[BaseTool | dict[str, Any]]] = []
        self.layer = wrap_model_call(self.record, name="Recorder")

    def record(self, request: Any, handler: Any) -> Any:
        self.tools.append(list(request.tools))
        return handler(request)

    def shown(self, turn: int = 0) -> list[Any]:
        """Each tool of a turn: (name, extras) for a tool object, the dict for a provider tool."""
        return [(t.name, t.extras) if isinstance(t, BaseTool) else t for t in self.tools[turn]]


def run_with(how: str, model: Any, middleware: Any, tools: list[Any] | None = None) -> Recorder:
    recorder = Recorder()
    agent = create_agent(
        model, tools or [get_weather, lookup_order], middleware=[middleware, recorder.layer]
    )
    run_agent(agent, how, {"messages": [("user", "Where is order 7?")]})
    return recorder


def test_chosen_tools_are_deferred_behind_openais_search(how_call: str) -> None:
    model = ProviderModel([calls(("lookup_order", {"order_id": "7"})), "Shipped."])
    search = ProviderToolSearchMiddleware(searchable_tools=["lookup_order"])

    recorder = run_with(how_call, model, search)

    assert recorder.shown(0) == [
        ("get_weather", None),
        ("lookup_order", {"defer_loading": True}),
        OPENAI_SEARCH,
    ]
    assert recorder.shown(1) == recorder.shown(0)  # every model call
    assert lookup_order.extras is None  # the agent's own tool is left as it was
    assert model.calls[1].messages[-1].content == "order 7 shipped"  # a deferred tool still runs


def test_anthropic_models_get_anthropics_search_tool(how_call: str) -> None:
    model = ProviderModel(["Hi."], provider="anthropic")
    search = ProviderToolSearchMiddleware(searchable_tools=[lookup_order])

    recorder = run_with(how_call, model, search)

    assert recorder.shown()[-1] == ANTHROPIC_SEARCH


def test_a_tool_marked_defer_loading_is_deferred_without_being_listed(how_call: str) -> None:
    recorder = run_with(
        how_call, ProviderModel(["Hi."]), ProviderToolSearchMiddleware(), [get_weather, send_email]
    )

    assert recorder.shown() == [
        ("get_weather", None),
        ("send_email", {"defer_loading": True}),
        OPENAI_SEARCH,
    ]


def test_a_call_that_defers_nothing_passes_through_for_any_provider(how_call: str) -> None:
    recorder = run_with(how_call, ScriptedChatModel(["Hi."]), ProviderToolSearchMiddleware())

    assert recorder.shown() == [("get_weather", None), ("lookup_order", None)]


def test_the_search_tool_is_not_added_twice(how_call: str) -> None:
    @wrap_model_call
    def adds_search(request: Any, handler: Any) -> Any:
        return handler(request.override(tools=[*request.tools, dict(OPENAI_SEARCH)]))

    recorder = Recorder()
    search = ProviderToolSearchMiddleware(searchable_tools=["lookup_order"])
    agent = create_agent(
        ProviderModel(["Hi."]), [lookup_order], middleware=[adds_search, search, recorder.layer]
    )

    run_agent(agent, how_call, {"messages": [("user", "Hi")]})

    assert recorder.shown() == [("lookup_order", {"defer_loading": True}), OPENAI_SEARCH]


def test_a_listed_tool_another_layer_removed_is_simply_not_deferred(how_call: str) -> None:
    @wrap_model_call
    def weather_only(request: Any, handler: Any) -> Any:
        kept = [t for t in request.tools if t.name == "get_weather"]
        return handler(request.override(tools=kept))

    recorder = Recorder()
    search = ProviderToolSearchMiddleware(searchable_tools=["lookup_order"])
    agent = create_agent(
        ScriptedChatModel(["Hi."]),
        [get_weather, lookup_order],
        middleware=[weather_only, search, recorder.layer],
    )

    run_agent(agent, how_call, {"messages": [("user", "Hi")]})

    assert recorder.shown() == [("get_weather", None)]


@pytest.mark.parametrize(
    ("provider", "message"),
    [
        ("scriptedchatmodel", "requires a provider with server-side tool search, but got"),
        (None, "could not determine the provider for model 'ProviderModel'"),
    ],
)
def test_deferring_to_a_provider_without_tool_search_fails_the_call(
    how_call: str, provider: str | None, message: str
) -> None:
    model = ProviderModel(["Hi."], provider=provider)
    agent = create_agent(
        model,
        [get_weather, lookup_order],
        middleware=[ProviderToolSearchMiddleware(searchable_tools=["lookup_order"])],
    )

    with pytest.raises(ValueError, match=message):
        run_agent(agent, how_call, {"messages": [("user", "Hi")]})
    assert model.call_count == 0


# -- which provider: what a model tells ---------------------------------------------------------


class LangChainConfigurable:
    """Shaped like LangChain's configurable model: defaults in ``_default_config``, and the
    values one call's config sets from ``_model_params(config)``."""

    def __init__(self, defaults: dict[str, Any], per_call: dict[str, Any] | None = None) -> None:
        self._default_config = defaults
        self.per_call = per_call or {}

    def _model_params(self, config: Any = None) -> dict[str, Any]:
        return self.per_call if config is None else dict(config.get("configurable", {}))


class ChatAnthropic:
    """Named like Anthropic's chat model, and telling nothing else."""


class Unnamed:
    """Telling nothing at all."""


class WithConfig:
    def __init__(self, config: Any) -> None:
        self.config = config


def sent_tools(model: Any, tools: list[Any], runtime: Any = None, **options: Any) -> list[Any]:
    """The tools the handler gets when the middleware's wrap_model_call is called by hand."""
    request = ModelRequest(model=model, messages=[], tools=tools, runtime=runtime)
    seen: list[Any] = []

    def handler(request: ModelRequest) -> ModelResponse:
        seen.extend(request.tools)
        return ModelResponse(result=[])

    ProviderToolSearchMiddleware(**options).wrap_model_call(request, handler)
    return seen


@pytest.mark.parametrize(
    ("model", "runtime", "search"),
    [
        (LangChainConfigurable({"model": "anthropic:claude-x"}), None, ANTHROPIC_SEARCH),
        (LangChainConfigurable({}, {"model": "gpt-5.5"}), None, OPENAI_SEARCH),
        (LangChainConfigurable({}, {"model": "o3"}), None, OPENAI_SEARCH),
        (LangChainConfigurable({}, {"model": "claude-sonnet-4-5"}), None, ANTHROPIC_SEARCH),
        (LangChainConfigurable({}), WithConfig(choose(model_provider="openai")), OPENAI_SEARCH),
        # the call's provider wins over the default's; a provider wins over a model name
        (
            LangChainConfigurable({"model_provider": "openai"}),
            WithConfig(choose(model_provider="anthropic")),
            ANTHROPIC_SEARCH,
        ),
        (
            LangChainConfigurable({"model_provider": "openai"}),
            WithConfig(choose(model="claude-sonnet-4-5")),
            OPENAI_SEARCH,
        ),
        # a config that is not a mapping counts as none
        (LangChainConfigurable({}, {"model_provider": "openai"}), WithConfig("x"), OPENAI_SEARCH),
        (ProviderModel([], provider="Anthropic"), None, ANTHROPIC_SEARCH),
        (ChatAnthropic(), None, ANTHROPIC_SEARCH),
    ],
)
def test_the_provider_is_read_from_what_the_model_tells(
    model: Any, runtime: Any, search: dict[str, str]
) -> None:
    tools = sent_tools(model, [get_weather], runtime, searchable_tools=["get_weather"])

    assert tools[-1] == search


@pytest.mark.parametrize("model", [Unnamed(), LangChainConfigurable({"model": "llama-3.1"})])
def test_a_model_that_tells_no_provider_fails_a_deferring_call(model: Any) -> None:
    with pytest.raises(ValueError, match="could not determine the provider for model"):
        sent_tools(model, [get_weather], searchable_tools=["get_weather"])


def test_by_hand_a_listed_tool_the_request_lacks_fails_the_call_first() -> None:
    with pytest.raises(ValueError, match="not bound to the model: aaa, zzz"):
        sent_tools(Unnamed(), [get_weather], searchable_tools=["zzz", "aaa", "get_weather"])


def test_a_configurable_model_is_asked_for_the_runs_choice(how_call: str, stub: OpenAIStub) -> None:
    stub.reset()
    stub.script(text("Shipped."))
    recorder = Recorder()
    search = ProviderToolSearchMiddleware(searchable_tools=["lookup_order"])
    agent = create_agent(
        configurable(stub, use_responses_api=False),
        [lookup_order],
        middleware=[search, recorder.layer],
    )

    run_agent(agent, how_call, {"messages": [("user", "Hi")]}, config=choose(model="gpt-4o"))

    assert recorder.shown()[-1] == OPENAI_SEARCH


# -- on the wire ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(lifetime=120) as server:
        yield server


def test_chat_openai_sends_the_deferred_tool_and_the_search_tool(
    how_call: str, stub: OpenAIStub
) -> None:
    stub.reset()
    stub.script(text("Order 7 has shipped."))
    model = ChatOpenAI(
        base_url=stub.url, api_key="test", model="gpt-test", max_retries=0, use_responses_api=False
    )
    search = ProviderToolSearchMiddleware(searchable_tools=["lookup_order"])
    agent = create_agent(model, [get_weather, lookup_order], middleware=[search])

    run_agent(agent, how_call, {"messages": [("user", "Where is order 7?")]})

    [body] = stub.requests
    sent = {t.get("function", {}).get("name", t["type"]): t for t in body["tools"]}
    assert list(sent) == ["get_weather", "lookup_order", "tool_search"]
    assert "defer_loading" not in sent["get_weather"]
    assert sent["lookup_order"]["defer_loading"] is True
    assert sent["tool_search"] == OPENAI_SEARCH


# -- options ----------------------------------------------------------------------------------


def test_searchable_tools_are_kept_by_name() -> None:
    search = ProviderToolSearchMiddleware(searchable_tools=[lookup_order, "get_weather"])

    assert search.searchable_tool_names == {"lookup_order", "get_weather"}
    assert ProviderToolSearchMiddleware().searchable_tool_names == set()


def test_a_searchable_tool_the_agent_lacks_is_refused_when_the_agent_is_built() -> None:
    search = ProviderToolSearchMiddleware(searchable_tools=["lookup_ordr"])

    with pytest.raises(MiddlewareError, match=r"searchable_tools names \['lookup_ordr'\]"):
        create_agent(ScriptedChatModel([]), [lookup_order], middleware=[search])


def test_bad_options_are_refused() -> None:
    with pytest.raises(UnknownArgumentError, match="'searchable_tool'; did you mean 'searchable_t"):
        ProviderToolSearchMiddleware(searchable_tool=["x"])  # type: ignore[call-arg]
    with pytest.raises(MiddlewareError, match="searchable_tools is not a list"):
        ProviderToolSearchMiddleware(searchable_tools="lookup_order")  # type: ignore[arg-type]
