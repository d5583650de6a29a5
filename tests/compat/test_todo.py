"""LangChain 1.5's ``todo``: the answer of the ``write_todos`` tool is LangChain's text, so an
agent (or a test) reading it sees the same words."""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from graphagent import create_agent
from graphagent.middleware import TodoListMiddleware
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent


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
