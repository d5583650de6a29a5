"""The plan alone: discovery, order and routes, without building or running a graph."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from langchain_core.tools import tool

from graphagent import create_agent
from graphagent._plan.compile import compile_plan
from graphagent.errors import MiddlewareError, MiddlewareTypeError
from graphagent.middleware import AgentMiddleware, after_agent, before_model, hook_config
from graphagent.testing import ScriptedChatModel


class A(AgentMiddleware):
    def before_model(self, state: Any, runtime: Any) -> None: ...

    def after_model(self, state: Any, runtime: Any) -> None: ...

    def wrap_model_call(self, request: Any, handler: Any) -> Any: ...


class B(AgentMiddleware):
    async def abefore_model(self, state: Any, runtime: Any) -> None: ...

    def after_model(self, state: Any, runtime: Any) -> None: ...

    async def aafter_model(self, state: Any, runtime: Any) -> None: ...

    @hook_config(can_jump_to=["end", "model"])
    def after_agent(self, state: Any, runtime: Any) -> None: ...


class Idle(AgentMiddleware):
    pass


@before_model(can_jump_to=["end", "tools"])
def gate(state: Any, runtime: Any) -> None: ...


@after_agent
def close(state: Any, runtime: Any) -> None: ...


def shown(plan: Any) -> dict[str, tuple[str, dict[str, str], bool]]:
    """Each node's route: its default next node, its jumps, whether it may go to the tools."""
    return {node: (r.default, dict(r.jumps), r.to_tools) for node, r in plan.routes.items()}


@tool
def ping() -> str:
    """Ping."""
    return "pong"


def test_only_overridden_hooks_take_part(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("INFO", logger="graphagent"):
        plan = compile_plan([A(), Idle(), B()])

    assert "'Idle' defines no hook" in caplog.text

    assert [h.node for h in plan.node_hooks] == [
        "A.before_model",
        "B.before_model",
        "B.after_model",
        "A.after_model",
        "B.after_agent",
    ]
    assert [h.owner for h in plan.hooks["wrap_model_call"]] == ["A"]
    assert plan.hooks["wrap_tool_call"] == ()
    assert [h.mode for h in plan.node_hooks] == ["sync", "async", "both", "sync", "sync"]


def test_routes_without_tools() -> None:
    plan = compile_plan([A(), B()])
    routes = shown(plan)

    assert plan.entry == "A.before_model"
    assert routes == {
        "__start__": ("A.before_model", {}, False),
        "A.before_model": ("B.before_model", {}, False),
        "B.before_model": ("model", {}, False),
        "model": ("B.after_model", {}, False),
        "B.after_model": ("A.after_model", {}, False),
        "A.after_model": ("B.after_agent", {}, False),
        "B.after_agent": ("__end__", {"end": "__end__", "model": "A.before_model"}, False),
    }


def test_routes_with_tools_and_jumps() -> None:
    plan = compile_plan([gate, close], tools=[ping])
    routes = shown(plan)

    assert routes == {
        "__start__": ("gate.before_model", {}, False),
        "gate.before_model": ("model", {"end": "close.after_agent", "tools": "tools"}, False),
        "model": ("close.after_agent", {}, True),
        "tools": ("gate.before_model", {}, False),
        "close.after_agent": ("__end__", {}, False),
    }
    assert [t.name for t in plan.tools] == ["ping"]


def test_middleware_tools_and_schemas_are_collected() -> None:
    class WithTool(AgentMiddleware):
        tools = (ping,)

    plan = compile_plan([WithTool()])

    assert [t.name for t in plan.tools] == ["ping"]
    assert set(plan.schemas.fields) == {"messages", "jump_to", "structured_response"}
    assert plan.schemas.fields["jump_to"].in_input is False
    assert plan.schemas.fields["structured_response"].in_output is True


def test_fused_hooks_make_one_node_per_position_jumping_where_each_hook_would() -> None:
    plan = compile_plan([A(), B(), gate, close], tools=[ping], fuse_hooks=True)
    routes = shown(plan)

    assert [(g.node, [h.owner for h in g.hooks]) for g in plan.groups] == [
        ("before_model", ["A", "B", "gate"]),
        ("after_model", ["B", "A"]),
        ("after_agent", ["close", "B"]),
    ]
    assert routes == {
        "__start__": ("before_model", {}, False),
        "before_model": ("model", {"end": "after_agent", "tools": "tools"}, False),
        "model": ("after_model", {}, False),
        "after_model": ("after_agent", {}, True),
        "tools": ("before_model", {}, False),
        "after_agent": ("__end__", {"end": "__end__", "model": "before_model"}, False),
    }
    assert plan.routes["after_model"].loop == "before_model"


class Watcher(AgentMiddleware):
    """Observes the other middleware's hooks: records each call it surrounds."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def _hook_observer(self) -> Any:
        return self._watch

    @contextmanager
    def _watch(self, middleware: Any, hook: str, payload: Any) -> Iterator[Any]:
        self.seen.append(f"{middleware.name}.{hook}")
        yield lambda result: None


class Passing(AgentMiddleware):
    name = "A"

    def before_model(self, state: Any, runtime: Any) -> None: ...

    def after_model(self, state: Any, runtime: Any) -> None: ...

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        return handler(request)


def test_the_plan_an_agent_shows_holds_the_hooks_that_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """``agent.plan`` is the finished plan: its hooks are the very objects the graph's nodes
    run, observers included, and ``build_graph`` recomputes nothing from it."""
    from graphagent._graph import graph as stage

    built: dict[str, tuple[Any, ...]] = {}

    def spy(name: str, make: Any, hooks: Any) -> Any:
        def making(*args: Any, **kwargs: Any) -> Any:
            built[name] = built.get(name, ()) + tuple(hooks(args))
            return make(*args, **kwargs)

        return making

    monkeypatch.setattr(stage, "hook_node", spy("nodes", stage.hook_node, lambda a: a[0].hooks))
    monkeypatch.setattr(stage, "model_node", spy("model", stage.model_node, lambda a: a[1]))
    monkeypatch.setattr(stage, "tools_node", spy("tools", stage.tools_node, lambda a: a[1]))
    watcher = Watcher()
    agent = create_agent(ScriptedChatModel(["hi"]), [ping], middleware=[watcher, Passing()])

    ran = {name: [id(hook) for hook in hooks] for name, hooks in built.items()}
    assert ran == {
        "nodes": [id(hook) for hook in agent.plan.node_hooks],
        "model": [id(hook) for hook in agent.plan.hooks["wrap_model_call"]],
        "tools": [],
    }

    agent.invoke({"messages": [("user", "hi")]})
    assert watcher.seen == ["A.before_model", "A.wrap_model_call", "A.after_model"]
    shown = agent.plan.hooks["before_model"][0]
    assert shown.sync is not None
    shown.sync({"messages": []}, None)
    assert watcher.seen[-1] == "A.before_model"  # the plan's hook is the observed one


def test_breakpoints_and_transformers_are_checked_when_the_plan_is_compiled() -> None:
    with pytest.raises(MiddlewareError, match="fuse_hooks=True runs inside the node"):
        compile_plan([A()], fuse_hooks=True, interrupt_before=["A.before_model"])
    with pytest.raises(MiddlewareTypeError, match=r"create_agent\(transformers=\.\.\.\)\[0\]"):
        compile_plan([A()], transformers=[42])  # type: ignore[list-item]

    plan = compile_plan([A()], transformers=[Factory])

    assert plan.transformers[-1] is Factory


def Factory(scope: tuple[str, ...]) -> None:
    """A stream transformer factory."""
