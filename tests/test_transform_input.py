"""transform_input: a middleware rewrites what a caller writes into the state before the agent
stores, streams or runs any of it."""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

import pytest
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from graphagent import HookReturnError, create_agent
from graphagent.explain import explain
from graphagent.middleware import AgentMiddleware
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run, run_agent


class Shout(AgentMiddleware):
    """Upper-cases the text of every message written in; records what it was given."""

    def __init__(self, name: str = "Shout") -> None:
        self.name = name
        self.given: list[dict[str, Any]] = []

    def transform_input(self, values: dict[str, Any]) -> dict[str, Any]:
        self.given.append(values)
        if "messages" not in values:
            return values
        given = values["messages"]
        shouted = [_shouted(m) for m in given] if isinstance(given, list) else _shouted(given)
        return {**values, "messages": shouted}


def _shouted(message: Any) -> Any:
    if isinstance(message, str):
        return message.upper()
    if isinstance(message, tuple):
        return (message[0], message[1].upper())
    return message.model_copy(update={"content": message.content.upper()})


class Seen(AgentMiddleware):
    def __init__(self) -> None:
        self.states: list[Any] = []

    def wrap_agent(self, state: Any, runtime: Any) -> Generator[None, Any, None]:
        self.states.append(state)
        yield


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


def test_the_input_is_rewritten_before_anything_sees_it(run: Run) -> None:
    model = ScriptedChatModel(["ok"])
    seen, shout = Seen(), Shout()
    agent = create_agent(model, middleware=[seen, shout], checkpointer=InMemorySaver())

    result = run(agent, {"messages": [("user", "hi there")]}, config=thread("1"))

    assert shout.given == [{"messages": [("user", "hi there")]}]
    assert seen.states == [{"messages": [("user", "HI THERE")]}]  # even an outer wrap_agent
    assert model.calls[0].messages[0].content == "HI THERE"
    assert result["messages"][0].content == "HI THERE"
    first = list(agent.get_state_history(thread("1")))[-1]
    stored = agent.checkpointer.get_tuple(first.config).checkpoint["channel_values"]
    # stored rewritten, as a message holding the id it keeps in the thread
    (kept,) = stored["__start__"]["messages"]
    assert (kept.type, kept.content, kept.id) == ("human", "HI THERE", result["messages"][0].id)


def test_hooks_run_in_middleware_order(how_call: str) -> None:
    order: list[str] = []

    class Tag(AgentMiddleware):
        def __init__(self, name: str, order: int = 0) -> None:
            self.name, self.order = name, order

        def transform_input(self, values: dict[str, Any]) -> dict[str, Any]:
            order.append(self.name)
            return values

    middleware = [Tag("first"), Tag("second"), Tag("outermost", order=5)]
    agent = create_agent(ScriptedChatModel(["ok"]), middleware=middleware)
    run_agent(agent, how_call, {"messages": ["hi"]})

    assert order == ["outermost", "first", "second"]
    assert [line for line in str(explain(agent)).splitlines() if "  transform_input" in line] == [
        "  transform_input  outermost → first → second"
    ]


def test_command_updates_and_update_state_are_rewritten_and_resume_is_not(how_call: str) -> None:
    @tool
    def confirm(question: str) -> str:
        """Ask the user."""
        return str(interrupt(question))

    model = ScriptedChatModel([calls(("confirm", {"question": "sure?"})), "done"])
    shout = Shout()
    agent = create_agent(model, [confirm], middleware=[shout], checkpointer=InMemorySaver())
    config = thread(how_call)
    run_agent(agent, how_call, {"messages": ["go"]}, config=config)
    if how_call == "invoke":
        agent.update_state(config, {"messages": [("user", "noted")]})
    else:
        asyncio.run(agent.aupdate_state(config, {"messages": [("user", "noted")]}))

    pairs = [("messages", ("user", "a")), ("messages", ("user", "b"))]
    result = run_agent(agent, how_call, Command(resume="yes, sure", update=pairs), config=config)

    contents = [m.content for m in result["messages"]]
    assert contents[:5] == ["GO", "", "NOTED", "A", "B"]
    assert "yes, sure" in contents  # the tool got the resume value as given
    # A key written twice is rewritten write by write.
    assert shout.given[-2:] == [{"messages": ("user", "a")}, {"messages": ("user", "b")}]


def test_running_on_from_a_checkpoint_passes_nothing(how_call: str) -> None:
    shout = Shout()
    agent = create_agent(
        ScriptedChatModel(["ok"]), middleware=[shout], checkpointer=InMemorySaver()
    )
    config = thread(how_call)
    agent.update_state(config, {"messages": [("user", "hi")]}, as_node="__start__")
    shout.given.clear()

    result = run_agent(agent, how_call, None, config=config)

    assert shout.given == []
    assert [m.content for m in result["messages"]] == ["HI", "ok"]


def test_a_hook_returning_something_else_than_a_dict_is_named(how_call: str) -> None:
    class Broken(AgentMiddleware):
        def transform_input(self, values: dict[str, Any]) -> Any:
            return None

    agent = create_agent(ScriptedChatModel(["ok"]), middleware=[Broken()])
    with pytest.raises(HookReturnError, match=r"'Broken\.transform_input' returned NoneType"):
        run_agent(agent, how_call, {"messages": ["hi"]})


def test_an_exception_says_which_hook_raised_it(how_call: str) -> None:
    class Refuse(AgentMiddleware):
        def transform_input(self, values: dict[str, Any]) -> dict[str, Any]:
            raise PermissionError("not today")

    model = ScriptedChatModel(["ok"])
    agent = create_agent(model, middleware=[Refuse()])
    with pytest.raises(PermissionError) as caught:
        run_agent(agent, how_call, {"messages": ["hi"]})
    assert caught.value.__notes__ == ["graphagent: raised in 'Refuse.transform_input'"]
    assert model.call_count == 0
