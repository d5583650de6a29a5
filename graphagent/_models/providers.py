"""The providers a model id may name: where each one's chat model class lives, the model name
prefixes a provider is inferred from, and what to say when a provider is unknown."""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Integration:
    """Where a provider's chat model class lives and how it takes the model name."""

    module: str
    """The module holding the class (the package root or one of its submodules)."""
    class_name: str
    package: str
    """What to ``pip install``."""
    model_param: str = "model"
    """The keyword the class takes the model name under."""
    constructor: str | None = None
    """A classmethod to build with instead of calling the class."""


# Provider keys follow LangChain's, so ids written for init_chat_model there work here.
PROVIDERS: dict[str, Integration] = {
    "anthropic": Integration("langchain_anthropic", "ChatAnthropic", "langchain-anthropic"),
    "anthropic_bedrock": Integration("langchain_aws", "ChatAnthropicBedrock", "langchain-aws"),
    "azure_ai": Integration(
        "langchain_azure_ai.chat_models", "AzureAIOpenAIApiChatModel", "langchain-azure-ai"
    ),
    "azure_openai": Integration("langchain_openai", "AzureChatOpenAI", "langchain-openai"),
    "baseten": Integration("langchain_baseten", "ChatBaseten", "langchain-baseten"),
    "bedrock": Integration("langchain_aws", "ChatBedrock", "langchain-aws"),
    "bedrock_converse": Integration("langchain_aws", "ChatBedrockConverse", "langchain-aws"),
    "bedrock_mantle_anthropic": Integration(
        "langchain_aws", "ChatAnthropicMantle", '"langchain-aws[anthropic]"'
    ),
    "bedrock_mantle_openai": Integration(
        "langchain_aws", "ChatOpenAIMantle", '"langchain-aws[openai]"'
    ),
    "cohere": Integration("langchain_cohere", "ChatCohere", "langchain-cohere"),
    "deepseek": Integration("langchain_deepseek", "ChatDeepSeek", "langchain-deepseek"),
    "fireworks": Integration("langchain_fireworks", "ChatFireworks", "langchain-fireworks"),
    "google_anthropic_vertex": Integration(
        "langchain_google_vertexai.model_garden", "ChatAnthropicVertex", "langchain-google-vertexai"
    ),
    "google_genai": Integration(
        "langchain_google_genai", "ChatGoogleGenerativeAI", "langchain-google-genai"
    ),
    "google_vertexai": Integration(
        "langchain_google_vertexai", "ChatVertexAI", "langchain-google-vertexai"
    ),
    "groq": Integration("langchain_groq", "ChatGroq", "langchain-groq"),
    "huggingface": Integration(
        "langchain_huggingface",
        "ChatHuggingFace",
        "langchain-huggingface",
        model_param="model_id",
        constructor="from_model_id",
    ),
    "ibm": Integration("langchain_ibm", "ChatWatsonx", "langchain-ibm", model_param="model_id"),
    "litellm": Integration("langchain_litellm", "ChatLiteLLM", "langchain-litellm"),
    "meta": Integration("langchain_meta", "ChatMetaModel", "langchain-meta"),
    "mistralai": Integration("langchain_mistralai", "ChatMistralAI", "langchain-mistralai"),
    "nvidia": Integration(
        "langchain_nvidia_ai_endpoints", "ChatNVIDIA", "langchain-nvidia-ai-endpoints"
    ),
    "ollama": Integration("langchain_ollama", "ChatOllama", "langchain-ollama"),
    "openai": Integration("langchain_openai", "ChatOpenAI", "langchain-openai"),
    "openrouter": Integration("langchain_openrouter", "ChatOpenRouter", "langchain-openrouter"),
    "perplexity": Integration("langchain_perplexity", "ChatPerplexity", "langchain-perplexity"),
    "together": Integration("langchain_together", "ChatTogether", "langchain-together"),
    "upstage": Integration("langchain_upstage", "ChatUpstage", "langchain-upstage"),
    "xai": Integration("langchain_xai", "ChatXAI", "langchain-xai"),
}

# Checked in order against the lower-cased model name; the first match wins.
INFERENCE: tuple[tuple[tuple[str, ...], str], ...] = (
    (("gpt-", "o1", "o3", "o4", "chatgpt", "text-davinci"), "openai"),
    (("claude",), "anthropic"),
    (("command",), "cohere"),
    (("accounts/fireworks",), "fireworks"),
    (("gemini",), "google_genai"),
    (("amazon.", "anthropic.", "meta."), "bedrock"),
    (("mistral", "mixtral"), "mistralai"),
    (("deepseek",), "deepseek"),
    (("grok",), "xai"),
    (("sonar",), "perplexity"),
    (("solar",), "upstage"),
)


def normalise(provider: str) -> str:
    return provider.strip().lower().replace("-", "_")


def known(provider: str, model: str) -> str:
    if provider not in PROVIDERS:
        raise ValueError(
            f"Unsupported {provider=}: no model provider of that name for the model {model!r}."
            f"{_did_you_mean(provider)}\n{_provider_list()}"
        )
    return provider


def infer_provider(model: str) -> str | None:
    lowered = model.lower()
    return next(
        (provider for prefixes, provider in INFERENCE if lowered.startswith(prefixes)), None
    )


def unknown_prefix(prefix: str, model: str) -> str:
    return (
        f"Unable to infer model provider for {model=}: {prefix!r} is no known model provider."
        f"{_did_you_mean(normalise(prefix))} If {model!r} is the whole model name, write its "
        f"provider in front ('<provider>:{model}') or pass model_provider=...\n{_provider_list()}"
    )


def uninferable(model: str) -> str:
    return (
        f"Unable to infer model provider for {model=}. Write the id as 'provider:model' (for "
        f"example 'openai:gpt-4o' or 'ollama:{model}') or pass model_provider=...\n"
        f"{_provider_list()}"
    )


def _did_you_mean(provider: str) -> str:
    close = difflib.get_close_matches(provider, PROVIDERS, n=1, cutoff=0.8)
    return f" Did you mean {close[0]!r}?" if close else ""


def _provider_list() -> str:
    return f"Known providers: {', '.join(sorted(PROVIDERS))}."
