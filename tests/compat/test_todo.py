"""LangChain 1.5.2's ``todo``: the answer of the ``write_todos`` tool and the error for parallel
calls are LangChain's text, so an agent (or a test) reading them sees the same words; the
planning prompt is a ``## `write_todos``` section after the agent's own system prompt; and the
current list is not repeated to the model unless ``reminder=True`` asks for it."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.runtime import Runtime

from graphagent import create_agent
from graphagent.middleware import TodoListMiddleware
from graphagent.middleware.todo import WRITE_TODOS_SYSTEM_PROMPT
from graphagent.testing import ScriptedChatModel, calls, tool_call
from tests.conftest import run_agent

PARALLEL_ERROR = (
    "Error: The `write_todos` tool should never be called multiple times in parallel. "
    "Please call it only once per model invocation to update the todo list."
)


def test_write_todos_answers_in_langchains_words(how_call: str) -> None:
    todos = [
        {"content": "Draft", "status": "completed"},
        {"content": "Review", "status": "in_progress"},
    ]
    model = ScriptedChatModel([calls(("write_todos", {"todos": todos})), "Done."])
    agent = create_agent(model, middleware=[TodoListMiddleware()])

    result = run_agent(agent, how_call, {"messages": ["Write it."]})

    answer = result["messages"][2]
    assert isinstance(answer, ToolMessage)
    assert answer.content == (
        "Updated todo list to [{'content': 'Draft', 'status': 'completed'}, "
        "{'content': 'Review', 'status': 'in_progress'}]"
    )
    assert result["todos"] == todos


@pytest.mark.parametrize(
    ("system_prompt", "start"),
    [("Be exact.", "Be exact.\n\n## `write_todos`\n\n"), (None, "## `write_todos`\n\n")],
)
def test_the_planning_prompt_is_a_write_todos_section_after_the_agents_prompt(
    how_call: str, system_prompt: str | None, start: str
) -> None:
    model = ScriptedChatModel(["Hi."])
    agent = create_agent(model, system_prompt=system_prompt, middleware=[TodoListMiddleware()])

    run_agent(agent, how_call, {"messages": ["Plan it."]})

    system = model.calls[0].messages[0]
    assert isinstance(system, SystemMessage)
    assert system.text.startswith(start)
    assert system.text.endswith(WRITE_TODOS_SYSTEM_PROMPT)


def test_parallel_calls_are_each_answered_with_langchains_error(how_call: str) -> None:
    twice = calls(
        tool_call("write_todos", {"todos": [{"content": "A", "status": "pending"}]}, id="a"),
        tool_call("write_todos", {"todos": [{"content": "B", "status": "pending"}]}, id="b"),
    )
    model = ScriptedChatModel([twice, "Done."])
    agent = create_agent(model, middleware=[TodoListMiddleware()])

    result = run_agent(agent, how_call, {"messages": ["Plan it."]})

    assert result["messages"][2:4] == [
        ToolMessage(PARALLEL_ERROR, tool_call_id="a", status="error", id=result["messages"][2].id),
        ToolMessage(PARALLEL_ERROR, tool_call_id="b", status="error", id=result["messages"][3].id),
    ]
    assert "todos" not in result


@pytest.mark.parametrize("hook", ["after_model", "aafter_model"])
def test_the_hook_called_directly_returns_the_errors(hook: str) -> None:
    twice = AIMessage(
        "",
        tool_calls=[
            {"name": "write_todos", "args": {"todos": []}, "id": "a"},
            {"name": "write_todos", "args": {"todos": []}, "id": "b"},
        ],
    )
    state: Any = {"messages": [HumanMessage("Plan it."), twice]}
    runtime = cast("Runtime[None]", object())
    todo = TodoListMiddleware()

    update = getattr(todo, hook)(state, runtime)
    if hook == "aafter_model":
        update = asyncio.run(update)

    assert update == {
        "messages": [
            ToolMessage(PARALLEL_ERROR, tool_call_id="a", status="error"),
            ToolMessage(PARALLEL_ERROR, tool_call_id="b", status="error"),
        ]
    }


def test_the_current_list_is_not_repeated_by_default(how_call: str) -> None:
    todos = [{"content": "Draft", "status": "in_progress"}]
    model = ScriptedChatModel([calls(("write_todos", {"todos": todos})), "Done."])
    agent = create_agent(model, middleware=[TodoListMiddleware()])

    run_agent(agent, how_call, {"messages": ["Write it."]})

    assert model.calls[1].messages[0].text == WRITE_TODOS_SYSTEM_PROMPT
