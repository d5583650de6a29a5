"""Provider rate limits: what ``create_agent(rate_limits=...)`` takes.

By default every model call goes through the limiter of its provider endpoint and API key, one
per process, shared by every agent, run, parallel call and sub-agent that calls it. The limiter
learns the key's limits from the ``429`` answers it gets (their ``Retry-After`` and the
providers' ``x-ratelimit-*`` headers), queues calls instead of failing them, and gives a call
up after ``max_wait`` seconds of waiting with :class:`~graphagent.errors.RateLimitWaitError`.
:class:`RateLimits` states a key's limits up front, so that the limiter never has to hit them;
``rate_limits=False`` turns the limiter off for an agent's calls. See docs/limits.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "DEFAULT_MAX_WAIT",
    "DEFAULT_PARALLEL_TOOL_CALLS",
    "RATE_LIMIT_WAIT",
    "RateLimits",
    "ToolLimits",
]

DEFAULT_MAX_WAIT = 120.0
"""Seconds a model call may wait for its key's limits, in all, before it is given up."""
RATE_LIMIT_WAIT = "rate_limit_wait_seconds"
"""The key under which a model call that waited for its key's limits records the seconds: in
its reply's ``response_metadata``, in the metadata of what it streams, on its span."""


@dataclass(frozen=True, slots=True)
class RateLimits:
    """The limits of the provider keys an agent calls.

    Args:
        requests_per_second: Requests the key may start per second (a provider's requests per
            minute over 60). The limiter spaces calls evenly at this rate.
        tokens_per_minute: Tokens the key may send per minute, counted as providers estimate
            them before answering (a message's characters over four).
        concurrent_requests: Requests the key may have in flight at once.
        max_wait: Seconds one model call may wait, in all, before the run ends with
            ``RateLimitWaitError``. ``0`` never waits: a ``429`` the client did not retry
            away ends the call at once (so that ``ModelFallbackMiddleware`` moves on).
        per: ``"endpoint"``: one limiter per provider endpoint and API key, whatever the
            model; ``"model"``: one per endpoint, key and model name (OpenAI's limits are per
            model).

    Limits left ``None`` are learned from the provider's ``429`` answers. Agents that give
    different limits for one key share one limiter, with the stricter of each limit.
    """

    requests_per_second: float | None = None
    tokens_per_minute: float | None = None
    concurrent_requests: int | None = None
    max_wait: float = DEFAULT_MAX_WAIT
    per: Literal["endpoint", "model"] = "endpoint"

    def __post_init__(self) -> None:
        for name in ("requests_per_second", "tokens_per_minute"):
            _check_positive(name, getattr(self, name), allow_none=True)
        concurrent = self.concurrent_requests
        if concurrent is not None and (
            isinstance(concurrent, bool) or not isinstance(concurrent, int) or concurrent < 1
        ):
            raise ValueError(
                f"RateLimits(concurrent_requests={concurrent!r}): give a whole number of at "
                "least 1, or None to learn it."
            )
        _check_positive("max_wait", self.max_wait, allow_none=False, allow_zero=True)
        if self.per not in ("endpoint", "model"):
            raise ValueError(f'RateLimits(per={self.per!r}): give "endpoint" or "model".')


def _check_positive(
    name: str, value: object, *, allow_none: bool, allow_zero: bool = False
) -> None:
    if value is None and allow_none:
        return
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):  # type: ignore[arg-type,operator]
        least = "0 or more" if allow_zero else "more than 0"
        none = ", or None to learn it" if allow_none else ""
        raise ValueError(f"RateLimits({name}={value!r}): give a number of {least}{none}.")


DEFAULT_LIMITS = RateLimits()
"""What an agent that gives no limits uses: all learned, ``DEFAULT_MAX_WAIT``."""


def checked_rate_limits(value: object) -> RateLimits | None:
    """``create_agent(rate_limits=...)`` as the limits to use (``None``: the limiter is off)."""
    if value is None or value is True:
        return DEFAULT_LIMITS
    if value is False:
        return None
    if isinstance(value, RateLimits):
        return value
    raise TypeError(
        f"create_agent(rate_limits=...) takes RateLimits(...), None for the default limiter, or "
        f"False to turn it off; got {type(value).__name__}."
    )


DEFAULT_PARALLEL_TOOL_CALLS = 16
"""Tool calls one run may have in flight at once unless told otherwise."""


@dataclass(frozen=True, slots=True)
class ToolLimits:
    """How many tool calls may run at once: what ``create_agent(tool_limits=...)`` takes.

    Args:
        per_run: Calls one run may have in flight; the rest of a reply's parallel calls wait for
            a free place, in order. ``None``: no limit.
        per_tool: Calls of the named tool in flight at once, across all runs of the agent (the
            connections a service behind it gets), for example ``{"fetch": 4}``.
    """

    per_run: int | None = DEFAULT_PARALLEL_TOOL_CALLS
    per_tool: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.per_run is not None and not _whole(self.per_run):
            raise ValueError(
                f"ToolLimits(per_run={self.per_run!r}): give a whole number of at least 1, or "
                "None for no limit."
            )
        if not isinstance(self.per_tool, Mapping):
            raise TypeError(
                f"ToolLimits(per_tool=...) takes a dict of tool names to numbers, got "
                f"{type(self.per_tool).__name__}."
            )
        for name, cap in self.per_tool.items():
            if not isinstance(name, str) or not _whole(cap):
                raise ValueError(
                    f"ToolLimits(per_tool={{{name!r}: {cap!r}}}): give a tool's name and a whole "
                    "number of at least 1."
                )


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


DEFAULT_TOOL_LIMITS = ToolLimits()


def checked_tool_limits(value: object, tools: Iterable[str]) -> ToolLimits:
    """``create_agent(tool_limits=...)``, its tool names checked against the agent's ``tools``."""
    if value is None:
        return DEFAULT_TOOL_LIMITS
    if not isinstance(value, ToolLimits):
        raise TypeError(
            f"create_agent(tool_limits=...) takes ToolLimits(...), or None for the default; got "
            f"{type(value).__name__}."
        )
    names = set(tools)
    unknown = sorted(set(value.per_tool) - names)
    if unknown:
        raise ValueError(
            f"ToolLimits(per_tool=...) names {unknown}, which the agent does not have; its tools "
            f"are {sorted(names)}."
        )
    return value
