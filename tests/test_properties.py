"""Property: for any stack of middleware, before_* run in list order, after_* in reverse, and wrap
hooks nest with the first middleware outermost — in sync and async runs alike, with node hooks
as nodes of their own or fused."""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Callable
from typing import Annotated, Any, NotRequired

from hypothesis import given, settings, strategies as st
from langchain_core.tools import tool

from graphagent import create_agent
from graphagent.middleware import AgentMiddleware, AgentState
from graphagent.testing import ScriptedChatModel, calls

NODE_HOOKS = ("before_agent", "before_model", "after_model", "after_agent")
HOOKS = (*NODE_HOOKS, "wrap_model_call", "wrap_tool_call")


class Trail(AgentState):
    trail: NotRequired[Annotated[list[str], operator.add]]


@tool
def noop() -> str:
    """Do nothing."""
    return "ok"


def _node(hook: str, mode: str) -> dict[str, Any]:
    """A node hook that logs its call, and adds it to the state's trail after checking that the
    trail it sees holds every node hook that ran before it."""

    def sync(self: Any, state: Any, runtime: Any) -> dict[str, Any]:
        if state.get("trail", []) != [f"{w} {n}" for w, n in self.log if w in NODE_HOOKS]:
            self.log.append(("saw a stale state", self.name))
        self.log.append((hook, self.name))
        return {"trail": [f"{hook} {self.name}"]}

    async def asynchronous(self: Any, state: Any, runtime: Any) -> dict[str, Any]:
        return sync(self, state, runtime)

    return _twins(hook, mode, sync, asynchronous)


def _wrap(hook: str, mode: str) -> dict[str, Any]:
    def sync(self: Any, request: Any, handler: Callable[[Any], Any]) -> Any:
        self.log.append((hook + " enter", self.name))
        result = handler(request)
        self.log.append((hook + " exit", self.name))
        return result

    async def asynchronous(self: Any, request: Any, handler: Any) -> Any:
        self.log.append((hook + " enter", self.name))
        result = await handler(request)
        self.log.append((hook + " exit", self.name))
        return result

    return _twins(hook, mode, sync, asynchronous)


def _twins(hook: str, mode: str, sync: Any, asynchronous: Any) -> dict[str, Any]:
    methods = {}
    if mode in ("sync", "both"):
        methods[hook] = sync
    if mode in ("async", "both"):
        methods["a" + hook] = asynchronous
    return methods


Spec = dict[str, str]
middleware_spec = st.dictionaries(
    st.sampled_from(HOOKS), st.sampled_from(["sync", "both", "async"]), max_size=len(HOOKS)
)


def build(
    specs: list[Spec], log: list[tuple[str, str]], asynchronous: bool
) -> list[AgentMiddleware]:
    stack = []
    for i, spec in enumerate(specs):
        namespace: dict[str, Any] = {"state_schema": Trail}
        for hook, mode in spec.items():
            if not asynchronous and mode == "async":
                mode = "both"
            factory = _wrap if hook.startswith("wrap") else _node
            namespace.update(factory(hook, mode))
        middleware = type(f"M{i}", (AgentMiddleware,), namespace)()
        middleware.log = log  # type: ignore[attr-defined]
        stack.append(middleware)
    return stack


def names_with(specs: list[Spec], hook: str) -> list[str]:
    return [f"M{i}" for i, spec in enumerate(specs) if hook in spec]


def slice_of(log: list[tuple[str, str]], event: str) -> list[str]:
    return [name for what, name in log if what == event]


@settings(max_examples=60, deadline=None)
@given(specs=st.lists(middleware_spec, max_size=5), asynchronous=st.booleans(), fused=st.booleans())
def test_ordering_and_nesting_invariants(
    specs: list[Spec], asynchronous: bool, fused: bool
) -> None:
    log: list[tuple[str, str]] = []
    model = ScriptedChatModel([calls(("noop", {})), "done"])
    stack = build(specs, log, asynchronous)
    agent = create_agent(model, [noop], middleware=stack, fuse_hooks=fused)
    inputs = {"messages": ["go"]}
    result = asyncio.run(agent.ainvoke(inputs)) if asynchronous else agent.invoke(inputs)

    assert result["messages"][-1].content == "done"
    assert result.get("trail", []) == [f"{w} {n}" for w, n in log if w in NODE_HOOKS]
    assert slice_of(log, "saw a stale state") == []
    for hook, rounds in [
        ("before_agent", 1),
        ("before_model", 2),
        ("after_model", 2),
        ("after_agent", 1),
    ]:
        expected = names_with(specs, hook)
        if hook.startswith("after"):
            expected.reverse()
        assert slice_of(log, hook) == expected * rounds
    for hook, rounds in [("wrap_model_call", 2), ("wrap_tool_call", 1)]:
        expected = names_with(specs, hook)
        assert slice_of(log, hook + " enter") == expected * rounds
        assert slice_of(log, hook + " exit") == expected[::-1] * rounds
        events = [(w, n) for w, n in log if w.startswith(hook)]
        for start in range(0, len(events), 2 * len(expected) or 1):
            window = events[start : start + 2 * len(expected)]
            assert [n for _, n in window] == expected + expected[::-1]
