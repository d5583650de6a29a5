"""``explain(agent)``: what will run, in what order, how, and with which state — from the plan."""

from __future__ import annotations

import os
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from langgraph.constants import END, START
from langgraph.pregel import Pregel

from graphagent._core.cache_health import volatile_middleware
from graphagent._core.hooks import CALL_WRAPPERS, POSITIONS, WRAP_HOOKS
from graphagent._core.records import MODEL_NODE, TOOLS_NODE, Hook, HookGroup, Plan
from graphagent._plan.draw import Edge, svg
from graphagent.state import show_type

if TYPE_CHECKING:
    from graphagent.agent import CompiledAgent


@dataclass(frozen=True, slots=True)
class HookRun:
    """How one hook runs under sync and async runs."""

    node: str
    sync_run: str
    async_run: str


@dataclass(frozen=True, slots=True)
class Explanation:
    """The plan of one agent, readable as text (``str``) and as a picture: in Jupyter, as
    :meth:`svg`, or in a file :meth:`save` writes."""

    name: str
    order: dict[str, tuple[str, ...]]
    orders: dict[str, int]
    """The ``order`` of each middleware that does not use the default 0."""
    jumps: tuple[tuple[str, str, str], ...]
    fused: tuple[tuple[str, tuple[str, ...]], ...]
    """With ``fuse_hooks``: each node running node hooks, and their middleware in order."""
    runs: tuple[HookRun, ...]
    fields: tuple[tuple[str, str, str, str], ...]
    tools: tuple[str, ...]
    nodes: tuple[str, ...]
    edges: tuple[Edge, ...]
    prompt_caching: bool = True
    """Whether each model call is shaped for its provider to cache the prefix."""
    volatile: tuple[tuple[str, str], ...] = ()
    """Each middleware that may change the cached prefix, and what of it (its
    ``cache_volatile``)."""

    def __str__(self) -> str:
        tools = f" with tools: {', '.join(self.tools)}" if self.tools else ""
        lines = [f"Agent '{self.name}'{tools}"]
        lines.append("Execution order (before_* in list order, after_* reversed, wraps nested):")
        if self.orders:
            given = ", ".join(f"{name}={order}" for name, order in self.orders.items())
            lines.append(f"  (order given: {given}; higher is outer, the rest 0)")
        for position, names in self.order.items():
            if names:
                joiner = " ⊃ " if position in WRAP_HOOKS else " → "
                lines.append(f"  {position:<17}{joiner.join(names)}")
        if self.fused:
            lines.append("Hook nodes (fuse_hooks=True: one node per position, its hooks in turn):")
            width = max(len(node) for node, _ in self.fused) + 2
            lines += [f"  {node:<{width}}{' → '.join(names)}" for node, names in self.fused]
        if self.jumps:
            lines.append("Jumps:")
            lines += [f"  {node}: {target} → {to}" for node, target, to in self.jumps]
        if self.runs:
            lines.append("How hooks run (invoke / ainvoke):")
            width = max(len(r.node) for r in self.runs) + 2
            lines += [f"  {r.node:<{width}}{r.sync_run} / {r.async_run}" for r in self.runs]
        if self.fields:
            lines.append("State fields added by middleware:")
            lines += [f"  {o}: {f}: {t}{_vis(v)}" for o, f, t, v in self.fields]
        return "\n".join([*lines, *_caching_lines(self)])

    def svg(self) -> str:
        """The graph as an SVG picture, made locally: nodes in run order, jump edges labelled
        with their targets, and a legend."""
        return svg(self.nodes, self.edges, _notes(self))

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the picture to ``path``, a ``.svg`` file (browsers and most editors open it),
        and return the path.

        Raises:
            ValueError: ``path`` does not end in ``.svg``.
        """
        target = Path(path)
        if target.suffix.lower() != ".svg":
            raise ValueError(
                f"explain(agent).save({str(path)!r}) writes SVG; give a path ending in .svg, "
                f"e.g. {target.with_suffix('.svg').name!r}, or write str(explain(agent)) for "
                "the text."
            )
        target.write_text(self.svg(), encoding="utf-8")
        return target

    def _repr_html_(self) -> str:
        return f"<div>{self.svg()}<pre>{escape(str(self))}</pre></div>"


def explain(graph: Any, node: str | None = None) -> Explanation:
    """The plan of an agent: what will run, in what order, how, and with which state.

    Printed, the result is text; in a notebook it shows as a picture of the graph.

    Args:
        graph: An agent from ``create_agent`` (also once it is inside a parent graph), or a
            compiled parent graph holding agents.
        node: With a parent graph holding several agents, the name of the node to explain.
    """
    agent = graph if _is_agent(graph) else _find_agent(graph, node)
    drawn = agent.get_graph()
    plan = agent.plan
    return Explanation(
        name=agent.name,
        order={p: tuple(h.owner for h in hooks) for p, hooks in plan.hooks.items()},
        orders={m.name: m.order for m in plan.middleware if m.order},
        jumps=tuple(
            (hook.node, target, plan.routes[group.node].jumps[target])
            for group in plan.groups
            for hook in group.hooks
            for target in hook.can_jump_to
            if target in plan.routes[group.node].jumps
        ),
        fused=tuple((g.node, tuple(h.owner for h in g.hooks)) for g in plan.groups)
        if plan.fused
        else (),
        runs=tuple(_run(h) for p in POSITIONS for h in plan.hooks[p]),
        fields=tuple(
            (f.owner, f.name, show_type(f.annotation), _visibility(f))
            for f in plan.schemas.fields.values()
            if f.owner not in ("AgentState", "graphagent")
        ),
        tools=tuple(t.name for t in plan.tools),
        nodes=_run_order(plan, tuple(drawn.nodes)),
        edges=_edges(plan, drawn.edges),
        prompt_caching=plan.prompt_caching,
        volatile=_volatile(plan),
    )


def draw_svg(agent: Any) -> str:
    """The agent's graph as SVG, made locally without any web service: what notebooks display,
    and what ``explain(agent).save("agent.svg")`` writes.

    Args:
        agent: What :func:`explain` takes: an agent, or a compiled graph holding one.
    """
    return explain(agent).svg()


def _edges(plan: Plan, drawn: Any) -> tuple[Edge, ...]:
    """The drawn graph's edges, each labelled with the jump targets that lead along it."""
    targets: dict[tuple[str, str], list[str]] = {}
    for group in plan.groups:
        jumps = plan.routes[group.node].jumps
        for hook in group.hooks:
            for target in hook.can_jump_to:
                if target in jumps:
                    found = targets.setdefault((group.node, jumps[target]), [])
                    found += [target] if target not in found else []
    return tuple(
        Edge(
            e.source, e.target, bool(e.conditional), _jump_label(targets.get((e.source, e.target)))
        )
        for e in drawn
    )


def _jump_label(targets: list[str] | None) -> str:
    return f"jump_to: {', '.join(targets)}" if targets else ""


def _is_agent(graph: Any) -> TypeGuard[CompiledAgent]:
    """Whether ``graph`` came from ``create_agent`` (read from its plan, so this module need
    not import the agent's class, which draws itself with this module)."""
    return isinstance(graph, Pregel) and isinstance(getattr(graph, "plan", None), Plan)


def _find_agent(graph: Any, node: str | None) -> CompiledAgent:
    if not isinstance(graph, Pregel):
        kind = type(graph).__name__
        raise TypeError(f"explain() takes an agent or a compiled graph, got {kind}.")
    found = graph.get_subgraphs(recurse=True)
    agents: dict[str, CompiledAgent] = {name: sub for name, sub in found if _is_agent(sub)}
    if node is not None:
        if node not in agents:
            raise ValueError(f"No agent at node {node!r}; the agents are at {sorted(agents)}.")
        return agents[node]
    if len(agents) != 1:
        held = ", ".join(sorted(agents)) or "none"
        raise ValueError(
            f"explain() needs one agent, and this graph holds {held}; pass node=... to pick one."
        )
    return next(iter(agents.values()))


def _run_order(plan: Plan, nodes: tuple[str, ...]) -> tuple[str, ...]:
    """The graph's nodes in the order a run meets them."""
    in_order = [
        START,
        *_nodes_at(plan.groups, "before_agent", "before_model"),
        MODEL_NODE,
        *_nodes_at(plan.groups, "after_model"),
        TOOLS_NODE,
        *_nodes_at(plan.groups, "after_agent"),
        END,
    ]
    return tuple(n for n in in_order if n in nodes)


def _nodes_at(groups: tuple[HookGroup, ...], *positions: str) -> list[str]:
    return [group.node for group in groups if group.position in positions]


def _run(hook: Hook) -> HookRun:
    sync_run = "sync" if hook.sync else "fails (async only)"
    if hook.asynchronous:
        async_run = "async"
    elif hook.position in CALL_WRAPPERS:
        async_run = "bridged (sync, in a worker thread)"
    else:
        async_run = "bridged (sync, inline)"
    return HookRun(hook.node, sync_run, async_run)


def _visibility(field: Any) -> str:
    if field.in_input and field.in_output:
        return "public"
    if not field.in_input and not field.in_output:
        return "private"
    return "output only" if field.in_output else "input only"


def _vis(visibility: str) -> str:
    return "" if visibility == "public" else f" ({visibility})"


def _notes(explanation: Explanation) -> dict[str, str]:
    notes: dict[str, str] = {}
    for node, position in ((MODEL_NODE, "wrap_model_call"), (TOOLS_NODE, "wrap_tool_call")):
        if explanation.order[position]:
            notes[node] = "inside " + " ⊃ ".join(explanation.order[position])
    if explanation.order["wrap_agent"]:
        notes["__start__"] = "run inside " + " ⊃ ".join(explanation.order["wrap_agent"])
    return notes


def _volatile(plan: Plan) -> tuple[tuple[str, str], ...]:
    return tuple((name, ", ".join(parts)) for name, parts in volatile_middleware(plan.middleware))


def _caching_lines(explanation: Explanation) -> list[str]:
    if not explanation.prompt_caching:
        return ["Prompt caching: off (prompt_caching=False)"]
    lines = [
        "Prompt caching: on (breakpoints after the system prompt, the previous call's last "
        "message and the last message; a prompt_cache_key per thread)"
    ]
    if explanation.volatile:
        lines.append("  made volatile by (re-read at full price when it changes):")
        lines += [f"    {name}: {what}" for name, what in explanation.volatile]
    return lines
