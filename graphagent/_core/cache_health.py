"""What each model call read from the provider's prompt cache, and why it read less than it could.

The run's model call writes a :class:`CacheUse` on each reply (in its ``response_metadata``, under
``"prompt_cache"``, so it travels with the message into the state and the streams), and the
tracing middleware puts it on the call's span. Middleware declare what of the cached prefix they
may change with a ``cache_volatile`` class attribute; :func:`volatile_middleware` reads them for
``explain`` and for the reasons a miss is given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from langchain_core.messages import AIMessage

__all__ = [
    "METADATA_KEY",
    "PARTS",
    "CacheUse",
    "cache_tokens",
    "cache_use",
    "span_attributes",
    "volatile_middleware",
]

METADATA_KEY = "prompt_cache"
"""The key of a reply's ``response_metadata`` holding its :class:`CacheUse`."""
SYSTEM, TOOLS, MESSAGES, MODEL = "system prompt", "tools", "earlier messages", "model"
PARTS = (TOOLS, SYSTEM, MESSAGES, MODEL)
"""What of the cached prefix a middleware may declare it changes, in prefix order."""


@dataclass(frozen=True, slots=True)
class CacheUse:
    """One model call's use of the prompt cache, in input tokens."""

    input: int
    """All the input tokens of the call, read from the cache or not."""
    read: int
    """Read from the cache (billed at the provider's cache-read price)."""
    written: int
    """Written to the cache (Anthropic bills these at its cache-write price)."""
    expected: int | None = None
    """What the call could have read: the input of the thread's previous call, when the prefix
    it cached was long enough to cache and this call kept it. ``None`` without one."""
    miss: str | None = None
    """Why the call read less than ``expected``, when it did: what changed (and which
    middleware may have changed it), or that the entry expired or was not found."""

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def cache_tokens(message: AIMessage) -> tuple[int, int, int] | None:
    """The input, cache-read and cache-write tokens a reply reports (``None``: the provider
    reports no use of a cache)."""
    usage = message.usage_metadata
    if usage is None:
        return None
    details: Mapping[str, Any] = usage.get("input_token_details") or {}
    if "cache_read" not in details and "cache_creation" not in details:
        return None
    return (
        int(usage.get("input_tokens") or 0),
        int(details.get("cache_read") or 0),
        int(details.get("cache_creation") or 0),
    )


def cache_use(message: AIMessage) -> CacheUse | None:
    """The :class:`CacheUse` written on a reply, if any."""
    found = message.response_metadata.get(METADATA_KEY)
    if not isinstance(found, Mapping):
        return None
    try:
        return CacheUse(**found)
    except TypeError:  # written by something else under the same key
        return None


def volatile_middleware(middleware: Iterable[Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each middleware declaring what of the cached prefix it may change, in list order."""
    found: list[tuple[str, tuple[str, ...]]] = []
    for item in middleware:
        parts = getattr(item, "cache_volatile", ())
        if isinstance(parts, str):
            parts = (parts,)
        if parts:
            found.append((str(getattr(item, "name", type(item).__name__)), tuple(map(str, parts))))
    return tuple(found)


CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
CACHE_WRITE_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
EXPECTED_TOKENS = "graphagent.prompt_cache.expected_tokens"
MISS = "graphagent.prompt_cache.miss"
COST_KEY = "budget_cost"
"""The key of a reply's ``response_metadata`` where ``BudgetMiddleware`` writes what its call
cost, in dollars."""
COST = "graphagent.usage.cost"


def span_attributes(replies: list[AIMessage]) -> dict[str, Any]:
    """The attributes of a chat span for its replies' use of the cache: the OpenTelemetry GenAI
    conventions' cache reads and writes, what the call could have read, why it did not, and
    what the call cost (when ``BudgetMiddleware`` priced it)."""
    attributes: dict[str, Any] = {}
    for reply in replies:
        use = cache_use(reply)
        tokens = cache_tokens(reply) if use is None else (use.input, use.read, use.written)
        if tokens is None:
            continue
        attributes[CACHE_READ_TOKENS] = attributes.get(CACHE_READ_TOKENS, 0) + tokens[1]
        attributes[CACHE_WRITE_TOKENS] = attributes.get(CACHE_WRITE_TOKENS, 0) + tokens[2]
        if use is not None and use.expected is not None:
            attributes[EXPECTED_TOKENS] = use.expected
        if use is not None and use.miss is not None:
            attributes[MISS] = use.miss
    for reply in replies:
        cost = reply.response_metadata.get(COST_KEY)
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            attributes[COST] = attributes.get(COST, 0.0) + float(cost)
    return attributes
