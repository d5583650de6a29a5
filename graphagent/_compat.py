"""The one place that reaches into langgraph internals, because no public way exists.

- ``RunnableCallable`` lets a node carry a sync and an async function without the per-call
  tracing overhead of ``RunnableLambda``; langgraph's own nodes are built from it.
- ``InlineToolNode`` is ``ToolNode`` without a thread pool per single tool call (see below).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph._internal._runnable import RunnableCallable
from langgraph.prebuilt import ToolNode, ToolRuntime
from langgraph.runtime import Runtime

__all__ = ["InlineToolNode", "RunnableCallable"]

_OWN_FIELDS = ("state", "tool_call_id", "config", "tools")
_SHARED_FIELDS = tuple(f.name for f in dataclasses.fields(ToolRuntime) if f.name not in _OWN_FIELDS)
_PRIVATE_API = ("_func", "_afunc", "_run_one", "_arun_one", "_combine_tool_outputs")


class InlineToolNode(ToolNode):
    """``ToolNode`` that runs a single tool call right in the node's task.

    graphagent dispatches each tool call as a task of its own (one ``Send`` each), and
    ``ToolNode`` starts a new thread pool (sync) or gathers a new asyncio task (async) for every
    task even when it holds one call — a new OS thread per tool step. With one call there is
    nothing to run in parallel, so it runs here; any other input takes ``ToolNode``'s own path.
    Parallel calls still run in parallel: they are separate tasks, which langgraph runs
    concurrently.
    """

    def _func(self, input: Any, config: RunnableConfig, runtime: Runtime[Any]) -> Any:
        if not _single_call(input):
            return super()._func(input, config, runtime)
        output = self._run_one(
            input["tool_call"], "tool_calls", self._runtime(input, config, runtime)
        )
        return self._combine_tool_outputs([output], "tool_calls")

    async def _afunc(self, input: Any, config: RunnableConfig, runtime: Runtime[Any]) -> Any:
        if not _single_call(input):
            return await super()._afunc(input, config, runtime)
        tool_runtime = self._runtime(input, config, runtime)
        output = await self._arun_one(input["tool_call"], "tool_calls", tool_runtime)
        return self._combine_tool_outputs([output], "tool_calls")

    def _runtime(self, input: Any, config: RunnableConfig, runtime: Runtime[Any]) -> ToolRuntime:
        return ToolRuntime(
            state=input["state"],
            tool_call_id=input["tool_call"]["id"],
            config=config,
            tools=list(self.tools_by_name.values()),
            **{name: getattr(runtime, name) for name in _SHARED_FIELDS if hasattr(runtime, name)},
        )


def _single_call(input: Any) -> bool:
    return isinstance(input, dict) and input.get("__type") == "tool_call_with_context"


if not all(hasattr(ToolNode, name) for name in _PRIVATE_API):  # pragma: no cover
    # A langgraph whose ToolNode changed shape: stay correct, give up the optimisation.
    InlineToolNode = ToolNode  # type: ignore[misc,assignment]
