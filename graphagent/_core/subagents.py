"""``run.subagents``: the agents a run starts inside its own, on the v3 event stream.

An agent built with ``create_agent(name=...)`` tags its runs' metadata with ``lc_agent_name``.
When such an agent runs inside another one (called from a tool, as deepagents' ``task`` tool
calls its sub-agents), ``stream_events(version="v3")`` gives it a handle on ``run.subagents``:
a stream of its own (``values``, ``messages``, ``tool_calls``, ...) with its ``name`` and the
tool call that started it (``cause``). Nested runs without a name stay on ``run.subgraphs``
only. This is the projection LangChain's ``SubagentTransformer`` gives, at the module path
``install_as_langchain()`` maps its module to.

The transformer is langgraph's ``SubgraphTransformer`` with its ``_on_started`` hook (the
template method it documents for subclasses) narrowed to named runs.
"""

from __future__ import annotations

from typing import Any

from langgraph.stream import (
    AsyncSubgraphRunStream,
    StreamChannel,
    SubgraphRunStream,
    SubgraphTransformer,
)

from graphagent._core.langgraph_internals import child_mux

__all__ = ["AsyncSubagentRunStream", "SubagentRunStream", "SubagentTransformer"]


class _Subagent:
    """What a handle on ``run.subagents`` adds to langgraph's subgraph stream, sync or async:
    the agent's name and the tool call that started it."""

    graph_name: str | None
    _cause: Any

    def __init__(
        self,
        mux: Any,
        *,
        path: tuple[str, ...],
        graph_name: str | None = None,
        trigger_call_id: str | None = None,
        cause: Any = None,
    ) -> None:
        # The stream class this is mixed into takes these; object does not, hence the ignore.
        super().__init__(  # type: ignore[call-arg]
            mux, path=path, graph_name=graph_name, trigger_call_id=trigger_call_id
        )
        self._cause = cause

    @property
    def name(self) -> str | None:
        """The agent's name (its ``lc_agent_name``)."""
        return self.graph_name

    @property
    def cause(self) -> Any:
        """``{"type": "toolCall", "tool_call_id": ...}``: the tool call that started the agent,
        when langgraph could tell; else ``None``."""
        return self._cause


class SubagentRunStream(_Subagent, SubgraphRunStream):
    """The stream of one agent started inside a sync run: a ``SubgraphRunStream`` with the
    agent's name and the tool call that started it."""


class AsyncSubagentRunStream(_Subagent, AsyncSubgraphRunStream):
    """The stream of one agent started inside an async run (see :class:`SubagentRunStream`)."""


class SubagentTransformer(SubgraphTransformer):
    """Put a handle on ``run.subagents`` for each named agent a run starts directly inside it;
    grandchildren are on their parent's handle."""

    # SubgraphTransformer is native and runs in sync and async runs already: run.subagents is
    # an attribute of the run, as run.subgraphs is.

    def init(self) -> dict[str, Any]:
        log: StreamChannel[Any] = self._log
        return {"subagents": log}

    def _on_started(
        self, ns: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None
    ) -> None:
        if self._lc_by_ns.get(ns) is None or ns in self._handles:
            return  # not an agent's run (run.subgraphs has it), or already shown
        mux = child_mux(self._mux, ns)
        if mux is None:
            return
        kind = AsyncSubagentRunStream if mux.is_async else SubagentRunStream
        handle = kind(
            mux,
            path=ns,
            graph_name=graph_name,
            trigger_call_id=trigger_call_id,
            cause=self._pending_cause,
        )
        self._handles[ns] = handle
        self._log.push(handle)
