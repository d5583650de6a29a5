"""The ``tools=`` option of built-ins that act on some tools only: names, checked once."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from langchain_core.tools import BaseTool

from graphagent._core.log import log
from graphagent.errors import MiddlewareError
from graphagent.middleware.base import AgentFacts


def tool_names(
    owner: str, value: Any, *, parameter: str = "tools", empty_ok: bool = True
) -> frozenset[str] | None:
    """The names in a list of tool names and ``BaseTool``s; ``None`` stays ``None`` (every tool)."""
    if value is None:
        return None
    if isinstance(value, str | BaseTool) or not isinstance(value, Iterable):
        example = value.name if isinstance(value, BaseTool) else value
        raise MiddlewareError(
            f"{owner}({parameter}={value!r}): {parameter} is not a list; pass a list of tool "
            f"names or tools, e.g. {parameter}=[{example!r}]."
        )
    names: list[str] = []
    for position, item in enumerate(value):
        if isinstance(item, BaseTool):
            names.append(item.name)
        elif isinstance(item, str) and item:
            names.append(item)
        else:
            raise MiddlewareError(
                f"{owner}({parameter}=...): item {position} is {item!r}; give tool names "
                "(non-empty str) or BaseTool instances."
            )
    if not names and not empty_ok:
        raise MiddlewareError(
            f"{owner}({parameter}=[]) would cover no tool at all; pass {parameter}=None (the "
            "default) to cover every tool, or list the tools to cover."
        )
    return frozenset(names)


def covers(names: frozenset[str] | None, tool_name: str) -> bool:
    """Whether an option parsed by :func:`tool_names` covers ``tool_name``."""
    return names is None or tool_name in names


def check_known(
    owner: str,
    parameter: str,
    names: frozenset[str] | None,
    agent: AgentFacts,
    *,
    langchain_words: Callable[[list[str]], str] | None = None,
) -> None:
    """Fail the build when ``names`` holds a tool the agent does not execute (a typo, usually).

    Provider tools are left out: their calls never reach a tool-call hook. Where LangChain
    makes the same check (later, on a model call), ``langchain_words`` gives its message for the
    unknown names, which then leads ours.
    """
    executed, unknown = _unknown(names, agent)
    if unknown:
        lead = f"{langchain_words(unknown)}. " if langchain_words else ""
        raise MiddlewareError(
            f"{lead}{owner}: {parameter} names {unknown}, which the agent does not have; its "
            f"tools are {executed}. Fix the name(s) or add the tool(s) to the agent."
        )


def note_unknown(
    owner: str, parameter: str, names: frozenset[str] | None, agent: AgentFacts
) -> None:
    """Note on the ``graphagent`` logger, at ``INFO``, names in ``names`` that are no tool the
    agent executes: for options LangChain accepts so, where such a name simply never applies
    (one middleware shared by agents with different tools, say)."""
    executed, unknown = _unknown(names, agent)
    if unknown:
        log.info(
            "%s: %s names %s, which the agent does not have (its tools are %s); they never apply",
            owner,
            parameter,
            unknown,
            executed,
        )


def _unknown(names: frozenset[str] | None, agent: AgentFacts) -> tuple[list[str], list[str]]:
    executed = sorted(tool.name for tool in agent.tools)
    return executed, sorted((names or frozenset()) - set(executed))
