"""Tools the human-in-the-loop tests review, each recording its runs in ``RAN``."""

from __future__ import annotations

from langchain_core.tools import tool

RAN: list[str] = []
"""Every tool run, as ``name(args)``; the ``review_log`` fixture (tests/conftest.py) empties it
around each test that uses it."""


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    RAN.append(f"send_email({to}, {body})")
    return f"sent to {to}"


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    RAN.append(f"delete_file({path})")
    return f"deleted {path}"


@tool
def read_file(path: str) -> str:
    """Read a file."""
    RAN.append(f"read_file({path})")
    return f"contents of {path}"
