"""Model ids: parsing, provider inference, error messages, building a model from an id, and
configurable models (graphagent's side of them).

Model ids need no provider package: a fake integration package is written to a temporary
directory on ``sys.path``, under the real package name, so the real table is used. Configurable
models drive langchain-openai's ChatOpenAI against the local OpenAI-compatible stub.
"""

from __future__ import annotations

import asyncio
import copy
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from graphagent import MiddlewareError, create_agent
from graphagent.middleware import (
    LLMToolEmulator,
    LLMToolSelectorMiddleware,
    ModelFallbackMiddleware,
    ModelRequest,
    SummarizationMiddleware,
    wrap_model_call,
)
from graphagent.models import (
    ConfigurableChatModel,
    MissingIntegrationError,
    ModelSpec,
    init_chat_model,
    resolve_model,
)
from graphagent.testing import ScriptedChatModel
from tests.configurable_models import (
    QUESTION,
    SECRET,
    choose,
    configurable,
    models,
)
from tests.conftest import run_agent
from tests.openai_stub import OpenAIStub, call, json_reply, text, tool_calls
from tests.weather import Weather, get_weather

FAKE_CHAT_CLASS = """
import threading

from graphagent.testing import ScriptedChatModel

built = []


class {class_name}(ScriptedChatModel):
    model: str = ""
    model_id: str = ""
    temperature: float | None = None

    def __init__(self, **kwargs):
        super().__init__(["fake answer"], repeat_last=True, **kwargs)
        built.append((self, threading.get_ident()))

    @classmethod
    def from_model_id(cls, model_id, **kwargs):
        return cls(model_id=model_id, **kwargs)
"""

FakePackage = Callable[..., Any]


def install_fake_package(
    monkeypatch: pytest.MonkeyPatch, root: Path, name: str, source: str = "", class_name: str = ""
) -> None:
    """Write module ``name`` under ``root`` (on ``sys.path``); ``class_name`` makes a chat model."""
    if class_name:
        source = FAKE_CHAT_CLASS.format(class_name=class_name)
    top, _, sub = name.partition(".")
    package = root / top
    package.mkdir(exist_ok=True)
    init = package / "__init__.py"
    if not init.exists():
        init.write_text("")
    (package / f"{sub}.py" if sub else init).write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(root))
    for module in {top, name}:
        # Set, then delete: the fake gets imported afresh, and at teardown monkeypatch puts
        # back what was there before (nothing, or a real package), dropping the fake.
        monkeypatch.setitem(sys.modules, module, None)
        monkeypatch.delitem(sys.modules, module)


@pytest.fixture
def fake_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakePackage:
    """``fake_package(name, source="", class_name="")`` installs a fake integration package."""
    return lambda *args, **kwargs: install_fake_package(monkeypatch, tmp_path, *args, **kwargs)


def not_installed(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


# -- parsing and inference -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "provider"),
    [
        ("gpt-4o", "openai"),
        ("GPT-4.1-mini", "openai"),
        ("o1-mini", "openai"),
        ("o3", "openai"),
        ("o4-mini", "openai"),
        ("chatgpt-4o-latest", "openai"),
        ("text-davinci-003", "openai"),
        ("claude-sonnet-4-5", "anthropic"),
        ("gemini-2.5-flash", "google_genai"),
        ("command-r-plus", "cohere"),
        ("accounts/fireworks/models/llama-v3p1-70b-instruct", "fireworks"),
        ("amazon.nova-pro-v1:0", "bedrock"),
        ("anthropic.claude-3-5-sonnet-20240620-v1:0", "bedrock"),
        ("meta.llama3-70b-instruct-v1:0", "bedrock"),
        ("mistral-large-latest", "mistralai"),
        ("mixtral-8x7b", "mistralai"),
        ("deepseek-chat", "deepseek"),
        ("grok-4", "xai"),
        ("sonar-pro", "perplexity"),
        ("solar-pro", "upstage"),
    ],
)
def test_the_provider_is_inferred_from_the_model_name(name: str, provider: str) -> None:
    spec = ModelSpec.parse(name)

    assert (spec.provider, spec.model, spec.inferred) == (provider, name, True)


@pytest.mark.parametrize(
    ("model_id", "provider", "name"),
    [
        ("openai:gpt-4o", "openai", "gpt-4o"),
        ("anthropic:claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"),
        ("ollama:llama3", "ollama", "llama3"),
        ("ollama:llama3:8b", "ollama", "llama3:8b"),
        ("google_genai:gemini-2.5-flash", "google_genai", "gemini-2.5-flash"),
        ("google_vertexai:gemini-2.5-flash", "google_vertexai", "gemini-2.5-flash"),
        ("Google-GenAI:gemini-2.5-flash", "google_genai", "gemini-2.5-flash"),
        ("deepseek:deepseek-chat", "deepseek", "deepseek-chat"),
        ("mistralai:mistral-small-latest", "mistralai", "mistral-small-latest"),
        ("groq:llama-3.3-70b-versatile", "groq", "llama-3.3-70b-versatile"),
        (
            "bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0",
            "bedrock",
            "anthropic.claude-3-5-sonnet-20240620-v1:0",
        ),
        ("bedrock_converse:amazon.nova-pro-v1:0", "bedrock_converse", "amazon.nova-pro-v1:0"),
        ("azure_openai:my-deployment", "azure_openai", "my-deployment"),
    ],
)
def test_a_provider_prefix_is_split_off(model_id: str, provider: str, name: str) -> None:
    spec = ModelSpec.parse(model_id)

    assert (spec.provider, spec.model, spec.inferred) == (provider, name, False)
    assert str(spec) == f"{provider}:{name}"


def test_model_provider_names_the_provider_and_wins_over_inference() -> None:
    assert ModelSpec.parse("llama3", model_provider="ollama") == ModelSpec("ollama", "llama3")
    assert ModelSpec.parse("claude-x", model_provider="bedrock") == ModelSpec("bedrock", "claude-x")
    assert ModelSpec.parse("gpt-4o", model_provider="Azure-OpenAI").provider == "azure_openai"
    # The same provider written twice is not part of the model name.
    assert ModelSpec.parse("openai:gpt-4o", model_provider="openai").model == "gpt-4o"
    assert ModelSpec.parse("x:y", model_provider="ollama").model == "x:y"


def test_an_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(
        ValueError, match=r"^Unable to infer model provider for model='foo:bar': 'foo' is no known"
    ) as raised:
        ModelSpec.parse("foo:bar")
    for provider in ("anthropic", "bedrock_converse", "google_genai", "ollama", "openai"):
        assert provider in str(raised.value)

    with pytest.raises(
        ValueError,
        match=r"^Unsupported provider='nope': .* for the model 'gpt-4o'\.\nKnown providers: anthr",
    ):
        init_chat_model("gpt-4o", model_provider="nope")


def test_a_misspelt_provider_gets_a_suggestion() -> None:
    with pytest.raises(
        ValueError, match=r"'olama' is no known model provider\. Did you mean 'ollama'"
    ):
        ModelSpec.parse("olama:llama3")
    with pytest.raises(ValueError, match=r"'antropic'.*Did you mean 'anthropic'\?\n"):
        ModelSpec.parse("claude-x", model_provider="antropic")


def test_a_spec_made_by_hand_must_name_a_known_provider() -> None:
    assert str(ModelSpec("groq", "llama-3.3-70b-versatile")) == "groq:llama-3.3-70b-versatile"
    with pytest.raises(
        ValueError,
        match=r"^Unsupported provider='OpenAI': no model provider of that name for the model",
    ):
        ModelSpec("OpenAI", "gpt-4o")


def test_an_uninferable_name_says_how_to_write_the_id() -> None:
    with pytest.raises(
        ValueError, match=r"^Unable to infer model provider for model='llama3'\. Write the id"
    ):
        init_chat_model("llama3")
    with pytest.raises(ValueError, match=r"'provider:model'.*'ollama:llama3'"):
        ModelSpec.parse("llama3")


@pytest.mark.parametrize("model_id", ["", "  ", "openai:", "ollama: "])
def test_an_id_without_a_model_name_is_rejected(model_id: str) -> None:
    with pytest.raises(ValueError, match=r"empty|no model name"):
        ModelSpec.parse(model_id)


def test_the_provider_table_matches_langchains() -> None:
    base = pytest.importorskip("langchain.chat_models.base")
    from graphagent._models.providers import PROVIDERS

    theirs = {key: (module, name) for key, (module, name, _) in base._BUILTIN_PROVIDERS.items()}
    ours = {key: (i.module, i.class_name) for key, i in PROVIDERS.items()}

    # LangSmith's gateway provider needs a private langchain_core helper; left out on purpose.
    assert ours == {key: value for key, value in theirs.items() if key != "langsmith"}


# -- building models -----------------------------------------------------------------------


def test_a_missing_package_is_an_import_error_naming_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    not_installed(monkeypatch, "langchain_anthropic")

    with pytest.raises(MissingIntegrationError) as raised:
        init_chat_model("anthropic:claude-sonnet-4-5")

    error = raised.value
    assert isinstance(error, ImportError)
    assert (error.provider, error.package) == ("anthropic", "langchain-anthropic")
    assert str(error).startswith(
        "Initializing ChatAnthropic requires the langchain-anthropic package (for the model "
        "'anthropic:claude-sonnet-4-5')"
    )
    assert "pip install langchain-anthropic" in str(error)
    assert "inferred" not in str(error)


def test_a_missing_package_for_an_inferred_provider_says_how_to_pick_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    not_installed(monkeypatch, "langchain_google_genai")

    with pytest.raises(MissingIntegrationError, match="pip install langchain-google-genai") as err:
        init_chat_model("gemini-2.5-flash")

    assert "inferred from the model name" in str(err.value)
    assert "'<provider>:gemini-2.5-flash'" in str(err.value)


def test_an_extra_is_named_with_its_quotes(monkeypatch: pytest.MonkeyPatch) -> None:
    not_installed(monkeypatch, "langchain_aws")

    with pytest.raises(MissingIntegrationError, match=r'pip install "langchain-aws\[openai\]"'):
        init_chat_model("bedrock_mantle_openai:gpt-oss-120b")


def test_a_package_whose_own_import_fails_is_reported_with_the_cause(
    fake_package: FakePackage,
) -> None:
    fake_package("langchain_groq", "import a_dependency_that_is_not_there_xyz\n")

    with pytest.raises(MissingIntegrationError, match="failed to import") as raised:
        init_chat_model("groq:llama-3.3-70b-versatile")

    assert "a_dependency_that_is_not_there_xyz" in str(raised.value)
    assert isinstance(raised.value.__cause__, ImportError)


def test_a_package_without_the_class_is_reported_as_too_old(fake_package: FakePackage) -> None:
    fake_package("langchain_xai", "class SomethingElse: ...\n")

    with pytest.raises(MissingIntegrationError, match="has no ChatXAI; it may be too old"):
        init_chat_model("xai:grok-4")


def test_a_model_is_built_from_the_integration_with_the_keyword_arguments(
    fake_package: FakePackage,
) -> None:
    fake_package("langchain_anthropic", class_name="ChatAnthropic")

    model = init_chat_model("anthropic:claude-sonnet-4-5", temperature=0.25)
    inferred = init_chat_model("claude-haiku-4-5")

    module = sys.modules["langchain_anthropic"]
    assert [type(m) for m in (model, inferred)] == [module.ChatAnthropic] * 2
    assert (model.model, model.temperature) == ("claude-sonnet-4-5", 0.25)  # type: ignore[attr-defined]
    assert inferred.model == "claude-haiku-4-5"  # type: ignore[attr-defined]


def test_a_class_in_a_submodule_is_found(fake_package: FakePackage) -> None:
    fake_package("langchain_google_vertexai.model_garden", class_name="ChatAnthropicVertex")

    model = init_chat_model("google_anthropic_vertex:claude-sonnet-4-5")

    assert type(model).__name__ == "ChatAnthropicVertex"


@pytest.mark.parametrize(
    ("provider", "package", "class_name"),
    [
        ("ibm", "langchain_ibm", "ChatWatsonx"),
        ("huggingface", "langchain_huggingface", "ChatHuggingFace"),
    ],
)
def test_integrations_that_take_a_model_id(
    fake_package: FakePackage, provider: str, package: str, class_name: str
) -> None:
    fake_package(package, class_name=class_name)

    model = init_chat_model(f"{provider}:org/some-model")

    assert (model.model_id, model.model) == ("org/some-model", "")  # type: ignore[attr-defined]


def test_an_integration_that_does_not_build_a_chat_model_is_a_type_error(
    fake_package: FakePackage,
) -> None:
    fake_package("langchain_ollama", "class ChatOllama:\n    def __init__(self, **kw): ...\n")

    with pytest.raises(TypeError, match=r"langchain_ollama.ChatOllama built a ChatOllama"):
        init_chat_model("ollama:llama3")


def test_parsing_does_not_import_the_integration(fake_package: FakePackage) -> None:
    fake_package("langchain_mistralai", class_name="ChatMistralAI")

    spec = ModelSpec.parse("mistral-large-latest")

    assert spec.is_installed()
    assert "langchain_mistralai" not in sys.modules
    spec.load()
    assert "langchain_mistralai" in sys.modules


def test_is_installed_is_false_for_a_missing_package(monkeypatch: pytest.MonkeyPatch) -> None:
    not_installed(monkeypatch, "langchain_cohere")

    assert not ModelSpec.parse("command-r").is_installed()


# -- init_chat_model and resolve_model -----------------------------------------------------


def test_init_chat_model_rejects_a_model_object() -> None:
    with pytest.raises(TypeError, match="can be used directly"):
        init_chat_model(ScriptedChatModel([]))  # type: ignore[arg-type]


def test_resolve_model_passes_models_through_and_builds_ids(fake_package: FakePackage) -> None:
    fake_package("langchain_openai", class_name="ChatOpenAI")
    model = ScriptedChatModel([])

    assert resolve_model(model) is model
    assert resolve_model("gpt-4o").model == "gpt-4o"  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="BaseChatModel or a model id"):
        resolve_model(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Unable to infer model provider"):
        resolve_model("foo:bar")


def test_a_resolved_model_runs_an_agent(fake_package: FakePackage, how_call: str) -> None:
    fake_package("langchain_deepseek", class_name="ChatDeepSeek")

    agent = create_agent(resolve_model("deepseek:deepseek-chat"))
    result = run_agent(agent, how_call, {"messages": [HumanMessage("hi")]})

    assert result["messages"][-1].content == "fake answer"
    [(model, thread)] = sys.modules["langchain_deepseek"].built
    assert model.call_count == 1
    assert thread == threading.get_ident()


# -- configurable models -------------------------------------------------------------------
# What graphagent adds to LangChain's configurable models: checks when the model is made,
# errors naming the config key, LangGraph's keys kept out of "any", a structured-output strategy
# picked per call, and the built-ins LangChain leaves out. tests/compat/test_chat_models.py has
# what LangChain does too. ChatOpenAI is driven against the local OpenAI-compatible stub.


@tool
def get_time(city: str) -> str:
    """The local time in a city."""
    return f"noon in {city}"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ("model", r"configurable_fields='model' is a str; .*configurable_fields=\('model',\)"),
        (5, "must be 'any' or a list or tuple of parameter names.*got int"),
        ({"model"}, "must be 'any' or a list or tuple of parameter names.*got set"),
        (True, "must be 'any' or a list or tuple of parameter names.*got bool"),
        (["model", 3], r"holds \[3\]; each name must be a non-empty str"),
    ],
)
def test_bad_configurable_fields_are_type_errors(fields: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        init_chat_model(configurable_fields=fields)
    with pytest.raises(TypeError, match=message):
        ConfigurableChatModel({}, configurable_fields=fields)


def test_a_bad_config_prefix_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="config_prefix must be a str, got int"):
        init_chat_model(config_prefix=3)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="config_prefix must be a str"):
        ConfigurableChatModel({"model": "gpt-4o"}, config_prefix=None)  # type: ignore[arg-type]


def test_a_model_no_call_can_choose_is_refused_when_made() -> None:
    with pytest.raises(TypeError, match="'model' is not one of its configurable_fields"):
        init_chat_model(configurable_fields=("temperature",))


def test_a_fixed_default_model_is_checked_when_made(monkeypatch: pytest.MonkeyPatch) -> None:
    not_installed(monkeypatch, "langchain_anthropic")

    with pytest.raises(ValueError, match="'foo' is no known model provider"):
        init_chat_model("foo:bar", configurable_fields=("temperature",))
    with pytest.raises(MissingIntegrationError, match="pip install langchain-anthropic"):
        init_chat_model("anthropic:claude-sonnet-4-5", configurable_fields=("temperature",))
    # A model the config may change is only built, and so checked, per call.
    init_chat_model("anthropic:claude-sonnet-4-5", configurable_fields=("model",))


def test_no_model_at_call_time_names_the_key_to_set(how_call: str) -> None:
    agent = create_agent(init_chat_model(config_prefix="agent"))

    with pytest.raises(TypeError) as raised:
        run_agent(agent, how_call, QUESTION, config=choose(model="openai:gpt-4o"))

    message = str(raised.value)
    assert message.startswith("ConfigurableChatModel has no model to call")
    assert "config['configurable']['agent_model']" in message
    assert "graphagent: raised in the model call (ConfigurableChatModel)" in raised.value.__notes__


def test_a_model_in_the_config_must_be_a_model_id(stub: OpenAIStub) -> None:
    with pytest.raises(TypeError, match=r"config\['configurable'\]\['model'\] must be a str"):
        configurable(stub).invoke("hi", choose(model=ScriptedChatModel(["x"])))


def test_a_missing_integration_at_call_time_names_the_package(
    how_call: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    not_installed(monkeypatch, "langchain_anthropic")
    agent = create_agent(init_chat_model())

    with pytest.raises(MissingIntegrationError) as raised:
        run_agent(agent, how_call, QUESTION, config=choose(model="anthropic:claude-sonnet-4-5"))

    assert raised.value.package == "langchain-anthropic"


def test_any_leaves_langgraphs_own_keys_out(how: str, stub: OpenAIStub) -> None:
    stub.script(text("Sunny."))
    agent = create_agent(
        configurable(stub, configurable_fields="any"), checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t", "model": "openai:gpt-4o", "temperature": 0.3}}

    run_agent(agent, how, QUESTION, config=config)  # ChatOpenAI would warn about thread_id

    [request] = stub.requests
    assert (request["model"], request["temperature"]) == ("gpt-4o", 0.3)
    assert not [key for key in request if "thread" in key or "checkpoint" in key]


def test_params_show_what_a_call_builds_with(stub: OpenAIStub) -> None:
    model = init_chat_model("gpt-4o", configurable_fields=("temperature",), config_prefix="x")

    assert model.params(choose(x_temperature=0.1, temperature=0.9, x_api_key="k")) == {
        "model": "gpt-4o",
        "temperature": 0.1,
    }
    assert model.defaults == {"model": "gpt-4o"}


def test_the_repr_names_the_defaults_without_their_values(stub: OpenAIStub) -> None:
    shown = repr(configurable(stub, "openai:gpt-4o", configurable_fields="any"))

    assert "'openai:gpt-4o'" in shown
    assert "api_key" in shown
    assert SECRET not in shown


def test_copies_stay_configurable_models(stub: OpenAIStub) -> None:
    model = configurable(stub, "openai:gpt-4o", configurable_fields="any").bind_tools([get_time])

    copied = copy.deepcopy(model)

    assert isinstance(copied, ConfigurableChatModel)
    assert copied.operations[0][0] == "bind_tools"


@pytest.mark.parametrize(
    ("model", "native"), [("gpt-4o-mini", True), ("gpt-test", False)], ids=["profiled", "unknown"]
)
def test_a_plain_schema_follows_the_profile_of_the_model_each_call_builds(
    model: str, native: bool, how_call: str, stub: OpenAIStub
) -> None:
    payload = {"city": "Paris", "degrees": 21}
    stub.script(json_reply(payload) if native else tool_calls(call("Weather", payload)))
    agent = create_agent(configurable(stub), response_format=Weather)

    result = run_agent(agent, how_call, QUESTION, config=choose(model=f"openai:{model}"))

    assert result["structured_response"] == Weather.model_validate(payload)
    [request] = stub.requests
    assert ("response_format" in request) is native
    assert ("tools" in request) is not native


@pytest.mark.parametrize(
    ("wrapped", "message"),
    [
        (lambda m: m.bind_tools([get_time]), r"with bind_tools\(\) applied; an agent binds"),
        (lambda m: m.with_structured_output(Weather), r"with with_structured_output\(\) applied"),
        (lambda m: m.with_retry(), r"got RunnableRetry \(a model wrapped by bind_tools\(\)"),
    ],
)
def test_an_agent_refuses_a_model_with_tools_or_wrappers_applied(
    stub: OpenAIStub, wrapped: Callable[[Any], Any], message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        create_agent(wrapped(configurable(stub)), [get_weather])


def test_with_config_reaches_the_agents_model_call(how_call: str, stub: OpenAIStub) -> None:
    started: list[list[str]] = []

    class Tags(BaseCallbackHandler):
        def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
            started.append(kwargs.get("tags") or [])

    stub.script(text("Sunny."))
    model = configurable(stub).with_config(tags=["chosen"], configurable={"model": "gpt-4o"})
    agent = create_agent(model, [get_weather])

    run_agent(agent, how_call, QUESTION, config={"callbacks": [Tags()]})

    assert models(stub) == ["gpt-4o"]
    assert [("chosen" in tags) for tags in started] == [True]


def test_a_hook_may_switch_to_a_configurable_model(how_call: str, stub: OpenAIStub) -> None:
    judge = configurable(stub, config_prefix="judge")

    @wrap_model_call
    def to_judge(request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        return handler(request.override(model=judge))

    stub.script(text("Verdict."))
    agent = create_agent(ScriptedChatModel([]), middleware=[to_judge])

    result = run_agent(agent, how_call, QUESTION, config=choose(judge_model="openai:gpt-judge"))

    assert result["messages"][-1].content == "Verdict."
    assert models(stub) == ["gpt-judge"]


def test_a_tool_selector_may_be_configurable(how_call: str, stub: OpenAIStub) -> None:
    stub.script(json_reply({"tools": ["get_time"]}), text("Noon."))
    selector = LLMToolSelectorMiddleware(
        model=configurable(stub, config_prefix="pick"), max_tools=1
    )
    agent = create_agent(configurable(stub), [get_weather, get_time], middleware=[selector])
    config = choose(model="openai:gpt-agent", pick_model="openai:gpt-picker")

    run_agent(agent, how_call, {"messages": ["What time is it in Paris?"]}, config=config)

    assert models(stub) == ["gpt-picker", "gpt-agent"]
    assert [t["function"]["name"] for t in stub.requests[1]["tools"]] == ["get_time"]


def test_a_tool_emulator_may_be_configurable(how_call: str, stub: OpenAIStub) -> None:
    stub.script(
        tool_calls(call("get_weather", {"city": "Paris"})), text("Rainy (emulated)."), text("Wet.")
    )
    emulator = LLMToolEmulator(model=configurable(stub, config_prefix="emulator"))
    agent = create_agent(configurable(stub), [get_weather], middleware=[emulator])
    config = choose(model="openai:gpt-agent", emulator_model="openai:gpt-emulator")

    result = run_agent(agent, how_call, QUESTION, config=config)

    assert models(stub) == ["gpt-agent", "gpt-emulator", "gpt-agent"]
    assert result["messages"][2].content == "Rainy (emulated)."


def test_a_summarizer_may_be_configurable(how_call: str, stub: OpenAIStub) -> None:
    stub.script(text("They greeted each other."), text("Sunny."))
    summarization = SummarizationMiddleware(
        ScriptedChatModel([]),
        trigger=("messages", 3),
        keep=("messages", 1),
        summarizer=configurable(stub, config_prefix="summary"),
    )
    agent = create_agent(configurable(stub), middleware=[summarization])
    history = {"messages": ["Hello.", AIMessage("Hi."), "What is the weather in Paris?"]}
    config = choose(model="openai:gpt-agent", summary_model="openai:gpt-summary")

    result = run_agent(agent, how_call, history, config=config)

    assert models(stub) == ["gpt-summary", "gpt-agent"]
    assert "They greeted each other." in result["messages"][0].text


def test_a_fraction_trigger_needs_the_window_of_the_model_each_run_chooses(
    how_call: str, stub: OpenAIStub
) -> None:
    stub.script(text("Sunny."))
    summarization = SummarizationMiddleware(
        configurable(stub, config_prefix="summary"), trigger=("fraction", 0.9)
    )
    agent = create_agent(configurable(stub), middleware=[summarization])
    profiled = choose(model="openai:gpt-4o", summary_model="openai:gpt-4o-mini")

    run_agent(agent, how_call, QUESTION, config=profiled)  # 128k tokens: nothing to summarize
    with pytest.raises(MiddlewareError, match="'fraction' trigger or keep needs the model's"):
        run_agent(agent, how_call, QUESTION, config=choose(summary_model="openai:gpt-test"))


def test_a_hook_passing_a_model_id_as_the_model_is_told_how_to_build_it(how_call: str) -> None:
    @wrap_model_call
    def by_id(request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        return handler(request.override(model="openai:gpt-4o"))

    agent = create_agent(ScriptedChatModel([]), middleware=[by_id])

    with pytest.raises(TypeError, match=r"request.model is str, not a chat model") as raised:
        run_agent(agent, how_call, QUESTION)

    assert "init_chat_model('openai:gpt-4o')" in str(raised.value)


def test_a_hook_reading_the_models_attributes_under_ainvoke_builds_nothing_on_the_loop(
    fake_package: FakePackage,
) -> None:
    # A tracer reads request.model.model_name before the call: under ainvoke the run's model is
    # built off the event loop first, and the hook reads that one.
    fake_package("langchain_deepseek", class_name="ChatDeepSeek")
    seen: list[str] = []

    @wrap_model_call
    async def trace(request: Any, handler: Any) -> Any:
        seen.append(request.model.model)
        return await handler(request)

    model = init_chat_model(configurable_fields=("model",), model_provider="deepseek")
    agent = create_agent(model, middleware=[trace])

    async def run() -> int:
        await agent.ainvoke({"messages": ["hi"]}, config=choose(model="deepseek-chat"))
        return threading.get_ident()

    loop_thread = asyncio.run(run())

    assert seen == ["deepseek-chat"]
    builds = sys.modules["langchain_deepseek"].built
    assert len(builds) == 1
    assert builds[0][1] != loop_thread


def test_the_model_for_the_same_parameters_is_built_once(stub: OpenAIStub) -> None:
    model = configurable(stub, configurable_fields=("model",))

    first = model.model_for(choose(model="gpt-4o-mini"))

    assert model.model_for(choose(model="gpt-4o-mini")) is first
    assert model.model_for(choose(model="gpt-4o")) is not first
    assert copy.deepcopy(model).model_for(choose(model="gpt-4o-mini")) is not first


def test_a_configurable_fallback_is_built_off_the_loop_under_ainvoke(
    fake_package: FakePackage,
) -> None:
    # The fallback reads the model's _llm_type to strip provider settings; the model it reads
    # was built off the event loop first.
    fake_package("langchain_deepseek", class_name="ChatDeepSeek")

    def outage(messages: Any) -> Any:
        raise ConnectionError("down")

    spare = init_chat_model(configurable_fields=("model",), model_provider="deepseek")
    agent = create_agent(ScriptedChatModel([outage]), middleware=[ModelFallbackMiddleware(spare)])

    async def run() -> tuple[Any, int]:
        result = await agent.ainvoke({"messages": ["hi"]}, config=choose(model="deepseek-chat"))
        return result, threading.get_ident()

    result, loop_thread = asyncio.run(run())

    assert result["messages"][-1].text == "fake answer"
    assert [thread for _, thread in sys.modules["langchain_deepseek"].built] != []
    assert loop_thread not in [thread for _, thread in sys.modules["langchain_deepseek"].built]


def test_the_models_module_exports_langchain_cores_base_chat_model() -> None:
    # `from langchain.chat_models import BaseChatModel` is LangChain's re-export of it.
    import langchain_core.language_models

    import graphagent.models

    assert graphagent.models.BaseChatModel is langchain_core.language_models.BaseChatModel
    assert "BaseChatModel" in graphagent.models.__all__
