"""A plan's routes: each hook node chained to the next, and the model -> tools -> model loop."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType

from langgraph.constants import END, START

from graphagent._core.hooks import NODE_HOOKS, Position
from graphagent._core.records import MODEL_NODE, TOOLS_NODE, Hook, HookGroup, Route, grouped


def lay_out(
    hooks: Mapping[Position, tuple[Hook, ...]],
    *,
    fused: bool = False,
    has_tools: bool = False,
    return_direct: bool = False,
    structured_output: bool = False,
    output_tools: bool = False,
    answer_malformed: bool = False,
) -> tuple[str, dict[str, Route]]:
    """The entry node and every node's route: each node hook position chained to the next, in run
    order; the loop is model -> tools -> model.

    ``hooks``: each position's hooks in execution order (:attr:`Plan.hooks`); ``fused``: one node
    per position; ``return_direct``: a tool may end the run; ``structured_output``: the agent has
    a ``response_format``; ``output_tools``: its strategy may answer through a tool call
    (``ToolStrategy``, or ``AutoStrategy`` until the model is known), which may end the run after
    the tools and, without tools, sends an invalid answer back to the model;
    ``answer_malformed``: the model node answers malformed tool calls (with tools) itself.

    A model turn whose calls were all answered in place goes back to the loop's entry only where
    something can answer them: structured output, an ``after_model`` hook or a
    ``wrap_model_call`` hook (with tools), the model node answering malformed calls (with
    tools), or an output tool (without). LangChain draws the same edges, but for the malformed
    calls: LangChain ends the run on them.
    """
    before_agent, before_model, after_model, after_agent = (
        grouped(hooks[position], fused) for position in NODE_HOOKS
    )
    loop_entry = before_model[0].node if before_model else MODEL_NODE
    exit_ = after_agent[0].node if after_agent else END
    routes: dict[str, Route] = {}

    # After the model (and its after_model hooks): tools for pending calls, the model again when
    # every call was answered in place, else the exit.
    answers_in_place = (
        structured_output or answer_malformed or bool(after_model) or bool(hooks["wrap_model_call"])
    )
    loop = loop_entry if (answers_in_place if has_tools else output_tools) else None
    turn_end = Route(exit_, to_tools=has_tools, loop=loop)

    def chain(groups: tuple[HookGroup, ...], last: Route, end: str) -> None:
        for i, group in enumerate(groups):
            jumps: dict[str, str] = {"end": end, "model": loop_entry, "tools": TOOLS_NODE}
            if not has_tools:
                del jumps["tools"]
            declared: Mapping[str, str] = MappingProxyType(
                {t: jumps[t] for t in group.can_jump_to if t in jumps}
            )
            nxt = Route(groups[i + 1].node) if i + 1 < len(groups) else last
            routes[group.node] = dataclasses.replace(nxt, jumps=declared)

    chain(before_agent, Route(loop_entry), exit_)
    chain(before_model, Route(MODEL_NODE), exit_)
    chain(after_model, turn_end, exit_)
    chain(after_agent, Route(END), END)
    routes[MODEL_NODE] = Route(after_model[0].node) if after_model else turn_end
    if has_tools:
        ends_run = return_direct or output_tools
        routes[TOOLS_NODE] = Route(loop_entry, exit=exit_ if ends_run else None)
    entry = before_agent[0].node if before_agent else loop_entry
    routes[START] = Route(entry)
    return entry, routes
