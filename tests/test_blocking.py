"""The whole suite runs under a blocking-call detector (``tests/conftest.py``), as LangGraph's API
server runs graphs: graphagent itself never blocks the event loop. These tests keep the detector
honest, and show what it catches in user code."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from blockbuster import BlockingError

from graphagent import create_agent
from graphagent.middleware import AgentMiddleware, before_model
from graphagent.testing import ScriptedChatModel


def test_a_blocking_sync_node_hook_under_ainvoke_is_caught() -> None:
    @before_model
    def lookup(state: Any, runtime: Any) -> None:
        time.sleep(0.001)  # on the event loop's thread under ainvoke

    agent = create_agent(ScriptedChatModel(["hi"]), middleware=[lookup])

    with pytest.raises(BlockingError):
        asyncio.run(agent.ainvoke({"messages": [("user", "hi")]}))
    agent.invoke({"messages": [("user", "hi")]})  # no event loop: blocking is fine


def test_a_blocking_sync_wrap_hook_under_ainvoke_runs_off_the_loop() -> None:
    class Slow(AgentMiddleware):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            time.sleep(0.001)  # in the bridge's thread, not on the event loop
            return handler(request)

    agent = create_agent(ScriptedChatModel(["hi"]), middleware=[Slow()])

    result = asyncio.run(agent.ainvoke({"messages": [("user", "hi")]}))

    assert result["messages"][-1].content == "hi"
