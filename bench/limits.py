"""A burst of runs against a rate-limited key: how many fail, how many requests are refused, how
long the burst takes.

100 concurrent ``ainvoke`` runs, three model calls each (two turns of a tool call, then the
answer), through ``ChatOpenAI`` with its default ``max_retries=2``, against the local stub
(``tests/limited_stub.py``) limiting the key to 10 requests per second and 4 concurrent requests;
each answer takes 0.2 s. Each side gets a fresh server, so that no side inherits another's
refusals; graphagent's sides each use an API key of their own, so that no limiter carries over.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import tool

from tests.limited_stub import KeyLimits, LimitedStub, tool_turns

RUNS = 100
CALLS_PER_RUN = 3
LIMITS = KeyLimits(requests_per_second=10, concurrent=4)
LATENCY = 0.2
IDEAL = RUNS * CALLS_PER_RUN / 10
"""Seconds the burst takes at best: every call queued, the key's request rate used to the full."""
TARGETS = {"default": (2, 1.5 * IDEAL), "explicit": (0, 1.2 * IDEAL)}
"""Per graphagent side: the most runs that may fail, and the longest the burst may take."""


@tool
def lookup(n: int) -> str:
    """Look a number up."""
    return f"found {n}"


@dataclass(frozen=True)
class Burst:
    side: str
    failed: int
    refused: int
    requests: int
    seconds: float
    errors: tuple[str, ...]

    def line(self) -> str:
        kinds = ", ".join(sorted(set(self.errors))) or "-"
        return (
            f"  {self.side:<10} failed {self.failed:>3} of {RUNS}   429s {self.refused:>4} of "
            f"{self.requests:>4} requests   {self.seconds:6.1f} s   errors: {kinds}"
        )

    def verdict(self) -> str:
        if self.side not in TARGETS:
            return ""
        most_failed, longest = TARGETS[self.side]
        ok = self.failed <= most_failed and self.seconds <= longest
        return (
            f"  {self.side}: <= {most_failed} fail and <= {longest:.0f} s: "
            f"{'ok' if ok else 'MISSED'} ({self.failed} failed, {self.seconds:.1f} s)"
        )


def _sides() -> dict[str, Callable[[Any], Any]]:
    from graphagent import create_agent
    from graphagent.limits import RateLimits

    sides: dict[str, Callable[[Any], Any]] = {
        "default": lambda model: create_agent(model, [lookup]),
        "explicit": lambda model: create_agent(
            model,
            [lookup],
            rate_limits=RateLimits(requests_per_second=10, concurrent_requests=4),
        ),
        "off": lambda model: create_agent(model, [lookup], rate_limits=False),
    }
    try:
        from langchain.agents import create_agent as langchain_create_agent
    except ImportError:  # the test venv: graphagent's sides only
        return sides
    return {"langchain": lambda model: langchain_create_agent(model, [lookup]), **sides}


def run_burst(side: str, build: Callable[[Any], Any]) -> Burst:
    from langchain_openai import ChatOpenAI

    with LimitedStub(
        LIMITS, latency=LATENCY, responder=tool_turns(CALLS_PER_RUN - 1), lifetime=600
    ) as server:
        key = f"sk-bench-{side}-{time.monotonic_ns()}"
        agent = build(ChatOpenAI(model="gpt-test", base_url=server.url, api_key=key))  # type: ignore[arg-type]

        async def burst() -> list[Any]:
            runs = [agent.ainvoke({"messages": [("user", "go")]}) for _ in range(RUNS)]
            return await asyncio.gather(*runs, return_exceptions=True)

        began = time.perf_counter()
        outcomes = asyncio.run(burst())
        seconds = time.perf_counter() - began
        refused = sum(server.rejected.values())
        errors = tuple(type(o).__name__ for o in outcomes if isinstance(o, BaseException))
        return Burst(side, len(errors), refused, server.served + refused, seconds, errors)


def main(only: tuple[str, ...] = ()) -> list[Burst]:
    print(
        f"\n== rate limits: {RUNS} concurrent ainvoke x {CALLS_PER_RUN} model calls, key limited "
        f"to {LIMITS.requests_per_second:g} req/s and {LIMITS.concurrent} concurrent "
        f"({LATENCY:g} s an answer); ideal {IDEAL:.0f} s"
    )
    results = []
    for side, build in _sides().items():
        if only and side not in only:
            continue
        result = run_burst(side, build)
        print(result.line(), flush=True)
        results.append(result)
    print("targets:")
    for result in results:
        if verdict := result.verdict():
            print(verdict)
    return results


if __name__ == "__main__":
    import sys

    main(tuple(sys.argv[1:]))
