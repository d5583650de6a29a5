"""LangChain 1.5's ``langchain.chat_models.init_chat_model`` in its runtime-configurable form:
without a model, or with ``configurable_fields``, it returns a model that each call builds from
``config["configurable"]`` (under ``config_prefix``), replaying ``bind_tools`` /
``with_structured_output`` / ``with_config`` on it and reading other attributes from it; an
agent takes it as its model, and so do the built-ins that take a model in LangChain.

Driven for real: ``ChatOpenAI`` against the local OpenAI-compatible stub, whose requests show
the model each call chose.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_openai import ChatOpenAI

from graphagent import ConfigurableChatModel, create_agent, init_chat_model
from graphagent.middleware import (
    ModelChoice,
    ModelFallbackMiddleware,
    ModelRequest,
    ModelRouterMiddleware,
    SummarizationMiddleware,
    wrap_model_call,
)
from tests.compat.classifiers import answering
from tests.configurable_models import (
    QUESTION,
    choose,
    configurable,
    models,
)
from tests.conftest import run_agent
from tests.openai_stub import OpenAIStub, call, error, text, tool_calls
from tests.weather import Weather, get_weather

# -- init_chat_model -------------------------------------------------------------------------


def test_without_a_model_the_model_and_its_provider_are_configurable(stub: OpenAIStub) -> None:
    model = init_chat_model()

    assert isinstance(model, ConfigurableChatModel)
    assert not isinstance(model, ChatOpenAI)
    assert model.configurable_fields == ("model", "model_provider")
    assert init_chat_model("").configurable_fields == ("model", "model_provider")

    stub.script(text("one"), text("two"))
    model = configurable(stub)
    assert model.invoke("hi", choose(model="openai:gpt-4o-mini")).content == "one"
    assert model.invoke("hi", choose(model="gpt-4.1", model_provider="openai")).content == "two"
    assert models(stub) == ["gpt-4o-mini", "gpt-4.1"]


def test_the_keyword_arguments_are_defaults_the_config_may_override(stub: OpenAIStub) -> None:
    stub.script(text("a"), text("b"), text("c"))
    model = configurable(stub, "openai:gpt-4o", configurable_fields=("model",), temperature=0.5)

    model.invoke("hi")
    model.invoke("hi", choose(model="openai:gpt-4o-mini", temperature=0.9))
    configurable(stub, "gpt-4o", configurable_fields="any").invoke("hi", choose(temperature=0.9))

    assert models(stub) == ["gpt-4o", "gpt-4o-mini", "gpt-4o"]
    # Only the listed fields are read: temperature is not one of the first model's.
    assert [r.get("temperature") for r in stub.requests] == [0.5, 0.5, 0.9]


@pytest.mark.parametrize("prefix", ["judge", "judge_"])
def test_a_config_prefix_reads_only_the_keys_under_it(stub: OpenAIStub, prefix: str) -> None:
    stub.script(text("a"))
    model = configurable(stub, config_prefix=prefix)

    model.invoke("hi", choose(model="openai:not-mine", judge_model="openai:gpt-judge"))

    assert models(stub) == ["gpt-judge"]
    assert model.config_prefix == "judge_"


def test_a_config_prefix_on_a_fixed_model_warns_and_does_nothing() -> None:
    with pytest.warns(UserWarning, match="no fields are configurable") as warned:
        model = init_chat_model("openai:gpt-4o", config_prefix="foo", api_key="test")

    assert isinstance(model, ChatOpenAI)
    [warning] = warned
    assert str(warning.message).startswith(
        "config_prefix='foo' has been set but no fields are configurable."
    )
    assert warning.filename == __file__


def test_a_model_that_is_not_a_str_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"^`model` must be a string"):
        init_chat_model(ChatOpenAI(api_key="test"), configurable_fields="any")  # type: ignore[call-overload]


def test_a_call_with_no_model_chosen_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        init_chat_model().invoke("hi")


def test_a_provider_whose_package_is_missing_is_an_import_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "langchain_anthropic", None)

    with pytest.raises(ImportError, match="pip install langchain-anthropic"):
        init_chat_model().invoke("hi", choose(model="anthropic:claude-sonnet-4-5"))


# -- recorded calls, with_config, attributes ------------------------------------------------


def test_bind_tools_is_applied_to_each_model_built(stub: OpenAIStub) -> None:
    stub.script(tool_calls(call("get_weather", {"city": "Paris"})), text("plain"))
    model = configurable(stub)

    with_tools = model.bind_tools([get_weather], tool_choice="get_weather")
    reply = with_tools.invoke("Weather?", choose(model="openai:gpt-4o-mini"))
    model.invoke("Weather?", choose(model="openai:gpt-4.1"))

    assert isinstance(with_tools, ConfigurableChatModel)
    assert reply.tool_calls[0]["args"] == {"city": "Paris"}
    first, second = stub.requests
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"]
    assert first["tool_choice"]["function"]["name"] == "get_weather"
    assert "tools" not in second  # the model it was recorded on is unchanged


def test_with_structured_output_is_applied_to_each_model_built(stub: OpenAIStub) -> None:
    stub.script(tool_calls(call("Weather", {"city": "Paris", "degrees": 21})))
    structured = configurable(stub).with_structured_output(Weather, method="function_calling")

    report = structured.invoke("Weather?", choose(model="openai:gpt-4o-mini"))

    assert report == Weather(city="Paris", degrees=21)


def test_with_config_sets_the_defaults_the_config_may_still_override(stub: OpenAIStub) -> None:
    stub.script(text("a"), text("b"))
    model = configurable(stub, config_prefix="agent").with_config(
        configurable={"agent_model": "openai:gpt-default"}
    )

    model.invoke("hi")
    model.invoke("hi", choose(agent_model="openai:gpt-override"))

    assert isinstance(model, ConfigurableChatModel)
    assert models(stub) == ["gpt-default", "gpt-override"]


def test_with_retry_builds_the_chosen_model_on_each_attempt(stub: OpenAIStub) -> None:
    stub.script(error(500, "overloaded"), text("second time lucky"))
    model = configurable(stub).with_retry(stop_after_attempt=2, wait_exponential_jitter=False)

    reply = model.invoke("hi", choose(model="openai:gpt-4o-mini"))

    assert reply.content == "second time lucky"
    assert models(stub) == ["gpt-4o-mini", "gpt-4o-mini"]


def test_attributes_are_read_from_the_model_the_config_selects(stub: OpenAIStub) -> None:
    with_default = configurable(stub, "openai:gpt-4o", configurable_fields=("model",))
    without = configurable(stub)

    assert with_default.model_name == "gpt-4o"
    assert with_default.profile["structured_output"] is True
    assert not hasattr(without, "model_name")  # no model to read it from
    assert not hasattr(with_default, "no_such_attribute")


# -- calls -------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["invoke", "ainvoke", "stream", "astream"])
def test_each_entry_point_calls_the_chosen_model(how: str, stub: OpenAIStub) -> None:
    stub.script(text("Sunny and mild."))
    model, config = configurable(stub), choose(model="openai:gpt-4o-mini")

    async def collect() -> list[Any]:
        if how == "ainvoke":
            return [await model.ainvoke("Weather?", config)]
        return [chunk async for chunk in model.astream("Weather?", config)]

    if how.startswith("a"):
        replies = asyncio.run(collect())
    else:
        replies = (
            [model.invoke("Weather?", config)]
            if how == "invoke"
            else [*model.stream("Weather?", config)]
        )

    assert "".join(r.text for r in replies) == "Sunny and mild."
    streams = how.endswith("stream")
    assert all(isinstance(r, AIMessageChunk if streams else AIMessage) for r in replies)
    assert models(stub) == ["gpt-4o-mini"]
    assert stub.requests[0].get("stream", False) is streams


def test_a_batch_uses_each_inputs_config(stub: OpenAIStub) -> None:
    stub.script(*(text("ok") for _ in range(4)))
    model = configurable(stub)

    model.batch(["a", "b"], choose(model="openai:gpt-one"))
    asyncio.run(
        model.abatch(["a", "b"], [choose(model="openai:gpt-x"), choose(model="openai:gpt-y")])
    )

    assert models(stub)[:2] == ["gpt-one", "gpt-one"]
    assert sorted(models(stub)[2:]) == ["gpt-x", "gpt-y"]


def test_astream_events_are_the_chosen_models(stub: OpenAIStub) -> None:
    stub.script(text("Sunny."))
    model = configurable(stub)

    async def events() -> list[Any]:
        config = choose(model="openai:gpt-4o-mini")
        return [e async for e in model.astream_events("Weather?", config, version="v2")]

    kinds = [event["event"] for event in asyncio.run(events())]

    assert kinds[0] == "on_chat_model_start"
    assert "on_chat_model_stream" in kinds
    assert kinds[-1] == "on_chat_model_end"


# -- as an agent's model -----------------------------------------------------------------------


def test_an_agent_calls_the_model_each_run_chooses(how: str, stub: OpenAIStub) -> None:
    stub.script(
        tool_calls(call("get_weather", {"city": "Paris"})),
        text("It is sunny."),
        text("Still sunny."),
    )
    agent = create_agent(configurable(stub, configurable_fields=("model",)), [get_weather])

    first = run_agent(agent, how, QUESTION, config=choose(model="openai:gpt-4o-mini"))
    second = run_agent(agent, how, QUESTION, config=choose(model="openai:gpt-4.1"))

    assert first["messages"][-1].content == "It is sunny."
    assert second["messages"][-1].content == "Still sunny."
    assert models(stub) == ["gpt-4o-mini", "gpt-4o-mini", "gpt-4.1"]
    assert [t["function"]["name"] for t in stub.requests[0]["tools"]] == ["get_weather"]


def test_an_agent_with_a_response_format_returns_the_structured_response(
    how: str, stub: OpenAIStub
) -> None:
    stub.script(tool_calls(call("Weather", {"city": "Paris", "degrees": 21})))
    model = configurable(stub, configurable_fields=("model",))
    agent = create_agent(model, [get_weather], response_format=Weather)

    result = run_agent(agent, how, QUESTION, config=choose(model="openai:gpt-test"))

    assert result["structured_response"] == Weather(city="Paris", degrees=21)


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_streamed_tokens_arrive_once(how: str, stub: OpenAIStub) -> None:
    stub.script(text("It is sunny in Paris."), text("It is sunny in Paris."))
    config = choose(model="openai:gpt-4o-mini")
    fixed = ChatOpenAI(model="gpt-4o-mini", base_url=stub.url, api_key="test", max_retries=0)

    def tokens(model: Any) -> list[tuple[str, str]]:
        agent = create_agent(model)

        async def collect() -> list[Any]:
            return [part async for part in agent.astream(QUESTION, config, stream_mode="messages")]

        parts = (
            list(agent.stream(QUESTION, config, stream_mode="messages"))
            if how == "stream"
            else asyncio.run(collect())
        )
        return [(chunk.text, meta["langgraph_node"]) for chunk, meta in parts]

    chosen, direct = tokens(configurable(stub)), tokens(fixed)

    assert chosen == direct
    assert "".join(token for token, _ in chosen) == "It is sunny in Paris."
    assert models(stub) == ["gpt-4o-mini", "gpt-4o-mini"]


def test_a_hook_sees_the_configurable_model_reading_the_runs_choice(stub: OpenAIStub) -> None:
    seen: list[Any] = []

    @wrap_model_call
    def look(request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        seen.append((type(request.model), request.model.model_name))
        return handler(request)

    stub.script(text("hi"))
    agent = create_agent(configurable(stub), middleware=[look])

    agent.invoke(QUESTION, choose(model="openai:gpt-4o-mini"))

    assert seen == [(ConfigurableChatModel, "gpt-4o-mini")]


# -- in the built-ins that take a model --------------------------------------------------------


def test_a_fallback_model_may_be_configurable(how_call: str, stub: OpenAIStub) -> None:
    stub.script(error(500, "down"), text("from the backup"))
    primary = ChatOpenAI(model="gpt-primary", base_url=stub.url, api_key="test", max_retries=0)
    backup = configurable(stub, config_prefix="backup")
    agent = create_agent(primary, middleware=[ModelFallbackMiddleware(backup)])

    result = run_agent(agent, how_call, QUESTION, config=choose(backup_model="openai:gpt-b"))

    assert result["messages"][-1].content == "from the backup"
    assert models(stub) == ["gpt-primary", "gpt-b"]


def test_a_summarization_model_may_be_configurable(how_call: str, stub: OpenAIStub) -> None:
    stub.script(text("They talked about Paris."), text("Sunny."))
    summarizer = SummarizationMiddleware(
        configurable(stub, config_prefix="summary"), trigger=("messages", 3), keep=("messages", 1)
    )
    agent = create_agent(configurable(stub), middleware=[summarizer])
    history = {"messages": ["Hello.", AIMessage("Hi."), "What is the weather in Paris?"]}
    config = choose(model="openai:gpt-agent", summary_model="openai:gpt-summary")

    result = run_agent(agent, how_call, history, config=config)

    assert models(stub) == ["gpt-summary", "gpt-agent"]
    assert "They talked about Paris." in result["messages"][0].text


def test_a_routed_model_may_be_configurable(how_call: str, stub: OpenAIStub) -> None:
    stub.script(text("Cheap answer."))
    cheap = configurable(stub, config_prefix="cheap")
    router = ModelRouterMiddleware(
        choices={"cheap": ModelChoice(model=cheap, criteria="Easy questions.")},
        instructions="Pick a model.",
        classifier=answering("cheap"),
    )
    agent = create_agent(configurable(stub), middleware=[router])

    result = run_agent(agent, how_call, QUESTION, config=choose(cheap_model="openai:gpt-cheap"))

    assert result["messages"][-1].content == "Cheap answer."
    assert models(stub) == ["gpt-cheap"]
