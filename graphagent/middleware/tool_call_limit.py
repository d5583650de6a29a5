"""``ToolCallLimitMiddleware``: cap how many tool calls run, per tool or for all tools.

The decision is made in ``after_model``, on the whole reply at once: of the reply's pending calls
this limiter tracks (every call, or the calls of ``tool_name``), the first ones up to the limit
are let through and the rest are over the limit. With ``exit_behavior``:

- ``"continue"`` (default): each call over the limit is answered with an error ``ToolMessage``
  (so it never runs); the calls within the limit, and calls of other tools, run as usual, and the
  model reads the refusals on its next turn;
- ``"error"``: raise :class:`ToolCallLimitExceededError`; nothing of the reply runs;
- ``"end"``: answer every pending call of the reply with an error ``ToolMessage`` (none runs),
  add an AI message naming the limit, and end the run.

Counts are kept like those of ``ModelCallLimitMiddleware`` (see that module for why the run count
is reset in ``before_agent`` rather than kept in an ``UntrackedValue``), in two private dict
fields keyed as in LangChain: by ``tool_name``, or ``"__all__"`` for a global limiter. The fields
merge updates key by key, so limiters of different tools share the fields without overwriting
each other's counts. As in LangChain, the thread count records the calls let through, and the run
count every call the model tried (refused ones too); ``"end"`` leaves the thread count as it was.

A call answered by an earlier ``after_model`` hook (another limiter, for instance) is no longer
pending, so it is neither counted nor refused again. ``after_model`` hooks run in reverse list
order, so a per-tool limiter listed after a global one decides first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph.typing import ContextT

from graphagent._core.history import pending_tool_calls
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import GraphAgentError, MiddlewareError
from graphagent.middleware._kit.limits import (
    check_some_limit,
    checked_exit_behavior,
    checked_limit,
)
from graphagent.middleware._kit.tool_option import check_known
from graphagent.middleware.base import AgentFacts, AgentMiddleware, hook_config
from graphagent.state import AgentState, PrivateStateAttr, ResponseT

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

__all__ = [
    "ExitBehavior",
    "ToolCallLimitExceededError",
    "ToolCallLimitMiddleware",
    "ToolCallLimitState",
]

ExitBehavior = Literal["continue", "error", "end"]
"""What :class:`ToolCallLimitMiddleware` does with calls over its limit: refuse them and go on
(``"continue"``), raise :class:`ToolCallLimitExceededError` (``"error"``), or end the run
(``"end"``)."""

_EXIT_BEHAVIORS = ("continue", "error", "end")
_UNLIMITED = float("inf")


def _merge_counts(current: dict[str, int] | None, update: dict[str, int]) -> dict[str, int]:
    """Each limiter writes only its own key; keep everyone else's."""
    return {**(current or {}), **update}


class ToolCallLimitState(AgentState[ResponseT]):
    """The agent state with the tool call counts of every :class:`ToolCallLimitMiddleware`,
    keyed by the limited tool's name, or ``"__all__"`` for the count of every tool call."""

    thread_tool_call_count: NotRequired[Annotated[dict[str, int], _merge_counts, PrivateStateAttr]]
    """Tool calls run in the thread so far, per limiter name (private: neither input nor
    output)."""
    run_tool_call_count: NotRequired[Annotated[dict[str, int], _merge_counts, PrivateStateAttr]]
    """Tool calls run in the current invocation so far, per limiter name (private)."""


class ToolCallLimitExceededError(GraphAgentError):
    """A tool call limit was exceeded with ``exit_behavior="error"``.

    The counts include the refused calls of the reply, so the limit that was exceeded has its
    count above its limit. Each argument is kept as an attribute of the same name.

    Args:
        thread_count: Tool calls in the thread, the refused ones included.
        run_count: Tool calls in the current invocation, the refused ones included.
        thread_limit: The middleware's ``thread_limit`` (``None``: none).
        run_limit: The middleware's ``run_limit`` (``None``: none).
        tool_name: The limited tool; ``None`` for a limiter of all tools.
    """

    def __init__(
        self,
        thread_count: int,
        run_count: int,
        thread_limit: int | None,
        run_limit: int | None,
        tool_name: str | None = None,
    ) -> None:
        self.thread_count = thread_count
        self.run_count = run_count
        self.thread_limit = thread_limit
        self.run_limit = run_limit
        self.tool_name = tool_name
        super().__init__(
            _exceeded_message(thread_count, run_count, thread_limit, run_limit, tool_name)
        )

    def __reduce__(self) -> tuple[Any, ...]:
        counts = (self.thread_count, self.run_count, self.thread_limit, self.run_limit)
        return type(self), (*counts, self.tool_name)


def _exceeded_message(
    thread_count: int,
    run_count: int,
    thread_limit: int | None,
    run_limit: int | None,
    tool_name: str | None,
) -> str:
    """For the user (in the final AI message and the error): which limit, with the counts."""
    subject = f"'{tool_name}' tool" if tool_name else "Tool"
    exceeded = [
        f"{scope} limit exceeded ({count}/{limit} calls)"
        for scope, count, limit in (
            ("thread", thread_count, thread_limit),
            ("run", run_count, run_limit),
        )
        if limit is not None and count > limit
    ]
    return f"{subject} call limit reached: {' and '.join(exceeded)}."


def _refusal(tool_name: str | None) -> str:
    """For the model, which knows nothing of threads and runs: stop calling (LangChain's text)."""
    if tool_name:
        return f"Tool call limit exceeded. Do not call '{tool_name}' again."
    return "Tool call limit exceeded. Do not make additional tool calls."


_NOT_RUN_BECAUSE_ENDED = (
    "Execution stopped before this tool call could run because another tool call in the same "
    "batch exceeded the limit."
)


@dataclass(frozen=True, slots=True)
class _Split:
    """The pending calls of one reply, as one limiter sees them."""

    allowed: tuple[ToolCall, ...]
    refused: tuple[ToolCall, ...]
    untracked: tuple[ToolCall, ...]


@refuse_unknown_arguments
class ToolCallLimitMiddleware(AgentMiddleware[ToolCallLimitState[ResponseT], ContextT, ResponseT]):
    """Limit the tool calls that run: calls of ``tool_name`` (all tools when ``None``), at most
    ``thread_limit`` per thread and ``run_limit`` per invocation. Only the calls over the limit
    are refused; several limiters can share one agent.

    Args:
        tool_name: The tool to limit; ``None`` limits the calls of all tools together. A name
            the agent does not have fails when the agent is built.
        thread_limit: Calls allowed per thread, across invocations (with a checkpointer;
            without one, a thread is a single invocation). ``None``: no thread limit.
        run_limit: Calls allowed per invocation. ``None``: no run limit. At least one of the
            two limits must be set.
        exit_behavior: What happens to the calls over the limit: ``"continue"`` answers each
            with an error ``ToolMessage`` and the rest of the reply runs; ``"error"`` raises
            ``ToolCallLimitExceededError`` and nothing of the reply runs; ``"end"`` answers
            every call of the reply with an error ``ToolMessage`` and ends the run.

    Raises:
        MiddlewareError: No limit, a limit that is not a whole number of calls 0 or more, a
            ``run_limit`` above ``thread_limit``, an empty ``tool_name``, or an unknown
            ``exit_behavior``.
    """

    state_schema = ToolCallLimitState

    def __init__(
        self,
        *,
        tool_name: str | None = None,
        thread_limit: int | None = None,
        run_limit: int | None = None,
        exit_behavior: ExitBehavior = "continue",
    ) -> None:
        owner = type(self).__name__
        self.tool_name = _checked_tool_name(owner, tool_name)
        self.thread_limit = checked_limit(owner, "thread_limit", thread_limit)
        self.run_limit = checked_limit(owner, "run_limit", run_limit)
        check_some_limit(owner, self.thread_limit, self.run_limit)
        _check_run_within_thread(owner, self.thread_limit, self.run_limit)
        self.exit_behavior: ExitBehavior = checked_exit_behavior(
            owner,
            exit_behavior,
            _EXIT_BEHAVIORS,
            f"Invalid exit_behavior: {exit_behavior!r}. Must be one of {_EXIT_BEHAVIORS}",
        )

    @property
    def name(self) -> str:
        """``ToolCallLimitMiddleware[tool]`` for a per-tool limiter, so several can coexist."""
        if self._name:
            return self._name
        base = type(self).__name__
        return f"{base}[{self.tool_name}]" if self.tool_name else base

    @name.setter
    def name(self, value: str) -> None:
        self._name = value

    def validate_agent(self, agent: AgentFacts) -> None:
        """Reject a ``tool_name`` that is not a tool the agent executes."""
        limited = None if self.tool_name is None else frozenset({self.tool_name})
        check_known(self.name, "tool_name", limited, agent)

    @property
    def _count_key(self) -> str:
        """This limiter's key in the count fields: ``tool_name``, or ``"__all__"``."""
        return self.tool_name or "__all__"

    def before_agent(
        self, state: ToolCallLimitState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """A new run starts counting from 0."""
        return {"run_tool_call_count": {self._count_key: 0}}

    @hook_config(can_jump_to=["end"])
    def after_model(
        self, state: ToolCallLimitState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Count the reply's calls; refuse, raise or end for those over the limit."""
        key = self._count_key
        thread_count = state.get("thread_tool_call_count", {}).get(key, 0)
        run_count = state.get("run_tool_call_count", {}).get(key, 0)
        split = self._split(pending_tool_calls(state["messages"]), thread_count, run_count)
        tried = len(split.allowed) + len(split.refused)
        if not tried:
            return None
        if split.refused and self.exit_behavior == "error":
            raise ToolCallLimitExceededError(
                thread_count + tried, run_count + tried, *self._limits(), self.tool_name
            )
        ends = bool(split.refused) and self.exit_behavior == "end"
        counts = {
            "thread_tool_call_count": {key: thread_count + (0 if ends else len(split.allowed))},
            "run_tool_call_count": {key: run_count + tried},
        }
        refusals = [_error_reply(call, _refusal(self.tool_name)) for call in split.refused]
        if not ends:
            return {**counts, "messages": refusals} if refusals else counts
        not_run = [_error_reply(call, _NOT_RUN_BECAUSE_ENDED) for call in split.allowed]
        not_run += [_error_reply(call, _NOT_RUN_BECAUSE_ENDED) for call in split.untracked]
        text = _exceeded_message(
            thread_count + tried, run_count + tried, *self._limits(), self.tool_name
        )
        final = [*refusals, *not_run, AIMessage(content=text)]
        return {**counts, "jump_to": "end", "messages": final}

    def _limits(self) -> tuple[int | None, int | None]:
        return self.thread_limit, self.run_limit

    def _split(self, pending: Sequence[ToolCall], thread_count: int, run_count: int) -> _Split:
        tracked = [c for c in pending if self._tracks(c)]
        room = min(_room(self.thread_limit, thread_count), _room(self.run_limit, run_count))
        allowed = tracked if room == _UNLIMITED else tracked[: int(room)]
        return _Split(
            allowed=tuple(allowed),
            refused=tuple(tracked[len(allowed) :]),
            untracked=tuple(c for c in pending if not self._tracks(c)),
        )

    def _tracks(self, call: ToolCall) -> bool:
        return self.tool_name is None or call["name"] == self.tool_name


def _room(limit: int | None, count: int) -> float:
    """How many more calls ``limit`` lets through."""
    return _UNLIMITED if limit is None else max(0, limit - count)


def _check_run_within_thread(owner: str, thread_limit: int | None, run_limit: int | None) -> None:
    if thread_limit is not None and run_limit is not None and run_limit > thread_limit:
        raise MiddlewareError(
            f"run_limit ({run_limit}) cannot exceed thread_limit ({thread_limit}): {owner} could "
            "never reach it; lower run_limit or raise thread_limit."
        )


def _checked_tool_name(owner: str, tool_name: object) -> str | None:
    if tool_name is None or (isinstance(tool_name, str) and tool_name):
        return tool_name
    raise MiddlewareError(
        f"{owner}: tool_name must be a tool's name, or None to limit all tools, got {tool_name!r}."
    )


def _error_reply(call: ToolCall, text: str) -> ToolMessage:
    return ToolMessage(content=text, tool_call_id=call["id"], name=call["name"], status="error")
