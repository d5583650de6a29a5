"""Threads written before messages were stored as deltas continue without loss.

The files in ``tests/durable/old_threads/`` hold threads in the full layout (every checkpoint
stores the whole history), written by two agents of the same shape as :func:`agent` below (the
same tools, a HumanInTheLoopMiddleware reviewing ``send_report``, and a model answering each
question with one ``lookup``, or ``send_report`` for ``report: ...``, then an answer):

- ``graphagent-0.1.0.sqlite``: by graphagent as it was before this change (commit 8c9c1a9 on
  ``main``, with the project's own dependencies), one node per hook and fused;
- ``langchain-1.5.2.sqlite``: by LangChain 1.5.2's ``create_agent`` (in a separate venv with
  ``langchain==1.5.2``, langgraph 1.2.24 and ``langgraph-checkpoint-sqlite`` 3.1.2).

Each file has a thread ``finished`` (two questions, ``one`` and ``two``) and a thread ``paused``
(``hello``, then ``report: weekly``, waiting for the review of ``send_report``); graphagent's
also the same two written with ``fuse_hooks=True`` (``finished-fused``, ``paused-fused``). The
writers put explicit ids on the human messages and on the model's replies.

The tests open a copy of a file with today's default state (messages as deltas) and carry on.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.types import Command

from graphagent import create_agent
from graphagent.middleware import HumanInTheLoopMiddleware
from graphagent.testing import ScriptedChatModel

FIXTURES = Path(__file__).parent / "durable" / "old_threads"
WRITERS = ("graphagent-0.1.0", "langchain-1.5.2")
FINISHED = [
    ("human", "one"),
    ("ai", ""),
    ("tool", "found one"),
    ("ai", "answer to one"),
    ("human", "two"),
    ("ai", ""),
    ("tool", "found two"),
    ("ai", "answer to two"),
]


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


@tool
def send_report(text: str) -> str:
    """Send a report."""
    return f"sent {text}"


def policy(messages: list[BaseMessage]) -> AIMessage:
    """The writers' model: the same replies, with the same ids."""
    question = next(m.text for m in reversed(messages) if isinstance(m, HumanMessage))
    slug = question.replace(" ", "-").replace(":", "")
    if isinstance(messages[-1], ToolMessage):
        return AIMessage(f"answer to {question}", id=f"ai-answer-{slug}")
    name, args = (
        ("send_report", {"text": question[7:].strip()})
        if question.startswith("report:")
        else ("lookup", {"query": question})
    )
    call = {"name": name, "args": args, "id": f"call-{slug}", "type": "tool_call"}
    return AIMessage("", tool_calls=[call], id=f"ai-call-{slug}")


def agent(checkpointer: Any, *, fused: bool) -> Any:
    return create_agent(
        ScriptedChatModel([policy], repeat_last=True),
        [lookup, send_report],
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"send_report": True})],
        checkpointer=checkpointer,
        fuse_hooks=fused,
    )


def shape(messages: list[BaseMessage]) -> list[tuple[str, str]]:
    return [(m.type, m.text) for m in messages]


class OldThreads:
    """A copy of one fixture file, opened sync or async as ``how_call`` says."""

    def __init__(self, path: Path, how_call: str) -> None:
        self.path = path
        self.is_async = how_call == "ainvoke"

    def run(self, thread: str, fused: bool, work: Any) -> Any:
        """``work(agent, config)`` with an agent on the file, sync or async."""
        config = {"configurable": {"thread_id": thread}}
        if self.is_async:
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

            async def run() -> Any:
                async with AsyncSqliteSaver.from_conn_string(str(self.path)) as saver:
                    return await work(agent(saver, fused=fused), config)

            return asyncio.run(run())
        from langgraph.checkpoint.sqlite import SqliteSaver

        with SqliteSaver.from_conn_string(str(self.path)) as saver:
            return work(agent(saver, fused=fused), config)

    def invoke(self, thread: str, fused: bool, value: Any) -> dict[str, Any]:
        if self.is_async:
            return self.run(thread, fused, lambda a, c: a.ainvoke(value, c))  # type: ignore[no-any-return]
        return self.run(thread, fused, lambda a, c: a.invoke(value, c))  # type: ignore[no-any-return]

    def state(self, thread: str, fused: bool) -> Any:
        if self.is_async:
            return self.run(thread, fused, lambda a, c: a.aget_state(c))
        return self.run(thread, fused, lambda a, c: a.get_state(c))

    def checkpoints(self, thread: str, fused: bool) -> list[Any]:
        """Every checkpoint of the thread, newest first, as the saver stores it."""

        def collect(a: Any, c: Any) -> Any:
            if not self.is_async:
                return list(a.checkpointer.list(c))

            async def gather() -> list[Any]:
                return [t async for t in a.checkpointer.alist(c)]

            return gather()

        return self.run(thread, fused, collect)  # type: ignore[no-any-return]


def opened(writer: str, tmp_path: Path, how_call: str) -> OldThreads:
    copy = tmp_path / f"{writer}.sqlite"
    shutil.copy(FIXTURES / f"{writer}.sqlite", copy)
    return OldThreads(copy, how_call)


MODES = {False: "nodes", True: "fused"}
# LangChain has no fused hooks: its threads were written one node per hook. A finished thread
# goes on in either mode; a paused one waits in a hook node of the mode that wrote it.
FINISHED_CASES = [(writer, fused) for writer in WRITERS for fused in MODES]
PAUSED_CASES = [("graphagent-0.1.0", False), ("graphagent-0.1.0", True), ("langchain-1.5.2", False)]


def case_id(case: tuple[str, bool]) -> str:
    return f"{case[0]}-{MODES[case[1]]}"


@pytest.mark.parametrize("case", FINISHED_CASES, ids=case_id)
def test_a_finished_thread_goes_on_and_stores_only_what_it_adds(
    case: tuple[str, bool], tmp_path: Path, how_call: str
) -> None:
    writer, fused = case
    old = opened(writer, tmp_path, how_call)
    thread = "finished-fused" if fused and writer.startswith("graphagent") else "finished"
    written = len(old.checkpoints(thread, fused))
    assert shape(old.state(thread, fused).values["messages"]) == FINISHED

    result = old.invoke(thread, fused, {"messages": [HumanMessage("three")]})

    assert shape(result["messages"]) == [
        *FINISHED,
        ("human", "three"),
        ("ai", ""),
        ("tool", "found three"),
        ("ai", "answer to three"),
    ]
    assert shape(old.state(thread, fused).values["messages"]) == shape(result["messages"])
    checkpoints = old.checkpoints(thread, fused)
    new = checkpoints[: len(checkpoints) - written]
    assert new, "the turn wrote checkpoints"
    # The old checkpoints hold the whole history; the new ones only what each step wrote.
    assert len(checkpoints[len(new)].checkpoint["channel_values"]["messages"]) == len(FINISHED)
    stored = [c.checkpoint["channel_values"].get("messages") for c in new]
    assert all(value is None or isinstance(value, _DeltaSnapshot) for value in stored)


@pytest.mark.parametrize("case", PAUSED_CASES, ids=case_id)
def test_a_paused_review_is_answered_under_deltas(
    case: tuple[str, bool], tmp_path: Path, how_call: str
) -> None:
    writer, fused = case
    old = opened(writer, tmp_path, how_call)
    thread = "paused-fused" if fused else "paused"
    before = old.state(thread, fused)
    assert [i.value["action_requests"][0]["name"] for i in before.interrupts] == ["send_report"]

    result = old.invoke(thread, fused, Command(resume={"decisions": [{"type": "approve"}]}))

    assert shape(result["messages"]) == [
        ("human", "hello"),
        ("ai", ""),
        ("tool", "found hello"),
        ("ai", "answer to hello"),
        ("human", "report: weekly"),
        ("ai", ""),
        ("tool", "sent weekly"),
        ("ai", "answer to report: weekly"),
    ]
    after = old.state(thread, fused)
    assert after.interrupts == ()
    assert shape(after.values["messages"]) == shape(result["messages"])
