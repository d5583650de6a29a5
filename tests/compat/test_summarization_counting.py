"""When ``SummarizationMiddleware`` summarizes, counted as LangChain 1.5 counts: the default
estimate scaled by the provider's reported usage (shorter tokens for Anthropic models), a
``tokens`` or ``fraction`` threshold also reached by the usage the agent model's provider
reported, and an empty trigger list that never summarizes."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

from graphagent import create_agent
from graphagent.middleware import SummarizationMiddleware, summarization as summarization_module
from graphagent.testing import ScriptedChatModel
from tests.conftest import run_agent


class ProviderModel(ScriptedChatModel):
    """A scripted model that traces under ``ls_provider`` (as a provider's chat model does)."""

    ls_provider: str = "acme"

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        return {"ls_provider": self.ls_provider, "ls_model_type": "chat"}


def reported(total: int, provider: str) -> list[AnyMessage]:
    """A short conversation whose last AI reply reports ``total`` tokens used."""
    usage = {"input_tokens": total - 1, "output_tokens": 1, "total_tokens": total}
    return [
        HumanMessage("first question"),
        AIMessage(
            "first answer", usage_metadata=usage, response_metadata={"model_provider": provider}
        ),
        HumanMessage("second question"),
    ]


def no_tokens(messages: Any) -> int:
    return 0


def summarizes(middleware: SummarizationMiddleware, messages: list[AnyMessage], how: str) -> bool:
    agent = create_agent(ScriptedChatModel(["done"]), [], middleware=[middleware])
    result = run_agent(agent, how, {"messages": messages})
    return bool(result["messages"][0].additional_kwargs.get("lc_source") == "summarization")


@pytest.mark.parametrize(
    ("ls_provider", "message_provider"),
    [
        ("acme", "acme"),
        ("amazon_bedrock", "bedrock_converse"),
        ("amazon_bedrock", "bedrock"),
        ("openai-mantle", "openai"),
        ("anthropic-mantle", "anthropic"),
    ],
)
def test_the_reported_usage_reaches_a_tokens_threshold(
    how_call: str, ls_provider: str, message_provider: str
) -> None:
    model = ProviderModel(["Summary."], ls_provider=ls_provider)
    middleware = SummarizationMiddleware(
        model, trigger=("tokens", 10_000), keep=("messages", 1), token_counter=no_tokens
    )

    assert summarizes(middleware, reported(10_001, message_provider), how_call)
    assert middleware._should_summarize(reported(10_001, message_provider), 0)
    assert not middleware._should_summarize(reported(9_999, message_provider), 0)


@pytest.mark.parametrize("message_provider", ["another", "", "anthropic"])
def test_usage_reported_by_another_provider_does_not_count(
    how_call: str, message_provider: str
) -> None:
    model = ProviderModel(["Summary."], ls_provider="openai-mantle")
    middleware = SummarizationMiddleware(
        model, trigger=("tokens", 10_000), keep=("messages", 1), token_counter=no_tokens
    )

    assert not summarizes(middleware, reported(50_000, message_provider), how_call)


def test_the_reported_usage_reaches_a_fraction_and_an_and_clause(how_call: str) -> None:
    windowed = ProviderModel(["Summary."], repeat_last=True, profile={"max_input_tokens": 1000})
    fraction = SummarizationMiddleware(
        windowed, trigger=("fraction", 0.8), keep=("messages", 1), token_counter=no_tokens
    )
    both = SummarizationMiddleware(
        windowed,
        trigger={"tokens": 800, "messages": 3},
        keep=("messages", 1),
        token_counter=no_tokens,
    )
    too_few = SummarizationMiddleware(
        windowed,
        trigger={"tokens": 800, "messages": 4},
        keep=("messages", 1),
        token_counter=no_tokens,
    )

    assert summarizes(fraction, reported(801, "acme"), how_call)
    assert not summarizes(fraction, reported(799, "acme"), how_call)
    assert summarizes(both, reported(801, "acme"), how_call)
    assert not summarizes(too_few, reported(801, "acme"), how_call)  # the messages part fails


def test_the_default_count_is_scaled_and_the_kept_part_is_counted_unscaled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    options: list[dict[str, Any]] = []

    def counting(messages: Any, **kwargs: Any) -> int:
        options.append(kwargs)
        return 100

    monkeypatch.setattr(summarization_module, "count_tokens_approximately", counting)
    middleware = SummarizationMiddleware(
        ScriptedChatModel(["Summary."]),
        trigger=("tokens", 1),
        keep=("tokens", 1),
        token_counter=counting,
    )
    messages: list[AnyMessage] = [HumanMessage("one"), HumanMessage("two")]

    assert middleware.before_model({"messages": messages}, None) is not None  # type: ignore[arg-type]
    assert {"use_usage_metadata_scaling": True} in options  # whether to summarize
    assert {"use_usage_metadata_scaling": False} in options  # the parts tried for the cut


def test_anthropic_models_are_counted_with_shorter_tokens() -> None:
    class AnthropicLike(ScriptedChatModel):
        @property
        def _llm_type(self) -> str:
            return "anthropic-chat"

    text = [HumanMessage("a" * 120)]
    default = SummarizationMiddleware(ScriptedChatModel([]), trigger=("messages", 5))
    anthropic = SummarizationMiddleware(AnthropicLike([]), trigger=("messages", 5))

    assert anthropic.token_counter(text) > default.token_counter(text)


def test_a_custom_counter_is_used_as_given() -> None:
    middleware = SummarizationMiddleware(
        ScriptedChatModel([]), trigger=("tokens", 5), token_counter=no_tokens
    )

    assert middleware.token_counter is no_tokens
    assert middleware._partial_token_counter is no_tokens


def test_an_empty_trigger_list_is_accepted_and_never_summarizes(how_call: str) -> None:
    model = ScriptedChatModel(["never asked"])
    middleware = SummarizationMiddleware(model, trigger=[], token_counter=lambda _: 10**6)

    assert middleware._trigger_conditions == []
    assert not summarizes(middleware, [HumanMessage(str(n)) for n in range(50)], how_call)
    assert model.call_count == 0


def test_the_legacy_view_lists_the_single_threshold_clauses() -> None:
    middleware = SummarizationMiddleware(
        ScriptedChatModel([]),
        trigger=[("messages", 5), {"tokens": 1000}, {"tokens": 2000, "messages": 10}],
    )
    compound = SummarizationMiddleware(
        ScriptedChatModel([]), trigger={"tokens": 1000, "messages": 5}
    )

    assert middleware._trigger_conditions == [("messages", 5), ("tokens", 1000)]
    assert compound._trigger_conditions == []
