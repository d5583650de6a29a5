"""The engine without the graph: routes laid out from hook records, the order of positions, and
the entry points of a core, driven directly and checked against call logs (no graph is built)."""

from __future__ import annotations

import asyncio
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest
from langgraph.constants import END, START

from graphagent._core.bridge import EntryPoints, Mode
from graphagent._core.hooks import NODE_HOOKS, POSITIONS, Position
from graphagent._core.records import Hook, Route
from graphagent._plan.compile import by_position, compile_plan
from graphagent._plan.routes import lay_out
from graphagent.errors import AsyncOnlyHookError
from graphagent.middleware import AgentMiddleware, hook_config


def hook(owner: str, position: Position, *jumps: Any) -> Hook:
    middleware: Any = SimpleNamespace(name=owner)
    return Hook(middleware, position, sync=print, asynchronous=None, can_jump_to=jumps)


def hooks(*found: Hook) -> MappingProxyType[Position, tuple[Hook, ...]]:
    return by_position(found)


def routes(**options: Any) -> dict[str, tuple[str, dict[str, str], bool, str | None]]:
    found = options.pop("found", ())
    entry, laid_out = lay_out(hooks(*found), **options)
    assert laid_out[START] == Route(entry)
    return {
        node: (r.default, dict(r.jumps), r.to_tools, r.loop)
        for node, r in laid_out.items()
        if node != START
    }


def test_no_hooks_no_tools_is_model_to_end() -> None:
    assert routes() == {"model": (END, {}, False, None)}


def test_with_tools_the_model_goes_to_the_tools_and_the_tools_back() -> None:
    assert routes(has_tools=True) == {
        "model": (END, {}, True, None),
        "tools": ("model", {}, False, None),
    }


@pytest.mark.parametrize(
    ("options", "found"),
    [
        ({"structured_output": True}, ()),
        ({}, (hook("A", "after_model"),)),
        ({}, (hook("A", "wrap_model_call"),)),
    ],
    ids=["structured output", "after_model", "wrap_model_call"],
)
def test_the_turn_loops_back_only_where_something_can_answer_calls_in_place(
    options: dict[str, Any], found: tuple[Hook, ...]
) -> None:
    # As in LangChain: without these, a model turn's calls are answered by the tools alone.
    laid_out = routes(found=found, has_tools=True, **options)
    last = "A.after_model" if found and found[0].position == "after_model" else "model"
    assert laid_out[last][2:] == (True, "model")


@pytest.mark.parametrize(
    ("output_tools", "loop"), [(True, "model"), (False, None)], ids=["tool", "provider"]
)
def test_without_tools_only_an_output_tool_loops_back_to_the_model(
    output_tools: bool, loop: str | None
) -> None:
    assert routes(structured_output=True, output_tools=output_tools) == {
        "model": (END, {}, False, loop)
    }


def test_node_positions_chain_in_run_order_and_the_loop_enters_at_before_model() -> None:
    found = (
        hook("A", "before_agent"),
        hook("A", "before_model"),
        hook("A", "after_model"),
        hook("A", "after_agent"),
    )
    assert routes(found=found, has_tools=True) == {
        "A.before_agent": ("A.before_model", {}, False, None),
        "A.before_model": ("model", {}, False, None),
        "model": ("A.after_model", {}, False, None),
        "A.after_model": ("A.after_agent", {}, True, "A.before_model"),
        "tools": ("A.before_model", {}, False, None),
        "A.after_agent": (END, {}, False, None),
    }


def test_each_declared_jump_maps_to_its_node_and_tools_only_with_tools() -> None:
    found = (hook("G", "before_model", "end", "tools", "model"), hook("Z", "after_agent", "end"))
    without = routes(found=found)
    with_tools = routes(found=found, has_tools=True)

    assert without["G.before_model"][1] == {"end": "Z.after_agent", "model": "G.before_model"}
    assert with_tools["G.before_model"][1] == {
        "end": "Z.after_agent",
        "model": "G.before_model",
        "tools": "tools",
    }
    assert with_tools["Z.after_agent"][1] == {"end": END}, "after_agent's end is the real end"


@pytest.mark.parametrize("option", ["return_direct", "output_tools"])
def test_return_direct_tools_and_output_tools_may_exit_past_the_loop(option: str) -> None:
    found = hooks(hook("Z", "after_agent"))
    _, laid_out = lay_out(found, has_tools=True, **{option: True})
    assert laid_out["tools"] == Route("model", exit="Z.after_agent")
    _, without = lay_out(found, has_tools=True)
    assert without["tools"] == Route("model")


def test_fused_positions_are_one_node_named_after_the_position() -> None:
    found = (hook("A", "before_model", "end"), hook("B", "before_model"), hook("A", "after_model"))
    assert routes(found=found, fused=True) == {
        "before_model": ("model", {"end": END}, False, None),
        "model": ("after_model", {}, False, None),
        "after_model": (END, {}, False, None),
    }


def test_after_hooks_unwind_in_reverse_and_every_position_is_present() -> None:
    ordered = hooks(
        *(hook(owner, position) for owner in "ABC" for position in ("before_model", "after_model"))
    )
    assert tuple(ordered) == POSITIONS
    assert [h.owner for h in ordered["before_model"]] == ["A", "B", "C"]
    assert [h.owner for h in ordered["after_model"]] == ["C", "B", "A"]
    assert ordered["wrap_tool_call"] == ()


def test_a_higher_order_runs_outside_and_the_plan_keeps_every_position() -> None:
    class Inner(AgentMiddleware):
        def before_model(self, state: Any, runtime: Any) -> None: ...

        def wrap_model_call(self, request: Any, handler: Any) -> Any: ...

    class Outer(Inner):
        order = 10

        @hook_config(can_jump_to=["end"])
        def after_model(self, state: Any, runtime: Any) -> None: ...

    plan = compile_plan([Inner(), Outer()])

    assert set(plan.hooks) == set(POSITIONS)
    assert [h.owner for h in plan.hooks["before_model"]] == ["Outer", "Inner"]
    assert [h.owner for h in plan.hooks["wrap_model_call"]] == ["Outer", "Inner"]
    assert [h.node for h in plan.node_hooks] == [
        "Outer.before_model",
        "Inner.before_model",
        "Outer.after_model",
    ]
    assert [g.position for g in plan.groups] == [h.position for h in plan.node_hooks]
    assert {g.position for g in plan.groups} <= set(NODE_HOOKS)
    assert plan.routes["Outer.after_model"].jumps == {"end": END}


async def _logged(mode: Mode, first: str, second: list[str]) -> str:
    second.append(f"{first} {'async' if mode.asynchronous else 'sync'}")
    await mode.sleep(0)
    return first.upper()


def test_entry_points_run_one_core_for_each_kind_of_run() -> None:
    log: list[str] = []
    entry = EntryPoints(_logged, "Test.core")

    assert entry("a", log) == "A"
    assert asyncio.run(entry.arun("b", log)) == "B"
    assert log == ["a sync", "b async"]


def test_entry_points_with_a_sync_error_refuse_sync_runs_only() -> None:
    log: list[str] = []
    refusal = AsyncOnlyHookError("only async")
    entry = EntryPoints(_logged, "Test.core", refusal)

    with pytest.raises(AsyncOnlyHookError, match="only async"):
        entry("a", log)
    assert asyncio.run(entry.arun("b", log)) == "B"
    assert log == ["b async"]
