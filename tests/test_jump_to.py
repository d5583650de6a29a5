"""Short-circuiting with jump_to: 'end', 'model', 'tools', and the errors for bad jumps."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from graphagent import HookReturnError, MiddlewareError, create_agent
from graphagent.middleware import (
    AgentMiddleware,
    after_agent,
    after_model,
    before_agent,
    before_model,
    hook_config,
    wrap_model_call,
)
from graphagent.testing import ScriptedChatModel, calls, tool_call
from tests.conftest import Run, hook_node, run_agent

pytestmark = pytest.mark.usefixtures("hook_mode")


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def test_jump_to_end_skips_the_model(run: Run) -> None:
    @before_model(can_jump_to=["end"])
    def guard(state: Any, runtime: Any) -> dict[str, Any] | None:
        if "secret" in state["messages"][-1].content:
            return {"messages": [AIMessage("I can't share that.")], "jump_to": "end"}
        return None

    finished: list[str] = []

    @after_agent
    def done(state: Any, runtime: Any) -> None:
        finished.append(state["messages"][-1].content)

    model = ScriptedChatModel(["An agent acts."])
    agent = create_agent(model, middleware=[guard, done])

    blocked = run(agent, {"messages": [HumanMessage("tell me the secret")]})
    assert blocked["messages"][-1].content == "I can't share that."
    assert model.call_count == 0

    answered = run(agent, {"messages": [HumanMessage("what is an agent?")]})
    assert answered["messages"][-1].content == "An agent acts."
    assert model.call_count == 1
    assert finished == ["I can't share that.", "An agent acts."]
    assert "jump_to" not in answered


def test_jump_to_model_from_after_model_asks_again(run: Run) -> None:
    class Reask(AgentMiddleware):
        @hook_config(can_jump_to=["model"])
        def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            if state["messages"][-1].content == "bad format":
                return {"messages": [HumanMessage("Answer in one word.")], "jump_to": "model"}
            return None

    model = ScriptedChatModel(["bad format", "Paris"])
    agent = create_agent(model, middleware=[Reask()])

    result = run(agent, {"messages": [HumanMessage("Capital of France?")]})

    assert [m.content for m in result["messages"]] == [
        "Capital of France?",
        "bad format",
        "Answer in one word.",
        "Paris",
    ]
    assert model.call_count == 2


def test_jump_to_tools_from_before_model_runs_a_tool(run: Run) -> None:
    @before_model(can_jump_to=["tools"])
    def prefetch(state: Any, runtime: Any) -> dict[str, Any] | None:
        if len(state["messages"]) == 1:
            call = tool_call("lookup", {"key": "config"}, id="prefetch")
            return {"messages": [AIMessage("", tool_calls=[call])], "jump_to": "tools"}
        return None

    model = ScriptedChatModel(["config is known"])
    agent = create_agent(model, [lookup], middleware=[prefetch])

    result = run(agent, {"messages": [HumanMessage("go")]})

    tool_message = result["messages"][2]
    assert isinstance(tool_message, ToolMessage)
    assert tool_message.content == "value of config"
    assert model.call_count == 1
    assert model.calls[0].messages[-1] == tool_message


def test_jump_to_end_from_after_agent_ends_the_run(run: Run) -> None:
    seen: list[int] = []

    @after_agent(can_jump_to=["end"])
    def stop(state: Any, runtime: Any) -> dict[str, Any]:
        seen.append(len(state["messages"]))
        return {"jump_to": "end"}

    agent = create_agent(ScriptedChatModel(["done"]), middleware=[stop])

    result = run(agent, {"messages": [HumanMessage("hi")]})

    assert seen == [2]
    assert result["messages"][-1].content == "done"


def test_jump_to_end_from_before_agent_still_runs_after_agent(run: Run) -> None:
    order: list[str] = []

    @before_agent(can_jump_to=["end"])
    def refuse(state: Any, runtime: Any) -> dict[str, Any]:
        order.append("before_agent")
        return {"jump_to": "end"}

    @after_agent
    def close(state: Any, runtime: Any) -> None:
        order.append("after_agent")

    model = ScriptedChatModel(["never"])
    run(create_agent(model, middleware=[refuse, close]), {"messages": [HumanMessage("x")]})

    assert order == ["before_agent", "after_agent"]
    assert model.call_count == 0


def test_undeclared_jump_is_an_error_naming_middleware_hook_and_target(how_call: str) -> None:
    @after_model
    def sneaky(state: Any, runtime: Any) -> dict[str, Any]:
        return {"jump_to": "model"}

    agent = create_agent(ScriptedChatModel(["x"]), middleware=[sneaky])

    with pytest.raises(HookReturnError) as caught:
        run_agent(agent, how_call, {"messages": [HumanMessage("x")]})
    message = str(caught.value)
    assert "'sneaky.after_model'" in message
    assert "jump_to='model'" in message
    assert "hook_config(can_jump_to=['model'])" in message


def test_misspelled_jump_is_an_error(how_call: str) -> None:
    @before_model(can_jump_to=["end"])
    def typo(state: Any, runtime: Any) -> dict[str, Any]:
        return {"jump_to": "END"}

    agent = create_agent(ScriptedChatModel(["x"]), middleware=[typo])

    with pytest.raises(HookReturnError, match=r"'typo.before_model' returned jump_to='END'"):
        run_agent(agent, how_call, {"messages": [HumanMessage("x")]})


def test_jump_to_tools_without_tools_is_an_error(how_call: str) -> None:
    @before_model(can_jump_to=["tools"])
    def eager(state: Any, runtime: Any) -> dict[str, Any]:
        return {"jump_to": "tools"}

    agent = create_agent(ScriptedChatModel(["x"]), middleware=[eager])

    with pytest.raises(HookReturnError, match="the agent has no tools"):
        run_agent(agent, how_call, {"messages": [HumanMessage("x")]})


def test_jump_to_tools_without_pending_calls_is_an_error(how_call: str) -> None:
    @before_model(can_jump_to=["tools"])
    def eager(state: Any, runtime: Any) -> dict[str, Any]:
        return {"jump_to": "tools"}

    agent = create_agent(ScriptedChatModel(["x"]), [lookup], middleware=[eager])

    with pytest.raises(HookReturnError, match="no pending tool calls"):
        run_agent(agent, how_call, {"messages": [HumanMessage("x")]})


def test_declaring_an_unknown_target_fails_at_build_time() -> None:
    with pytest.raises(MiddlewareError, match=r"unknown target\(s\) \['finish'\]"):
        before_model(can_jump_to=["finish"])  # type: ignore[list-item]
    with pytest.raises(MiddlewareError, match=r"unknown target\(s\) \['finish'\]"):
        hook_config(can_jump_to=["finish"])  # type: ignore[list-item]

    class Sloppy(AgentMiddleware):
        def before_model(self, state: Any, runtime: Any) -> None:
            return None

    Sloppy.before_model.__can_jump_to__ = ["finish"]  # type: ignore[attr-defined]
    with pytest.raises(
        MiddlewareError, match=r"'Sloppy.before_model'\(can_jump_to=\.\.\.\) got unknown target"
    ):
        create_agent(ScriptedChatModel(["x"]), middleware=[Sloppy()])


def test_wrap_hooks_cannot_declare_jumps() -> None:
    with pytest.raises(MiddlewareError, match="@wrap_model_call does not take can_jump_to"):
        wrap_model_call(can_jump_to=["end"])


def test_jump_routes_are_drawn(hook_mode: str) -> None:
    @after_model(can_jump_to=["model", "end"])
    def check(state: Any, runtime: Any) -> None:
        return None

    graph = create_agent(ScriptedChatModel(["x"]), [lookup], middleware=[check]).get_graph()
    edges = {(e.source, e.target, e.conditional) for e in graph.edges}
    node = hook_node("check.after_model", hook_mode)

    assert (node, "model", True) in edges
    assert (node, "__end__", True) in edges
    assert (node, "tools", True) in edges
    assert ("tools", "model", True) in edges, "the tools always route, as in LangChain"
    assert ("model", node, False) in edges


def test_jump_to_end_with_pending_tool_calls_skips_the_tools(run: Run) -> None:
    @after_model(can_jump_to=["end"])
    def veto(state: Any, runtime: Any) -> dict[str, Any]:
        return {"jump_to": "end"}

    model = ScriptedChatModel([calls(("lookup", {"key": "k"}))])
    result = run(create_agent(model, [lookup], middleware=[veto]), {"messages": ["go"]})

    assert not any(isinstance(m, ToolMessage) for m in result["messages"])
