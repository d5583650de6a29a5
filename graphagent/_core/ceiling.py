"""The ceiling on model calls per run, and what a runaway run repeated.

Each run of an agent (one ``stream``/``astream`` call, which ``invoke`` and a parent graph's node
go through) gets a :class:`RunLedger`, carried in the run's config so that every node of that run,
and no other run, finds it. The innermost model call counts on it (so retries and fallbacks
count), hook nodes record their jumps, and the model's replies their tool calls: when the ceiling
or langgraph's recursion limit stops the run, the error names the loop that repeated.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

from langchain_core.runnables.config import var_child_runnable_config
from langgraph.config import get_config
from langgraph.errors import GraphRecursionError

from graphagent.errors import AgentInputError, RunawayRunError

DEFAULT_MAX_MODEL_CALLS = 250
"""Model calls one run may make unless told otherwise (docs/limits.md says why 250)."""
MAX_MODEL_CALLS = "max_model_calls"
"""The ``config["configurable"]`` key that sets the ceiling for one run."""
LEDGER = "__graphagent_run"
"""Where the run's ledger sits in ``config["configurable"]`` (dunder: langgraph copies no such
key into checkpoint metadata or traces)."""


@dataclass(slots=True)
class RunLedger:
    """What one run has done so far that a runaway loop repeats."""

    agent: str
    ceiling: int | None
    missing_messages: tuple[str, ...] | None = None
    """The keys of the run's input when it had no ``messages`` (``None`` when it had them, or
    was a ``Command`` or ``None``): a model call with nothing to send is then refused."""
    nested: bool = False
    """Whether the run is a node of a parent graph."""
    model_calls: int = 0
    jumps: Counter[tuple[str, str]] = field(default_factory=Counter)
    tool_calls: Counter[str] = field(default_factory=Counter)
    run: str = field(default_factory=lambda: uuid4().hex)
    """The run's own id (prompt caching keys a run without a thread by it)."""
    scoped: dict[str, Any] = field(default_factory=dict)
    """What parts of the engine keep for the length of the run (the tools node's places)."""

    def count_model_call(self) -> None:
        """Count a model call about to be made; past the ceiling, refuse it."""
        if self.ceiling is not None and self.model_calls >= self.ceiling:
            raise RunawayRunError(self._ceiling_message())
        self.model_calls += 1

    def refuse_nothing_to_send(self) -> None:
        """The model is about to get no message at all: refuse it when the input never gave
        any (an explicit ``{"messages": []}`` is the caller's choice)."""
        if self.missing_messages is None:
            return
        got = f"the input keys {list(self.missing_messages)}" if self.missing_messages else "{}"
        where = (
            " It runs as a node of a parent graph whose state has no 'messages' field: give the "
            "parent a 'messages' field (langgraph's MessagesState), or call the agent from a "
            "node that maps the parent's fields to {'messages': [...]} (docs/composition.md)."
            if self.nested
            else " Pass {'messages': [...]}; to run on a system prompt alone, give the agent one "
            "(create_agent(system_prompt=...))."
        )
        raise AgentInputError(
            f"The agent '{self.agent}' would call its model with no messages: it got {got}, "
            f"and reads the conversation from 'messages'.{where}"
        )

    def replied(self, tool_calls: Iterable[Mapping[str, Any]]) -> None:
        self.tool_calls.update(str(call.get("name")) for call in tool_calls)

    def jumped(self, hook: str, target: str) -> None:
        self.jumps[(hook, target)] += 1

    def recursion_error(self, error: GraphRecursionError) -> RunawayRunError:
        """langgraph's recursion limit stopped the run: the same error, naming the loop."""
        return RunawayRunError(
            f"The agent '{self.agent}' stopped at langgraph's recursion limit ({error}) after "
            f"{self.model_calls} model call(s): {self._loop()}. A run that needs more steps can "
            'raise the limit with config={"recursion_limit": ...}.'
        )

    def _ceiling_message(self) -> str:
        return (
            f"The agent '{self.agent}' reached its ceiling of {self.ceiling} model calls in one "
            f"run (retries and fallbacks count): {self._loop()}. A run that needs more can raise "
            f"the ceiling with create_agent({MAX_MODEL_CALLS}=...), or for one run with "
            f'config={{"configurable": {{"{MAX_MODEL_CALLS}": ...}}}}; None removes it.'
        )

    def _loop(self) -> str:
        """What repeated: the jumps hooks made most, else the tools the model kept calling."""
        if self.jumps:
            return ", ".join(
                f"{hook} jumped to '{target}' {times} times"
                for (hook, target), times in self.jumps.most_common(2)
            )
        if self.tool_calls:
            tools = ", ".join(f"'{n}' {times} times" for n, times in self.tool_calls.most_common(3))
            return f"the model kept calling tools ({tools})"
        return f"the model was called {self.model_calls} times"


def running_ledger() -> RunLedger | None:
    """The ledger of the run whose node is running (``None`` outside an agent's run)."""
    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:  # called outside a runnable context
        return None
    ledger = configurable.get(LEDGER)
    return ledger if isinstance(ledger, RunLedger) else None


def ledgered(
    config: Mapping[str, Any] | None, agent: str, default: int | None, input: Any = None
) -> tuple[dict[str, Any], RunLedger]:
    """``config`` with a new ledger for a run of ``agent`` given ``input``, and that ledger. The
    ceiling is the run's ``config["configurable"]["max_model_calls"]``, else ``default``."""
    given = dict(config or {})
    # As langgraph reads a config: without a "configurable" of its own, the run takes the one of
    # the run it is called from (a parent's node lends its thread and checkpointer that way).
    inherited = given.get("configurable")
    if inherited is None:
        inherited = (var_child_runnable_config.get() or {}).get("configurable")
    configurable = dict(inherited or {})
    ceiling = _ceiling(configurable.get(MAX_MODEL_CALLS, default))
    missing = None
    if isinstance(input, Mapping) and "messages" not in input:
        missing = tuple(str(key) for key in input)
    ledger = RunLedger(agent, ceiling, missing, nested=bool(configurable.get("checkpoint_ns")))
    configurable[LEDGER] = ledger
    given["configurable"] = configurable
    return given, ledger


def checked_ceiling(value: Any, where: str = f"create_agent({MAX_MODEL_CALLS}=...)") -> int | None:
    """``value`` as a ceiling: a whole number of at least 1, or ``None`` for none."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"{where} must be a whole number of model calls, or None for no ceiling; "
            f"got {type(value).__name__}."
        )
    if value < 1:
        raise ValueError(f"{where} must be at least 1, or None for no ceiling; got {value}.")
    return value


def _ceiling(value: Any) -> int | None:
    return checked_ceiling(value, f'config["configurable"]["{MAX_MODEL_CALLS}"]')
