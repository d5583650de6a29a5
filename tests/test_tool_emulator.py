"""LLMToolEmulator: which calls are emulated, what the emulator sees, build errors, streaming."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, interrupt

from graphagent import MiddlewareError, create_agent
from graphagent.middleware import wrap_tool_call
from graphagent.middleware.tool_emulator import LLMToolEmulator
from graphagent.models import MissingIntegrationError
from graphagent.testing import ScriptedChatModel, calls, tool_call
from tests.conftest import Run, run_agent
from tests.test_models import install_fake_package, not_installed

QUESTION = {"messages": [HumanMessage("Plan my trip to Paris.")]}
ran: list[str] = []


@tool
def get_weather(city: str, days: int = 1) -> str:
    """Get the weather forecast for a city."""
    ran.append("get_weather")
    return f"real weather in {city}"


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    ran.append("send_email")
    return "real: sent"


TOOLS = [get_weather, send_email]


@pytest.fixture(autouse=True)
def clear_ran() -> None:
    ran.clear()


def weather_then_email() -> ScriptedChatModel:
    """The agent's model: calls both tools in one turn, then answers."""
    return ScriptedChatModel(
        [
            calls(
                tool_call("get_weather", {"city": "Paris", "days": 2}, id="w"),
                tool_call("send_email", {"to": "ann@example.com", "body": "Hi"}, id="e"),
            ),
            "All set.",
        ]
    )


def tool_answers(result: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}


# -- what is emulated ------------------------------------------------------------------------


def test_by_default_every_tool_is_emulated(run: Run) -> None:
    emulator = ScriptedChatModel(["Rain, 12 C", "Email queued (id 42)"])
    agent = create_agent(
        weather_then_email(), tools=TOOLS, middleware=[LLMToolEmulator(model=emulator)]
    )

    result = run(agent, QUESTION)

    answers = tool_answers(result)
    assert ran == []
    assert {answers["w"].content, answers["e"].content} == {"Rain, 12 C", "Email queued (id 42)"}
    assert (answers["w"].name, answers["e"].name) == ("get_weather", "send_email")
    assert answers["w"].status == "success"
    assert result["messages"][-1].content == "All set."
    assert emulator.call_count == 2


@pytest.mark.parametrize("chosen", [["send_email"], [send_email]], ids=["name", "tool"])
def test_only_the_chosen_tools_are_emulated(how_call: str, chosen: list[Any]) -> None:
    emulator = ScriptedChatModel(["Email queued"])
    middleware = LLMToolEmulator(tools=chosen, model=emulator)
    agent = create_agent(weather_then_email(), tools=TOOLS, middleware=[middleware])

    answers = tool_answers(run_agent(agent, how_call, QUESTION))

    assert ran == ["get_weather"]
    assert answers["w"].content == "real weather in Paris"
    assert answers["e"].content == "Email queued"
    assert emulator.call_count == 1
    assert middleware.tools_to_emulate == frozenset({"send_email"})
    assert middleware.emulate_all is False


def test_an_empty_list_emulates_nothing(how_call: str) -> None:
    emulator = ScriptedChatModel([])
    agent = create_agent(
        weather_then_email(), tools=TOOLS, middleware=[LLMToolEmulator(tools=[], model=emulator)]
    )

    run_agent(agent, how_call, QUESTION)

    assert sorted(ran) == ["get_weather", "send_email"]
    assert emulator.call_count == 0


def test_a_call_of_a_tool_the_agent_lacks_keeps_its_error(how_call: str) -> None:
    model = ScriptedChatModel([calls(("get_wether", {"city": "Paris"})), "Oops."])
    emulator = ScriptedChatModel([])
    agent = create_agent(model, tools=TOOLS, middleware=[LLMToolEmulator(model=emulator)])

    [answer] = tool_answers(run_agent(agent, how_call, QUESTION)).values()

    assert answer.status == "error"
    assert "get_wether is not a valid tool" in str(answer.content)
    assert emulator.call_count == 0


# -- what the emulator model sees and returns ------------------------------------------------


def test_the_emulator_is_shown_the_tool_and_the_call(how_call: str) -> None:
    emulator = ScriptedChatModel(["Sunny"])
    model = ScriptedChatModel([calls(("get_weather", {"city": "Xi'an", "days": 3})), "Done."])
    agent = create_agent(model, tools=[get_weather], middleware=[LLMToolEmulator(model=emulator)])

    run_agent(agent, how_call, QUESTION)

    [call] = emulator.calls
    assert call.tools == ()
    instructions, details = call.messages
    assert "stand in for a software tool" in str(instructions.content)
    lines = str(details.content).splitlines()
    assert lines[0] == "Tool: get_weather"
    assert lines[1] == "Description: Get the weather forecast for a city."
    schema = json.loads(lines[2].removeprefix("Parameters (JSON Schema): "))
    assert schema["properties"]["city"] == {"type": "string"}
    assert schema["required"] == ["city"]
    assert json.loads(lines[3].removeprefix("Arguments: ")) == {"city": "Xi'an", "days": 3}


def test_the_answer_is_the_emulator_text_without_other_blocks(how_call: str) -> None:
    reply = AIMessage(
        content=[
            {"type": "reasoning", "reasoning": "Paris in spring..."},
            {"type": "text", "text": "Mild, 18 C"},
        ]
    )
    emulator = ScriptedChatModel([reply])
    model = ScriptedChatModel([calls(("get_weather", {"city": "Paris"})), "Done."])
    agent = create_agent(model, tools=TOOLS, middleware=[LLMToolEmulator(model=emulator)])

    [answer] = tool_answers(run_agent(agent, how_call, QUESTION)).values()

    assert answer.content == "Mild, 18 C"


def test_outer_wrappers_see_the_emulated_answer_and_inner_ones_are_skipped(
    how_call: str,
) -> None:
    seen: list[str] = []

    @wrap_tool_call(name="outer")
    def outer(request: ToolCallRequest, handler: Any) -> Any:
        result = handler(request)
        seen.append(f"outer saw {result.content}")
        return result

    @wrap_tool_call(name="inner")
    def inner(request: ToolCallRequest, handler: Any) -> Any:
        seen.append(f"inner ran {request.tool_call['name']}")
        return handler(request)

    emulator = ScriptedChatModel(["Email queued"])
    middleware = [outer, LLMToolEmulator(tools=["send_email"], model=emulator), inner]
    model = ScriptedChatModel([calls(("send_email", {"to": "a", "body": "b"})), "Done."])
    agent = create_agent(model, tools=TOOLS, middleware=middleware)

    run_agent(agent, how_call, QUESTION)

    assert seen == ["outer saw Email queued"]


def test_an_emulator_failure_fails_the_call(how_call: str) -> None:
    def down(messages: list[BaseMessage]) -> str:
        raise ConnectionError("emulator down")

    model = ScriptedChatModel([calls(("get_weather", {"city": "Paris"})), "Done."])
    agent = create_agent(
        model, tools=TOOLS, middleware=[LLMToolEmulator(model=ScriptedChatModel([down]))]
    )

    with pytest.raises(ConnectionError, match="emulator down"):
        run_agent(agent, how_call, QUESTION)
    assert ran == []


# -- control flow passes through -------------------------------------------------------------


def test_an_interrupt_in_a_tool_that_runs_passes_through(how_call: str) -> None:
    @tool
    def book_hotel(city: str) -> str:
        """Book a hotel."""
        approved = interrupt(f"book a hotel in {city}?")
        return "booked" if approved else "declined"

    emulator = ScriptedChatModel(["Rain"])
    model = ScriptedChatModel(
        [calls(("get_weather", {"city": "Paris"}), ("book_hotel", {"city": "Paris"})), "Done."]
    )
    agent = create_agent(
        model,
        tools=[get_weather, book_hotel],
        middleware=[LLMToolEmulator(tools=["get_weather"], model=emulator)],
        checkpointer=InMemorySaver(),
    )
    thread = {"configurable": {"thread_id": "trip"}}

    paused = run_agent(agent, how_call, QUESTION, config=thread)
    assert [i.value for i in paused["__interrupt__"]] == ["book a hotel in Paris?"]

    result = run_agent(agent, how_call, Command(resume=True), config=thread)

    contents = sorted(str(m.content) for m in tool_answers(result).values())
    assert contents == ["Rain", "booked"]
    assert result["messages"][-1].content == "Done."


def test_a_command_from_a_tool_that_runs_passes_through(how_call: str) -> None:
    @tool
    def finish(reason: str) -> Command[Any]:
        """Finish the task."""
        return Command(update={"messages": [ToolMessage("finished", tool_call_id="c1")]})

    model = ScriptedChatModel([calls(tool_call("finish", {"reason": "done"}, id="c1")), "Done."])
    agent = create_agent(
        model,
        tools=[finish, get_weather],
        middleware=[LLMToolEmulator(tools=["get_weather"], model=ScriptedChatModel([]))],
    )

    result = run_agent(agent, how_call, QUESTION)

    assert tool_answers(result)["c1"].content == "finished"


# -- streaming -------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_the_emulation_call_is_not_streamed_as_messages(how: str) -> None:
    emulator = ScriptedChatModel(["EMULATED weather"])
    model = ScriptedChatModel([calls(("get_weather", {"city": "Paris"})), "It will rain."])
    agent = create_agent(model, tools=TOOLS, middleware=[LLMToolEmulator(model=emulator)])

    if how == "stream":
        chunks = list(agent.stream(QUESTION, stream_mode="messages"))
    else:

        async def collect() -> list[Any]:
            return [c async for c in agent.astream(QUESTION, stream_mode="messages")]

        chunks = asyncio.run(collect())

    streamed = [m for m, _ in chunks if isinstance(m, AIMessageChunk)]
    assert "".join(m.text for m in streamed) == "It will rain."
    assert [m.content for m, _ in chunks if isinstance(m, ToolMessage)] == ["EMULATED weather"]
    assert emulator.call_count == 1


# -- building --------------------------------------------------------------------------------


def test_naming_a_tool_the_agent_lacks_is_noted(caplog: pytest.LogCaptureFixture) -> None:
    middleware = LLMToolEmulator(tools=["send_email", "get_wether"], model=ScriptedChatModel([]))

    with caplog.at_level(logging.INFO, logger="graphagent"):
        create_agent(ScriptedChatModel([]), tools=TOOLS, middleware=[middleware])

    assert (
        "LLMToolEmulator: tools names ['get_wether'], which the agent does not have (its tools "
        "are ['get_weather', 'send_email']); they never apply"
    ) in caplog.messages


def test_a_provider_tool_is_never_emulated(caplog: pytest.LogCaptureFixture) -> None:
    search = {"type": "web_search", "name": "web_search"}
    middleware = LLMToolEmulator(tools=["web_search"], model=ScriptedChatModel([]))

    with caplog.at_level(logging.INFO, logger="graphagent"):
        create_agent(ScriptedChatModel([]), tools=[get_weather, search], middleware=[middleware])

    assert "names ['web_search'], which the agent does not have" in caplog.text


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"model": 42}, r"model is int; pass a chat model or a model id"),
        ({"tools": "get_weather"}, r"tools is not a list"),
        ({"tools": ["get_weather", len]}, r"item 1 is <built-in function len>"),
        ({"tools": [""]}, r"item 0 is ''"),
    ],
)
def test_bad_options_fail_when_the_middleware_is_built(
    options: dict[str, Any], message: str
) -> None:
    if "model" not in options and "tools" in options:
        options["model"] = ScriptedChatModel([])
    with pytest.raises(MiddlewareError, match=rf"^LLMToolEmulator(: |\(tools=\S+\): ){message}"):
        LLMToolEmulator(**options)


def test_a_bad_model_id_is_init_chat_models_error_when_the_middleware_is_built() -> None:
    with pytest.raises(ValueError, match=r"Unable to infer .* 'foo' is no known"):
        LLMToolEmulator(model="foo:bar")


def test_a_model_id_without_its_package_fails_when_the_middleware_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    not_installed(monkeypatch, "langchain_groq")

    with pytest.raises(MissingIntegrationError) as raised:
        LLMToolEmulator(model="groq:llama-3.3-70b-versatile")

    assert "pip install langchain-groq" in str(raised.value)
    assert raised.value.package == "langchain-groq"


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[], Any]:
    """A fake ``langchain_anthropic`` on sys.path; call the result for the imported module."""
    install_fake_package(monkeypatch, tmp_path, "langchain_anthropic", class_name="ChatAnthropic")
    return lambda: sys.modules.get("langchain_anthropic")


def test_a_model_id_is_built_once_with_temperature_1_when_the_middleware_is(
    fake_anthropic: Callable[[], Any], how_call: str
) -> None:
    model = ScriptedChatModel(
        [
            calls(("get_weather", {"city": "Paris"})),
            "Done.",
            "Hi.",
            calls(("get_weather", {"city": "Rome"})),
            "Done again.",
        ]
    )
    middleware = LLMToolEmulator(model="anthropic:claude-haiku-4-5")
    [(built, _)] = fake_anthropic().built  # as in LangChain, at once
    agent = create_agent(model, tools=TOOLS, middleware=[middleware])

    first = run_agent(agent, how_call, QUESTION)
    run_agent(agent, how_call, QUESTION)
    run_agent(agent, how_call, QUESTION)

    assert (built.model, built.temperature) == ("claude-haiku-4-5", 1)
    assert built.call_count == 2
    assert middleware.model is built
    assert len(fake_anthropic().built) == 1
    assert [m.content for m in tool_answers(first).values()] == ["fake answer"]


def test_the_emulated_tools_are_not_registered_as_middleware_tools() -> None:
    middleware = LLMToolEmulator(tools=[get_weather], model=ScriptedChatModel([]))

    assert middleware.tools == ()
