"""``HumanInTheLoopMiddleware``'s settings, checked when it is built, and the agent it is built
into, checked when the agent is built; the checkpointer, looked for before a review pauses."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeGuard, cast

from langchain_core.tools import BaseTool
from langgraph.constants import CONF, CONFIG_KEY_CHECKPOINTER
from pydantic import BaseModel

from graphagent._core.log import log
from graphagent.errors import MiddlewareError
from graphagent.middleware._hitl.types import (
    CONFIG_KEYS,
    DECISION_TYPES,
    INTERRUPT_MODES,
    InterruptMode,
    InterruptOnConfig,
)
from graphagent.middleware.base import AgentFacts

OWNER = "HumanInTheLoopMiddleware"


def checked_mode(interrupt_mode: Any) -> InterruptMode:
    """``interrupt_mode``, if it is one of the modes."""
    if interrupt_mode not in INTERRUPT_MODES:
        modes = " or ".join(map(repr, INTERRUPT_MODES))
        raise MiddlewareError(
            f"`interrupt_mode` must be {modes}, got {interrupt_mode!r}. {OWNER}: 'batched' "
            "pauses once per model turn for all its reviewed calls, 'per_call' once per "
            "reviewed call."
        )
    return cast("InterruptMode", interrupt_mode)


def checked_text(name: str, value: Any, *, optional: bool = False) -> Any:
    """``value``, if it is a str (or ``None`` when ``optional``)."""
    if isinstance(value, str) or (optional and value is None):
        return value
    kind = "a str or None" if optional else "a str"
    raise MiddlewareError(f"{OWNER}: {name} must be {kind}, got {value!r}.")


def resolved_interrupt_on(interrupt_on: Any) -> dict[str, InterruptOnConfig]:
    """The reviewed tools and their checked settings; ``True`` allows every decision."""
    if not isinstance(interrupt_on, Mapping):
        raise MiddlewareError(
            f"{OWNER}: interrupt_on must map tool names to True, False or an "
            f"InterruptOnConfig, got {interrupt_on!r}."
        )
    resolved: dict[str, InterruptOnConfig] = {}
    for name, setting in interrupt_on.items():
        if setting is True:
            resolved[name] = InterruptOnConfig(allowed_decisions=list(DECISION_TYPES))
        elif isinstance(setting, Mapping):
            resolved[name] = _checked_config(name, setting)
        elif setting is not False:
            raise MiddlewareError(
                f"{OWNER}: interrupt_on['{name}'] is {setting!r}; use True, False or "
                "InterruptOnConfig(allowed_decisions=[...])."
            )
    return resolved


def is_model(value: Any) -> TypeGuard[type[BaseModel]]:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _is_schema(value: Any) -> bool:
    return isinstance(value, dict) or is_model(value)


_OPTIONAL_CHECKS: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    (
        "description",
        lambda v: isinstance(v, str) or callable(v),
        "a str or a function (tool_call, state, runtime) -> str",
    ),
    ("args_schema", _is_schema, "a JSON schema dict or a pydantic model"),
    ("when", callable, "a function (request) -> bool"),
)


def _checked_config(name: str, config: Mapping[str, Any]) -> InterruptOnConfig:
    where = f"{OWNER}: interrupt_on['{name}']"
    unknown = sorted(set(config) - CONFIG_KEYS)
    allowed = config.get("allowed_decisions")
    if not isinstance(allowed, list | tuple) or not allowed:
        misspelt = f" (unknown key(s) {unknown}; the keys are {sorted(CONFIG_KEYS)})"
        raise MiddlewareError(
            f"Invalid `interrupt_on` config for tool '{name}': `allowed_decisions` must be a "
            "non-empty list of decision types (e.g. ['approve', 'reject']). "
            f"{where} has allowed_decisions={allowed!r}{misspelt if unknown else ''}; draw it "
            f"from {list(DECISION_TYPES)}."
        )
    if unknown:
        raise MiddlewareError(
            f"{where} has unknown key(s) {unknown}; the keys are {sorted(CONFIG_KEYS)}."
        )
    wrong = [d for d in allowed if d not in DECISION_TYPES]
    if wrong:
        raise MiddlewareError(
            f"{where} allows unknown decision(s) {wrong}; the decisions are {list(DECISION_TYPES)}."
        )
    for key, fits, hint in _OPTIONAL_CHECKS:
        value = config.get(key)
        if value is not None and not fits(value):
            raise MiddlewareError(f"{where} has {key}={value!r}; use {hint}.")
    return cast("InterruptOnConfig", dict(config, allowed_decisions=list(dict.fromkeys(allowed))))


def warn_without_checkpointer(config: Mapping[str, Any], tools: Sequence[str]) -> None:
    """Before a review pauses the run of ``config``, say so on the ``graphagent`` logger if
    nothing can resume it: the run then ends with the interrupt, as in LangChain, and stays
    unfinished."""
    # langgraph puts the saver a run persists to in the config of every task: the graph's own,
    # or the one a parent graph lends its subgraphs. Without one an interrupt can never resume.
    if config.get(CONF, {}).get(CONFIG_KEY_CHECKPOINTER) is not None:
        return
    log.warning(
        "%s: a review of %s pauses this run, which has no checkpointer, so it cannot be "
        "resumed: the run ends with the interrupt and Command(resume=...) cannot carry it on. "
        "Pass create_agent(..., checkpointer=InMemorySaver()) (or another saver), or run the "
        "agent inside a graph compiled with one.",
        OWNER,
        ", ".join(tools),
    )


def checked_agent(agent: AgentFacts, named: Sequence[str]) -> Mapping[str, BaseTool]:
    """The tools of ``agent``, if it can persist a paused run; tools ``named`` in
    ``interrupt_on`` that it does not run are noted on the ``graphagent`` logger (one table may
    serve several agents, as in LangChain)."""
    if agent.checkpointing_disabled:
        raise MiddlewareError(
            f"{OWNER} needs a checkpointer to resume a review, but the agent was built with "
            "checkpointer=False; pass a checkpointer (or leave it None under a parent graph "
            "that has one)."
        )
    tools = {tool.name: tool for tool in agent.tools}
    unknown = [name for name in named if name not in tools]
    if unknown:
        provider = sorted(set(unknown) & agent.tool_names)
        note = f"; {provider} run at the model provider and cannot be reviewed" if provider else ""
        log.info(
            "%s: interrupt_on names %s, which this agent does not run, so they are never "
            "reviewed here (its tools are %s%s)",
            OWNER,
            unknown,
            sorted(tools),
            note,
        )
    return MappingProxyType(tools)
