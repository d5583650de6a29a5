"""Model calls under a provider key's limits: by default no run fails on a ``429`` it could have
waited out; explicit limits queue calls before the provider has to refuse them; the wait is
bounded and named. Driven through the real ChatOpenAI client against the rate-limited stub."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai
import pytest
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from graphagent import as_tool, create_agent
from graphagent.errors import RateLimitWaitError
from graphagent.limits import RATE_LIMIT_WAIT, RateLimits
from tests.conftest import run_agent
from tests.limited_stub import KeyLimits, LimitedStub, tool_turns
from tests.openai_stub import Reply, call, text, tool_calls

RUNS = 12
CALLS_PER_RUN = 3
_keys = itertools.count()


@tool
def lookup(n: int) -> str:
    """Look a number up."""
    return f"found {n}"


def chat(server: LimitedStub, **kwargs: Any) -> ChatOpenAI:
    """A client with a key of its own: limiters are per process, and each test starts afresh."""
    key = f"sk-test-{next(_keys)}"
    return ChatOpenAI(model="gpt-test", base_url=server.url, api_key=key, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def tight() -> Iterator[LimitedStub]:
    """A key allowing 8 requests per second (8 at once) and 3 concurrent requests."""
    limits = KeyLimits(requests_per_second=8, concurrent=3)
    with LimitedStub(limits, latency=0.01, responder=tool_turns(CALLS_PER_RUN - 1)) as server:
        yield server


async def burst(agent: Any, runs: int = RUNS) -> list[BaseException | None]:
    """Start ``runs`` runs at once; what each ended with (``None``: it answered)."""

    async def one() -> None:
        result = await agent.ainvoke({"messages": [("user", "go")]})
        assert result["messages"][-1].content == "done"

    outcomes = await asyncio.gather(*(one() for _ in range(runs)), return_exceptions=True)
    return [o if isinstance(o, BaseException) else None for o in outcomes]


@pytest.mark.timeout(120)
def test_by_default_a_burst_of_runs_waits_out_the_limits_and_none_fails(
    tight: LimitedStub,
) -> None:
    agent = create_agent(chat(tight, max_retries=2), [lookup])

    failures = [o for o in asyncio.run(burst(agent)) if o is not None]

    assert failures == []
    assert tight.served == RUNS * CALLS_PER_RUN
    assert sum(tight.rejected.values()) > 0, "the burst should have met the key's limits"


@pytest.mark.timeout(120)
def test_sync_runs_in_threads_share_the_limiter(tight: LimitedStub) -> None:
    agent = create_agent(chat(tight, max_retries=0), [lookup])

    def one(_: int) -> str:
        return str(agent.invoke({"messages": [("user", "go")]})["messages"][-1].content)

    with ThreadPoolExecutor(RUNS) as pool:
        answers = list(pool.map(one, range(RUNS)))

    assert answers == ["done"] * RUNS


@pytest.mark.timeout(120)
def test_explicit_limits_queue_calls_before_the_provider_refuses_them(tight: LimitedStub) -> None:
    limits = RateLimits(requests_per_second=8, concurrent_requests=2)
    agent = create_agent(chat(tight, max_retries=2), [lookup], rate_limits=limits)

    failures = [o for o in asyncio.run(burst(agent)) if o is not None]

    assert failures == []
    assert tight.rejected["requests"] == 0
    assert tight.most_in_flight <= 2


@pytest.fixture
def one_per_100s() -> Iterator[LimitedStub]:
    with LimitedStub(KeyLimits(requests_per_second=0.01)) as server:
        yield server


def test_a_call_that_would_wait_longer_than_max_wait_ends_the_run_named(
    one_per_100s: LimitedStub, how_call: str
) -> None:
    one_per_100s.script(text("first"))
    model = chat(one_per_100s, max_retries=0)
    agent = create_agent(model, rate_limits=RateLimits(max_wait=1))

    run_agent(agent, how_call, {"messages": [("user", "one")]})
    with pytest.raises(RateLimitWaitError, match=r"max_wait") as caught:
        run_agent(agent, how_call, {"messages": [("user", "two")]})

    assert isinstance(caught.value.__cause__, openai.RateLimitError)
    assert one_per_100s.rejected == {"requests": 1}, "refused once, then given up"


def test_turned_off_the_provider_error_reaches_the_caller_at_once(
    one_per_100s: LimitedStub, how_call: str
) -> None:
    one_per_100s.script(text("first"))
    agent = create_agent(chat(one_per_100s, max_retries=0), rate_limits=False)

    run_agent(agent, how_call, {"messages": [("user", "one")]})
    with pytest.raises(openai.RateLimitError):
        run_agent(agent, how_call, {"messages": [("user", "two")]})


def test_a_call_that_waited_says_how_long(tight: LimitedStub) -> None:
    limits = RateLimits(requests_per_second=1)  # a second between calls: they take far less
    agent = create_agent(chat(tight), [lookup], rate_limits=limits)

    result = agent.invoke({"messages": [("user", "go")]})

    waits = [m.response_metadata.get(RATE_LIMIT_WAIT) for m in result["messages"] if m.type == "ai"]
    assert waits[0] is None, "the first call did not wait"
    assert all(w is not None and w > 0 for w in waits[1:]), waits


@pytest.mark.parametrize(
    ("given", "error"),
    [
        ({"requests_per_second": 0}, r"requests_per_second=0\): give a number of more than 0"),
        ({"concurrent_requests": 1.5}, r"concurrent_requests=1.5\): give a whole number"),
        ({"max_wait": -1}, r"max_wait=-1\): give a number of 0 or more"),
        ({"per": "region"}, r'per=\'region\'\): give "endpoint" or "model"'),
    ],
)
def test_limits_that_cannot_be_kept_are_refused_naming_the_field(
    given: dict[str, Any], error: str
) -> None:
    with pytest.raises(ValueError, match=error):
        RateLimits(**given)


def test_create_agent_refuses_rate_limits_of_another_kind(tight: LimitedStub) -> None:
    with pytest.raises(TypeError, match=r"rate_limits=\.\.\.\) takes RateLimits.*got dict"):
        create_agent(chat(tight), rate_limits={"requests_per_second": 1})  # type: ignore[arg-type]


def test_the_messages_a_waiting_call_streams_carry_the_wait_in_their_metadata(
    tight: LimitedStub,
) -> None:
    limits = RateLimits(requests_per_second=1)  # a second between calls: they take far less
    agent = create_agent(chat(tight), [lookup], rate_limits=limits)

    waits = {
        metadata.get(RATE_LIMIT_WAIT)
        for message, metadata in agent.stream(
            {"messages": [("user", "go")]}, stream_mode="messages"
        )
        if message.type == "AIMessageChunk" or message.type == "ai"
    }

    assert None in waits, "the first call did not wait"
    assert any(isinstance(w, float) and w > 0 for w in waits), waits


def lead_and_researchers(body: dict[str, Any]) -> Reply:
    """The lead asks four researchers at once, then answers; each researcher looks up twice."""
    offered = {t["function"]["name"] for t in body.get("tools", ())}
    if "research" not in offered:
        return tool_turns(2)(body)
    if any(m.get("role") == "tool" for m in body["messages"]):
        return text("done")
    return tool_calls(*(call("research", {"request": f"r{n}"}, id=f"call_r{n}") for n in range(4)))


@pytest.mark.timeout(120)
def test_parallel_sub_agents_share_the_keys_limiter_and_none_fails() -> None:
    limits = KeyLimits(requests_per_second=8, concurrent=3)
    with LimitedStub(limits, latency=0.01, responder=lead_and_researchers) as server:
        model = chat(server, max_retries=1)
        researcher = create_agent(model, [lookup], name="researcher")
        research = as_tool(researcher, name="research", description="Research a question.")
        lead = create_agent(model, [research], name="lead")

        failures = [o for o in asyncio.run(burst(lead, runs=2)) if o is not None]

    assert failures == []
    assert server.served == 2 * (2 + 4 * 3)
