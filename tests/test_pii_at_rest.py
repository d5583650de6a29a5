"""PIIMiddleware(apply_to_input=True): the raw input is in no checkpoint, no stream chunk of any
mode, no span and no hook, whichever way it enters the agent."""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import Generator
from typing import Annotated, Any

import pytest
from langchain_core.messages import AnyMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel

from graphagent import create_agent
from graphagent.middleware import AgentMiddleware
from graphagent.middleware.otel import OtelTracingMiddleware
from graphagent.middleware.pii import PIIDetectionError, PIIMiddleware
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import ENTRY_POINTS, run_agent

EMAIL = "jane.doe@example.com"
CARD = "4111 1111 1111 1111"
RAW = (EMAIL, CARD)
QUESTION = {"messages": [("user", f"I am {EMAIL}, card {CARD}. Weather?")]}
MODES = ["values", "updates", "messages", "debug", "tasks", "checkpoints", "custom"]


@tool
def weather(city: str) -> str:
    """The weather of a city."""
    return f"sunny in {city}"


class Witness(AgentMiddleware):
    """Shows what hooks get: wrap_agent keeps its state, before_agent streams its messages."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def wrap_agent(self, state: Any, runtime: Any) -> Generator[None, Any, None]:
        self.seen.append(state)
        yield

    def before_agent(self, state: Any, runtime: Any) -> None:
        get_stream_writer()({"messages": [m.content for m in state["messages"]]})


class Guarded:
    """An agent redacting emails and cards on input, traced with content, checkpointed (by the
    parent graph when ``nested``)."""

    def __init__(self, nested: bool = False) -> None:
        self.exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.witness = Witness()
        self.saver = InMemorySaver()
        self.model = ScriptedChatModel([calls(("weather", {"city": "Paris"})), "Sunny."] * 2)
        middleware = [
            OtelTracingMiddleware(provider, record_content=True),
            self.witness,
            PIIMiddleware("email"),
            PIIMiddleware("credit_card", strategy="mask"),
        ]
        self.agent = create_agent(
            self.model,
            [weather],
            middleware=middleware,
            checkpointer=None if nested else self.saver,
        )

    def assert_nothing_raw_anywhere(self, config: dict[str, Any]) -> None:
        history = list(self.agent.get_state_history(config))
        assert [s.metadata["step"] for s in history][-2:] == [0, -1]  # the input's checkpoints
        for snapshot in history:
            assert_clean(snapshot, f"checkpoint of step {snapshot.metadata['step']}")
        assert namespaces_storing(self.saver) == set()
        spans = self.exporter.get_finished_spans()
        assert spans
        for span in spans:
            assert_clean((span.attributes, span.events, span.status.description), span.name)
        assert_clean(self.witness.seen, "wrap_agent's state")
        for call in self.model.calls:
            assert_clean(call.messages, "a model call")


def assert_clean(value: Any, where: str) -> None:
    text = repr(value)
    for raw in RAW:
        assert raw not in text, f"{raw!r} in {where}: {text[:500]}"


def namespaces_storing(saver: InMemorySaver, raw: tuple[str, ...] = RAW) -> set[str]:
    """The checkpoint namespaces ("" for the top graph; "agent" for a node "agent") whose
    serialized checkpoints, writes or blobs hold any of ``raw``."""
    stored: list[tuple[str, Any]] = [
        (ns, checkpoints) for thread in saver.storage.values() for ns, checkpoints in thread.items()
    ]
    stored += [(key[1], writes) for key, writes in saver.writes.items()]
    stored += [(key[1], blob) for key, blob in saver.blobs.items()]
    return {
        ns.split(":")[0]
        for ns, value in stored
        if any(r.encode() in pickle.dumps(value) for r in raw)
    }


def streamed(agent: Any, how: str, inputs: Any, config: Any, **kwargs: Any) -> list[Any]:
    if how == "stream":
        return list(agent.stream(inputs, config, stream_mode=MODES, **kwargs))

    async def collect() -> list[Any]:
        return [c async for c in agent.astream(inputs, config, stream_mode=MODES, **kwargs)]

    return asyncio.run(asyncio.wait_for(collect(), 60))


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


# -- one agent, every entry point -------------------------------------------------------------


@pytest.mark.parametrize("subgraphs", [False, True])
@pytest.mark.parametrize("how", ["stream", "astream"])
def test_no_stream_mode_carries_the_raw_input(how: str, subgraphs: bool) -> None:
    guarded = Guarded()
    config = thread(how)

    chunks = streamed(guarded.agent, how, QUESTION, config, subgraphs=subgraphs)

    assert {chunk[-2] for chunk in chunks} == set(MODES)  # (namespace,) mode, data
    for chunk in chunks:
        assert_clean(chunk, f"a {chunk[-2]!r} chunk")
    (custom,) = [data for *_, mode, data in chunks if mode == "custom"]
    assert custom["messages"] == ["I am [REDACTED_EMAIL], card **** **** **** 1111. Weather?"]
    guarded.assert_nothing_raw_anywhere(config)


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_no_checkpoint_span_or_hook_holds_the_raw_input(how: str) -> None:
    guarded = Guarded()
    config = thread(how)

    result = run_agent(guarded.agent, how, QUESTION, config=config)
    run_agent(guarded.agent, how, {"messages": [f"And for {EMAIL}?"]}, config=config)

    assert result["messages"][0].content == (
        "I am [REDACTED_EMAIL], card **** **** **** 1111. Weather?"
    )
    guarded.assert_nothing_raw_anywhere(config)


def test_a_command_update_and_update_state_write_rewritten_messages(how_call: str) -> None:
    guarded = Guarded()
    config = thread(how_call)
    written = HumanMessage(f"Also, my card is {CARD}.", id="written")

    if how_call == "invoke":
        guarded.agent.update_state(config, {"messages": [written]})
    else:
        asyncio.run(guarded.agent.aupdate_state(config, {"messages": [written]}))
    update = Command(update=[("messages", ("user", f"I am {EMAIL}."))])
    result = run_agent(guarded.agent, how_call, update, config=config)

    assert [m.content for m in result["messages"][:2]] == [
        "Also, my card is **** **** **** 1111.",
        "I am [REDACTED_EMAIL].",
    ]
    assert namespaces_storing(guarded.saver) == set()


def test_a_blocked_input_stops_the_run_before_anything_is_stored(how: str) -> None:
    saver = InMemorySaver()
    model = ScriptedChatModel(["Hello."])
    blocking = PIIMiddleware("email", strategy="block")
    agent = create_agent(model, middleware=[blocking], checkpointer=saver)
    config = thread(how)

    with pytest.raises(PIIDetectionError):
        run_agent(agent, how, QUESTION, config=config)

    assert model.call_count == 0
    assert list(agent.get_state_history(config)) == []
    result = run_agent(agent, how, {"messages": ["Hi"]}, config=config)
    assert [m.content for m in result["messages"]] == ["Hi", "Hello."]  # the thread is not stuck


# -- an agent inside a parent graph -----------------------------------------------------------


def parent_of(agent: Any, state: type[Any] = MessagesState) -> Any:
    graph = StateGraph(state)
    graph.add_node("agent", agent)
    graph.add_edge(START, "agent")
    return graph.compile(checkpointer=InMemorySaver())


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_the_agent_inside_a_parent_stores_and_streams_only_rewritten_input(how: str) -> None:
    guarded = Guarded(nested=True)
    parent = parent_of(guarded.agent)

    chunks = streamed(parent, how, QUESTION, thread(how), subgraphs=True)

    for namespace, mode, data in chunks:
        if namespace:  # the agent's own chunks; the parent's show the parent's input
            assert_clean(data, f"a {mode!r} chunk of {namespace}")
    for span in guarded.exporter.get_finished_spans():
        assert_clean((span.attributes, span.events), span.name)
    # The parent stored its input before the agent ran: graphagent cannot reach that.
    assert namespaces_storing(parent.checkpointer) == {""}
    final = parent.get_state(thread(how)).values["messages"][0]
    assert final.content == "I am [REDACTED_EMAIL], card **** **** **** 1111. Weather?"


def test_a_parent_that_rewrites_its_input_with_the_agent_stores_nothing_raw() -> None:
    guarded = Guarded(nested=True)
    parent = parent_of(guarded.agent)

    parent.invoke(guarded.agent.transformed_input(QUESTION), thread("parent"))

    assert namespaces_storing(parent.checkpointer) == set()


class PydanticState(BaseModel):
    messages: Annotated[list[AnyMessage], add_messages]


def test_a_parent_with_a_pydantic_state_hands_the_agent_an_object_it_rewrites() -> None:
    guarded = Guarded(nested=True)
    parent = parent_of(guarded.agent, PydanticState)

    result = parent.invoke(QUESTION, thread("pydantic"))

    assert result["messages"][0].content.startswith("I am [REDACTED_EMAIL], card ****")
    assert namespaces_storing(parent.checkpointer) == {""}
    assert_clean(guarded.witness.seen, "wrap_agent's state")
