"""What found personal data becomes: the redact, mask and hash strategies applied to a text."""

from __future__ import annotations

import hashlib
from typing import Literal, TypeAlias

from graphagent.middleware._pii_detectors import PIIMatch

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
