"""What model calls cost in dollars: prices per model, and a call's cost from its usage."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.utils import count_tokens_approximately

from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import MiddlewareError

__all__ = [
    "DEFAULT_OUTPUT_CAP",
    "DEFAULT_PRICES",
    "ModelPrice",
    "call_cost",
    "model_name",
    "output_cap",
    "price_for",
    "projected_cost",
]

PER = 1_000_000
DEFAULT_OUTPUT_CAP = 4096
"""Output tokens assumed for a call whose model and settings name no cap."""


@refuse_unknown_arguments
@dataclass(frozen=True, slots=True)
class ModelPrice:
    """A model's list prices, in dollars per million tokens.

    Args:
        input: Input tokens read afresh.
        output: Output tokens.
        cache_read: Input tokens read from the provider's cache (``None``: the input price).
        cache_write: Input tokens written to the cache (``None``: the input price; Anthropic
            charges 1.25 times the input price for its five-minute cache).
    """

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None

    def __post_init__(self) -> None:
        for name in ("input", "output", "cache_read", "cache_write"):
            value = getattr(self, name)
            if value is None and name.startswith("cache"):
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise MiddlewareError(
                    f"ModelPrice({name}={value!r}) must be dollars per million tokens, 0 or "
                    "more; e.g. ModelPrice(input=3.0, output=15.0, cache_read=0.3)."
                )
            if not math.isfinite(value):
                raise MiddlewareError(f"ModelPrice({name}={value!r}) must be finite.")

    def cost(self, input_tokens: int, output_tokens: int, read: int = 0, written: int = 0) -> float:
        """Dollars for a call's tokens; ``input_tokens`` includes those ``read`` and ``written``."""
        fresh = max(input_tokens - read - written, 0)
        read_price = self.input if self.cache_read is None else self.cache_read
        write_price = self.input if self.cache_write is None else self.cache_write
        return (
            fresh * self.input
            + read * read_price
            + written * write_price
            + output_tokens * self.output
        ) / PER


DEFAULT_PRICES: Mapping[str, ModelPrice] = {
    # OpenAI: cached input at its discount; nothing extra for writing the cache.
    "gpt-5": ModelPrice(input=1.25, output=10.0, cache_read=0.125),
    "gpt-5-mini": ModelPrice(input=0.25, output=2.0, cache_read=0.025),
    "gpt-5-nano": ModelPrice(input=0.05, output=0.40, cache_read=0.005),
    "gpt-4.1": ModelPrice(input=2.0, output=8.0, cache_read=0.50),
    "gpt-4.1-mini": ModelPrice(input=0.40, output=1.60, cache_read=0.10),
    "gpt-4.1-nano": ModelPrice(input=0.10, output=0.40, cache_read=0.025),
    "gpt-4o": ModelPrice(input=2.50, output=10.0, cache_read=1.25),
    "gpt-4o-mini": ModelPrice(input=0.15, output=0.60, cache_read=0.075),
    "o3": ModelPrice(input=2.0, output=8.0, cache_read=0.50),
    "o4-mini": ModelPrice(input=1.10, output=4.40, cache_read=0.275),
    # Anthropic: reads at a tenth of the input price, five-minute writes at 1.25 times it.
    "claude-opus-4-5": ModelPrice(input=5.0, output=25.0, cache_read=0.50, cache_write=6.25),
    "claude-opus-4-1": ModelPrice(input=15.0, output=75.0, cache_read=1.50, cache_write=18.75),
    "claude-opus-4": ModelPrice(input=15.0, output=75.0, cache_read=1.50, cache_write=18.75),
    "claude-sonnet-4-5": ModelPrice(input=3.0, output=15.0, cache_read=0.30, cache_write=3.75),
    "claude-sonnet-4": ModelPrice(input=3.0, output=15.0, cache_read=0.30, cache_write=3.75),
    "claude-haiku-4-5": ModelPrice(input=1.0, output=5.0, cache_read=0.10, cache_write=1.25),
    "claude-3-5-haiku": ModelPrice(input=0.80, output=4.0, cache_read=0.08, cache_write=1.0),
}
"""List prices of common OpenAI and Anthropic models, in dollars per million tokens, matched by
the longest name a model's name contains (``"claude-sonnet-4-5-20250929"`` is
``"claude-sonnet-4-5"``). Check them against your provider's price page; pass your own with
``BudgetMiddleware(prices=...)``."""


def model_name(model: Any) -> str | None:
    """The name a chat model calls its model by (``model_name``, ``model``, ``model_id``)."""
    for attribute in ("model_name", "model", "model_id"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return None


def price_for(name: str | None, prices: Mapping[str, ModelPrice]) -> ModelPrice | None:
    """The price of the model called ``name``: the caller's table first, then the default one;
    in each, the longest name that ``name`` contains."""
    if not name:
        return None
    lowered = name.lower()
    for table in (prices, DEFAULT_PRICES):
        matches = [key for key in table if key.lower() in lowered]
        if matches:
            return table[max(matches, key=len)]
    return None


def output_cap(model: Any, settings: Mapping[str, Any]) -> int:
    """The most output tokens a call may produce: its settings', its model's, or the default."""
    for source, names in (
        (settings, ("max_tokens", "max_completion_tokens", "max_output_tokens")),
        (model, ("max_tokens", "max_completion_tokens", "max_output_tokens")),
    ):
        for name in names:
            value = source.get(name) if isinstance(source, Mapping) else getattr(source, name, None)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    profile = getattr(model, "profile", None)
    if isinstance(profile, Mapping):
        value = profile.get("max_output_tokens")
        if isinstance(value, int) and value > 0:
            return value
    return DEFAULT_OUTPUT_CAP


def projected_cost(
    price: ModelPrice, messages: Sequence[BaseMessage], tools: list[Any], output_tokens: int
) -> float:
    """The most a call could cost: its input counted (about four characters a token) at the
    input price, and its output cap at the output price."""
    tokens = count_tokens_approximately(messages, tools=tools or None)
    return price.cost(tokens, output_tokens)


def call_cost(reply: AIMessage, price: ModelPrice) -> float:
    """What a reply's call cost, from the usage it reports (nothing without usage)."""
    usage = reply.usage_metadata
    if not usage:
        return 0.0
    details: Mapping[str, Any] = usage.get("input_token_details") or {}
    return price.cost(
        int(usage.get("input_tokens") or 0),
        int(usage.get("output_tokens") or 0),
        int(details.get("cache_read") or 0),
        int(details.get("cache_creation") or 0),
    )
