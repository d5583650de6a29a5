"""The checks both call limiters (model calls, tool calls) make of their limits and exit
behaviour, with LangChain's words where it has them."""

from __future__ import annotations

from typing import Any

from graphagent.errors import MiddlewareError, MiddlewareTypeError


def checked_limit(owner: str, parameter: str, value: object) -> int | None:
    """``value`` if it is ``None`` or a whole number of calls, 0 or more; else MiddlewareError."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise MiddlewareTypeError(
            f"{owner}: {parameter} must be a whole number of calls or None, got {value!r} "
            f"({type(value).__name__}); pass e.g. {parameter}=5."
        )
    if value < 0:
        raise MiddlewareError(
            f"{owner}: {parameter} must be 0 or more, got {value}; pass the number of calls to "
            "allow (0 allows none), or None for no limit."
        )
    return value


def check_some_limit(owner: str, thread_limit: int | None, run_limit: int | None) -> None:
    """Refuse a limiter without any limit: it could never do anything."""
    if thread_limit is None and run_limit is None:
        raise MiddlewareError(
            "At least one limit must be specified (thread_limit or run_limit): pass "
            f"thread_limit=..., run_limit=... or both to {owner}."
        )


def checked_exit_behavior(
    owner: str, value: object, allowed: tuple[str, ...], langchain_words: str
) -> Any:
    """``value`` if it is one of ``allowed``; else a MiddlewareError led by ``langchain_words``
    (LangChain's message for the check, which differs between the two limiters)."""
    if value not in allowed:
        choices = ", ".join(map(repr, allowed))
        raise MiddlewareError(
            f"{langchain_words}. {owner} got exit_behavior={value!r}; pass one of {choices}."
        )
    return value
