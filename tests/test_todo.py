"""TodoListMiddleware: the write_todos tool, the todos state, the prompt and the reminder."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from graphagent import MiddlewareError, create_agent
from graphagent.middleware.todo import (
    WRITE_TODOS_SYSTEM_PROMPT,
    WRITE_TODOS_TOOL_DESCRIPTION,
    PlanningState,
    Todo,
    TodoListMiddleware,
    write_todos,
)
from graphagent.testing import ScriptedChatModel, calls, tool_call
from tests.conftest import Run, run_agent

PLAN: list[Todo] = [
    {"content": "Find the sales figures", "status": "in_progress"},
    {"content": "Compute the growth", "status": "pending"},
]
REMINDER = (
    "## Your current to-do list\n\n"
    "1. [in progress] Find the sales figures\n"
    "2. [pending] Compute the growth\n\n"
    "Keep it up to date with `write_todos` as you work."
)
QUESTION = {"messages": [("user", "How much did sales grow?")]}


def write(todos: list[Todo], id: str | None = None) -> Any:
    return calls(tool_call("write_todos", {"todos": todos}, id=id))


def system_text(call: Any) -> str:
    message = call.messages[0]
    assert isinstance(message, SystemMessage)
    return message.text


def test_write_todos_replaces_the_todos_state(run: Run) -> None:
    model = ScriptedChatModel([write(PLAN, id="w1"), "Sales grew 12%."])
    agent = create_agent(model, middleware=[TodoListMiddleware()])

    result = run(agent, QUESTION)

    assert result["todos"] == PLAN
    answer = result["messages"][2]
    assert isinstance(answer, ToolMessage)
    assert (answer.tool_call_id, answer.name, answer.status) == ("w1", "write_todos", "success")
    assert answer.content == (
        "Updated todo list to [{'content': 'Find the sales figures', 'status': 'in_progress'}, "
        "{'content': 'Compute the growth', 'status': 'pending'}]"
    )
    assert model.calls[0].tool_names == ("write_todos",)


def test_each_call_replaces_the_whole_list(how_call: str) -> None:
    done: list[Todo] = [{**PLAN[0], "status": "completed"}, {**PLAN[1], "status": "in_progress"}]
    model = ScriptedChatModel([write(PLAN), write(done), "Sales grew 12%."])
    agent = create_agent(model, middleware=[TodoListMiddleware()])

    assert run_agent(agent, how_call, QUESTION)["todos"] == done


def test_the_planning_prompt_is_appended_to_the_system_message(how_call: str) -> None:
    model = ScriptedChatModel(["Hi."])
    agent = create_agent(model, system_prompt="You are terse.", middleware=[TodoListMiddleware()])
    run_agent(agent, how_call, QUESTION)

    assert system_text(model.calls[0]) == f"You are terse.\n\n{WRITE_TODOS_SYSTEM_PROMPT}"


def test_without_a_system_message_the_planning_prompt_is_the_system_message() -> None:
    model = ScriptedChatModel(["Hi."])
    create_agent(model, middleware=[TodoListMiddleware(system_prompt="Plan.")]).invoke(QUESTION)

    assert model.calls[0].messages[0] == SystemMessage("Plan.")


def test_content_blocks_of_the_system_message_are_kept() -> None:
    block = {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
    model = ScriptedChatModel(["Hi."])
    system = SystemMessage(content=[block])
    create_agent(model, system_prompt=system, middleware=[TodoListMiddleware()]).invoke(QUESTION)

    assert model.calls[0].messages[0].content == [
        block,
        {"type": "text", "text": f"\n\n{WRITE_TODOS_SYSTEM_PROMPT}"},
    ]


def test_with_reminder_the_list_is_shown_to_the_model_before_each_call(how_call: str) -> None:
    model = ScriptedChatModel([write(PLAN), "Sales grew 12%."])
    todo = TodoListMiddleware(reminder=True)
    agent = create_agent(model, system_prompt="Be exact.", middleware=[todo])

    result = run_agent(agent, how_call, QUESTION)

    assert system_text(model.calls[0]) == f"Be exact.\n\n{WRITE_TODOS_SYSTEM_PROMPT}"
    assert system_text(model.calls[1]) == f"Be exact.\n\n{WRITE_TODOS_SYSTEM_PROMPT}\n\n{REMINDER}"
    # Rendered for the call only: nothing of it is stored.
    assert not any(REMINDER in str(m.content) for m in result["messages"])


@pytest.mark.parametrize("given", [{}, {"reminder": False}], ids=["default", "reminder=False"])
def test_by_default_no_list_is_shown(how_call: str, given: dict[str, Any]) -> None:
    model = ScriptedChatModel([write(PLAN), "Sales grew 12%."])
    agent = create_agent(model, middleware=[TodoListMiddleware(**given)])

    result = run_agent(agent, how_call, QUESTION)

    assert result["todos"] == PLAN
    assert system_text(model.calls[1]) == WRITE_TODOS_SYSTEM_PROMPT


def test_an_empty_list_gives_no_reminder() -> None:
    model = ScriptedChatModel([write(PLAN), write([]), "Done."])
    result = create_agent(model, middleware=[TodoListMiddleware(reminder=True)]).invoke(QUESTION)

    assert result["todos"] == []
    assert REMINDER in system_text(model.calls[1])
    assert system_text(model.calls[2]) == WRITE_TODOS_SYSTEM_PROMPT


def test_the_list_is_thread_state_kept_by_the_checkpointer(how_call: str) -> None:
    model = ScriptedChatModel([write(PLAN), "Working on it.", "Still on it."])
    todo = TodoListMiddleware(reminder=True)
    agent = create_agent(model, middleware=[todo], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}

    run_agent(agent, how_call, QUESTION, config=config)
    assert agent.get_state(config).values["todos"] == PLAN

    run_agent(agent, how_call, {"messages": [("user", "And now?")]}, config=config)
    assert REMINDER in system_text(model.calls[2])


def test_a_list_set_from_outside_is_shown_even_when_malformed() -> None:
    model = ScriptedChatModel(["Hello.", "On it."])
    todo = TodoListMiddleware(reminder=True)
    agent = create_agent(model, middleware=[todo], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t2"}}
    agent.invoke({"messages": [("user", "Hi")]}, config)
    agent.update_state(config, {"todos": [{"content": "Call Ann"}, "stray", *PLAN[1:]]})

    agent.invoke(QUESTION, config)

    assert system_text(model.calls[1]).endswith(
        "## Your current to-do list\n\n"
        "1. [no status] Call Ann\n"
        "2. [pending] Compute the growth\n\n"
        "Keep it up to date with `write_todos` as you work."
    )


def test_parallel_write_todos_calls_are_rejected(how_call: str) -> None:
    other: list[Todo] = [{"content": "Something else", "status": "pending"}]
    twice = calls(
        tool_call("write_todos", {"todos": PLAN}, id="a"),
        tool_call("write_todos", {"todos": other}, id="b"),
    )
    model = ScriptedChatModel([twice, write(PLAN), "Sales grew 12%."])
    agent = create_agent(model, middleware=[TodoListMiddleware()])

    result = run_agent(agent, how_call, QUESTION)

    first, second = result["messages"][2:4]
    assert [(m.tool_call_id, m.status) for m in (first, second)] == [("a", "error"), ("b", "error")]
    assert "should never be called multiple times in parallel" in first.content
    assert model.calls[1].messages[-2:] == (first, second)
    assert result["todos"] == PLAN  # written by the single call of the next turn


def test_an_invalid_status_is_reported_to_the_model_and_changes_nothing() -> None:
    bad = [{"content": "Find the sales figures", "status": "started"}]
    model = ScriptedChatModel([write(PLAN), write(bad), "Sorry."])  # type: ignore[arg-type]
    result = create_agent(model, middleware=[TodoListMiddleware()]).invoke(QUESTION)

    error = result["messages"][4]
    assert isinstance(error, ToolMessage)
    assert error.status == "error"
    assert result["todos"] == PLAN


def test_the_default_tool_is_the_module_level_write_todos() -> None:
    assert TodoListMiddleware().tools == [write_todos]
    assert write_todos.name == "write_todos"
    assert write_todos.description == WRITE_TODOS_TOOL_DESCRIPTION
    schema = write_todos.tool_call_schema.model_json_schema()
    assert list(schema["properties"]) == ["todos"]  # the tool call id is injected, not asked for


def test_a_custom_tool_description_reaches_the_model() -> None:
    model = ScriptedChatModel(["Hi."])
    middleware = TodoListMiddleware(tool_description="Track your steps.")
    create_agent(model, middleware=[middleware]).invoke(QUESTION)

    (bound,) = model.calls[0].tools
    assert bound["function"]["name"] == "write_todos"
    assert bound["function"]["description"] == "Track your steps."
    assert write_todos.description == WRITE_TODOS_TOOL_DESCRIPTION


def test_the_state_schema_declares_todos() -> None:
    assert TodoListMiddleware.state_schema is PlanningState
    assert "todos" in PlanningState.__annotations__


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"system_prompt": ""}, "system_prompt must be a non-empty string"),
        ({"tool_description": None}, "tool_description must be a non-empty string"),
        ({"reminder": "yes"}, "reminder must be True or False"),
    ],
)
def test_bad_options_fail_when_the_middleware_is_built(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(MiddlewareError, match=f"^TodoListMiddleware: {message}"):
        TodoListMiddleware(**options)
