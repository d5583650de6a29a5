"""explain(agent): the plan as text and as an offline picture."""

from __future__ import annotations

import socket
from collections.abc import Generator
from typing import Annotated, Any, NotRequired

import pytest
from langgraph.graph import END, START, MessagesState, StateGraph

from graphagent import create_agent
from graphagent.explain import explain
from graphagent.middleware import (
    AgentMiddleware,
    AgentState,
    ContextEditingMiddleware,
    LLMToolSelectorMiddleware,
    PrivateStateAttr,
    SummarizationMiddleware,
    after_model,
    before_model,
    dynamic_prompt,
    wrap_agent,
    wrap_model_call,
    wrap_tool_call,
)
from graphagent.testing import ScriptedChatModel
from tests.tools import add


class Counted(AgentState):
    count: NotRequired[Annotated[int, PrivateStateAttr]]
    note: NotRequired[str]


@before_model(can_jump_to=["end"], state_schema=Counted)
def guard(state: Any, runtime: Any) -> None:
    return None


@after_model
async def audit(state: Any, runtime: Any) -> None:
    return None


@wrap_model_call
def retry(request: Any, handler: Any) -> Any:
    return handler(request)


@wrap_tool_call
def log_tools(request: Any, handler: Any) -> Any:
    return handler(request)


@wrap_agent
def trace(state: Any, runtime: Any) -> Generator[None, Any, None]:
    yield


class Tracer(AgentMiddleware):
    order = 10

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        return await handler(request)


def agent(name: str = "helper") -> Any:
    stack = [guard, audit, retry, log_tools, trace, Tracer()]
    return create_agent(ScriptedChatModel(["x"]), [add], middleware=stack, name=name)


def test_the_text_says_what_runs_in_what_order_and_how() -> None:
    assert str(explain(agent())) == "\n".join(
        [
            "Agent 'helper' with tools: add",
            "Execution order (before_* in list order, after_* reversed, wraps nested):",
            "  (order given: Tracer=10; higher is outer, the rest 0)",
            "  wrap_agent       trace",
            "  before_model     guard",
            "  wrap_model_call  Tracer ⊃ retry",
            "  after_model      audit",
            "  wrap_tool_call   log_tools",
            "Jumps:",
            "  guard.before_model: end → __end__",
            "How hooks run (invoke / ainvoke):",
            "  trace.wrap_agent          sync / bridged (sync, inline)",
            "  guard.before_model        sync / bridged (sync, inline)",
            "  Tracer.wrap_model_call    sync / async",
            "  retry.wrap_model_call     sync / bridged (sync, in a worker thread)",
            "  audit.after_model         fails (async only) / async",
            "  log_tools.wrap_tool_call  sync / bridged (sync, in a worker thread)",
            "State fields added by middleware:",
            "  guard: count: int (private)",
            "  guard: note: str",
            "Prompt caching: on (breakpoints after the system prompt, the previous call's "
            "last message and the last message; a prompt_cache_key per thread)",
        ]
    )


def test_an_agent_inside_a_parent_graph_is_found() -> None:
    inner = agent()
    parent = StateGraph(MessagesState)
    parent.add_node("helper", inner)
    parent.add_edge(START, "helper")
    parent.add_edge("helper", END)
    compiled = parent.compile()

    assert explain(compiled).order == explain(inner).order
    assert explain(inner.with_config(tags=["x"])).order == explain(inner).order

    two = StateGraph(MessagesState)
    two.add_node("a", agent("a"))
    two.add_node("b", agent("b"))
    two.add_edge(START, "a")
    two.add_edge("a", "b")
    two.add_edge("b", END)
    with pytest.raises(ValueError, match=r"holds a, b; pass node=\.\.\. to pick one"):
        explain(two.compile())
    assert explain(two.compile(), node="b").name == "b"
    with pytest.raises(TypeError, match="explain\\(\\) takes an agent or a compiled graph"):
        explain(42)


def test_pictures_render_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("tried to reach the network")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    compiled = agent()

    bundle = compiled._repr_mimebundle_()
    html = explain(compiled)._repr_html_()

    image = bundle["image/svg+xml"]
    assert image.startswith("<svg")
    assert image.endswith("</svg>")
    for node in (
        "__start__",
        "guard.before_model",
        "model",
        "audit.after_model",
        "tools",
        "__end__",
    ):
        assert f">{node}</text>" in image
    assert "inside Tracer ⊃ retry" in image
    assert "stroke-dasharray" in image, "conditional edges are dashed"
    assert html.startswith("<div><svg")
    assert "Execution order" in html
    positions = [image.index(f">{n}</text>") for n in ("__start__", "guard.before_model", "model")]
    assert positions == sorted(positions), "nodes are drawn in run order"


def test_the_repr_names_the_agent_its_ordered_middleware_and_its_tools() -> None:
    shown = (
        "<CompiledAgent 'helper' middleware=['Tracer', 'guard', 'audit', 'retry', 'log_tools', "
        "'trace'] tools=['add']>"
    )
    assert repr(agent()) == shown
    assert repr(agent().with_config(tags=["a copy"])) == shown
    assert agent()._repr_mimebundle_()["text/plain"] == shown

    provider_tools = [{"type": "web_search_20250305", "name": "web_search"}, {"type": "code"}]
    bare = create_agent(ScriptedChatModel(["x"]), provider_tools)
    assert repr(bare) == "<CompiledAgent 'LangGraph' middleware=[] tools=['web_search', 'code']>"


def test_fused_hook_nodes_are_listed_with_their_hooks_in_turn() -> None:
    @before_model
    def second(state: Any, runtime: Any) -> None:
        return None

    stack = [guard, second, audit, retry]
    fused = create_agent(ScriptedChatModel(["x"]), [add], middleware=stack, fuse_hooks=True)
    text = str(explain(fused))

    assert (
        "Hook nodes (fuse_hooks=True: one node per position, its hooks in turn):\n"
        "  before_model  guard → second\n"
        "  after_model   audit\n"
        "Jumps:\n"
        "  guard.before_model: end → __end__\n"
    ) in text
    assert explain(fused).nodes == (
        "__start__",
        "before_model",
        "model",
        "after_model",
        "tools",
        "__end__",
    )
    assert "Hook nodes" not in str(
        explain(create_agent(ScriptedChatModel(["x"]), middleware=stack))
    )


def test_jump_edges_are_labelled_with_their_targets_and_a_legend_says_what_marks_mean() -> None:
    @after_model(can_jump_to=["model", "end"])
    def check(state: Any, runtime: Any) -> None:
        return None

    built = create_agent(ScriptedChatModel(["x"]), [add], middleware=[guard, check])
    edges = {(e.source, e.target): e.label for e in explain(built).edges}

    assert edges[("guard.before_model", "__end__")] == "jump_to: end"
    assert edges[("check.after_model", "__end__")] == "jump_to: end"
    assert edges[("check.after_model", "guard.before_model")] == "jump_to: model"
    assert edges[("guard.before_model", "model")] == ""
    image = explain(built).svg()
    assert image.count(">jump_to: end</text>") == 2
    assert image.count(">jump_to: model</text>") == 1
    for meaning in ("always taken", "taken when the state says so", "a middleware hook"):
        assert f">{meaning}</text>" in image


def test_fused_jump_edges_leave_the_node_of_their_position(hook_mode: str) -> None:
    built = create_agent(ScriptedChatModel(["x"]), [add], middleware=[guard])
    source = "guard.before_model" if hook_mode == "nodes" else "before_model"

    labels = {(e.source, e.target): e.label for e in explain(built).edges}

    assert labels[(source, "__end__")] == "jump_to: end"


def test_the_picture_is_saved_as_svg_outside_jupyter(tmp_path: Any) -> None:
    from graphagent.explain import draw_svg

    built = agent()
    path = explain(built).save(tmp_path / "agent.svg")

    assert path == tmp_path / "agent.svg"
    assert path.read_text(encoding="utf-8") == draw_svg(built) == explain(built).svg()
    assert draw_svg(built) == built._repr_mimebundle_()["image/svg+xml"]
    explain(built).save(str(tmp_path / "as-text-path.SVG"))
    wrong = r"writes SVG; give a path ending in \.svg, e.g\. 'a\.svg'"
    with pytest.raises(ValueError, match=wrong):
        explain(built).save(tmp_path / "a.png")


def test_the_text_names_the_middleware_that_make_the_cached_prefix_volatile() -> None:
    @dynamic_prompt
    def stamped(request: Any) -> str:
        return "It is now 12:00."

    model = ScriptedChatModel(["x"])
    summary = SummarizationMiddleware(model, trigger=("messages", 40))
    stack = [summary, ContextEditingMiddleware(), LLMToolSelectorMiddleware(model=model), stamped]
    lines = str(explain(create_agent(model, [add], middleware=stack))).splitlines()
    assert lines[-5:] == [
        "  made volatile by (re-read at full price when it changes):",
        "    SummarizationMiddleware: earlier messages",
        "    ContextEditingMiddleware: earlier messages",
        "    LLMToolSelectorMiddleware: tools",
        "    stamped: system prompt",
    ]


def test_a_middleware_of_ones_own_declares_what_it_changes() -> None:
    class Clock(AgentMiddleware):
        cache_volatile = "system prompt"

        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return handler(request)

    explanation = explain(create_agent(ScriptedChatModel(["x"]), middleware=[Clock()]))
    assert explanation.volatile == (("Clock", "system prompt"),)


def test_the_text_says_when_caching_is_off() -> None:
    agent = create_agent(ScriptedChatModel(["x"]), prompt_caching=False)
    assert str(explain(agent)).splitlines()[-1] == "Prompt caching: off (prompt_caching=False)"
    assert not explain(agent).prompt_caching
