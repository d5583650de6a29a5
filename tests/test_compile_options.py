"""create_agent passes its graph options to LangGraph's compile."""

from __future__ import annotations

from langchain_core.messages import ToolMessage
from langgraph.cache.memory import InMemoryCache
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from graphagent import create_agent
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent
from tests.tools import add


def test_interrupt_before_tools_pauses_and_resumes(how_call: str) -> None:
    model = ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "3"])
    agent = create_agent(model, [add], checkpointer=InMemorySaver(), interrupt_before=["tools"])
    config = {"configurable": {"thread_id": "t"}}

    paused = run_agent(agent, how_call, {"messages": ["1+2"]}, config=config)
    assert not any(isinstance(m, ToolMessage) for m in paused["messages"])
    assert agent.get_state(config).next == ("tools",)

    done = run_agent(agent, how_call, None, config=config)
    assert done["messages"][-1].content == "3"


def test_interrupt_after_model_pauses() -> None:
    model = ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "3"])
    agent = create_agent(model, [add], checkpointer=InMemorySaver(), interrupt_after=["model"])
    config = {"configurable": {"thread_id": "t"}}

    agent.invoke({"messages": ["x"]}, config)
    assert agent.get_state(config).next == ("tools",)
    assert model.call_count == 1


def test_store_cache_name_and_debug_reach_the_compiled_graph() -> None:
    store, cache = InMemoryStore(), InMemoryCache()
    agent = create_agent(
        ScriptedChatModel(["hi"]), store=store, cache=cache, name="bot", debug=True
    )

    assert agent.store is store
    assert agent.cache is cache
    assert agent.name == "bot"
    assert agent.debug is True
    assert agent.config is not None
    assert agent.config["metadata"]["lc_agent_name"] == "bot"
