"""The limiter's parts without a server: what a ``429`` says, how a key is told apart, what the
limiter learns, and that a call giving up or cancelled gives back what it took."""

from __future__ import annotations

import asyncio
import itertools
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import openai
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_openai import ChatOpenAI

from graphagent import create_agent
from graphagent._run.limiter import MARGIN, KeyLimiter, limiter_for
from graphagent._run.rate_signals import Rejection, Window, duration, key_of, rejection
from graphagent.errors import RateLimitWaitError
from graphagent.limits import RateLimits
from tests.conftest import run_agent

LIMIT = 30  # seconds any wait in these tests may take at most


def rate_limit_error(headers: dict[str, str], status: int = 429) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://provider/v1/chat/completions")
    response = httpx.Response(status, headers=headers, request=request)
    return openai.APIStatusError("refused", response=response, body=None)


def test_a_429_says_when_to_retry_and_what_is_used_up() -> None:
    said = rejection(
        rate_limit_error(
            {
                "retry-after-ms": "250",
                "retry-after": "1",
                "x-ratelimit-limit-requests": "10",
                "x-ratelimit-remaining-requests": "0",
                "x-ratelimit-reset-requests": "1s",
                "x-ratelimit-limit-tokens": "1000",
                "x-ratelimit-remaining-tokens": "400",
                "x-ratelimit-reset-tokens": "6m0s",
            }
        )
    )

    assert said == Rejection(0.25, Window(10, 0, 1.0), Window(1000, 400, 360.0))
    assert said.requests is not None
    assert said.requests.per_second() == 10


def test_only_a_provider_429_is_a_rejection() -> None:
    assert rejection(rate_limit_error({}, status=500)) is None
    assert rejection(RuntimeError("429 Too Many Requests")) is None
    assert rejection(rate_limit_error({})) == Rejection(None, None, None)

    class ResourceExhausted(Exception):  # as google-genai raises it: a code, no status_code
        code = 429

    assert rejection(ResourceExhausted("quota")) == Rejection(None, None, None)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("20ms", 0.02), ("1.5s", 1.5), ("6m0s", 360.0), ("1h2m", 3720.0), ("3", 3.0), ("soon", None)],
)
def test_reset_times_are_read_as_providers_write_them(text: str, seconds: float | None) -> None:
    assert duration(text) == (pytest.approx(seconds) if seconds is not None else None)


def test_a_key_is_its_endpoint_and_api_key_never_the_key_itself() -> None:
    def model(key: str, name: str = "gpt-a", base: str = "http://one/v1") -> ChatOpenAI:
        return ChatOpenAI(model=name, api_key=key, base_url=base)  # type: ignore[arg-type]

    assert key_of(model("sk-1"), per_model=False) == key_of(model("sk-1", "gpt-b"), False)
    assert key_of(model("sk-1"), per_model=False) != key_of(model("sk-2"), per_model=False)
    assert key_of(model("sk-1"), False) != key_of(model("sk-1", base="http://two/v1"), False)
    assert key_of(model("sk-1"), True) != key_of(model("sk-1", "gpt-b"), True)
    assert "sk-1" not in repr(key_of(model("sk-1"), per_model=True))


def test_a_used_up_request_window_paces_calls_at_nine_tenths_of_its_rate() -> None:
    limiter = KeyLimiter(("test", "pacing", ""))
    limiter.rejected(Rejection(0.0, Window(10, 0, 1.0), None), limiter.generation, tokens=1)

    starts = [limiter.reserve(lambda: 1, within=LIMIT, jitter=0.0) for _ in range(3)]

    assert all(s is not None for s in starts)
    gaps = [b - a for a, b in itertools.pairwise(starts)]  # type: ignore[operator]
    assert gaps == [pytest.approx(1 / (10 * MARGIN))] * 2


def test_a_reservation_further_away_than_allowed_reserves_nothing() -> None:
    limiter = KeyLimiter(("test", "far", ""))
    limiter.configure(RateLimits(requests_per_second=0.01))

    assert limiter.reserve(lambda: 1, within=LIMIT, jitter=0.0) is not None
    assert limiter.reserve(lambda: 1, within=1.0, jitter=0.0) is None
    assert limiter.reserve(lambda: 1, within=101.0, jitter=0.0) is not None


def test_tokens_per_minute_let_a_minutes_worth_through_then_pace_the_rest() -> None:
    limiter = KeyLimiter(("test", "tokens", ""))
    limiter.configure(RateLimits(tokens_per_minute=600))  # 10 tokens a second

    first = limiter.reserve(lambda: 600, within=LIMIT, jitter=0.0)
    second = limiter.reserve(lambda: 100, within=LIMIT, jitter=0.0)

    assert first is not None
    assert second is not None
    assert second - first == pytest.approx(10.0, abs=0.01)


def test_a_used_up_token_window_is_learned() -> None:
    limiter = KeyLimiter(("test", "learned tokens", ""))
    window = Window(limit=1000, remaining=10, reset=99.0)  # 990 tokens back in 99 s: 10 a second
    limiter.rejected(Rejection(0.0, None, window), limiter.generation, tokens=50)

    first = limiter.reserve(lambda: 1000, within=LIMIT * 10, jitter=0.0)
    second = limiter.reserve(lambda: 90, within=LIMIT * 10, jitter=0.0)

    assert first is not None
    assert second is not None
    assert second - first == pytest.approx(90 / (10 * MARGIN), abs=0.01)


def test_an_unexplained_429_halves_the_slots_once_per_round() -> None:
    limiter = KeyLimiter(("test", "slots", ""))
    assert [limiter.try_enter() for _ in range(8)] == [None] * 8
    round_started = limiter.generation

    limiter.rejected(Rejection(0.0, None, None), round_started, tokens=1)
    limiter.rejected(Rejection(0.0, None, None), round_started, tokens=1)  # same round: no news
    waiter = limiter.try_enter()
    assert waiter is not None
    for _ in range(4):
        limiter.leave()
    assert not waiter.done(), "8 - 4 calls in flight: the 4 slots are all taken"
    limiter.leave()

    assert waiter.done()


def test_stricter_limits_win_when_agents_give_different_ones() -> None:
    limiter = KeyLimiter(("test", "stricter", ""))
    limiter.configure(RateLimits(requests_per_second=5, concurrent_requests=4))
    limiter.configure(RateLimits(requests_per_second=10, concurrent_requests=2))

    assert [limiter.try_enter() is None for _ in range(3)] == [True, True, False]


class HeldModel(BaseChatModel):
    """Answers "ok", holding the first call until released (a class of its own: the limiter of
    a model naming no endpoint is its class's)."""

    entered: Any = None
    release: Any = None
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "held"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.calls += 1
        if self.calls == 1:
            self.entered.set()
            assert self.release.wait(LIMIT)
        return ChatResult(generations=[ChatGeneration(message=AIMessage("ok"))])


def held() -> HeldModel:
    return HeldModel(entered=threading.Event(), release=threading.Event())


GO = {"messages": [("user", "go")]}


@pytest.mark.timeout(60)
def test_a_call_queued_longer_than_max_wait_gives_up_named(how_call: str) -> None:
    model = held()
    agent = create_agent(model, rate_limits=RateLimits(concurrent_requests=1, max_wait=0.05))

    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(agent.invoke, GO)
        assert model.entered.wait(LIMIT)
        with pytest.raises(RateLimitWaitError, match="would wait longer"):
            run_agent(agent, how_call, GO)
        model.release.set()
        assert first.result(LIMIT)["messages"][-1].content == "ok"

    assert run_agent(agent, how_call, GO)["messages"][-1].content == "ok", "the slot is free"


@pytest.mark.timeout(60)
def test_a_run_cancelled_in_the_queue_takes_no_slot_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = held()
    agent = create_agent(model, rate_limits=RateLimits(concurrent_requests=1))
    slots = limiter_for(key_of(model, per_model=False)).slots
    enter = slots.try_enter

    async def scenario() -> str:
        in_queue = asyncio.Event()

        def try_enter() -> Any:
            waiter = enter()
            if waiter is not None:
                in_queue.set()
            return waiter

        monkeypatch.setattr(slots, "try_enter", try_enter)
        first = asyncio.create_task(agent.ainvoke(GO))
        assert await asyncio.to_thread(model.entered.wait, LIMIT)
        queued = asyncio.create_task(agent.ainvoke(GO))
        async with asyncio.timeout(LIMIT):
            await in_queue.wait()
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await queued
        model.release.set()
        await first
        async with asyncio.timeout(LIMIT):
            last = await agent.ainvoke(GO)
        return str(last["messages"][-1].content)

    assert asyncio.run(scenario()) == "ok"
    assert model.calls == 2
