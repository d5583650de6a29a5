"""A graphagent agent served by LangGraph's API server (``langgraph dev``; see docs/serving.md).

The server imports ``agent`` from this module. It brings its own checkpointer and store (in
memory under ``langgraph dev``, PostgreSQL on LangGraph Platform), so the agent is built without
one: an exported graph with a checkpointer of its own is refused by the server.

The model is offline (a scripted planner), so the example runs without an API key. Set
``GRAPHAGENT_MODEL`` to a model id such as ``"openai:gpt-4o"`` to serve a real model instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import AsyncIterator
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool

from graphagent import create_agent
from graphagent.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
)
from graphagent.testing import ScriptedChatModel


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def transfer(amount: int, to: str) -> str:
    """Move money to an account. A person reviews every transfer before it runs."""
    return f"moved {amount} to {to}"


def _lookup(i: int) -> Any:
    @tool(f"lookup_{i}")
    def lookup(key: str) -> str:
        """Look a key up in one of eight shards (a sync tool, run in a thread)."""
        return f"shard {i}: {key}"

    return lookup


LOOKUPS = [_lookup(i) for i in range(8)]


class SyncAudit(AgentMiddleware):
    """Sync-only wrappers, the most common shape of user middleware: the server runs graphs
    asynchronously, so graphagent bridges them into its async runs."""

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        return handler(request)

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        return handler(request)


class RunLog(AgentMiddleware):
    """``wrap_agent`` around every run: one line per finished run in ``GRAPHAGENT_RUN_LOG``.

    Async, with the file write in a thread: the dev server fails runs that block its event loop.
    """

    async def awrap_agent(self, state: Any, runtime: Any) -> AsyncIterator[None]:
        outcome = "failed"
        try:
            yield
            outcome = "finished"
        except GeneratorExit:
            outcome = "closed"
            raise
        except BaseException as error:
            outcome = type(error).__name__
            raise
        finally:
            if path := os.environ.get("GRAPHAGENT_RUN_LOG"):
                await asyncio.to_thread(
                    _append, path, {"agent": runtime.agent_name, "outcome": outcome}
                )


def _append(path: str, record: dict[str, str]) -> None:
    with open(path, "a", encoding="utf-8") as log:
        log.write(json.dumps(record) + "\n")


def plan(messages: list[BaseMessage]) -> AIMessage:
    """The offline model: reads the last user request and calls tools for it."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        answers = [m.text for m in messages if isinstance(m, ToolMessage)]
        return AIMessage(f"Done: {'; '.join(answers[-8:])}")
    text = last.text
    if m := re.search(r"add (\d+) and (\d+)", text):
        return _call("add", {"a": int(m[1]), "b": int(m[2])})
    if m := re.search(r"transfer (\d+) to (\w+)", text):
        return _call("transfer", {"amount": int(m[1]), "to": m[2]})
    if "fan out" in text:
        return AIMessage(
            "", tool_calls=[_tool_call(f"lookup_{i}", {"key": text}) for i in range(8)]
        )
    return AIMessage(f"You said: {text}")


def _call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage("", tool_calls=[_tool_call(name, args)])


def _tool_call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"call_{os.urandom(6).hex()}", "type": "tool_call"}


agent = create_agent(
    os.environ.get("GRAPHAGENT_MODEL") or ScriptedChatModel([plan], repeat_last=True),
    [add, transfer, *LOOKUPS],
    middleware=[
        RunLog(),
        SyncAudit(),
        ModelCallLimitMiddleware(run_limit=10),
        HumanInTheLoopMiddleware(interrupt_on={"transfer": True}),
    ],
    name="graphagent-example",
)
