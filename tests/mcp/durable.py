"""A thread whose MCP call waits for an answer, taken up by other processes.

Every process builds the same agent from scratch: its tools from the MCP server at a URL (one
HTTP server, shared by all), its model a policy that books a table until a tool answered, then
says what the tool said. Nothing but the checkpointer and the server links the processes. The
checkpointers are the durable-run tests' (``tests/durable/agent.py``).

``python -m tests.mcp.durable '<Turn as JSON>'`` does a turn in a worker process and prints its
summary as JSON.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import asdict, dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.types import Command, StateSnapshot

from graphagent import create_agent
from graphagent.agent import CompiledAgent
from graphagent.mcp import MCPAdapter
from graphagent.mcp.errors import MCPElicitationAnswerError
from graphagent.testing import ScriptedChatModel, calls
from tests.durable.agent import aopen_saver, open_saver, thread_config
from tests.durable.harness import ROOT, WORKER_TIMEOUT


@dataclass(frozen=True, slots=True)
class Turn:
    store: str
    """``"sqlite:<file>"`` or ``"postgres:<conninfo>"``."""
    url: str
    """The MCP server's."""
    thread_id: str
    resume: Any = None
    """``None``: start the thread with a request to book; else the value to resume with."""
    is_async: bool = False

    def to_json(self) -> str:
        return json.dumps(asdict(self))


def _policy(messages: list[BaseMessage]) -> str | AIMessage:
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return f"done: {last.text}"
    return calls(("book_table", {}))


def _agent(tools: list[Any], saver: Any) -> CompiledAgent:
    model = ScriptedChatModel([_policy], repeat_last=True)
    return create_agent(model, tools, checkpointer=saver)


def _input(turn: Turn) -> Any:
    if turn.resume is None:
        return {"messages": [("user", "Book a table")]}
    return Command(resume=turn.resume)


def take_turn(turn: Turn) -> dict[str, Any]:
    """Do ``turn`` in this process; the summary of the thread afterwards."""
    if turn.is_async:
        return asyncio.run(_atake_turn(turn))
    tools = asyncio.run(MCPAdapter(turn.url).list_tools())
    config = thread_config(turn.thread_id)
    with open_saver(turn.store) as saver:
        agent = _agent(tools, saver)
        refused = None
        try:
            agent.invoke(_input(turn), config)
        except MCPElicitationAnswerError as error:
            refused = str(error)
        return _summary(agent.get_state(config), refused)


async def _atake_turn(turn: Turn) -> dict[str, Any]:
    tools = await MCPAdapter(turn.url).list_tools()
    config = thread_config(turn.thread_id)
    async with aopen_saver(turn.store) as saver:
        agent = _agent(tools, saver)
        refused = None
        try:
            await agent.ainvoke(_input(turn), config)
        except MCPElicitationAnswerError as error:
            refused = str(error)
        return _summary(await agent.aget_state(config), refused)


def _summary(snapshot: StateSnapshot, refused: str | None) -> dict[str, Any]:
    return {
        "messages": [[m.type, m.text] for m in snapshot.values.get("messages", [])],
        "interrupts": [i.value for i in snapshot.interrupts],
        "refused": refused,
    }


def in_worker(turn: Turn) -> dict[str, Any]:
    """Do ``turn`` in a new Python process; its summary of the thread."""
    process = subprocess.run(
        [sys.executable, "-m", "tests.mcp.durable", turn.to_json()],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WORKER_TIMEOUT,
        check=False,
    )
    assert process.returncode == 0, f"worker exited with {process.returncode}:\n{process.stderr}"
    return json.loads(process.stdout)  # type: ignore[no-any-return]


if __name__ == "__main__":
    (turn_json,) = sys.argv[1:]
    print(json.dumps(take_turn(Turn(**json.loads(turn_json)))))
