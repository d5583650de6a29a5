"""``fuse_hooks=True``: the node hooks of each position run in one node, and the agent behaves as
with one node per hook. Tests taking ``hook_mode`` run both ways and expect the same; the others
pin down what fusing changes on purpose (node names, stream items, re-runs on resume) and what it
saves (checkpoints)."""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Callable
from typing import Annotated, Any, NotRequired

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.channels import Topic
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.types import Command, Overwrite, interrupt

from graphagent import AsyncOnlyHookError, MiddlewareError, create_agent
from graphagent.middleware import AgentMiddleware, AgentState, hook_config
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent
from tests.tools import add


def extend_in_place(left: list[str], right: list[str]) -> list[str]:
    """A reducer that changes the value it is given (pure reducers are the norm, not the rule)."""
    left.extend(right)
    return left


class Notes(AgentState):
    note: NotRequired[str]
    log: NotRequired[Annotated[list[str], operator.add]]
    kept: NotRequired[Annotated[list[str], extend_in_place]]


Update = Callable[[dict[str, Any]], dict[str, Any] | None]


def hook(name: str, update: Update, *, position: str = "before_model", **config: Any) -> Any:
    """A middleware ``name`` whose hook at ``position`` returns ``update(state)``, recording the
    state it saw in ``.seen``."""

    def method(self: Any, state: Any, runtime: Any) -> Any:
        self.seen.append({k: list(v) if isinstance(v, list) else v for k, v in state.items()})
        return update(state)

    if config:
        method = hook_config(**config)(method)
    cls = type(name, (AgentMiddleware,), {position: method, "state_schema": Notes})
    middleware = cls()
    middleware.seen = []
    return middleware


def texts(messages: list[Any]) -> list[str]:
    return [m.text for m in messages]


# -- the state each hook sees, and the state after the node ----------------------------------------


@pytest.mark.usefixtures("hook_mode")
def test_each_hook_sees_what_the_hooks_before_it_wrote(how_call: str) -> None:
    first = hook(
        "First", lambda s: {"note": "a", "log": ["a"], "kept": ["a"], "messages": [("ai", "a")]}
    )
    second = hook("Second", lambda s: {"note": "b", "log": ["b"], "kept": ["b"]})
    third = hook("Third", lambda s: None)
    agent = create_agent(ScriptedChatModel(["done"]), middleware=[first, second, third])

    result = run_agent(agent, how_call, {"messages": [HumanMessage("hi")]})

    assert [(s["note"], s["log"], s["kept"]) for s in second.seen] == [("a", ["a"], ["a"])]
    assert texts(second.seen[0]["messages"]) == ["hi", "a"]
    assert [(s["note"], s["log"], s["kept"]) for s in third.seen] == [("b", ["a", "b"], ["a", "b"])]
    assert (result["note"], result["log"], result["kept"]) == ("b", ["a", "b"], ["a", "b"])
    assert texts(result["messages"]) == ["hi", "a", "done"]


@pytest.mark.usefixtures("hook_mode")
def test_an_overwrite_then_updates_apply_in_order(how_call: str) -> None:
    reset = hook(
        "Reset", lambda s: {"log": Overwrite(["reset"]), "messages": Overwrite([HumanMessage("q")])}
    )
    more = hook("More", lambda s: {"log": ["more"], "messages": [AIMessage("(noted)")]})
    agent = create_agent(ScriptedChatModel(["done"]), middleware=[reset, more])

    result = run_agent(agent, how_call, {"messages": [HumanMessage("hi")], "log": ["old"]})

    assert result["log"] == ["reset", "more"]
    assert texts(result["messages"]) == ["q", "(noted)", "done"]


@pytest.mark.usefixtures("hook_mode")
def test_a_later_hook_removes_a_message_an_earlier_one_added(how_call: str) -> None:
    draft = hook("Draft", lambda s: {"messages": [("ai", "draft")]})
    retract = hook("Retract", lambda s: {"messages": [RemoveMessage(id=s["messages"][-1].id)]})
    agent = create_agent(ScriptedChatModel(["done"]), middleware=[draft, retract])

    result = run_agent(agent, how_call, {"messages": [HumanMessage("hi")]})

    assert texts(result["messages"]) == ["hi", "done"]


def test_an_update_the_state_refuses_names_the_hook(how_call: str, hook_mode: str) -> None:
    fine = hook("Fine", lambda s: None)
    wrong = hook("Wrong", lambda s: {"messages": [RemoveMessage(id="no-such-id")]})
    agent = create_agent(ScriptedChatModel([]), middleware=[fine, wrong])

    with pytest.raises(ValueError, match="doesn't exist") as caught:
        run_agent(agent, how_call, {"messages": [HumanMessage("hi")]})
    if hook_mode == "fused":  # applied inside the node; unfused, langgraph applies it later
        assert "graphagent: raised in 'Wrong.before_model'" in caught.value.__notes__


# -- jumps -----------------------------------------------------------------------------------------


@pytest.mark.usefixtures("hook_mode")
def test_a_jump_skips_the_rest_of_the_node_and_routes_as_from_that_hook(how_call: str) -> None:
    calm = hook("Calm", lambda s: {"jump_to": None, "note": "calm"}, can_jump_to=["end"])
    quiet = hook("Quiet", lambda s: None)
    gate = hook(
        "Gate", lambda s: {"jump_to": "end", "messages": [AIMessage("no")]}, can_jump_to=["end"]
    )
    never = hook("Never", lambda s: {"note": "never"})
    closing = hook("Closing", lambda s: None, position="after_agent")
    model = ScriptedChatModel([])
    agent = create_agent(model, middleware=[calm, quiet, gate, never, closing])

    result = run_agent(agent, how_call, {"messages": [HumanMessage("hi")]})

    assert quiet.seen[0]["jump_to"] is None, "jump_to=None is no jump"
    assert "jump_to" not in gate.seen[0], "an ephemeral field lasts one step"
    assert never.seen == []
    assert model.call_count == 0
    assert [texts(s["messages"]) for s in closing.seen] == [["hi", "no"]]
    assert result["note"] == "calm"


@pytest.mark.usefixtures("hook_mode")
def test_a_jump_back_to_the_model_from_the_middle_of_after_model(how_call: str) -> None:
    def again(state: dict[str, Any]) -> dict[str, Any] | None:
        if state["messages"][-1].text == "draft":
            return {"messages": [HumanMessage("shorter")], "jump_to": "model"}
        return None

    inner = hook("Inner", lambda s: {"log": ["inner"]}, position="after_model")
    reask = hook("Reask", again, position="after_model", can_jump_to=["model"])
    outer = hook("Outer", lambda s: {"log": ["outer"]}, position="after_model")
    agent = create_agent(ScriptedChatModel(["draft", "ok"]), middleware=[outer, reask, inner])

    result = run_agent(agent, how_call, {"messages": [HumanMessage("hi")]})

    assert texts(result["messages"]) == ["hi", "draft", "shorter", "ok"]
    assert result["log"] == ["inner", "inner", "outer"], "after_* run reversed; Outer once"


# -- sync and async --------------------------------------------------------------------------------


class SyncOnly(AgentMiddleware):
    state_schema = Notes

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        return {"log": ["sync"]}


class AsyncOnly(AgentMiddleware):
    state_schema = Notes

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"log": [f"async after {state['log']}"]}


class Both(AgentMiddleware):
    state_schema = Notes

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        return {"log": ["both (sync)"]}

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        return {"log": ["both (async)"]}


@pytest.mark.usefixtures("hook_mode")
def test_sync_only_async_only_and_twin_hooks_share_a_node() -> None:
    agent = create_agent(ScriptedChatModel(["done"]), middleware=[SyncOnly(), AsyncOnly(), Both()])

    result = asyncio.run(agent.ainvoke({"messages": ["hi"]}))
    assert result["log"] == ["sync", "async after ['sync']", "both (async)"]

    with pytest.raises(AsyncOnlyHookError, match=r"'AsyncOnly\.before_model' has only an async"):
        agent.invoke({"messages": ["hi"]})


# -- interrupts ------------------------------------------------------------------------------------


class Asks(AgentMiddleware):
    """Asks a human before the model, and logs the answer."""

    state_schema = Notes

    def __init__(self, name: str) -> None:
        self.name = name

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        return {"log": [f"{self.name}: {interrupt(f'{self.name}?')}"]}


def test_on_resume_a_fused_node_runs_again_from_its_first_hook(hook_mode: str) -> None:
    counted = hook("Counted", lambda s: {"log": ["counted"]})
    after = hook("After", lambda s: {"log": ["after"]})
    agent = create_agent(
        ScriptedChatModel(["done"]),
        middleware=[counted, Asks("first"), Asks("second"), after],
        checkpointer=InMemorySaver(),
    )
    thread = {"configurable": {"thread_id": "t"}}

    paused = agent.invoke({"messages": ["hi"]}, thread)
    still = agent.invoke(Command(resume="yes"), thread)
    done = agent.invoke(Command(resume="sure"), thread)

    assert [i.value for i in paused["__interrupt__"]] == ["first?"]
    assert [i.value for i in still["__interrupt__"]] == ["second?"]
    assert done["log"] == ["counted", "first: yes", "second: sure", "after"]
    # Unfused, each hook's node committed before the next ran. Fused, nothing of the node is
    # committed until it ends: each resume runs it again from its first hook (each interrupt
    # gets its answer again), and only the last, complete run's writes are kept.
    assert len(counted.seen) == (3 if hook_mode == "fused" else 1)
    assert len(after.seen) == 1


# -- what fusing saves -----------------------------------------------------------------------------


def checkpoints(n: int, *, fused: bool) -> int:
    """Checkpoints one run of two tool rounds writes with ``n`` before_model and ``n``
    after_model hooks."""
    saver = InMemorySaver()
    stack = [hook(f"B{i}", lambda s: None) for i in range(n)]
    stack += [hook(f"A{i}", lambda s: None, position="after_model") for i in range(n)]
    replies = [calls(("add", {"a": 1, "b": 2})), calls(("add", {"a": 3, "b": 4})), "7"]
    model = ScriptedChatModel(replies)
    agent = create_agent(model, [add], middleware=stack, checkpointer=saver, fuse_hooks=fused)
    thread = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": ["go"]}, thread)
    return len(list(saver.list(thread)))


def test_fused_checkpoints_do_not_grow_with_the_middleware_count() -> None:
    assert checkpoints(20, fused=True) == checkpoints(1, fused=True)
    assert checkpoints(20, fused=True) <= 2 * checkpoints(0, fused=True)
    assert checkpoints(20, fused=False) > 5 * checkpoints(20, fused=True)


# -- what fusing changes: node names and stream items ----------------------------------------------


def two_writers() -> Any:
    first = hook("First", lambda s: {"note": "a", "messages": [AIMessage("a", id="a")]})
    second = hook("Second", lambda s: {"messages": [AIMessage("b", id="b")]})
    return create_agent(ScriptedChatModel(["done"]), middleware=[first, second], fuse_hooks=True)


def test_the_nodes_are_named_after_the_positions() -> None:
    agent = two_writers()
    assert list(agent.get_graph().nodes) == ["__start__", "model", "before_model", "__end__"]


def test_a_breakpoint_on_a_fused_hook_names_the_node_to_pause_at() -> None:
    first, second = hook("First", lambda s: None), hook("Second", lambda s: None)
    model = ScriptedChatModel(["done"])

    with pytest.raises(MiddlewareError) as caught:
        create_agent(
            model,
            middleware=[first, second],
            fuse_hooks=True,
            interrupt_after=["Second.before_model"],
        )
    assert str(caught.value) == (
        "create_agent(interrupt_after=['Second.before_model']) names the hook "
        "'Second.before_model', which fuse_hooks=True runs inside the node 'before_model'; pass "
        "'before_model' (the run then pauses after all of that position's hooks), or leave "
        "fuse_hooks off."
    )
    agent = create_agent(
        model,
        middleware=[first, second],
        fuse_hooks=True,
        interrupt_before=["before_model"],
        checkpointer=InMemorySaver(),
    )
    thread = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": ["hi"]}, thread)
    assert agent.get_state(thread).next == ("before_model",)


def test_updates_show_one_item_per_fused_node_with_its_writes_in_order() -> None:
    chunks = list(two_writers().stream({"messages": ["hi"]}, stream_mode="updates"))

    assert chunks[0] == {
        "before_model": [
            {"note": "a"},
            {"messages": [AIMessage("a", id="a")]},
            {"messages": [AIMessage("b", id="b")]},
        ]
    }
    assert list(chunks[1]) == ["model"]


def test_values_show_the_state_after_each_fused_node() -> None:
    chunks = list(two_writers().stream({"messages": ["hi"]}, stream_mode="values"))

    assert [texts(c["messages"]) for c in chunks] == [
        ["hi"],
        ["hi", "a", "b"],
        ["hi", "a", "b", "done"],
    ]


def test_messages_from_fused_hooks_carry_the_node_name() -> None:
    items = list(two_writers().stream({"messages": ["hi"]}, stream_mode="messages"))

    hooks = [(m.text, md["langgraph_node"]) for m, md in items if md["langgraph_node"] != "model"]
    assert hooks == [("a", "before_model"), ("b", "before_model")]


@pytest.mark.usefixtures("hook_mode")
def test_custom_events_from_every_hook_pass_through_in_order() -> None:
    def tell(text: str) -> Update:
        def update(state: dict[str, Any]) -> None:
            get_stream_writer()(text)

        return update

    middleware = [hook("One", tell("one")), hook("Two", tell("two")), hook("Three", tell("three"))]
    agent = create_agent(ScriptedChatModel(["done"]), middleware=middleware)

    events = list(agent.stream({"messages": ["hi"]}, stream_mode="custom"))

    assert events == ["one", "two", "three"]


# -- what fusing cannot do -------------------------------------------------------------------------


class Topics(AgentState):
    seen_by: NotRequired[Annotated[list[str], Topic(str, accumulate=True)]]


def test_a_state_field_a_fused_node_cannot_reproduce_is_refused_when_built() -> None:
    class Watch(AgentMiddleware):
        state_schema = Topics

        def before_model(self, state: Any, runtime: Any) -> None:
            return None

    class Other(AgentMiddleware):
        def before_model(self, state: Any, runtime: Any) -> None:
            return None

    with pytest.raises(MiddlewareError) as caught:
        create_agent(ScriptedChatModel([]), middleware=[Watch(), Other()], fuse_hooks=True)
    assert str(caught.value).startswith(
        "fuse_hooks=True cannot run hooks over the state field 'seen_by' declared by 'Watch': "
        "its channel is Topic."
    )
    create_agent(ScriptedChatModel([]), middleware=[Watch(), Other()])  # unfused, it builds
