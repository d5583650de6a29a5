"""The state of an agent paused behind a tool (``as_tool``), as its outer agent shows it.

An agent a tool runs is no node of the outer agent, so langgraph's ``get_state(config,
subgraphs=True)`` shows the outer agent's paused ``tools`` task with its interrupt but without
the inner agent's state, and reading the inner agent's namespace directly reads its checkpoint
through the outer agent's channels: its messages, ``next=()`` and no interrupt, as if nothing were
pending. The inner agent saved its state under the namespace of the ``tools`` task that ran it
(``tools:<task id>``); this module reads it from there with the inner agent's own graph:

- ``get_state(config, subgraphs=True)`` gives each paused ``tools`` task the inner agent's
  snapshot (its ``next``, its tasks and their interrupts), at any depth;
- ``agent.get_state`` of a ``tools:<task id>`` namespace of one of its paused tasks is that
  snapshot (a parent graph reading such a namespace of its agent node reads as langgraph does).

A tool names its agent with a ``graphagent_inner_agent`` attribute (``as_tool``'s tools do).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import PregelTask, StateSnapshot

from graphagent._core.bridge import Mode
from graphagent._core.langgraph_internals import lending, lent_checkpointer
from graphagent._core.records import TOOLS_NODE

if TYPE_CHECKING:
    from graphagent.agent import CompiledAgent

Read = Callable[..., Any]
"""``get_state`` or ``aget_state`` of a graph (bound), as the mode of the call needs."""

_SEP, _END = "|", ":"


def inner_agents(agent: CompiledAgent) -> dict[str, Any]:
    """The agents behind ``agent``'s tools, by tool name."""
    found = {t.name: getattr(t, "graphagent_inner_agent", None) for t in agent.plan.tools}
    return {name: inner for name, inner in found.items() if inner is not None}


async def snapshot(
    mode: Mode, agent: CompiledAgent, config: Mapping[str, Any], subgraphs: bool, own: Read
) -> StateSnapshot:
    """``agent``'s state at ``config`` (``own`` reads it as langgraph does), with the states of
    the agents paused behind its tools."""
    inner = inner_agents(agent)
    if not inner:
        return await _read(mode, own, config, subgraphs)  # type: ignore[no-any-return]
    addressed = await _addressed(mode, agent, inner, config, own, subgraphs)
    if addressed is not None:
        return addressed
    state: StateSnapshot = await _read(mode, own, config, subgraphs)
    if not subgraphs:
        return state
    saver = _saver(agent, config)
    if saver is None:
        return state
    tasks = []
    for task in state.tasks:
        found = await _inner_state(mode, inner, state, task, saver)
        tasks.append(task if found is None else task._replace(state=found))
    return state._replace(tasks=tuple(tasks))


async def _addressed(
    mode: Mode,
    agent: CompiledAgent,
    inner: Mapping[str, Any],
    config: Mapping[str, Any],
    own: Read,
    subgraphs: bool,
) -> StateSnapshot | None:
    """The inner agent's state when ``config`` addresses the namespace of one of ``agent``'s
    paused ``tools`` tasks; ``None`` when it addresses anything else."""
    if lent_checkpointer(config) is not None:
        return None  # a parent reading this agent's own state, under the agent's namespace
    namespace = (config.get("configurable") or {}).get("checkpoint_ns") or ""
    parent, _, last = namespace.rpartition(_SEP)
    node, _, task_id = last.partition(_END)
    saver = _saver(agent, config)
    if node != TOOLS_NODE or not task_id or saver is None:
        return None
    configurable = {**config["configurable"], "checkpoint_ns": parent}
    configurable.pop("checkpoint_id", None)
    outer: StateSnapshot = await _read(mode, own, {**config, "configurable": configurable}, False)
    task = next((t for t in outer.tasks if t.id == task_id), None)
    if task is None:
        return None
    return await _inner_state(mode, inner, outer, task, saver, subgraphs=subgraphs)


async def _inner_state(
    mode: Mode,
    inner: Mapping[str, Any],
    outer: StateSnapshot,
    task: PregelTask,
    saver: BaseCheckpointSaver[Any],
    *,
    subgraphs: bool = True,
) -> StateSnapshot | None:
    """The state of the agent ``task`` (a ``tools`` task of ``outer``) ran, if it saved one."""
    if task.name != TOOLS_NODE or task.state is not None:
        return None
    agent = inner.get(_tool_of(outer, task) or "")
    if agent is None and len(set(map(id, inner.values()))) == 1:
        agent = next(iter(inner.values()))
    if agent is None:
        return None
    parent = outer.config.get("configurable", {}).get("checkpoint_ns") or ""
    own = f"{TOOLS_NODE}{_END}{task.id}"
    namespace = f"{parent}{_SEP}{own}" if parent else own
    read = agent.aget_state if mode.asynchronous else agent.get_state
    config = lending(outer.config, saver, namespace)
    found: StateSnapshot = await _read(mode, read, config, subgraphs)
    return found if found.metadata is not None else None


def _tool_of(outer: StateSnapshot, task: PregelTask) -> str | None:
    """The tool the ``tools`` task runs. graphagent sends one task per call of the last AI
    message, in order, except the calls answered in place: those answered in the state but by no
    task of the step."""
    path = task.path
    values = outer.values if isinstance(outer.values, Mapping) else {}
    messages = values.get("messages") or []
    ai = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    if ai is None or len(path) < 2 or not isinstance(path[1], int):
        return None
    by_tasks = {_answered(t.result) for t in outer.tasks if t.result is not None}
    turn = messages[messages.index(ai) :]
    in_state = {m.tool_call_id for m in turn if isinstance(m, ToolMessage)}
    sent = [call for call in ai.tool_calls if call["id"] not in in_state - by_tasks]
    return sent[path[1]]["name"] if path[1] < len(sent) else None


def _answered(result: Any) -> str | None:
    """The call a finished ``tools`` task answered."""
    written = result.get("messages") if isinstance(result, Mapping) else None
    items = written if isinstance(written, list) else [written]
    return next((m.tool_call_id for m in items if isinstance(m, ToolMessage)), None)


def _saver(agent: CompiledAgent, config: Mapping[str, Any]) -> BaseCheckpointSaver[Any] | None:
    saver = lent_checkpointer(config) or agent.checkpointer
    return saver if isinstance(saver, BaseCheckpointSaver) else None


async def _read(mode: Mode, read: Read, config: Mapping[str, Any], subgraphs: bool) -> Any:
    return await mode.call(partial(read, config, subgraphs=subgraphs))
