"""Prompt caching by default, through the real ChatOpenAI and ChatAnthropic clients against local
servers that apply each provider's documented caching rules (tests/prompt_cache_rules.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import pytest
from langchain_core.messages import AIMessageChunk
from langgraph.checkpoint.memory import InMemorySaver

from graphagent import create_agent
from graphagent.middleware import ModelFallbackMiddleware, wrap_model_call
from graphagent.requests import ModelRequest
from graphagent.testing import ScriptedChatModel
from tests.anthropic_stub import AnthropicStub
from tests.caching.conftest import (
    SYSTEM,
    TURNS,
    conversation,
    gpt,
    lookup,
    read_share,
    sonnet,
    turn,
)
from tests.conftest import Run
from tests.openai_stub import CachingOpenAIStub, error, text


@pytest.mark.timeout(120)
def test_a_thread_on_openai_reads_its_prefix_from_the_cache(
    openai: CachingOpenAIStub, run: Run
) -> None:
    openai.script(*(reply for index in range(TURNS) for reply in turn(index)))
    agent = create_agent(gpt(openai), [lookup], system_prompt=SYSTEM, checkpointer=InMemorySaver())
    replies = conversation(agent, run, TURNS)
    keys = {body.get("prompt_cache_key") for body in openai.requests}
    assert len(keys) == 1
    assert None not in keys
    assert read_share(replies) >= 0.95


@pytest.mark.timeout(120)
def test_a_thread_on_anthropic_reads_its_prefix_from_the_cache(
    claude: AnthropicStub, run: Run
) -> None:
    claude.script(*(reply for index in range(TURNS) for reply in turn(index)))
    agent = create_agent(
        sonnet(claude), [lookup], system_prompt=SYSTEM, checkpointer=InMemorySaver()
    )
    replies = conversation(agent, run, TURNS)
    assert all(breakpoints(body) <= 4 for body in claude.requests)
    assert read_share(replies) >= 0.95


def breakpoints(body: dict[str, Any]) -> int:
    """How many ``cache_control`` breakpoints a messages request carries."""
    count = int("cache_control" in body)
    blocks = [*(body.get("tools") or ()), *_blocks(body.get("system"))]
    for message in body["messages"]:
        blocks += _blocks(message["content"])
    return count + sum("cache_control" in block for block in blocks)


def _blocks(content: Any) -> list[dict[str, Any]]:
    return content if isinstance(content, list) else []


def test_without_caching_the_requests_carry_no_key_and_no_breakpoint(
    openai: CachingOpenAIStub, claude: AnthropicStub
) -> None:
    openai.script(text("one"))
    claude.script(text("two"))
    for model in (gpt(openai), sonnet(claude)):
        agent = create_agent(model, [lookup], system_prompt=SYSTEM, prompt_caching=False)
        agent.invoke({"messages": ["hi"]})
    assert "prompt_cache_key" not in openai.requests[0]
    assert breakpoints(claude.requests[0]) == 0


def test_the_first_call_on_anthropic_marks_the_system_prompt_and_the_tail(
    claude: AnthropicStub,
) -> None:
    claude.script(*turn(0))
    agent = create_agent(sonnet(claude), [lookup], system_prompt=SYSTEM)
    agent.invoke({"messages": ["Paris?"]})
    first, second = claude.requests
    assert first["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert first["cache_control"] == {"type": "ephemeral"}
    # The second call also marks where the first one ended: the question.
    question = second["messages"][0]["content"]
    assert question[-1]["cache_control"] == {"type": "ephemeral"}
    assert breakpoints(second) == 3


def test_without_a_system_prompt_the_last_tool_ends_the_stable_prefix(
    claude: AnthropicStub,
) -> None:
    claude.script(text("hello"))
    create_agent(sonnet(claude), [lookup]).invoke({"messages": ["hi"]})
    assert claude.requests[0]["tools"][-1]["cache_control"] == {"type": "ephemeral"}


def test_a_callers_own_breakpoints_win(claude: AnthropicStub) -> None:
    @wrap_model_call
    def own(request: ModelRequest, handler: Any) -> Any:
        settings = {**request.model_settings, "cache_control": {"type": "ephemeral", "ttl": "1h"}}
        return handler(request.override(model_settings=settings))

    claude.script(text("hello"))
    create_agent(sonnet(claude), [lookup], system_prompt=SYSTEM, middleware=[own]).invoke(
        {"messages": ["hi"]}
    )
    body = claude.requests[0]
    assert body["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert breakpoints(body) == 1


def test_a_callers_own_key_wins(openai: CachingOpenAIStub) -> None:
    openai.script(text("one"), text("two"))
    create_agent(gpt(openai, model_kwargs={"prompt_cache_key": "mine"})).invoke(
        {"messages": ["hi"]}
    )

    @wrap_model_call
    def keyed(request: ModelRequest, handler: Any) -> Any:
        settings = {**request.model_settings, "prompt_cache_key": "tenant-7"}
        return handler(request.override(model_settings=settings))

    create_agent(gpt(openai), middleware=[keyed]).invoke({"messages": ["hi"]})
    assert [body["prompt_cache_key"] for body in openai.requests] == ["mine", "tenant-7"]


def test_without_a_thread_each_run_has_its_own_key(openai: CachingOpenAIStub) -> None:
    openai.script(*turn(0), *turn(1))
    agent = create_agent(gpt(openai), [lookup])
    agent.invoke({"messages": ["one"]})
    agent.invoke({"messages": ["two"]})
    keys = [body["prompt_cache_key"] for body in openai.requests]
    assert keys[0] == keys[1] != keys[2] == keys[3]


def test_each_agent_of_a_thread_has_its_own_key(openai: CachingOpenAIStub) -> None:
    openai.script(text("one"), text("two"))
    config = {"configurable": {"thread_id": "shared"}}
    for name in ("researcher", "writer"):
        create_agent(gpt(openai), name=name).invoke({"messages": ["hi"]}, config)
    first, second = (body["prompt_cache_key"] for body in openai.requests)
    assert first != second
    assert "shared" not in first


def test_a_fallback_to_another_provider_gets_what_that_provider_takes(
    openai: CachingOpenAIStub, claude: AnthropicStub
) -> None:
    claude.script(error(529, "Overloaded"))
    openai.script(text("from the fallback"))
    fallback = ModelFallbackMiddleware(gpt(openai))
    agent = create_agent(sonnet(claude), [lookup], system_prompt=SYSTEM, middleware=[fallback])
    agent.invoke({"messages": ["hi"]}, {"configurable": {"thread_id": "t"}})
    assert breakpoints(claude.requests[0]) == 2
    body = openai.requests[0]
    assert body["prompt_cache_key"].startswith("graphagent-")
    assert "cache_control" not in str(body)


def test_anthropic_refuses_more_than_four_breakpoints(claude: AnthropicStub) -> None:
    @wrap_model_call
    def many(request: ModelRequest, handler: Any) -> Any:
        marked = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}
        messages = [
            *request.messages[:-1],
            request.messages[-1].model_copy(update={"content": [marked] * 5}),
        ]
        return handler(request.override(messages=messages))

    agent = create_agent(sonnet(claude), middleware=[many])
    with pytest.raises(anthropic.BadRequestError, match="A maximum of 4 blocks"):
        agent.invoke({"messages": ["hi"]})


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["stream", "astream"])
def test_streamed_calls_report_their_cache_reads(
    openai: CachingOpenAIStub, claude: AnthropicStub, how: str
) -> None:
    for stub, model in ((openai, gpt(openai, stream_usage=True)), (claude, sonnet(claude))):
        stub.script(*turn(0))
        agent = create_agent(model, [lookup], system_prompt=SYSTEM)
        chunks = streamed(agent, how, {"messages": ["Paris?"]})
        assert "".join(c.text for c in chunks) == "City 0 is sunny today, with three museums open."
        details = [(c.usage_metadata or {}).get("input_token_details") or {} for c in chunks]
        assert sum(d.get("cache_read", 0) for d in details) > 3000


def streamed(agent: Any, how: str, inputs: Any) -> list[Any]:
    """The model's message chunks of one run, streamed with ``stream_mode="messages"``."""
    if how == "stream":
        parts = list(agent.stream(inputs, stream_mode="messages"))
    else:

        async def collect() -> list[Any]:
            return [part async for part in agent.astream(inputs, stream_mode="messages")]

        parts = asyncio.run(collect())
    return [chunk for chunk, _ in parts if isinstance(chunk, AIMessageChunk)]


class ConverseModel(ScriptedChatModel):
    """A stand-in for langchain-aws's ChatBedrockConverse: its type and model id."""

    model_id: str = "us.anthropic.claude-sonnet-4-5"

    @property
    def _llm_type(self) -> str:
        return "amazon_bedrock_converse_chat"


@pytest.mark.parametrize(
    ("model_id", "expected"),
    [
        ("us.anthropic.claude-sonnet-4-5", {"type": "ephemeral"}),
        ("amazon.nova-pro-v1:0", {"type": "ephemeral"}),
        ("meta.llama3-70b-instruct-v1:0", None),
    ],
)
def test_bedrock_converse_gets_cache_points_for_models_that_cache(
    model_id: str, expected: Any
) -> None:
    model = ConverseModel(replies=["hello"], model_id=model_id)
    create_agent(model, system_prompt=SYSTEM).invoke({"messages": ["hi"]})
    assert model.calls[0].settings.get("cache_control") == expected


def test_other_providers_get_nothing() -> None:
    model = ScriptedChatModel(replies=["hello"])
    create_agent(model, system_prompt=SYSTEM).invoke(
        {"messages": ["hi"]}, {"configurable": {"thread_id": "t"}}
    )
    assert model.calls[0].settings == {}
