"""Composing agents: an agent added to a parent graph, or offered to another agent as a tool.

``add_agent(graph, agent)`` adds a compiled agent as a node of a parent ``StateGraph`` after
checking the state fields both declare. ``handoff_tool(to=...)`` is a tool that hands the
conversation to another node of the parent graph (the supervisor and swarm patterns).

``as_tool(agent, name=..., description=...)`` wraps a compiled agent in a ``BaseTool``. Each call
starts a fresh conversation of the inner agent with the request as its only user message and
returns the text of the inner agent's final message. The call runs under the calling tool's
config, so callbacks (streaming, tracing) nest under the tool call and, inside a graph, the inner
agent runs as a subgraph: interrupts raised in it surface on the outer graph.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, TypeVar

from langchain_core.callbacks import AsyncCallbackManagerForToolRun, CallbackManagerForToolRun
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import patch_config
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool
from langgraph.errors import ParentCommand
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict, Field

from graphagent._run.state_clash import check_shared_fields
from graphagent.agent import CompiledAgent
from graphagent.errors import CompositionError

__all__ = ["HANDOFF_DESTINATION", "add_agent", "as_tool", "handoff_tool"]

HANDOFF_DESTINATION = "__handoff_destination"
"""The tool metadata key naming where a handoff tool goes, as langgraph-supervisor and
langgraph-swarm name it (they read it to draw and check their graphs)."""

GraphT = TypeVar("GraphT")


class AgentRequest(BaseModel):
    """The one argument an agent tool takes."""

    request: str = Field(description="The task or question for the agent, in plain language.")


class _AgentTool(BaseTool):
    """Runs ``agent`` on the request; answers with the text of the agent's final message."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    agent: Runnable[Any, Any]
    args_schema: type[BaseModel] = AgentRequest

    @property
    def graphagent_inner_agent(self) -> Runnable[Any, Any]:
        """The agent each call runs, where the outer agent's ``get_state`` finds its state."""
        return self.agent

    def _run(
        self,
        request: str,
        config: RunnableConfig,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> str:
        try:
            result = self.agent.invoke(_inputs(request), _nested(self.agent, config, run_manager))
        except ParentCommand as handoff:
            raise _no_parent(self.name, handoff) from handoff
        return _final_text(self.name, result)

    async def _arun(
        self,
        request: str,
        config: RunnableConfig,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> str:
        nested = _nested(self.agent, config, run_manager)
        try:
            result = await self.agent.ainvoke(_inputs(request), nested)
        except ParentCommand as handoff:
            raise _no_parent(self.name, handoff) from handoff
        return _final_text(self.name, result)


def as_tool(
    agent: Runnable[Any, Any],
    *,
    name: str,
    description: str,
    return_direct: bool = False,
) -> BaseTool:
    """Offer ``agent`` (e.g. from ``create_agent``) to another agent as the tool ``name``.

    The tool takes one string argument, ``request``, and returns the text of the inner agent's
    final message. Each call starts a fresh conversation of the inner agent.

    Args:
        agent: The agent to delegate to (any runnable taking ``{"messages": [...]}``).
        name: The tool's name, as the calling model sees it.
        description: What the calling model reads to decide when to delegate.
        return_direct: End the outer agent's run right after the tool answers, with the inner
            agent's answer as the last message.

    Returns:
        A LangChain tool to pass in the outer agent's ``tools``.

    Raises:
        TypeError: ``agent`` is not runnable.
        ValueError: ``name`` or ``description`` is empty.
    """
    if not isinstance(agent, Runnable):
        raise TypeError(
            f"as_tool() needs a runnable agent (from create_agent), got {type(agent).__name__}."
        )
    for option, value in (("name", name), ("description", description)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(
                f"as_tool() got {option}={value!r}; pass a non-empty string: the calling model "
                "reads the tool's name and description to decide when to use it."
            )
    return _AgentTool(agent=agent, name=name, description=description, return_direct=return_direct)


def _inputs(request: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(request)]}


def _nested(
    agent: Runnable[Any, Any],
    config: RunnableConfig,
    run_manager: CallbackManagerForToolRun | AsyncCallbackManagerForToolRun | None,
) -> RunnableConfig:
    """The tool's config for the inner run: callbacks that make it a child of this tool run, and
    the inner agent's own metadata over the caller's, so that its name (``lc_agent_name``) is
    the one on its chunks and runs (a config passed in replaces the agent's own metadata)."""
    own = (getattr(agent, "config", None) or {}).get("metadata") or {}
    if own:
        config = {**config, "metadata": {**(config.get("metadata") or {}), **own}}
    if run_manager is None:
        return config
    return patch_config(config, callbacks=run_manager.get_child())


def _no_parent(tool_name: str, handoff: ParentCommand) -> CompositionError:
    """A handoff from the agent behind a tool would land in the calling agent's tools node."""
    goto = getattr(handoff.args[0], "goto", None) if handoff.args else None
    return CompositionError(
        f"The agent behind tool '{tool_name}' handed off to its parent graph (goto={goto!r}), but "
        "it runs inside a tool call, not as a node of a parent graph: the handoff would land in "
        "the calling agent's tools node. Add the agent as a node of the graph it hands off in "
        "(graph.add_node(agent)), or give it no handoff tools."
    )


def _final_text(tool_name: str, result: Any) -> str:
    messages = result.get("messages") if isinstance(result, Mapping) else None
    if not messages or not isinstance(messages[-1], BaseMessage):
        raise TypeError(
            f"The agent behind tool '{tool_name}' returned {type(result).__name__} without "
            "messages; as_tool() needs an agent whose output has a 'messages' list."
        )
    return messages[-1].text


def add_agent(
    graph: GraphT, agent: CompiledAgent, *, name: str | None = None, **options: Any
) -> GraphT:
    """Add ``agent`` to the parent ``graph`` (a ``StateGraph``) as the node ``name``, after
    checking the state fields both declare.

    ``graph.add_node(agent)`` adds it as well; this helper first compares the agent's fields that
    cross the boundary (those in its input or output) with the parent's fields of the same name,
    and refuses a pair whose types cannot hold each other's values, or whose parent reducer is
    not the agent's (the parent would reduce the agent's whole value, which holds what it was
    given, a second time).

    Args:
        graph: The parent graph, not compiled yet.
        agent: A compiled agent (from ``create_agent``).
        name: The node's name; the agent's own name by default.
        **options: Passed on to ``graph.add_node`` (``retry_policy``, ``defer``, ...).

    Returns:
        ``graph``, so calls can be chained.

    Raises:
        StateSchemaConflictError: A field both declare, with clashing types or reducers; the
            message names the field, both declarations and the fixes.
        TypeError: ``agent`` is not a compiled agent, or ``graph`` is not a ``StateGraph``.
    """
    if not isinstance(agent, CompiledAgent):
        raise TypeError(
            f"add_agent() needs an agent from create_agent, got {type(agent).__name__}; add "
            "other graphs with graph.add_node(...)."
        )
    channels = getattr(graph, "channels", None)
    if not isinstance(channels, Mapping) or not callable(getattr(graph, "add_node", None)):
        raise TypeError(
            f"add_agent() adds an agent to a StateGraph that is not compiled yet, got "
            f"{type(graph).__name__}."
        )
    node = name or agent.name
    where = f"the parent graph (node '{node}')"
    check_shared_fields(agent.name, agent.plan.schemas.fields, agent.channels, channels, where)
    graph.add_node(node, agent, **options)  # type: ignore[attr-defined]
    return graph


def handoff_tool(
    to: str,
    *,
    description: str | None = None,
    name: str | None = None,
    update: Mapping[str, Any] | None = None,
) -> BaseTool:
    """A tool that hands the conversation to the node ``to`` of the parent graph.

    Calling it ends the agent's run with ``Command(goto=to, graph=Command.PARENT, update=...)``:
    the parent goes on at ``to`` (another agent, usually) instead of the agent's own next node.
    The parent receives the AI message that made the call, the tool's answer
    (``"Transferred to <to>."``) and an answer for every other call of the same model turn (the
    calls run before the handoff happens), and ``update``'s fields.

    Args:
        to: The name of the parent's node to go to (an agent's name, for ``add_node(agent)``).
        description: What the calling model reads to decide when to hand off; by default it
            says the tool hands the conversation to ``to``.
        name: The tool's name; ``transfer_to_<to>`` by default, as langgraph-supervisor and
            langgraph-swarm name theirs.
        update: More fields of the parent's state to write, such as
            ``{"active_agent": to}`` for a swarm's router.

    Returns:
        A tool to pass in the agent's ``tools``; its metadata names ``to`` under
        ``HANDOFF_DESTINATION``.

    Raises:
        ValueError: ``to`` or ``name`` is empty, or ``update`` writes ``messages``.
    """
    for option, value in (("to", to), ("name", name), ("description", description)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValueError(
                f"handoff_tool() got {option}={value!r}; pass a non-empty string (to: the name "
                "of the parent's node to hand off to)."
            )
    extra = dict(update or {})
    if "messages" in extra:
        raise ValueError(
            "handoff_tool(update=...) writes 'messages', which the handoff writes itself (the "
            "AI message and the answers of its turn); pass other fields only."
        )
    tool_name = name or f"transfer_to_{to}"

    def command(tool_call_id: str) -> Command[Any]:
        answer = ToolMessage(f"Transferred to {to}.", tool_call_id=tool_call_id, name=tool_name)
        return Command(goto=to, graph=Command.PARENT, update={"messages": [answer], **extra})

    def hand_off(tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        return command(tool_call_id)

    async def ahand_off(tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        return command(tool_call_id)

    return StructuredTool.from_function(
        hand_off,
        coroutine=ahand_off,
        name=tool_name,
        description=description or f"Hand the conversation over to '{to}'.",
        metadata={HANDOFF_DESTINATION: to},
    )
