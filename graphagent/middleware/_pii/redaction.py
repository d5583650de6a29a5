"""What found personal data becomes: the redact, mask and hash strategies applied to a text, and
a rewrite of a text applied to a message's content."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Literal, TypeAlias, TypeVar

from langchain_core.messages import BaseMessage

from graphagent.middleware._pii.detectors import PIIMatch

Strategy: TypeAlias = Literal["block", "redact", "mask", "hash"]


def replaced(text: str, matches: list[PIIMatch], strategy: Strategy) -> str:
    """``text`` with each of ``matches`` (in order, not overlapping) replaced per ``strategy``
    (``"block"`` is the caller's to handle: here it would redact)."""
    pieces, position = [], 0
    for match in matches:
        pieces += [text[position : match["start"]], _replacement(strategy, match)]
        position = match["end"]
    return "".join([*pieces, text[position:]])


def without_overlaps(matches: list[PIIMatch]) -> list[PIIMatch]:
    """In text order; of overlapping matches the one starting first (then the longest) wins."""
    kept: list[PIIMatch] = []
    for match in sorted(matches, key=lambda m: (m["start"], -m["end"])):
        if not kept or match["start"] >= kept[-1]["end"]:
            kept.append(match)
    return kept


def _replacement(strategy: Strategy, match: PIIMatch) -> str:
    if strategy == "mask":
        return _masked(match["type"], match["value"])
    if strategy == "hash":
        return _hashed(match["type"], match["value"])
    return f"[REDACTED_{match['type'].upper()}]"


def _masked(pii_type: str, value: str) -> str:
    """LangChain's mask formats, a little of the value kept to tell values apart: an email
    address keeps its name and top-level domain (``user@****.com``)."""
    if pii_type == "email":
        local, at, domain = value.partition("@")
        if not at or "@" in domain:
            return "****"
        top = domain.rsplit(".", 1)
        return f"{local}@****.{top[1]}" if len(top) == 2 else f"{local}@****"
    if pii_type == "credit_card":
        last4 = "".join(c for c in value if c.isdigit())[-4:]
        separator = "-" if "-" in value else " " if " " in value else ""
        return separator.join(["****"] * 3 + [last4]) if separator else f"************{last4}"
    if pii_type == "mac_address":
        separator = ":" if ":" in value else "-"
        return separator.join(["**"] * 5 + [value[-2:]])
    if pii_type == "ip" and value.count(".") == 3:
        return "*.*.*." + value.rsplit(".", 1)[1]
    if pii_type == "url":
        return "[MASKED_URL]"
    return f"****{value[-4:]}" if len(value) > 4 else "****"


def _hashed(pii_type: str, value: str) -> str:
    return f"<{pii_type}_hash:{hashlib.sha256(value.encode()).hexdigest()[:8]}>"


# -- message content ------------------------------------------------------------------------

M = TypeVar("M", bound=BaseMessage)

Content: TypeAlias = str | list[str | dict[str, Any]]
Rewrite: TypeAlias = Callable[[str], str]
# Keys of content blocks that structure them rather than carry text.
_STRUCTURAL_KEYS = frozenset({"type", "id", "name", "index", "signature"})


def text_rewritten(content: Content, rewrite: Rewrite) -> Content:
    """``content`` with its text rewritten: the string, or each block's ``text``. Returns
    ``content`` itself when nothing changed."""
    if isinstance(content, str):
        return rewrite(content)
    blocks = [_block_rewritten(block, rewrite) for block in content]
    return content if all(a is b for a, b in zip(blocks, content, strict=True)) else blocks


def _block_rewritten(block: str | dict[str, Any], rewrite: Rewrite) -> str | dict[str, Any]:
    if isinstance(block, str):
        return rewrite(block)
    text = block.get("text")
    if not isinstance(text, str):
        return block
    new = rewrite(text)
    return block if new is text else {**block, "text": new}


def leaves_rewritten(value: Any, rewrite: Rewrite) -> Any:
    """Every string inside ``value`` rewritten."""
    if isinstance(value, str):
        return rewrite(value)
    if isinstance(value, list):
        return [leaves_rewritten(item, rewrite) for item in value]
    if isinstance(value, dict):
        return {key: leaves_rewritten(item, rewrite) for key, item in value.items()}
    return value


def content_leaves_rewritten(content: Content, rewrite: Rewrite) -> Content:
    """Every string of ``content`` rewritten, except the keys that structure its blocks."""
    if isinstance(content, str):
        return rewrite(content)
    return [
        {k: v if k in _STRUCTURAL_KEYS else leaves_rewritten(v, rewrite) for k, v in b.items()}
        if isinstance(b, dict)
        else rewrite(b)
        for b in content
    ]


def with_content(message: M, content: Content) -> M:
    return (
        message if content is message.content else message.model_copy(update={"content": content})
    )
