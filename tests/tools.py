"""Tools several test modules share."""

from __future__ import annotations

from langchain_core.tools import tool
from langgraph.types import interrupt


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def boom() -> str:
    """Always fails."""
    raise ConnectionError("service down")


@tool
def ask(question: str) -> str:
    """Ask a human."""
    return str(interrupt(question))
