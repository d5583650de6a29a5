"""The caching rules the local provider stubs apply (tests/prompt_cache_rules.py), alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.prompt_cache_rules import (
    AnthropicCacheRule,
    OpenAICacheRule,
    TooManyBreakpoints,
    openai_text,
    tokens,
)

MARK = {"type": "ephemeral"}


def chat(*contents: str, key: str | None = "k") -> dict[str, Any]:
    body: dict[str, Any] = {"messages": [{"role": "user", "content": c} for c in contents]}
    if key is not None:
        body["prompt_cache_key"] = key
    return body


def test_tokens_are_four_characters_rounded_up() -> None:
    assert [tokens(""), tokens("abcd"), tokens("abcde")] == [0, 1, 2]


def test_openai_caches_prompts_of_1024_tokens_and_reads_in_blocks_of_128() -> None:
    rule = OpenAICacheRule()
    assert rule.apply(chat("x" * 4000)).cached_tokens == 0  # under 1,024 tokens: not cached
    assert rule.apply(chat("x" * 4000, "more")).cached_tokens == 0
    long = "y" * 4 * 1500
    first = rule.apply(chat(long))
    assert (first.prompt_tokens, first.cached_tokens) == (tokens(openai_text(chat(long))), 0)
    again = rule.apply(chat(long, "next question"))
    assert again.cached_tokens == 1024 + 3 * 128  # the shared 1,500-odd tokens, in whole blocks


def test_openai_routes_by_key_and_spreads_requests_without_one() -> None:
    rule = OpenAICacheRule(machines=4)
    long = "z" * 4 * 2000
    rule.apply(chat(long, key="a"))
    assert rule.apply(chat(long, "more", key="a")).cached_tokens > 0
    without = [rule.apply(chat(long, str(i), key=None)).cached_tokens for i in range(4)]
    assert without[0] == 0
    assert any(without)


def messages(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"model": "claude", "messages": [{"role": "user", "content": list(blocks)}]}


def block(text: str, marked: bool = False) -> dict[str, Any]:
    return {"type": "text", "text": text, **({"cache_control": MARK} if marked else {})}


def test_anthropic_caches_only_up_to_a_breakpoint() -> None:
    rule = AnthropicCacheRule()
    big = "s" * 4 * 1200
    unmarked = rule.apply(messages(block(big), block("q1")))
    assert (unmarked.cache_creation_input_tokens, unmarked.cache_read_input_tokens) == (0, 0)
    written = rule.apply(messages(block(big, marked=True), block("q1")))
    assert written.cache_read_input_tokens == 0
    assert written.cache_creation_input_tokens > 1200
    read = rule.apply(messages(block(big, marked=True), block("q2")))
    assert read.cache_read_input_tokens == written.cache_creation_input_tokens
    assert read.total == unmarked.total


def test_anthropic_reads_back_at_most_20_blocks_before_a_breakpoint() -> None:
    rule = AnthropicCacheRule()
    head = block("h" * 4 * 1200, marked=True)
    rule.apply(messages(head))
    near = [block(f"b{i}") for i in range(19)]
    assert (
        rule.apply(
            messages(head | {"cache_control": MARK}, *near[:-1], near[-1] | {"cache_control": MARK})
        ).cache_read_input_tokens
        > 0
    )
    rule.clear()
    rule.apply(messages(block("h" * 4 * 1200, marked=True)))
    far = [block(f"b{i}") for i in range(20)]
    tail = far[-1] | {"cache_control": MARK}
    assert rule.apply(messages(block("h" * 4 * 1200), *far[:-1], tail)).cache_read_input_tokens == 0


def test_anthropic_refuses_a_fifth_breakpoint_and_a_short_prefix_is_not_cached() -> None:
    rule = AnthropicCacheRule()
    with pytest.raises(TooManyBreakpoints, match="A maximum of 4 blocks with cache_control"):
        rule.apply(messages(*(block(str(i), marked=True) for i in range(5))))
    short = rule.apply(messages(block("short", marked=True)))
    assert short.cache_creation_input_tokens == 0
    top = rule.apply({**messages(block("t" * 4 * 1100)), "cache_control": MARK})
    assert top.cache_creation_input_tokens > 1100  # a top-level breakpoint marks the last block
