"""The prompt-caching scenario these tests share: a long system prompt, a tool, turns of a tool
call and an answer, and the two local provider servers (tests/openai_stub.py,
tests/anthropic_stub.py) for the real ChatOpenAI and ChatAnthropic clients."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from tests.anthropic_stub import AnthropicStub
from tests.conftest import Run
from tests.openai_stub import CachingOpenAIStub, OpenAIStub, Reply, call, text, tool_calls

S = TypeVar("S", bound=OpenAIStub)
TURNS = 20
SYSTEM = "You are a careful travel assistant. " + " ".join(
    f"Rule {i}: answer with the facts the tools give, and say which tool gave them."
    for i in range(400)
)


@tool
def lookup(city: str) -> str:
    """Look up the facts of a city: its weather, its museums and how to get around."""
    return f"{city}: sunny, 21 degrees, three museums open, trams every 6 minutes."


@pytest.fixture(scope="module")
def openai_server() -> Iterator[CachingOpenAIStub]:
    with CachingOpenAIStub(lifetime=120) as server:
        yield server


def checked(server: S) -> Iterator[S]:
    """``server`` with an empty script; afterwards it must have seen no problem and been asked
    for every reply it was scripted with."""
    server.reset()
    yield server
    assert server.problems == []
    assert server.unused == [], "the agent made fewer model calls than scripted"


@pytest.fixture
def openai(openai_server: CachingOpenAIStub) -> Iterator[CachingOpenAIStub]:
    yield from checked(openai_server)


@pytest.fixture(scope="module")
def anthropic_server() -> Iterator[AnthropicStub]:
    with AnthropicStub(lifetime=120) as server:
        yield server


@pytest.fixture
def claude(anthropic_server: AnthropicStub) -> Iterator[AnthropicStub]:
    yield from checked(anthropic_server)


def gpt(stub: CachingOpenAIStub, **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=stub.url, api_key="test", model="gpt-test", max_retries=0, timeout=10, **kwargs
    )


def sonnet(stub: AnthropicStub, model: str = "claude-test", **kwargs: Any) -> ChatAnthropic:
    return ChatAnthropic(  # type: ignore[call-arg]
        base_url=stub.url, api_key="test", model=model, max_retries=0, timeout=10, **kwargs
    )


def turn(index: int) -> list[Reply]:
    """One turn of the conversation: a tool call, then the answer."""
    return [
        tool_calls(call("lookup", {"city": f"City {index}"}, id=f"call_{index}")),
        text(f"City {index} is sunny today, with three museums open."),
    ]


def read_share(replies: list[AIMessage]) -> float:
    """The share of the input tokens of these model calls that was read from the cache."""
    total = read = 0
    for reply in replies:
        usage = reply.usage_metadata or {}
        total += usage.get("input_tokens", 0)
        read += (usage.get("input_token_details") or {}).get("cache_read", 0)
    return read / total


def conversation(agent: Any, run: Run, turns: int) -> list[AIMessage]:
    config = {"configurable": {"thread_id": "trip"}}
    state: dict[str, Any] = {}
    for index in range(turns):
        state = run(agent, {"messages": [f"What about city {index}?"]}, config=config)
    return [m for m in state["messages"] if isinstance(m, AIMessage)]
