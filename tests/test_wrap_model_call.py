"""wrap_model_call: requests, overrides, dynamic prompts, and ExtendedModelResponse commands."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Annotated, Any, NotRequired

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from langgraph.types import Command

from graphagent import HookReturnError, create_agent
from graphagent.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    dynamic_prompt,
    wrap_model_call,
)
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run, run_agent


@tool
def ping() -> str:
    """Ping."""
    return "pong"


def test_dynamic_model_and_prompt_reach_the_innermost_wrapper_and_the_model(run: Run) -> None:
    simple = ScriptedChatModel(["short answer"], repeat_last=True)
    complex_ = ScriptedChatModel(["long answer"], repeat_last=True)
    picked: list[str] = []
    seen_prompts: list[str | None] = []

    @wrap_model_call
    def route(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        model, name = (complex_, "complex") if len(request.messages) > 3 else (simple, "simple")
        picked.append(name)
        return handler(request.override(model=model))

    @dynamic_prompt
    def prompt(request: ModelRequest) -> str:
        base = "Be brief."
        return base + (" This is a long conversation." if len(request.messages) > 3 else "")

    @wrap_model_call
    def inspect(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        seen_prompts.append(request.system_prompt)
        return handler(request)

    agent = create_agent(simple, system_prompt="base", middleware=[route, prompt, inspect])
    run(agent, {"messages": [HumanMessage("What is middleware?")]})
    long_history = ["a", "b", "c", "d", "What is middleware?"]
    result = run(agent, {"messages": long_history})

    assert picked == ["simple", "complex"]
    assert seen_prompts == ["Be brief.", "Be brief. This is a long conversation."]
    assert simple.calls[0].messages[0] == SystemMessage("Be brief.")
    assert complex_.calls[0].messages[0] == SystemMessage("Be brief. This is a long conversation.")
    assert [m.content for m in complex_.calls[0].messages[1:]] == long_history
    assert result["messages"][-1].content == "long answer"


def test_system_prompt_is_the_first_message_and_not_in_state(run: Run) -> None:
    model = ScriptedChatModel(["ok"])
    agent = create_agent(model, system_prompt=SystemMessage("You are terse."))

    result = run(agent, {"messages": [HumanMessage("hi")]})

    sent = model.calls[0].messages
    assert [(type(m), m.content) for m in sent] == [
        (SystemMessage, "You are terse."),
        (HumanMessage, "hi"),
    ]
    assert [m.content for m in result["messages"]] == ["hi", "ok"]


def test_override_validates_and_leaves_the_request_unchanged() -> None:
    request = ModelRequest(model=ScriptedChatModel(["x"]), messages=[])
    with pytest.raises(
        TypeError, match=r"^ModelRequest.override\(\) got an .* 'modle'; did you mean 'model'"
    ):
        request.override(modle=None)
    changed = request.override(system_prompt="hello")
    assert changed.system_prompt == "hello"
    assert request.system_prompt is None


def test_tools_are_bound_once_per_model_and_tool_set(how_call: str) -> None:
    model = ScriptedChatModel([calls(("ping", {})), calls(("ping", {})), "done"])
    bind_count = 0
    original = ScriptedChatModel.bind_tools

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal bind_count
        bind_count += 1
        return original(self, *args, **kwargs)

    agent = create_agent(model, [ping])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ScriptedChatModel, "bind_tools", counting)
        run_agent(agent, how_call, {"messages": ["go"]})

    assert bind_count == 1
    assert [c.tool_names for c in model.calls] == [("ping",)] * 3


def test_tool_choice_and_settings_reach_the_model(run: Run) -> None:
    @wrap_model_call
    def force(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        return handler(request.override(tool_choice="ping", model_settings={"temperature": 0}))

    model = ScriptedChatModel(["ok"])
    run(create_agent(model, [ping], middleware=[force]), {"messages": ["go"]})

    assert model.calls[0].tool_choice == "ping"
    assert model.calls[0].settings["temperature"] == 0


def test_a_wrapper_may_return_an_ai_message_without_calling_the_model(run: Run) -> None:
    @wrap_model_call
    def canned(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        return AIMessage("cached answer")

    model = ScriptedChatModel([])
    result = run(create_agent(model, middleware=[canned]), {"messages": ["q"]})

    assert result["messages"][-1].content == "cached answer"
    assert model.call_count == 0


class Notes(AgentState):
    note: NotRequired[str]
    trail: NotRequired[Annotated[list[str], operator.add]]


def _extending(label: str, **update: Any) -> AgentMiddleware:
    def wrap(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        response = handler(request)
        return ExtendedModelResponse(response, Command(update=update))

    return wrap_model_call(name=label, state_schema=Notes)(wrap)


@pytest.mark.usefixtures("hook_mode")
def test_extended_responses_apply_inner_first_outer_wins(run: Run) -> None:
    outer = _extending("Outer", note="outer", trail=["outer"])
    inner = _extending("Inner", note="inner", trail=["inner"], messages=[AIMessage("aside")])
    model = ScriptedChatModel(["answer"])

    result = run(create_agent(model, middleware=[outer, inner]), {"messages": ["q"]})

    assert result["note"] == "outer"
    assert result["trail"] == ["inner", "outer"]
    assert [m.content for m in result["messages"]] == ["q", "answer", "aside"]


@pytest.mark.usefixtures("hook_mode")
def test_commands_of_discarded_handler_calls_are_dropped(run: Run) -> None:
    attempts = 0

    @wrap_model_call(state_schema=Notes)
    def flaky_inner(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        nonlocal attempts
        attempts += 1
        response = handler(request)
        return ExtendedModelResponse(response, Command(update={"trail": [f"attempt {attempts}"]}))

    @wrap_model_call
    def retry_on_bad(
        request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Any:
        response = handler(request)
        if response.result[0].content == "bad":
            response = handler(request)
        return response

    model = ScriptedChatModel(["bad", "good"])
    agent = create_agent(model, middleware=[retry_on_bad, flaky_inner])

    result = run(agent, {"messages": ["q"]})

    assert result["trail"] == ["attempt 2"]
    assert [m.content for m in result["messages"]] == ["q", "good"]


@pytest.mark.usefixtures("hook_mode")
def test_a_wrapper_may_pick_an_earlier_handler_result(run: Run) -> None:
    counter = 0

    @wrap_model_call(state_schema=Notes)
    def tag(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        nonlocal counter
        counter += 1
        return ExtendedModelResponse(handler(request), Command(update={"note": f"call {counter}"}))

    @wrap_model_call
    def best_of_two(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        first, second = handler(request), handler(request)
        return first if len(first.result[0].content) > len(second.result[0].content) else second

    model = ScriptedChatModel(["a longer answer", "short"])
    result = run(create_agent(model, middleware=[best_of_two, tag]), {"messages": ["q"]})

    assert result["note"] == "call 1"
    assert result["messages"][-1].content == "a longer answer"


def test_command_with_goto_is_rejected(how_call: str) -> None:
    @wrap_model_call
    def rogue(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        return ExtendedModelResponse(handler(request), Command(goto="tools"))

    agent = create_agent(ScriptedChatModel(["x"]), middleware=[rogue])
    with pytest.raises(
        HookReturnError, match=r"^Command goto is not yet supported .* 'rogue.wrap_model_call'"
    ):
        run_agent(agent, how_call, {"messages": ["q"]})


def test_command_updating_an_unknown_field_is_rejected(how_call: str) -> None:
    @wrap_model_call
    def stray(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        return ExtendedModelResponse(handler(request), Command(update={"mood": "happy"}))

    agent = create_agent(ScriptedChatModel(["x"]), middleware=[stray])
    with pytest.raises(HookReturnError, match=r"'stray.wrap_model_call' .*\['mood'\]"):
        run_agent(agent, how_call, {"messages": ["q"]})


def test_returning_something_else_is_an_error(how_call: str) -> None:
    @wrap_model_call
    def wrong(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        return "text"

    agent = create_agent(ScriptedChatModel(["x"]), middleware=[wrong])
    with pytest.raises(HookReturnError, match=r"'wrong.wrap_model_call' returned str"):
        run_agent(agent, how_call, {"messages": ["q"]})


def test_agent_name_is_stamped_on_ai_messages(run: Run) -> None:
    agent = create_agent(ScriptedChatModel(["hi"]), name="greeter")
    result = run(agent, {"messages": ["q"]})
    assert result["messages"][-1].name == "greeter"
    assert agent.name == "greeter"


def test_a_request_changed_in_place_reaches_the_inner_layers(how_call: str) -> None:
    seen: list[Any] = []

    @wrap_model_call
    def outer(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        request.model = ScriptedChatModel(["from the swapped model"])  # type: ignore[misc]
        return handler(request)

    @wrap_model_call
    def inner(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        seen.append(request.model)
        return handler(request)

    agent = create_agent(ScriptedChatModel(["x"]), middleware=[outer, inner])
    with pytest.warns(DeprecationWarning, match=r"ModelRequest.model is deprecated") as caught:
        result = run_agent(agent, how_call, {"messages": ["q"]})

    assert len(caught) == 1
    assert [model.replies for model in seen] == [["from the swapped model"]]
    assert result["messages"][-1].content == "from the swapped model"
