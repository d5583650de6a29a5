"""``CompiledAgent``: the graph ``create_agent`` returns.

It is langgraph's ``CompiledStateGraph`` — it runs, streams, checkpoints and nests like any other
— and it keeps the ``Plan`` it was built from, and runs the ``wrap_agent`` hooks around every
run. ``invoke``/``ainvoke`` and a parent graph running the agent as a node all
go through ``stream``/``astream``, so those two are the one entry point.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot

from graphagent._core.bridge import ASYNC, SYNC, run_sync
from graphagent._core.ceiling import DEFAULT_MAX_MODEL_CALLS, RunLedger, ledgered
from graphagent._core.langgraph_internals import stop_when_closed
from graphagent._core.message_ids import give_input_ids, identified_input
from graphagent._core.records import Plan
from graphagent._core.runtime import (
    DEFAULT_AGENT_NAME as DEFAULT_AGENT_NAME,
    AgentRuntime as AgentRuntime,
)
from graphagent._run import history_view, inner_state, own_branch, resume as _resume
from graphagent._run.caller import refuse_misnamed_messages, refuse_unknown_run_options
from graphagent._run.closing import drained_when_closed
from graphagent._run.input import identified_supersteps, transformed, transformed_supersteps
from graphagent._run.nesting import arefusing_interrupts, check_entry, refusing_interrupts
from graphagent._run.runaway import arunaway_named, runaway_named
from graphagent._run.wrap_agent import DONE, WrappedRun

_OWN_ATTRIBUTES = frozenset({"__orig_class__", "plan", "max_model_calls"})
"""What the agent sets on itself, which its copies are not built from."""


class CompiledAgent(CompiledStateGraph[Any, Any, Any, Any]):
    """A compiled agent graph; ``agent.plan`` says what runs, in what order."""

    plan: Plan
    max_model_calls: int | None = DEFAULT_MAX_MODEL_CALLS
    """The ceiling on model calls per run (``create_agent(max_model_calls=...)``)."""

    @classmethod
    def adopt(
        cls,
        compiled: CompiledStateGraph[Any, Any, Any, Any],
        plan: Plan,
        max_model_calls: int | None = DEFAULT_MAX_MODEL_CALLS,
    ) -> CompiledAgent:
        """Turn a freshly compiled graph into an agent (same object, same state)."""
        # StateGraph.compile() builds its CompiledStateGraph itself and takes no class to build;
        # re-classing the result keeps all it set up, with no copy and no second compile.
        compiled.__class__ = cls
        agent: CompiledAgent = compiled  # type: ignore[assignment]
        agent.plan = plan
        agent.max_model_calls = max_model_calls
        return agent

    def copy(self, update: dict[str, Any] | None = None) -> CompiledAgent:
        """Copies (``with_config`` makes one) keep the plan and the ceiling."""
        attrs = {k: v for k, v in self.__dict__.items() if k not in _OWN_ATTRIBUTES}
        clone = type(self)(**{**attrs, **(update or {})})
        clone.plan, clone.max_model_calls = self.plan, self.max_model_calls
        return clone

    def transformed_input(self, input: Any) -> Any:
        """``input`` as the middleware's ``transform_input`` hooks rewrite it when a run starts.
        A parent graph that must never store the raw input calls this before its own run."""
        return transformed(input, self.plan.hooks["transform_input"])

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:
        config, ledger = self._checked_run(input, config, kwargs)
        input = self.transformed_input(input)
        give_input_ids(input)
        _hide_private_state(self, kwargs)
        if _resume.needs_check(input):
            return _resume.checked(
                self, input, config, lambda: self._stream(input, config, kwargs, ledger)
            )
        if own_branch.needs_check(self, input, config):
            start = lambda named: self._stream(input, named, kwargs, ledger)  # noqa: E731
            return own_branch.checked(self, config, start)
        return self._stream(input, config, kwargs, ledger)

    def astream(self, input: Any, config: Any = None, **kwargs: Any) -> AsyncIterator[Any]:
        config, ledger = self._checked_run(input, config, kwargs)
        input = self.transformed_input(input)
        give_input_ids(input)
        _hide_private_state(self, kwargs)
        if _resume.needs_check(input):
            return _resume.achecked(
                self, input, config, lambda: self._astream(input, config, kwargs, ledger)
            )
        if own_branch.needs_check(self, input, config):
            start = lambda named: self._astream(input, named, kwargs, ledger)  # noqa: E731
            return own_branch.achecked(self, config, start, ASYNC)
        return self._astream(input, config, kwargs, ledger)

    def _checked_run(
        self, input: Any, config: Any, kwargs: dict[str, Any]
    ) -> tuple[dict[str, Any], RunLedger]:
        """Refuse what the run cannot have been meant to do, before anything runs; the run's
        config, carrying its ledger."""
        refuse_unknown_run_options(kwargs)
        refuse_misnamed_messages(input, self.name)
        config, ledger = ledgered(config, self.name, self.max_model_calls, input)
        check_entry(self, input, config)
        return config, ledger

    def _stream(
        self, input: Any, config: Any, kwargs: dict[str, Any], ledger: RunLedger
    ) -> Iterator[Any]:
        if not self.plan.hooks["wrap_agent"]:
            return self._graph_stream(input, config, kwargs, ledger)
        return self._wrapped_stream(input, config, kwargs, ledger)

    def _astream(
        self, input: Any, config: Any, kwargs: dict[str, Any], ledger: RunLedger
    ) -> AsyncIterator[Any]:
        if not self.plan.hooks["wrap_agent"]:
            return self._graph_astream(input, config, kwargs, ledger)
        return self._wrapped_astream(input, config, kwargs, ledger)

    def _graph_stream(
        self, input: Any, config: Any, kwargs: dict[str, Any], ledger: RunLedger
    ) -> Iterator[Any]:
        control = stop_when_closed(config, kwargs)
        chunks = runaway_named(super().stream(identified_input(input), config, **kwargs), ledger)
        chunks = drained_when_closed(chunks, control)
        return refusing_interrupts(self, chunks) if self.checkpointer is False else chunks

    def _graph_astream(
        self, input: Any, config: Any, kwargs: dict[str, Any], ledger: RunLedger
    ) -> AsyncIterator[Any]:
        graph_input = identified_input(input)
        chunks = arunaway_named(super().astream(graph_input, config, **kwargs), ledger)
        return arefusing_interrupts(self, chunks) if self.checkpointer is False else chunks

    def get_state(self, config: Any, *, subgraphs: bool = False) -> StateSnapshot:
        """The state, with ``subgraphs=True`` also that of each agent paused behind a tool
        (``as_tool``), in the paused ``tools`` task (docs/composition.md)."""
        own = super().get_state
        return run_sync(inner_state.snapshot(SYNC, self, config, subgraphs, own), "get_state")

    async def aget_state(self, config: Any, *, subgraphs: bool = False) -> StateSnapshot:
        own = super().aget_state
        return await inner_state.snapshot(ASYNC, self, config, subgraphs, own)

    def get_state_history(
        self,
        config: Any,
        *,
        filter: dict[str, Any] | None = None,
        before: Any = None,
        limit: int | None = None,
    ) -> Iterator[StateSnapshot]:
        """The thread's checkpoints, newest first; over messages stored as deltas, each
        rebuilt from the one before it, not each from the last snapshot."""
        options = {"filter": filter, "before": before, "limit": limit}
        return history_view.history(self, config, options, super().get_state_history)

    async def aget_state_history(
        self,
        config: Any,
        *,
        filter: dict[str, Any] | None = None,
        before: Any = None,
        limit: int | None = None,
    ) -> AsyncIterator[StateSnapshot]:
        options = {"filter": filter, "before": before, "limit": limit}
        async for snapshot in history_view.ahistory(
            self, config, options, super().aget_state_history
        ):
            yield snapshot

    def bulk_update_state(self, config: Any, supersteps: Any) -> Any:
        """``update_state`` writes what the ``transform_input`` hooks make of its values, its
        messages holding ids (random ones, for those that had none)."""
        updates = transformed_supersteps(supersteps, self.plan.hooks["transform_input"])
        return super().bulk_update_state(config, identified_supersteps(updates))

    async def abulk_update_state(self, config: Any, supersteps: Any) -> Any:
        updates = transformed_supersteps(supersteps, self.plan.hooks["transform_input"])
        return await super().abulk_update_state(config, identified_supersteps(updates))

    def _wrapped_stream(
        self, input: Any, config: Any, kwargs: dict[str, Any], ledger: RunLedger
    ) -> Iterator[Any]:
        run = WrappedRun.of(self.plan.hooks["wrap_agent"], SYNC, self.stream_mode, kwargs)
        run.within(run.enter(input, self._runtime(kwargs)))
        modes = {"stream_mode": run.shape.inner_modes()}
        inner = self._graph_stream(input, config, {**kwargs, **modes}, ledger)
        try:
            while (part := run.context.run(next, inner, DONE)) is not DONE:
                yield from run.chunks(part)
        except BaseException as error:
            run.context.run(inner.close)  # type: ignore[attr-defined]
            run.within(run.leave(error))
            raise
        run.within(run.leave())

    async def _wrapped_astream(
        self, input: Any, config: Any, kwargs: dict[str, Any], ledger: RunLedger
    ) -> AsyncIterator[Any]:
        run = WrappedRun.of(self.plan.hooks["wrap_agent"], ASYNC, self.stream_mode, kwargs)
        await run.within(run.enter(input, self._runtime(kwargs)))
        modes = {"stream_mode": run.shape.inner_modes()}
        inner = self._graph_astream(input, config, {**kwargs, **modes}, ledger)
        try:
            while (part := await run.step(anext(inner, DONE))) is not DONE:
                for chunk in run.chunks(part):
                    yield chunk
        except BaseException as error:
            await run.within(inner.aclose())  # type: ignore[attr-defined]
            await run.within(run.leave(error))
            raise
        await run.within(run.leave())

    @property
    def stream_channels_list(self) -> Sequence[str]:
        """The public fields, which LangGraph's API server publishes as the state schema:
        private fields and ``jump_to`` stay out, as they stay out of the output."""
        public = self.output_channels
        return [public] if isinstance(public, str) else list(public)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """Notebooks show the graph drawn here, offline; langgraph's own calls a web service."""
        from graphagent.explain import draw_svg

        return {"text/plain": repr(self), "image/svg+xml": draw_svg(self)}

    def _runtime(self, kwargs: dict[str, Any]) -> AgentRuntime[Any]:
        return AgentRuntime(context=kwargs.get("context"), store=self.store, agent_name=self.name)

    def __repr__(self) -> str:
        """The agent's name, its middleware (`order` applied) and its tools (provider tools too)."""
        middleware = [m.name for m in self.plan.middleware]
        tools = [t.name for t in self.plan.tools]
        tools += [t.get("name") or t.get("type", "?") for t in self.plan.provider_tools]
        return f"<CompiledAgent {self.name!r} middleware={middleware} tools={tools}>"


def _hide_private_state(agent: CompiledAgent, kwargs: dict[str, Any]) -> None:
    """Stream only the output schema's fields ("values" and "updates" chunks alike), as ``invoke``
    returns them: private fields and ``jump_to`` stay inside the agent."""
    if kwargs.get("output_keys") is None:
        kwargs["output_keys"] = agent.output_channels
