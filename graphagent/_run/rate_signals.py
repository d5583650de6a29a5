"""What the limiter reads: which key a model calls, how many tokens a call counts, and what a
provider's ``429`` answer says of the key's limits.

A rate-limit answer is an error carrying HTTP status 429 (``status_code``, its ``response``'s, or
``code``), as the provider SDKs raise it (OpenAI's, Anthropic's, Google's, ``httpx``'s): an error
that merely calls itself one, raised by no provider, is not queued. Its headers:
``retry-after-ms`` (OpenAI), ``retry-after`` (seconds or an HTTP date), and
``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``, whose reset times OpenAI writes as
``"20ms"``, ``"1.5s"`` or ``"6m0s"``.
"""

from __future__ import annotations

import email.utils
import hashlib
import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableBinding

_BASE_URLS = ("openai_api_base", "base_url", "anthropic_api_url", "api_base", "azure_endpoint")
_API_KEYS = ("openai_api_key", "anthropic_api_key", "google_api_key", "api_key")
_MODEL_NAMES = ("model_name", "model", "model_id")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
CHARACTERS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class Window:
    """One of a key's limits as a provider's headers state it."""

    limit: float
    remaining: float
    reset: float | None
    """Seconds until the limit is whole again."""

    def per_second(self) -> float | None:
        """The rate the limit refills at, if the headers tell it."""
        used = self.limit - self.remaining
        if self.reset is None or self.reset <= 0 or used <= 0:
            return None
        return used / self.reset


@dataclass(frozen=True, slots=True)
class Rejection:
    """A ``429`` answer: when to try again, and the key's windows when the headers give them."""

    retry_after: float | None
    requests: Window | None
    tokens: Window | None


def key_of(model: Any, per_model: bool) -> tuple[str, ...]:
    """The provider endpoint and API key ``model`` calls (the key as a short digest), and with
    ``per_model`` its model name. A model naming neither is keyed by its class."""
    while isinstance(model, RunnableBinding):
        model = model.bound
    base = next((str(v) for a in _BASE_URLS if (v := getattr(model, a, None))), "")
    secret = next((v for a in _API_KEYS if (v := getattr(model, a, None))), None)
    if secret is not None and hasattr(secret, "get_secret_value"):
        secret = secret.get_secret_value()
    digest = hashlib.blake2b(str(secret).encode(), digest_size=6).hexdigest() if secret else ""
    if not per_model:
        return (type(model).__name__, base, digest)
    name = next((str(v) for a in _MODEL_NAMES if (v := getattr(model, a, None))), "")
    return (type(model).__name__, base, digest, name)


def estimated_tokens(messages: Sequence[Any]) -> int:
    """The tokens a provider counts a request as before answering it: its characters over four."""
    characters = sum(len(str(getattr(m, "content", m))) for m in messages)
    return max(1, characters // CHARACTERS_PER_TOKEN)


def rejection(error: BaseException) -> Rejection | None:
    """What ``error`` says if it is a provider's ``429`` answer, else ``None``."""
    response = getattr(error, "response", None)
    statuses = (
        getattr(error, "status_code", None),
        getattr(response, "status_code", None),
        getattr(error, "code", None),  # google-genai's errors
    )
    if 429 not in statuses:
        return None
    headers = _headers(getattr(response, "headers", None))
    return Rejection(
        retry_after=retry_after(headers),
        requests=_window(headers, "requests"),
        tokens=_window(headers, "tokens"),
    )


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait as ``retry-after-ms`` or ``retry-after`` (seconds or a date) say."""
    if (ms := _number(headers.get("retry-after-ms"))) is not None:
        return ms / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    if (seconds := _number(value)) is not None:
        return seconds
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


def duration(text: str | None) -> float | None:
    """``"6m0s"``, ``"1.5s"``, ``"20ms"`` or a bare number of seconds, in seconds."""
    if text is None:
        return None
    if (seconds := _number(text)) is not None:
        return seconds
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text.strip():
        return None
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)


def _window(headers: Mapping[str, str], kind: str) -> Window | None:
    limit = _number(headers.get(f"x-ratelimit-limit-{kind}"))
    remaining = _number(headers.get(f"x-ratelimit-remaining-{kind}"))
    if limit is None or remaining is None:
        return None
    return Window(limit, remaining, duration(headers.get(f"x-ratelimit-reset-{kind}")))


def _headers(raw: Any) -> dict[str, str]:
    if raw is None:
        return {}
    try:
        return {str(k).lower(): str(v) for k, v in raw.items()}
    except (AttributeError, TypeError):
        return {}


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None
