"""Hook nodes and the routers that follow every node."""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage, convert_to_messages
from langgraph.types import Send

from graphagent._core.agent_facts import RUNNING_AGENT, AgentFacts
from graphagent._core.bridge import SYNC, EntryPoints, Mode
from graphagent._core.ceiling import running_ledger
from graphagent._core.history import FINAL_ANSWER, answered_in_place, pending_tool_calls
from graphagent._core.langgraph_internals import RunnableCallable, overwritten
from graphagent._core.log import hook_step
from graphagent._core.records import TOOLS_NODE, Hook, HookGroup, Route, async_only_hook_error
from graphagent._graph.field_types import FieldType, refuse_misfits
from graphagent._graph.state_view import StateChannels, StateView
from graphagent._run.handoff import handing_off, handoff_pending
from graphagent.errors import HookReturnError, note_origin
from graphagent.state import JUMP_TARGETS


def hook_node(
    group: HookGroup,
    route: Route,
    fields: StateChannels,
    facts: AgentFacts,
    types: Mapping[str, FieldType],
    *,
    after_tools: bool = False,
) -> RunnableCallable:
    """The node running ``group``'s hooks, as hooks of the agent ``facts`` describes. A sync-only
    hook runs inline under async runs (as langgraph runs sync nodes); an async-only hook under a
    sync run raises a clear error. A node that may follow the tools (``after_tools``) first hands
    off when a tool of the turn did (``_run/handoff.py``)."""
    state_keys = fields.keys
    steps = [HookStep(hook, route, state_keys, facts, types) for hook in group.hooks]
    step: HookStep | FusedStep = steps[0]
    if len(steps) > 1:
        step = FusedStep(group.node, steps, fields)
    asynchronous = any(hook.asynchronous for hook in group.hooks)
    core = handing_off(step.run) if after_tools else step.run
    entry = EntryPoints(core, step.where)
    return RunnableCallable(
        entry, entry.arun if asynchronous else None, name=group.node, trace=False
    )


class HookStep:
    """Runs one hook and checks what it returned."""

    __slots__ = ("facts", "hook", "route", "state_keys", "types")

    def __init__(
        self,
        hook: Hook,
        route: Route,
        state_keys: frozenset[str],
        facts: AgentFacts,
        types: Mapping[str, FieldType],
    ) -> None:
        self.hook, self.route, self.state_keys, self.facts = hook, route, state_keys, facts
        self.types = types

    @property
    def where(self) -> str:
        return self.hook.label

    async def run(self, mode: Mode, state: Any, runtime: Any) -> Any:
        """Run the hook in a run of ``mode`` and return its checked update. An async run without
        the async twin runs the sync hook inline."""
        implementation = self.hook.asynchronous if mode.asynchronous else None
        if implementation is None:
            if self.hook.sync is None:
                raise async_only_hook_error(self.hook)
            implementation, mode = self.hook.sync, SYNC
        agent = RUNNING_AGENT.set(self.facts)
        try:
            update = await mode.call(implementation, state, runtime)
        except Exception as error:
            note_origin(error, self.hook.label)
            raise
        finally:
            RUNNING_AGENT.reset(agent)
        hook_step(self.hook, update)
        return _check_update(self, update)


class FusedStep:
    """Runs several hooks in one node (``fuse_hooks``): in order, each on the state the ones
    before it left (a :class:`StateView`), until one jumps. It returns the writes their own nodes
    would have made, and the router then routes as it would from the last hook that ran."""

    __slots__ = ("fields", "node", "steps")

    def __init__(self, node: str, steps: list[HookStep], fields: StateChannels) -> None:
        fields.check_fusable()
        self.node, self.steps, self.fields = node, steps, fields

    @property
    def where(self) -> str:
        return self.node

    async def run(self, mode: Mode, state: Any, runtime: Any) -> Any:
        view = StateView(self.fields, state)
        for step in self.steps:
            update = await step.run(mode, view.state(), runtime)
            view.apply(update, step.hook.label)
            if update and update.get("jump_to") is not None:
                break
        return view.writes()


def _check_update(step: HookStep, update: Any) -> Any:
    hook, route, state_keys = step.hook, step.route, step.state_keys
    if update is None:
        return None
    if not isinstance(update, dict):
        raise HookReturnError(
            f"{hook.label} returned {type(update).__name__}; a node hook returns a dict of "
            "state updates, or None."
        )
    unknown = [key for key in update if key not in state_keys]
    if unknown:
        raise HookReturnError(
            f"{hook.label} returned the key(s) {unknown}, which are not fields of the agent "
            "state; declare them in a state_schema (class MyState(AgentState): ...) on the "
            "middleware."
        )
    if "messages" in update:
        _check_messages(hook, update["messages"])
    refuse_misfits(hook.label, update, step.types)
    target = update.get("jump_to")
    if target is not None:
        _check_jump(hook, route, target)
        if (ledger := running_ledger()) is not None:
            ledger.jumped(hook.label, target)
    return update


def _check_messages(hook: Hook, value: Any) -> None:
    """Read ``value`` as the messages reducer will, so that a malformed one names the hook."""
    value = overwritten(value)
    items = value if isinstance(value, list) else [value]
    for position, item in enumerate(items):
        if isinstance(item, BaseMessage):
            continue
        try:
            convert_to_messages([item])
        except (TypeError, ValueError, NotImplementedError) as error:
            where = f"messages[{position}]" if isinstance(value, list) else "messages"
            reason = str(error).partition("\n")[0] or type(error).__name__
            raise HookReturnError(
                f"{hook.label} returned {where}={reprlib.repr(item)}, which is not a message "
                f"({reason}); return messages, (role, text) pairs or dicts with 'role' and "
                "'content'."
            ) from error


def _check_jump(hook: Hook, route: Route, target: Any) -> None:
    if target not in JUMP_TARGETS:
        raise HookReturnError(
            f"{hook.label} returned jump_to={target!r}, which is not a jump target; return one "
            "of 'end', 'tools' or 'model' (a str), or None."
        )
    if target not in hook.can_jump_to:
        declared = list(hook.can_jump_to) or "no targets"
        raise HookReturnError(
            f"{hook.label} returned jump_to={target!r} but declares {declared}; add it with "
            f"@hook_config(can_jump_to=[{target!r}]) on the method (or can_jump_to= on the "
            "decorator). The targets are 'end', 'tools' and 'model'."
        )
    if target not in route.jumps:
        raise HookReturnError(
            f"{hook.label} returned jump_to={target!r}, but the agent has no tools to jump to; "
            "give the agent tools or jump elsewhere."
        )


def router(source: str, route: Route, return_direct: Mapping[str, bool]) -> RunnableCallable:
    """Pick the next node: a jump the source node returned, the tools, or the default.

    Sync only, so async runs call it inline: given as a plain function, langgraph would run it
    in a thread of the executor under async runs, one thread hop per step. Untraced, as the
    nodes are.
    """

    def route_next(state: Any) -> Any:
        if route.jumps:
            target = state.get("jump_to")
            if target is not None:
                destination = route.jumps[target]
                if destination == TOOLS_NODE:
                    return _tool_sends(state) or _no_pending(source)
                return destination
        if route.to_tools:
            sends = _tool_sends(state)
            if sends:
                return sends
        if route.loop and answered_in_place(state["messages"]):
            return route.loop
        if route.exit and _ends_run(state["messages"], return_direct):
            # A call of the turn handing off goes on to the loop's entry, which hands off.
            return route.default if handoff_pending(state["messages"]) else route.exit
        return route.default

    return RunnableCallable(route_next, name=f"{source}:route", trace=False)


def destinations(route: Route) -> list[str]:
    """Every node ``route`` may lead to, for drawing the graph."""
    found = [route.default, *route.jumps.values()]
    if route.to_tools:
        found.append(TOOLS_NODE)
    found += [node for node in (route.loop, route.exit) if node]
    return list(dict.fromkeys(found))


def _ends_run(messages: list[Any], return_direct: Mapping[str, bool]) -> bool:
    """Whether the tools' turn ends the run: every tool it ran is ``return_direct``, or the model
    gave the structured response beside the calls that just ran (as in LangChain, they run
    first)."""
    return _ran_only_direct(messages, return_direct) or _gave_structured_response(messages)


def _gave_structured_response(messages: list[Any]) -> bool:
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return False
        if isinstance(message, ToolMessage) and message.response_metadata.get(FINAL_ANSWER):
            return True
    return False


def _ran_only_direct(messages: list[Any], return_direct: Mapping[str, bool]) -> bool:
    """Whether the agent's tools that the last AI message's calls ran are all ``return_direct``
    (and there was one), as in LangChain: a turn that also ran another tool goes back to the
    model, which reads its result. A call ran the tool its answer names, when that is one of the
    agent's (a reviewer's edit may have run another tool than the model called), else the tool
    it names itself. Every parallel tool task sees the same messages, so they all route alike."""
    ran: dict[str, str] = {}
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            names = [ran.get(call["id"] or "", call["name"]) for call in message.tool_calls]
            executed = [name for name in names if name in return_direct]
            return bool(executed) and all(return_direct[name] for name in executed)
        if isinstance(message, ToolMessage) and message.name and message.name in return_direct:
            ran[message.tool_call_id] = message.name
    return False


def _tool_sends(state: Any) -> list[Send]:
    # The bare call: the tool node reads the state when it runs, so a checkpoint does not store
    # a copy of the whole history with each pending call.
    return [Send(TOOLS_NODE, [call]) for call in pending_tool_calls(state["messages"])]


def _no_pending(source: str) -> Any:
    raise HookReturnError(
        f"'{source}' jumped to 'tools', but the last AI message has no pending tool calls; add "
        "an AIMessage with tool_calls in the same update, or jump elsewhere."
    )
