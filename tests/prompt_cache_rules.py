"""The providers' documented prompt-caching rules, as the local provider stubs apply them.

Tokens are counted the same simple, deterministic way on both routes: a piece of the prompt
(one message, one tool, one content block) serialised as canonical JSON costs one token per
``CHARS_PER_TOKEN`` characters, rounded up. Serialising piece by piece keeps a shared prefix of
pieces a shared prefix of the serialised text, which is what both caches look up.

- **OpenAI** (``OpenAICacheRule``): a prompt of at least ``minimum`` tokens (1,024) is cached
  whole, without any marker; a later prompt reads the longest prefix it shares with a cached one,
  counted in blocks of ``block`` tokens (128) past the first ``minimum``. Caches live on
  ``machines`` machines: a request with a ``prompt_cache_key`` always goes to the machine the key
  picks; one without goes to the next machine in turn, a stand-in for the routing by prefix hash
  and overflow that make hit rates without a key lower.
- **Anthropic** (``AnthropicCacheRule``): only prefixes ending at a ``cache_control`` breakpoint
  are written (tools, then system, then messages, block by block; a top-level ``cache_control``
  marks the last block); at most ``max_breakpoints`` (4) per request; a prefix shorter than
  ``minimum`` tokens (1,024) is not cached. A breakpoint reads the longest cached prefix ending at
  it or at one of the ``lookback`` (20) block boundaries before it. Reads and writes are reported
  apart from the uncached input.
"""

from __future__ import annotations

import hashlib
import json
import math
import zlib
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CHARS_PER_TOKEN",
    "AnthropicCacheRule",
    "AnthropicUsage",
    "OpenAICacheRule",
    "OpenAIUsage",
    "TooManyBreakpoints",
    "anthropic_pieces",
    "openai_text",
    "tokens",
]

CHARS_PER_TOKEN = 4
CACHE_CONTROL = "cache_control"


def tokens(text: str) -> int:
    """The stubs' token count of ``text``."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# -- OpenAI --------------------------------------------------------------------------------------


def openai_text(body: dict[str, Any]) -> str:
    """The prompt of a chat-completions request as one string: tools, then messages."""
    pieces = [_canonical(tool) for tool in body.get("tools") or ()]
    pieces += [_canonical(message) for message in body.get("messages") or ()]
    return "".join(pieces)


@dataclass(frozen=True, slots=True)
class OpenAIUsage:
    prompt_tokens: int
    cached_tokens: int


@dataclass(slots=True)
class OpenAICacheRule:
    minimum: int = 1024
    block: int = 128
    machines: int = 4
    per_machine: int = 256
    _caches: dict[int, list[str]] = field(default_factory=dict)
    _turn: int = 0

    def apply(self, body: dict[str, Any]) -> OpenAIUsage:
        """The usage of one request, and the prompt cached for the next."""
        prompt = openai_text(body)
        total = tokens(prompt)
        cache = self._caches.setdefault(self._machine(body), [])
        shared = max((_common_prefix(prompt, seen) for seen in cache), default=0)
        cached = self._cached_tokens(shared // CHARS_PER_TOKEN)
        if total >= self.minimum:
            cache.append(prompt)
            del cache[: -self.per_machine]
        return OpenAIUsage(total, min(cached, total))

    def clear(self) -> None:
        """Forget every cached prompt (the entries expired)."""
        self._caches.clear()

    def _machine(self, body: dict[str, Any]) -> int:
        key = body.get("prompt_cache_key")
        if isinstance(key, str):
            return zlib.crc32(key.encode()) % self.machines
        self._turn += 1
        return self._turn % self.machines

    def _cached_tokens(self, shared: int) -> int:
        if shared < self.minimum:
            return 0
        return self.minimum + (shared - self.minimum) // self.block * self.block


def _common_prefix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    if a[:limit] == b[:limit]:
        return limit
    low, high = 0, limit  # a[:low] == b[:low] and a[:high] != b[:high]
    while high - low > 1:
        middle = (low + high) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle
    return low


# -- Anthropic -----------------------------------------------------------------------------------


class TooManyBreakpoints(ValueError):
    """More ``cache_control`` breakpoints than the provider accepts."""


@dataclass(frozen=True, slots=True)
class Piece:
    """One block of the prompt: its token count, and whether it carries a breakpoint."""

    tokens: int
    text: str
    breakpoint: bool


def anthropic_pieces(body: dict[str, Any]) -> list[Piece]:
    """A messages request as its blocks in cache order: tools, system, then messages."""
    pieces = [_piece(tool) for tool in body.get("tools") or ()]
    system = body.get("system")
    if isinstance(system, str):
        pieces.append(_piece({"type": "text", "text": system}))
    elif isinstance(system, list):
        pieces += [_piece(block) for block in system]
    for message in body.get("messages") or ():
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks or ():
            pieces.append(_piece({"role": message.get("role"), **block}))
    if body.get(CACHE_CONTROL) and pieces:
        last = pieces[-1]
        pieces[-1] = Piece(last.tokens, last.text, breakpoint=True)
    return pieces


def _piece(block: dict[str, Any]) -> Piece:
    kept = {k: v for k, v in block.items() if k != CACHE_CONTROL}
    if block.get("type") == "tool_result" and isinstance(kept.get("content"), str):
        # A string is one text block, as the API reads it.
        kept["content"] = [{"type": "text", "text": kept["content"]}]
    text = _canonical(kept)
    return Piece(tokens(text), text, breakpoint=CACHE_CONTROL in block)


@dataclass(frozen=True, slots=True)
class AnthropicUsage:
    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int

    @property
    def total(self) -> int:
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens


@dataclass(slots=True)
class AnthropicCacheRule:
    minimum: int = 1024
    max_breakpoints: int = 4
    lookback: int = 20
    _cached: set[str] = field(default_factory=set)

    def apply(self, body: dict[str, Any]) -> AnthropicUsage:
        """The usage of one request, and the prefixes it writes to the cache."""
        pieces = anthropic_pieces(body)
        marks = [i for i, piece in enumerate(pieces) if piece.breakpoint]
        if len(marks) > self.max_breakpoints:
            raise TooManyBreakpoints(
                f"A maximum of {self.max_breakpoints} blocks with cache_control may be "
                f"provided. Found {len(marks)}."
            )
        prefixes, sizes = _prefixes(str(body.get("model")), pieces)
        read = max((self._read(mark, prefixes, sizes) for mark in marks), default=0)
        written = 0
        for mark in marks:
            if sizes[mark] >= self.minimum:
                self._cached.add(prefixes[mark])
                written = max(written, sizes[mark])
        creation = max(written - read, 0)
        return AnthropicUsage(sizes[-1] - read - creation if sizes else 0, read, creation)

    def clear(self) -> None:
        """Forget every cached prefix (the entries expired)."""
        self._cached.clear()

    def _read(self, mark: int, prefixes: list[str], sizes: list[int]) -> int:
        for index in range(mark, max(mark - self.lookback, -1), -1):
            if prefixes[index] in self._cached:
                return sizes[index]
        return 0


def _prefixes(model: str, pieces: list[Piece]) -> tuple[list[str], list[int]]:
    """Each block's prefix (as a running hash) and its size in tokens."""
    running = hashlib.sha256(model.encode())
    hashes: list[str] = []
    sizes: list[int] = []
    size = 0
    for piece in pieces:
        running.update(piece.text.encode())
        hashes.append(running.copy().hexdigest())
        size += piece.tokens
        sizes.append(size)
    return hashes, sizes
