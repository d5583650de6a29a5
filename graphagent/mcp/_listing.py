"""Which listed tools an agent can use: a tool that would fail every run of the agent holding it
is dropped when the tools are listed, with a warning naming its server and why, and the others
are kept.

Dropped: a name the model providers refuse (OpenAI and Anthropic take 1 to 64 letters, digits,
``_`` and ``-``), and an input schema that cannot be turned into the model's tool description
(a ``$ref`` to another document or to nothing, or nesting too deep to walk).
"""

from __future__ import annotations

import logging
import re
from typing import Any, Final

from mcp.types import Tool

logger = logging.getLogger("graphagent.mcp")

_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_SCHEMA_DEPTH: Final = 64
"""Levels of nesting an input schema may have; real schemas have a handful."""


def unusable(tool: Tool) -> str | None:
    """Why an agent cannot use ``tool``, or ``None`` if it can."""
    if not _NAME.fullmatch(tool.name):
        return (
            f"its name {tool.name!r} is not 1 to 64 letters, digits, '_' or '-', which model "
            "providers require"
        )
    problem = schema_problem(tool.input_schema)
    return f"its input schema {problem}" if problem else None


def schema_problem(schema: dict[str, Any]) -> str | None:
    """What makes ``schema`` unusable (a ``$ref`` that leads nowhere in it, nesting past
    :data:`MAX_SCHEMA_DEPTH`), worded to follow "its ... schema", or ``None``."""
    stack: list[tuple[Any, int]] = [(schema, 0)]
    while stack:  # iterative: a schema nested thousands deep must not exhaust the stack
        node, depth = stack.pop()
        if depth > MAX_SCHEMA_DEPTH:
            return f"is nested more than {MAX_SCHEMA_DEPTH} levels deep"
        if isinstance(node, dict):
            ref = node.get("$ref")
            if ref is not None and not _resolves(schema, ref):
                return f"has a $ref, {ref!r}, that does not point into the schema itself"
            stack.extend((value, depth + 1) for value in node.values())
        elif isinstance(node, list):
            stack.extend((value, depth + 1) for value in node)
    return None


def _resolves(schema: dict[str, Any], ref: Any) -> bool:
    """Whether ``ref`` is a JSON pointer into ``schema`` that leads somewhere."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return False
    node: Any = schema
    for part in filter(None, ref[1:].split("/")):
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return False
    return True


def drop(tool: Tool, server: str, reason: str) -> None:
    """Report a dropped tool: a warning naming the tool, its server and why."""
    logger.warning(
        "graphagent.mcp left out the tool %r of %s: %s. The server's other tools are kept.",
        tool.name,
        server,
        reason,
    )
