"""What a run checks when its agent runs inside a parent graph, before the agent does anything.

- A ``checkpointer=True`` agent keeps one saved state per thread, under its node's namespace.
  Two ``Send`` branches to it in one step would share that state: each overwrites the other's
  checkpoints, and resuming them runs one branch twice and loses the other. Refused.
- An agent the parent runs as a node reads and writes the fields both declare (docs/composition.md,
  "What crosses the boundary"); a field the two declare with clashing types or reducers is refused
  (``state_clash``). When the parent's task shows its node's runnable (a task a ``Send`` or an
  edge started) and that is the agent, every shared field is checked; otherwise the agent is
  taken to be the node when its input is the parent's own values of the fields they share, and
  only the types of those fields are checked.
- A ``checkpointer=False`` agent saves nothing, so an interrupt inside it cannot resume where it
  paused: resuming runs the agent again from its input, and its model may then make another call
  than the one the interrupt asked about. The interrupt is refused when it is raised, before
  anyone can answer it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from langgraph.errors import GraphInterrupt

from graphagent._core.langgraph_internals import parent_channels, sends_to, task_runnable
from graphagent._run.state_clash import check_shared_fields
from graphagent.errors import CompositionError

if TYPE_CHECKING:
    from graphagent.agent import CompiledAgent


def check_entry(agent: CompiledAgent, input: Any, config: Mapping[str, Any]) -> None:
    """Refuse a run of ``agent`` that its place in a parent graph would make go wrong."""
    if agent.checkpointer is True:
        _refuse_shared_namespace(agent, config)
    channels = parent_channels(config)
    if channels is None:
        return
    node = (config.get("metadata") or {}).get("langgraph_node") or agent.name
    where = f"the parent graph (node '{node}')"
    fields, agent_channels = agent.plan.schemas.fields, agent.channels
    if task_runnable(config) is agent:  # the node itself
        check_shared_fields(agent.name, fields, agent_channels, channels, where)
    elif (given := _given_by_the_parent(agent, input, channels)) is not None:
        # The node itself, or a node function handing it the parent's own values: either way
        # these values cross, whatever becomes of the agent's output.
        check_shared_fields(
            agent.name, fields, agent_channels, channels, where, only=given, reducers=False
        )


def _refuse_shared_namespace(agent: CompiledAgent, config: Mapping[str, Any]) -> None:
    packets = sends_to(config)
    if packets is None or len(packets) < 2:
        return
    node = packets[0].node
    raise CompositionError(
        f"The parent graph sends {len(packets)} tasks to the node '{node}' in one step, but its "
        f"agent '{agent.name}' was built with checkpointer=True, which keeps one saved state per "
        "thread under the node's name: the branches would overwrite each other's state, and "
        "resuming them would run one twice and lose the other. Build the agent without "
        "checkpointer=True (each branch then has a state of its own for the run), or add it "
        f"under one node name per branch (graph.add_node('{node}_1', agent), ...)."
    )


def _given_by_the_parent(
    agent: CompiledAgent, input: Any, channels: Mapping[str, Any]
) -> frozenset[str] | None:
    """The fields of ``input`` when it is what langgraph gives an agent that is the node itself:
    the parent's own values of every input field they share that the parent has set."""
    if not isinstance(input, Mapping):
        return None
    shared = {
        name
        for name, field in agent.plan.schemas.fields.items()
        if field.in_input and name in channels and channels[name].is_available()
    }
    if set(input) != shared or not all(input[k] is channels[k].get() for k in shared):
        return None
    return frozenset(shared)


def refusing_interrupts(agent: CompiledAgent, chunks: Iterator[Any]) -> Iterator[Any]:
    try:
        yield from chunks
    except GraphInterrupt as interrupt:
        raise unresumable(agent, interrupt) from interrupt


async def arefusing_interrupts(
    agent: CompiledAgent, chunks: AsyncIterator[Any]
) -> AsyncIterator[Any]:
    try:
        async for chunk in chunks:
            yield chunk
    except GraphInterrupt as interrupt:
        raise unresumable(agent, interrupt) from interrupt
    finally:
        await chunks.aclose()  # type: ignore[attr-defined]


def unresumable(agent: CompiledAgent, interrupt: GraphInterrupt) -> CompositionError:
    asked = [getattr(i, "value", i) for i in (interrupt.args[0] if interrupt.args else ())]
    shown = repr(asked[0]) if len(asked) == 1 else repr(asked)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return CompositionError(
        f"The agent '{agent.name}' was interrupted ({shown}), but it was built with "
        "checkpointer=False, so it cannot resume where it paused: resuming would run it again "
        "from its input, and its model may then make another call than the one the interrupt "
        "asked about. Pass a checkpointer (or leave it None under a parent graph that has one)."
    )
