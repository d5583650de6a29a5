"""Finding personal data in text: the built-in detectors and the checking of custom ones."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeAlias, TypedDict
from urllib.parse import urlparse

from graphagent.errors import MiddlewareError, MiddlewareTypeError

BuiltinType: TypeAlias = Literal["email", "credit_card", "ip", "mac_address", "url"]


class PIIMatch(TypedDict):
    """One piece of personal data found in a text: its type, the text, and where it is."""

    type: str
    """The kind of data: ``"email"``, ``"credit_card"``, ... or a name of your own."""
    value: str
    """The text that matched."""
    start: int
    """Where the match starts in the text (an index)."""
    end: int
    """Where it ends (the index after its last character)."""


Detector: TypeAlias = Callable[[str], Sequence[PIIMatch | Mapping[str, Any]]]
"""Finds matches in a text: dicts with ``start`` and ``end`` (``value`` and ``type`` optional)."""

FindMatches: TypeAlias = Callable[[str], list[PIIMatch]]
"""A detector after checking: always returns complete, in-bounds :class:`PIIMatch` dicts."""

_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
# Grouped 4-4-4-4(-1..3) or Amex 4-6-5 with one consistent separator, or 13 to 19 bare digits.
_CARD = re.compile(
    r"\b(?:\d{4}([ -])\d{4}\1\d{4}\1\d{4}(?:\1\d{1,3})?|\d{4}([ -])\d{6}\2\d{5}|\d{13,19})\b"
)
_IPV4 = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b")
_IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")
_MAC = re.compile(r"\b[0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\1){4}[0-9A-Fa-f]{2}\b")
_URL = re.compile(
    r"\bhttps?://[^\s<>\"'`]+"
    r"|\bwww\.[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+[^\s<>\"'`]*"
    r"|\b[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/[^\s<>\"'`]*"
)
_URL_TRAILER = ".,;:!?)]}"


def _found(pii_type: str, text: str, start: int, end: int) -> PIIMatch:
    return PIIMatch(type=pii_type, value=text[start:end], start=start, end=end)


def detect_email(content: str) -> list[PIIMatch]:
    """Email addresses.

    Args:
        content: The text to search.

    Returns:
        One ``PIIMatch`` per match, in the order they appear.
    """
    return [_found("email", content, m.start(), m.end()) for m in _EMAIL.finditer(content)]


def detect_credit_card(content: str) -> list[PIIMatch]:
    """Card numbers (13 to 19 digits, plain or grouped) that pass the Luhn checksum.

    Args:
        content: The text to search.

    Returns:
        One ``PIIMatch`` per match, in the order they appear.
    """
    return [
        _found("credit_card", content, m.start(), m.end())
        for m in _CARD.finditer(content)
        if _passes_luhn(m.group())
    ]


def _passes_luhn(number: str) -> bool:
    digits = [int(c) for c in reversed(number) if c.isdigit()]
    doubled = (d * 2 - 9 if d * 2 > 9 else d * 2 for d in digits[1::2])
    return (sum(digits[::2]) + sum(doubled)) % 10 == 0


def detect_ip(content: str) -> list[PIIMatch]:
    """IPv4 and IPv6 addresses that the standard library accepts.

    Args:
        content: The text to search.

    Returns:
        One ``PIIMatch`` per match, in the order they appear.
    """
    candidates = [*_IPV4.finditer(content), *_IPV6.finditer(content)]
    found = [m for m in candidates if _is_ip(m.group())]
    return [_found("ip", content, m.start(), m.end()) for m in sorted(found, key=re.Match.start)]


def _is_ip(candidate: str) -> bool:
    if ":" in candidate and not any(c in "0123456789abcdefABCDEF" for c in candidate):
        return False  # "::" alone is an address, but in prose it is punctuation
    try:
        ipaddress.ip_address(candidate)
    except ValueError:
        return False
    return True


def detect_mac_address(content: str) -> list[PIIMatch]:
    """MAC addresses: six hex pairs separated by one of ``:`` or ``-`` throughout.

    Args:
        content: The text to search.

    Returns:
        One ``PIIMatch`` per match, in the order they appear.
    """
    return [_found("mac_address", content, m.start(), m.end()) for m in _MAC.finditer(content)]


def detect_url(content: str) -> list[PIIMatch]:
    """``http(s)://`` URLs, ``www.`` hosts, and bare ``host.tld/path`` links.

    A bare ``example.com`` without a path is left alone: in prose it is usually a name.
    Trailing punctuation (``.``, ``)``...) is not part of the match.

    Args:
        content: The text to search.

    Returns:
        One ``PIIMatch`` per match, in the order they appear.
    """
    found: list[PIIMatch] = []
    for m in _URL.finditer(content):
        end = m.start() + len(m.group().rstrip(_URL_TRAILER))
        url = content[m.start() : end]
        if urlparse(url if "://" in url else f"http://{url}").netloc:
            found.append(_found("url", content, m.start(), end))
    return found


BUILTIN_DETECTORS: Mapping[str, FindMatches] = {
    "email": detect_email,
    "credit_card": detect_credit_card,
    "ip": detect_ip,
    "mac_address": detect_mac_address,
    "url": detect_url,
}


def resolve_detector(owner: str, pii_type: str, detector: Any) -> FindMatches:
    """The function finding ``pii_type``: the built-in one, a regex's, or a checked custom one."""
    if detector is None:
        if pii_type not in BUILTIN_DETECTORS:
            raise MiddlewareError(
                f"Unknown PII type: {pii_type}. Must be one of {list(BUILTIN_DETECTORS)} or "
                f"provide a custom detector. {owner}: pii_type={pii_type!r} is not a built-in "
                "type and no detector was given; pass detector= (a regex or a function)."
            )
        return BUILTIN_DETECTORS[pii_type]
    if isinstance(detector, str):
        try:
            pattern = re.compile(detector)
        except re.error as error:
            raise MiddlewareError(
                f"{owner}: detector={detector!r} is not a valid regular expression ({error}); "
                "fix the pattern, or pass a function."
            ) from None
        return lambda text: [
            _found(pii_type, text, m.start(), m.end()) for m in pattern.finditer(text) if m.group()
        ]
    if callable(detector):
        return lambda text: _normalized(owner, pii_type, text, detector(text))
    raise MiddlewareTypeError(
        f"{owner}: detector is {type(detector).__name__}; pass a regex string, a function "
        "returning PIIMatch dicts, or None for a built-in type."
    )


def _normalized(owner: str, pii_type: str, text: str, raw: Any) -> list[PIIMatch]:
    """A custom detector's matches, checked; the value is always the text between the bounds."""
    spans: list[PIIMatch] = []
    for item in raw or ():
        start, end = item.get("start"), item.get("end")
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)):
            raise TypeError(
                f"{owner}: the detector returned a match with start={start!r}, end={end!r}; each "
                f"match needs integer 'start' < 'end' within the text (length {len(text)})."
            )
        spans.append(_found(str(item.get("type") or pii_type), text, start, end))
    return spans
