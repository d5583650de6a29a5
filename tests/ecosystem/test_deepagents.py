"""deepagents 0.7.32 on graphagent: ``create_deep_agent`` builds on graphagent's ``create_agent``
and middleware through ``install_as_langchain()``, and its flows run offline with a scripted
model: the filesystem tools, ``task`` sub-agents, summarization, a review interrupted and
resumed, and streams."""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any
from unittest.mock import MagicMock

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

import graphagent
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent

GO = {"messages": [("user", "go")]}


def file(text: str) -> dict[str, str]:
    """A file of deepagents' state backend, as a caller passes it in."""
    return {"content": text, "encoding": "utf-8"}


def tool_answers(result: dict[str, Any]) -> list[str]:
    return [str(m.content) for m in result["messages"] if isinstance(m, ToolMessage)]


def test_its_langchain_imports_are_graphagents(deepagents: ModuleType) -> None:
    import langchain.agents.middleware.summarization as summarization
    from deepagents.middleware import summarization as deep_summarization

    assert graphagent.create_agent.__module__ == "graphagent.factory"
    assert deep_summarization.LCSummarizationMiddleware is (
        graphagent.middleware.summarization.SummarizationMiddleware
    )
    assert summarization is graphagent.middleware.summarization


def test_the_agent_is_graphagents(deepagents: ModuleType) -> None:
    agent = deepagents.create_deep_agent(model=ScriptedChatModel(["hi"]))

    assert isinstance(agent, graphagent.CompiledAgent)
    assert "messages" in agent.get_input_jsonschema()["properties"]
    assert agent.invoke(GO)["messages"][-1].content == "hi"


def test_the_filesystem_tools_write_read_edit_and_search(deepagents: ModuleType, how: str) -> None:
    model = ScriptedChatModel(
        [
            calls(("write_file", {"file_path": "/notes.txt", "content": "x = 1\n"})),
            calls(("edit_file", {"file_path": "/notes.txt", "old_string": "1", "new_string": "2"})),
            calls(("read_file", {"file_path": "/notes.txt"})),
            calls(("ls", {"path": "/"}), ("glob", {"pattern": "*.py"})),
            calls(("grep", {"pattern": "answer"})),
            "done",
        ]
    )
    agent = deepagents.create_deep_agent(model=model)

    result = run_agent(agent, how, {**GO, "files": {"/main.py": file("answer = 42\n")}})

    assert result["files"]["/notes.txt"]["content"] == "x = 2\n"
    answers = tool_answers(result)
    assert answers[0] == "Updated file /notes.txt"
    assert answers[1].startswith("Successfully replaced 1 instance(s)")
    assert "x = 2" in answers[2]
    assert "/main.py" in answers[3]
    assert "/notes.txt" in answers[3]
    assert answers[4] == "['/main.py']"
    assert "/main.py" in answers[5]
    assert result["messages"][-1].content == "done"


def test_the_task_tool_runs_the_general_purpose_sub_agent(deepagents: ModuleType, how: str) -> None:
    # The sub-agent shares the model: it answers the second and third calls.
    model = ScriptedChatModel(
        [
            calls(("task", {"description": "Write the plan.", "subagent_type": "general-purpose"})),
            calls(("write_file", {"file_path": "/plan.md", "content": "step 1"})),
            "The plan is written.",
            "Done.",
        ]
    )
    agent = deepagents.create_deep_agent(model=model)

    result = run_agent(agent, how, GO)

    assert tool_answers(result) == ["The plan is written."]
    assert result["files"]["/plan.md"]["content"] == "step 1"
    sub_agent_saw = model.calls[1].messages
    assert [type(m) for m in sub_agent_saw[1:]] == [HumanMessage]  # an isolated context
    assert sub_agent_saw[1].content == "Write the plan."
    assert result["messages"][-1].content == "Done."


def test_a_declared_sub_agent_runs_with_its_own_model_and_prompt(
    deepagents: ModuleType, how_call: str
) -> None:
    researcher = ScriptedChatModel(["Graphs are compiled."])
    model = ScriptedChatModel(
        [calls(("task", {"description": "Research.", "subagent_type": "researcher"})), "Noted."]
    )
    spec = {
        "name": "researcher",
        "description": "Researches a topic.",
        "system_prompt": "You research.",
        "model": researcher,
    }
    agent = deepagents.create_deep_agent(model=model, subagents=[spec])

    result = run_agent(agent, how_call, GO)

    assert tool_answers(result) == ["Graphs are compiled."]
    assert researcher.calls[0].messages[0].text.startswith("You research.")


def test_a_compiled_sub_agent_is_a_create_agent_graph(deepagents: ModuleType) -> None:
    inner = graphagent.create_agent(ScriptedChatModel(["From inside."]), name="inner")
    model = ScriptedChatModel(
        [calls(("task", {"description": "Say hi.", "subagent_type": "inner"})), "Done."]
    )
    compiled = deepagents.CompiledSubAgent(name="inner", description="Inner.", runnable=inner)
    agent = deepagents.create_deep_agent(model=model, subagents=[compiled])

    assert tool_answers(agent.invoke(GO)) == ["From inside."]


def long_history(turns: int) -> list[Any]:
    history: list[Any] = []
    for n in range(turns):
        history += [HumanMessage(f"question {n} " + "lorem " * 400)]
        history += [AIMessage(f"answer {n} " + "ipsum " * 400)]
    return [*history, HumanMessage("Now sum it up.")]


def test_summarization_offloads_the_old_history_and_summarizes_it(
    deepagents: ModuleType, how: str
) -> None:
    # A profile window makes deepagents summarize at 85% of it, keeping the newest 10%.
    model = ScriptedChatModel(["SUMMARY", "Summed up."], profile={"max_input_tokens": 20_000})
    agent = deepagents.create_deep_agent(model=model)

    result = run_agent(agent, how, {"messages": long_history(12)})

    summary_call, answer_call = model.calls
    assert summary_call.messages[0].text.startswith(
        graphagent.middleware.summarization.DEFAULT_SUMMARY_PROMPT.split("\n", 1)[0]
    )
    assert "question 0" in summary_call.messages[0].text
    sent = answer_call.messages
    assert "SUMMARY" in sent[1].text
    assert "/conversation_history/" in sent[1].text  # where the old messages were saved
    assert len(sent) < 12
    [saved] = [path for path in result["files"] if path.startswith("/conversation_history/")]
    assert "question 0" in result["files"][saved]["content"]
    assert len(result["messages"]) == 26  # the state keeps the whole history
    assert result["messages"][-1].content == "Summed up."


def test_its_summarization_takes_a_mock_model(deepagents: ModuleType) -> None:
    # deepagents' own tests build it with a MagicMock; LangChain takes any object there.
    from deepagents.backends import StateBackend
    from deepagents.middleware.summarization import SummarizationMiddleware

    middleware = SummarizationMiddleware(model=MagicMock(), backend=StateBackend())

    assert isinstance(middleware.model, MagicMock)
    assert middleware._lc_helper._trigger_clauses == []


def paused_writer(deepagents: ModuleType, model: ScriptedChatModel) -> Any:
    return deepagents.create_deep_agent(
        model=model, interrupt_on={"write_file": True}, checkpointer=InMemorySaver()
    )


WRITE = calls(("write_file", {"file_path": "/a.txt", "content": "draft"}))


@pytest.mark.parametrize(
    ("decision", "content", "answer"),
    [
        ({"type": "approve"}, "draft", "Updated file /a.txt"),
        (
            {
                "type": "edit",
                "edited_action": {
                    "name": "write_file",
                    "args": {"file_path": "/a.txt", "content": "final"},
                },
            },
            "final",
            "Updated file /a.txt",
        ),
        ({"type": "reject", "message": "Not now."}, None, "Not now."),
    ],
    ids=["approve", "edit", "reject"],
)
def test_a_review_pauses_the_run_and_its_decision_resumes_it(
    deepagents: ModuleType, how_call: str, decision: dict[str, Any], content: Any, answer: str
) -> None:
    model = ScriptedChatModel([WRITE, "Done."])
    agent = paused_writer(deepagents, model)
    config = {"configurable": {"thread_id": f"review-{how_call}"}}

    paused = run_agent(agent, how_call, GO, config=config)
    [interrupt] = paused["__interrupt__"]
    assert interrupt.value["action_requests"][0]["name"] == "write_file"
    assert "/a.txt" not in paused.get("files", {})

    result = run_agent(agent, how_call, Command(resume={"decisions": [decision]}), config=config)

    assert result.get("files", {}).get("/a.txt", {}).get("content") == content
    assert answer in tool_answers(result)[0]
    assert result["messages"][-1].content == "Done."


def test_a_review_inside_a_sub_agent_pauses_and_resumes_the_parent(
    deepagents: ModuleType,
) -> None:
    model = ScriptedChatModel(
        [
            calls(("task", {"description": "Write it.", "subagent_type": "general-purpose"})),
            WRITE,
            "Written.",
            "Done.",
        ]
    )
    agent = paused_writer(deepagents, model)
    config = {"configurable": {"thread_id": "sub-review"}}

    paused = agent.invoke(GO, config)
    assert paused["__interrupt__"][0].value["action_requests"][0]["name"] == "write_file"
    result = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)

    assert result["files"]["/a.txt"]["content"] == "draft"
    assert tool_answers(result) == ["Written."]


def test_reviews_without_a_checkpointer_run_until_one_is_reached(
    deepagents: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    # The policy names write_file for every agent, sub-agents included, whatever tools each has.
    model = ScriptedChatModel([calls(("ls", {"path": "/"})), "Listed."])
    agent = deepagents.create_deep_agent(model=model, interrupt_on={"write_file": True})

    with caplog.at_level("WARNING", logger="graphagent"):
        result = agent.invoke(GO)

    assert result["messages"][-1].content == "Listed."
    assert caplog.records == []


def test_astream_streams_each_step(deepagents: ModuleType) -> None:
    model = ScriptedChatModel([calls(("ls", {"path": "/"})), "Listed."])
    agent = deepagents.create_deep_agent(model=model)

    async def steps() -> list[list[str]]:
        return [list(chunk) async for chunk in agent.astream(GO, stream_mode="updates")]

    nodes = asyncio.run(asyncio.wait_for(steps(), 60))

    assert [node for node in nodes if node[0] in ("model", "tools")] == [
        ["model"],
        ["tools"],
        ["model"],
    ]


def test_astream_streams_the_model_tokens(deepagents: ModuleType) -> None:
    agent = deepagents.create_deep_agent(model=ScriptedChatModel(["Hello there."]))

    async def tokens() -> str:
        chunks = agent.astream(GO, stream_mode="messages")
        return "".join([str(chunk.text) async for chunk, metadata in chunks])

    assert asyncio.run(asyncio.wait_for(tokens(), 60)) == "Hello there."


def test_a_sub_agent_is_on_the_v3_streams_subagents(deepagents: ModuleType) -> None:
    model = ScriptedChatModel(
        [calls(("task", {"description": "Hi.", "subagent_type": "general-purpose"})), "Hi!", "Ok."]
    )
    agent = deepagents.create_deep_agent(model=model, name="boss")

    run = agent.stream_events(GO, version="v3")
    seen = [(handle.name, list(handle.values)[-1]["messages"][-1].text) for handle in run.subagents]

    assert seen == [("general-purpose", "Hi!")]
    assert run.output["messages"][-1].text == "Ok."


def test_memory_is_read_by_a_hook_that_takes_the_config(deepagents: ModuleType) -> None:
    # MemoryMiddleware.before_agent is declared (self, state, runtime, config).
    model = ScriptedChatModel(["ok"])
    agent = deepagents.create_deep_agent(model=model, memory=["/AGENTS.md"])

    agent.invoke({**GO, "files": {"/AGENTS.md": file("Always answer in haiku.")}})

    assert "Always answer in haiku." in model.calls[0].messages[0].text


def test_skills_are_listed_to_the_model(deepagents: ModuleType) -> None:
    skill = "---\nname: greeting\ndescription: How to greet people.\n---\n\nSay hello.\n"
    model = ScriptedChatModel(["ok"])
    agent = deepagents.create_deep_agent(model=model, skills=["/skills/"])

    agent.invoke({**GO, "files": {"/skills/greeting/SKILL.md": file(skill)}})

    assert "How to greet people." in model.calls[0].messages[0].text


def test_permissions_deny_a_write(deepagents: ModuleType) -> None:
    rule = deepagents.FilesystemPermission(operations=["write"], paths=["/secrets/**"], mode="deny")
    model = ScriptedChatModel(
        [calls(("write_file", {"file_path": "/secrets/key", "content": "k"})), "ok"]
    )
    agent = deepagents.create_deep_agent(model=model, permissions=[rule])

    result = agent.invoke(GO)

    assert "/secrets/key" not in result.get("files", {})
    assert tool_answers(result) == ["Error: permission denied for write on /secrets/key"]


def test_a_permission_that_interrupts_reviews_only_the_paths_it_names(
    deepagents: ModuleType, how_call: str
) -> None:
    # deepagents turns it into an InterruptOnConfig whose `when` predicate reads the path.
    rule = deepagents.FilesystemPermission(
        operations=["write"], paths=["/secrets/**"], mode="interrupt"
    )
    model = ScriptedChatModel(
        [
            calls(("write_file", {"file_path": "/open.txt", "content": "o"})),
            calls(("write_file", {"file_path": "/secrets/key", "content": "k"})),
            "ok",
        ]
    )
    agent = deepagents.create_deep_agent(
        model=model, permissions=[rule], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": f"permission-{how_call}"}}

    paused = run_agent(agent, how_call, GO, config=config)
    [interrupt] = paused["__interrupt__"]
    assert interrupt.value["action_requests"][0]["args"]["file_path"] == "/secrets/key"
    assert "/open.txt" in paused["files"]

    decision = {"type": "reject", "message": "Keep it out."}
    result = run_agent(agent, how_call, Command(resume={"decisions": [decision]}), config=config)
    assert "/secrets/key" not in result["files"]
    assert "Keep it out." in tool_answers(result)[-1]
