"""``ToolCallDeduplicationMiddleware``: identical tool calls of one model turn run once.

A model sometimes asks for the same call several times in one reply (the same tool, the same
arguments, different call ids). Each call is a task of its own (one ``Send`` per call), and the
tasks run in parallel, so this is where one run can serve several ids: the first of the calls to
reach this layer runs it, the others wait for its outcome and answer their own ids with it.

What is shared lives for one run (set up by ``wrap_agent``), and for one turn of it: the table
of calls is started afresh when the calls of the next model reply arrive.
"""

from __future__ import annotations

import concurrent.futures
import json
import threading
from collections.abc import AsyncGenerator, Callable, Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command
from langgraph.typing import ContextT

from graphagent._core.bridge import Mode
from graphagent._core.langgraph_internals import is_control_flow, update_pairs
from graphagent._core.options import refuse_unknown_arguments
from graphagent.middleware._kit.cores import ToolScopedCore
from graphagent.middleware._kit.tool_option import covers, tool_names
from graphagent.middleware.base import ToolResult
from graphagent.state import AgentState, ResponseT

__all__ = ["ANSWERED_BY", "ToolCallDeduplicationMiddleware"]

ANSWERED_BY = "graphagent_answered_by"
"""The ``response_metadata`` key of an answer shared from an identical call: that call's id."""

Turn = tuple[int, str | None, tuple[str | None, ...]]
"""A model reply: its place in the history, its message id and the ids of its calls."""
Key = tuple[str, str]
"""A call, as far as identical calls go: the tool's name and the arguments, as canonical JSON."""

# The table of each ToolCallDeduplicationMiddleware (by id) in the current run.
_RUN_TABLES: ContextVar[Mapping[int, _Table]] = ContextVar(
    "graphagent_deduplication_tables", default=MappingProxyType({})
)


class _RunAlone(Exception):
    """The call that ran stopped on control flow (an interrupt, a cancellation): its outcome is
    its own, so each identical call runs for itself."""


@dataclass(frozen=True, slots=True)
class _Shared:
    """One call that runs for all the calls identical to it: its id, its outcome once known, and
    the calls it serves (itself included)."""

    call_id: str | None
    served: set[str | None]
    outcome: concurrent.futures.Future[ToolResult] = field(
        default_factory=concurrent.futures.Future
    )


@dataclass(slots=True)
class _Table:
    """The calls of the current turn of one run, by key. A sync run's calls are threads, so the
    table is locked; an async run's are tasks of one loop, for which the lock is never held
    across an ``await`` and so never contended."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    turn: Turn | None = None
    calls: dict[Key, _Shared] = field(default_factory=dict)

    def claim(self, turn: Turn, key: Key, call_id: str | None) -> tuple[_Shared, bool]:
        """The shared call for ``key``, and whether this call is the one to run it: the first
        identical call to arrive, or one that was served already and asks again (a retry)."""
        with self.lock:
            if turn != self.turn:
                self.turn, self.calls = turn, {}
            shared = self.calls.get(key)
            if shared is None or call_id in shared.served:
                shared = self.calls[key] = _Shared(call_id, {call_id})
                return shared, True
            shared.served.add(call_id)
            return shared, False


@refuse_unknown_arguments
class ToolCallDeduplicationMiddleware(ToolScopedCore[AgentState[Any], ContextT, ResponseT]):
    """Run identical tool calls of one model reply once, and answer every call with the result.

    Two calls are identical when they name the same tool with the same arguments (compared as
    JSON, so the order of keys does not matter). The first of them to start runs; the others
    wait for it and are answered with a copy of its ``ToolMessage`` carrying their own
    ``tool_call_id``, and the id of the call that ran under
    ``response_metadata["graphagent_answered_by"]``. A tool that returns a ``Command`` updates
    the state once; the other calls are answered with its ``ToolMessage``.

    An error the call raises is raised for every identical call (a ``ToolErrorMiddleware``
    listed before this one answers each). A call that asks again (a retry listed before this
    one) runs again, once for all the identical calls asking again. A call stopped by control
    flow (an interrupt, a cancellation) shares nothing: each identical call then runs for
    itself. Calls of different model replies never share anything.

    Order: list this middleware before the ``wrap_tool_call`` layers whose work should be done
    once (a ``ToolRetryMiddleware``, a ``ToolTimeoutMiddleware``), and after those that must see
    every call, above all ``HumanInTheLoopMiddleware(interrupt_mode="per_call")``, whose reviewer
    decides about each call. Leave out of ``tools`` a tool that asks a person itself (calls
    ``interrupt()``): each identical call is asked, but on resume they share the first answer.

    Args:
        tools: The tools whose identical calls run once, as names or tools; ``None`` covers
            every tool. Leave out tools whose repeated calls are meant to run again (a dice
            roll, "create an item"). A name the agent does not have fails when the agent is
            built.

    Raises:
        MiddlewareError: An empty ``tools`` list, or one holding something that is neither a
            name nor a tool.
    """

    def __init__(self, *, tools: Sequence[BaseTool | str] | None = None) -> None:
        # Not `self.tools`: on a middleware that attribute registers tools with the agent.
        self._covered = tool_names(type(self).__name__, tools, empty_ok=False)

    def wrap_agent(self, state: Any, runtime: Any) -> Generator[None, Any, None]:
        """Give the run its own table of calls."""
        with self._table():
            yield

    async def awrap_agent(self, state: Any, runtime: Any) -> AsyncGenerator[None, Any]:
        """Async twin of :meth:`wrap_agent`."""
        with self._table():
            yield

    @contextmanager
    def _table(self) -> Iterator[None]:
        token = _RUN_TABLES.set({**_RUN_TABLES.get(), id(self): _Table()})
        try:
            yield
        finally:
            _RUN_TABLES.reset(token)

    async def _wrap_tool_call(
        self, mode: Mode, request: ToolCallRequest, handler: Callable[..., Any]
    ) -> ToolResult:
        """Run the call, or answer it with the outcome of the identical call that runs."""
        result: ToolResult
        call = request.tool_call
        table = _RUN_TABLES.get().get(id(self))
        turn = _turn_of(request)
        if table is None or turn is None or not covers(self._covered, call["name"]):
            result = await mode.call(handler, request)
            return result
        key = (call["name"], _canonical(call.get("args")))
        shared, runs = table.claim(turn, key, call["id"])
        if runs:
            return await _run_for_all(mode, shared, handler, request)
        try:
            result = await mode.wait(shared.outcome)
        except _RunAlone:
            result = await mode.call(handler, request)
            return result
        return _answer_as(result, call["id"], shared.call_id)


async def _run_for_all(
    mode: Mode, shared: _Shared, handler: Callable[..., Any], request: ToolCallRequest
) -> ToolResult:
    """Run the call, and hand its outcome to the identical calls waiting for it."""
    try:
        result: ToolResult = await mode.call(handler, request)
    except BaseException as error:
        ordinary = isinstance(error, Exception) and not is_control_flow(error)
        shared.outcome.set_exception(error if ordinary else _RunAlone())
        raise
    shared.outcome.set_result(result)
    return result


def _turn_of(request: ToolCallRequest) -> Turn | None:
    """The model reply ``request``'s call belongs to: the last AI message, if it holds it."""
    state = request.state
    messages = state.get("messages") if isinstance(state, Mapping) else None
    for index in range(len(messages or ()) - 1, -1, -1):
        message = messages[index]  # type: ignore[index]
        if isinstance(message, AIMessage):
            ids = tuple(c["id"] for c in message.tool_calls)
            return (index, message.id, ids) if request.tool_call["id"] in ids else None
    return None


def _canonical(args: Any) -> str:
    try:
        return json.dumps(args, sort_keys=True, separators=(",", ":"), default=repr)
    except (TypeError, ValueError):  # keys that cannot be sorted, a cycle
        return repr(args)


def _answer_as(result: ToolResult, call_id: str | None, ran: str | None) -> ToolMessage:
    """The answer of the call that ran, as the answer of the call ``call_id``."""
    message = result if isinstance(result, ToolMessage) else _message_of(result, ran)
    metadata = {**message.response_metadata, ANSWERED_BY: ran}
    # No message id: one it shared would make the history replace the first answer.
    return message.model_copy(
        update={"tool_call_id": call_id, "id": None, "response_metadata": metadata}
    )


def _message_of(command: Command[Any], ran: str | None) -> ToolMessage:
    """The ``ToolMessage`` a tool's ``Command`` answers its call with."""
    for channel, value in update_pairs(command.update):
        if channel != "messages":
            continue
        for message in value if isinstance(value, list) else [value]:
            if isinstance(message, ToolMessage) and message.tool_call_id == ran:
                return message
    return ToolMessage(
        content=f"This call is identical to the call {ran!r}, which ran once for both.",
        tool_call_id=ran or "",
    )
