"""The rate-limited OpenAI stub, through the real ChatOpenAI client: what a key over its limits
is answered, and what every answer says of them."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
from langchain_openai import ChatOpenAI

from tests.limited_stub import KeyLimits, LimitedStub, duration, estimated_tokens
from tests.openai_stub import text


@pytest.fixture
def slow_key() -> Iterator[LimitedStub]:
    """One request per 100 s and 200 tokens per minute: the second request in a row is over."""
    with LimitedStub(KeyLimits(requests_per_second=0.01, tokens_per_minute=200)) as server:
        yield server


def chat(server: LimitedStub, key: str = "sk-one") -> ChatOpenAI:
    return ChatOpenAI(model="gpt-test", base_url=server.url, api_key=key, max_retries=0)  # type: ignore[arg-type]


def test_a_request_over_the_rate_is_answered_429_with_when_to_retry(slow_key: LimitedStub) -> None:
    slow_key.script(text("first"))

    assert chat(slow_key).invoke("hi").content == "first"
    with pytest.raises(openai.RateLimitError) as caught:
        chat(slow_key).invoke("hi")

    headers = caught.value.response.headers
    assert 90 <= float(headers["retry-after-ms"]) / 1000 <= 100
    assert headers["retry-after"] == str(-(-int(headers["retry-after-ms"]) // 1000))
    assert headers["x-ratelimit-limit-requests"] == "1"
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert headers["x-ratelimit-limit-tokens"] == "200"
    assert caught.value.body["type"] == "requests"  # type: ignore[index]
    assert slow_key.rejected == {"requests": 1}
    assert slow_key.served == 1


def test_each_key_has_limits_of_its_own(slow_key: LimitedStub) -> None:
    slow_key.script(text("one"), text("two"))

    assert chat(slow_key, "sk-one").invoke("hi").content == "one"
    assert chat(slow_key, "sk-two").invoke("hi").content == "two"


def test_a_request_with_more_tokens_than_left_is_answered_429_on_tokens() -> None:
    with LimitedStub(KeyLimits(tokens_per_minute=100)) as server:
        server.script(text("short"))
        assert chat(server).invoke("x" * 200).content == "short"  # 50 of the 100 tokens
        with pytest.raises(openai.RateLimitError) as caught:
            chat(server).invoke("x" * 300)

    headers = caught.value.response.headers
    assert (
        int(headers["x-ratelimit-remaining-tokens"])
        < 75
        <= estimated_tokens({"messages": [{"content": "x" * 300}]})
    )
    assert caught.value.body["type"] == "tokens"  # type: ignore[index]


def test_a_request_beyond_the_concurrent_ones_allowed_is_rejected_until_one_ends() -> None:
    body = {"messages": [{"role": "user", "content": "hi"}]}
    with LimitedStub(KeyLimits(concurrent=2)) as server:
        verdicts = [server.admit("key", body) for _ in range(3)]
        server.release("key")
        after = server.admit("key", body)

    assert [v.reason for v in verdicts] == [None, None, "concurrent"]
    assert after.reason is None
    assert server.most_in_flight == 2


@pytest.mark.parametrize(
    ("seconds", "written"), [(0.02, "20ms"), (1.5, "1.5s"), (360, "6m0s"), (61.25, "1m1.25s")]
)
def test_reset_times_are_written_as_openai_writes_them(seconds: float, written: str) -> None:
    assert duration(seconds) == written
