"""Streaming: every stream mode, sync and async, through hooks, wrappers, tools and subgraphs.

Streaming is langgraph's job; these tests check that graphagent's nodes and wrapper layers do
not get in its way, and pin down what a caller sees for an agent.
"""

from __future__ import annotations

import asyncio
import functools
import operator
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Annotated, Any, NotRequired

import pytest
from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    BaseCallbackHandler,
    CallbackManagerForLLMRun,
)
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolRuntime
from langgraph.runtime import Runtime
from pydantic import BaseModel, PrivateAttr
from typing_extensions import TypedDict

from graphagent import AgentState, create_agent
from graphagent.middleware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    OmitFromOutput,
    PrivateStateAttr,
    ToolCallRequest,
    hook_config,
    wrap_model_call,
)
from graphagent.structured_output import ToolStrategy
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import hook_node, run_agent
from tests.tools import add

INPUTS = {"messages": ["What is 1 + 2?"]}


@pytest.fixture(params=("stream", "astream"))
def how_stream(request: pytest.FixtureRequest) -> str:
    """``stream`` and ``astream``."""
    return request.param  # type: ignore[no-any-return]


def collect(agent: Any, how: str, inputs: Any = INPUTS, **kwargs: Any) -> list[Any]:
    """Everything ``agent.stream``/``agent.astream`` yields."""
    if how == "stream":
        return list(agent.stream(inputs, **kwargs))

    async def gather() -> list[Any]:
        return [chunk async for chunk in agent.astream(inputs, **kwargs)]

    return asyncio.run(gather())


def collect_events(agent: Any, inputs: Any = INPUTS) -> list[dict[str, Any]]:
    async def gather() -> list[dict[str, Any]]:
        return [event async for event in agent.astream_events(inputs, version="v2")]

    return asyncio.run(gather())


class RecordingModel(ScriptedChatModel):
    """A scripted model that records each use of its streaming methods."""

    _streamed: list[str] = PrivateAttr(default_factory=list)

    @property
    def streamed(self) -> list[str]:
        return list(self._streamed)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        self._streamed.append("_stream")
        yield from super()._stream(messages, stop, run_manager, **kwargs)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        self._streamed.append("_astream")
        async for chunk in super()._astream(messages, stop, run_manager, **kwargs):
            yield chunk


def streaming_method(how: str) -> str:
    return "_stream" if how == "stream" else "_astream"


def add_then_answer(model_class: type[ScriptedChatModel] = RecordingModel) -> Any:
    return model_class([calls(("add", {"a": 1, "b": 2})), "The sum is 3."])


def joined(chunks: list[Any]) -> Any:
    return functools.reduce(operator.add, chunks)


class EveryNodeHook(AgentMiddleware):
    """One node per node hook; none of them writes anything."""

    def before_agent(self, state: Any, runtime: Any) -> None:
        return None

    def before_model(self, state: Any, runtime: Any) -> None:
        return None

    def after_model(self, state: Any, runtime: Any) -> None:
        return None

    def after_agent(self, state: Any, runtime: Any) -> None:
        return None


# -- the model's wrapper layers ------------------------------------------------------------------


def sync_only(name: str) -> AgentMiddleware:
    """A sync-only wrapper (bridged through a worker thread under astream) that reports around
    its handler call with custom events."""

    @wrap_model_call(name=name)
    def layer(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        write = get_stream_writer()
        write(f"{name} before")
        response = handler(request)
        write(f"{name} after")
        return response

    return layer


class Twins(AgentMiddleware):
    """A wrapper with both twins, reporting around its handler call with custom events."""

    def __init__(self, name: str) -> None:
        self.name = name

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Any:
        request.runtime.stream_writer(f"{self.name} before")
        response = handler(request)
        request.runtime.stream_writer(f"{self.name} after")
        return response

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        request.runtime.stream_writer(f"{self.name} before")
        response = await handler(request)
        request.runtime.stream_writer(f"{self.name} after")
        return response


LAYOUTS = {
    "no wrappers": list,
    "sync-only around sync-only": lambda: [sync_only("outer"), sync_only("inner")],
    "twins around twins": lambda: [Twins("outer"), Twins("inner")],
    "twins around sync-only": lambda: [Twins("outer"), sync_only("inner")],
    "sync-only around twins": lambda: [sync_only("outer"), Twins("inner")],
}


def trace(items: list[tuple[str, Any]]) -> list[str]:
    """Custom events as they are; message chunks as ``token '<text>' @ <node>``."""
    lines = []
    for mode, chunk in items:
        if mode == "messages":
            message, metadata = chunk
            lines.append(f"token {message.content!r} @ {metadata['langgraph_node']}")
        else:
            lines.append(chunk)
    return lines


# -- updates -------------------------------------------------------------------------------------


def test_updates_yield_one_chunk_per_node(how_stream: str, hook_mode: str) -> None:
    model = RecordingModel(
        [calls(("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})), "3 and 7."]
    )
    agent = create_agent(model, [add], middleware=[EveryNodeHook()])

    chunks = collect(agent, how_stream, stream_mode="updates")

    assert all(len(chunk) == 1 for chunk in chunks)
    nodes = [
        "EveryNodeHook.before_agent",
        "EveryNodeHook.before_model",
        "model",
        "EveryNodeHook.after_model",
        "tools",  # one update per tool call: each call is its own task
        "tools",
        "EveryNodeHook.before_model",
        "model",
        "EveryNodeHook.after_model",
        "EveryNodeHook.after_agent",
    ]
    assert [next(iter(chunk)) for chunk in chunks] == [hook_node(n, hook_mode) for n in nodes]
    assert chunks[0] == {hook_node("EveryNodeHook.before_agent", hook_mode): None}
    tool_results = sorted(chunk["tools"]["messages"][0].content for chunk in chunks[4:6])
    assert tool_results == ["3", "7"]
    assert chunks[7]["model"]["messages"][0].content == "3 and 7."
    assert model.streamed == []


def test_updates_carry_what_each_node_wrote(how_stream: str, hook_mode: str) -> None:
    class Brief(AgentMiddleware):
        def before_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
            return {"messages": [AIMessage("(be brief)", id="brief")]}

    agent = create_agent(add_then_answer(), [add], middleware=[Brief()])

    chunks = collect(agent, how_stream, stream_mode="updates")

    node = hook_node("Brief.before_agent", hook_mode)
    assert chunks[0] == {node: {"messages": [AIMessage("(be brief)", id="brief")]}}
    (call,) = chunks[1]["model"]["messages"]
    assert call.tool_calls[0]["name"] == "add"
    (result,) = chunks[2]["tools"]["messages"]
    assert isinstance(result, ToolMessage)
    assert result.content == "3"
    assert chunks[3]["model"]["messages"][0].content == "The sum is 3."


# -- values --------------------------------------------------------------------------------------


def test_values_yield_the_whole_state_after_each_step(how_stream: str) -> None:
    model = add_then_answer()
    agent = create_agent(model, [add], middleware=[EveryNodeHook()])

    chunks = collect(agent, how_stream, stream_mode="values")

    # The input, then after each step that wrote to the state (the hooks here write nothing).
    assert [[type(m).__name__ for m in chunk["messages"]] for chunk in chunks] == [
        ["HumanMessage"],
        ["HumanMessage", "AIMessage"],
        ["HumanMessage", "AIMessage", "ToolMessage"],
        ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"],
    ]
    assert chunks[-1]["messages"][-1].content == "The sum is 3."
    assert model.streamed == []


# -- messages ------------------------------------------------------------------------------------


def test_messages_stream_the_model_tokens_with_node_metadata(how_stream: str) -> None:
    model = add_then_answer()
    agent = create_agent(model, [add])

    items = collect(agent, how_stream, stream_mode="messages")

    assert all(isinstance(item, tuple) and len(item) == 2 for item in items)
    nodes = [metadata["langgraph_node"] for _, metadata in items]
    assert nodes == ["model", "tools", "model", "model", "model", "model"]
    call_chunk = items[0][0]
    assert isinstance(call_chunk, AIMessageChunk)
    assert call_chunk.tool_call_chunks[0]["name"] == "add"
    assert isinstance(items[1][0], ToolMessage)
    tokens = [message for message, metadata in items[2:]]
    assert all(isinstance(token, AIMessageChunk) for token in tokens)
    assert [token.content for token in tokens] == ["The", " sum", " is", " 3."]
    assert joined(tokens).content == "The sum is 3."
    assert len({token.id for token in tokens}) == 1
    assert model.streamed == [streaming_method(how_stream)] * 2


def test_messages_written_by_hooks_arrive_whole_with_their_node(
    how_stream: str, hook_mode: str
) -> None:
    class Frame(AgentMiddleware):
        def before_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
            return {"messages": [HumanMessage("(be brief)")]}

        def after_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
            return {"messages": [AIMessage("(done)")]}

    agent = create_agent(RecordingModel(["Hello there."]), middleware=[Frame()])

    items = collect(agent, how_stream, stream_mode="messages")

    assert [(type(m).__name__, m.content, md["langgraph_node"]) for m, md in items] == [
        ("HumanMessage", "(be brief)", hook_node("Frame.before_agent", hook_mode)),
        ("AIMessageChunk", "Hello", "model"),
        ("AIMessageChunk", " there.", "model"),
        ("AIMessage", "(done)", hook_node("Frame.after_agent", hook_mode)),
    ]


def test_the_agent_name_is_on_the_finished_message_not_on_the_chunks(how_stream: str) -> None:
    agent = create_agent(RecordingModel(["Hello there."]), name="greeter")

    items = collect(agent, how_stream, stream_mode=["messages", "updates"])

    tokens = [chunk[0] for mode, chunk in items if mode == "messages"]
    (update,) = [chunk for mode, chunk in items if mode == "updates"]
    assert [token.name for token in tokens] == [None, None]
    assert update["model"]["messages"][0].name == "greeter"


@pytest.mark.parametrize("layout", LAYOUTS)
def test_tokens_stream_live_through_wrapper_layers(how_stream: str, layout: str) -> None:
    model = RecordingModel(["Hello there."])
    agent = create_agent(model, middleware=LAYOUTS[layout]())

    items = collect(agent, how_stream, stream_mode=["messages", "custom"])

    tokens = ["token 'Hello' @ model", "token ' there.' @ model"]
    if layout == "no wrappers":
        assert trace(items) == tokens
    else:
        # The tokens arrive while the innermost handler runs, before any layer has returned.
        assert trace(items) == [
            "outer before",
            "inner before",
            *tokens,
            "inner after",
            "outer after",
        ]
    assert model.streamed == [streaming_method(how_stream)]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_astream_events_emit_the_model_tokens(layout: str) -> None:
    model = RecordingModel(["Hello there."])
    agent = create_agent(model, middleware=LAYOUTS[layout]())

    events = collect_events(agent)

    streamed = [event for event in events if event["event"] == "on_chat_model_stream"]
    assert [event["data"]["chunk"].content for event in streamed] == ["Hello", " there."]
    assert {event["metadata"]["langgraph_node"] for event in streamed} == {"model"}
    assert {event["name"] for event in streamed} == {"RecordingModel"}
    assert model.streamed == ["_astream"]


# -- who decides whether the model streams -------------------------------------------------------

NOT_STREAMING = [
    ("invoke", None),
    ("ainvoke", None),
    *(
        (how, mode)
        for mode in ("updates", "values", "custom", "debug")
        for how in ("stream", "astream")
    ),
]


@pytest.mark.parametrize(("how", "mode"), NOT_STREAMING)
def test_the_model_does_not_stream_unless_the_caller_streams_tokens(
    how: str, mode: str | None
) -> None:
    model = add_then_answer()
    agent = create_agent(model, [add], middleware=[sync_only("outer"), Twins("inner")])

    if mode is None:
        result = run_agent(agent, how, INPUTS)
        assert result["messages"][-1].content == "The sum is 3."
    else:
        assert collect(agent, how, stream_mode=mode)

    assert model.call_count == 2
    assert model.streamed == []


@pytest.mark.parametrize(
    ("how", "mode", "method"),
    [
        ("stream", "messages", "_stream"),
        ("astream", "messages", "_astream"),
        pytest.param("stream", ["updates", "messages"], "_stream", id="stream-modes"),
        pytest.param("astream", ["updates", "messages"], "_astream", id="astream-modes"),
        ("stream", "tools", "_stream"),
        ("astream", "tools", "_astream"),
        ("astream_events", None, "_astream"),
    ],
)
def test_the_model_streams_when_the_caller_streams_tokens(how: str, mode: Any, method: str) -> None:
    model = add_then_answer()
    agent = create_agent(model, [add], middleware=[sync_only("outer"), Twins("inner")])

    if how == "astream_events":
        collect_events(agent)
    else:
        collect(agent, how, stream_mode=mode)

    assert model.streamed == [method, method]


class TokenCounter(BaseCallbackHandler):
    """An ordinary callback handler: it sees tokens if there are any, but does not ask for them."""

    def __init__(self) -> None:
        self.tokens = 0
        self.model_ends = 0

    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self.tokens += 1

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.model_ends += 1


def test_an_ordinary_callback_handler_does_not_make_the_model_stream(how_call: str) -> None:
    model = add_then_answer()
    counter = TokenCounter()
    agent = create_agent(model, [add])

    run_agent(agent, how_call, INPUTS, config={"callbacks": [counter]})

    assert (counter.model_ends, counter.tokens) == (2, 0)
    assert model.streamed == []


def test_a_model_with_streaming_disabled_yields_whole_messages(how_stream: str) -> None:
    model = RecordingModel(["Hello there."], disable_streaming=True)
    agent = create_agent(model)

    items = collect(agent, how_stream, stream_mode="messages")

    assert [(type(m).__name__, m.content, md["langgraph_node"]) for m, md in items] == [
        ("AIMessage", "Hello there.", "model")
    ]
    assert model.streamed == []


# -- custom --------------------------------------------------------------------------------------


@tool
def lookup(topic: str, runtime: ToolRuntime) -> str:
    """Look a topic up."""
    runtime.stream_writer({"tool": f"looking up {topic}"})
    get_stream_writer()({"tool": "found it"})
    return f"notes on {topic}"


class Progress(AgentMiddleware):
    """Writes custom events from a node hook, a model wrapper and a tool wrapper (both twins)."""

    def before_model(self, state: Any, runtime: Runtime[Any]) -> None:
        runtime.stream_writer({"hook": f"{len(state['messages'])} messages so far"})

    async def abefore_model(self, state: Any, runtime: Runtime[Any]) -> None:
        get_stream_writer()({"hook": f"{len(state['messages'])} messages so far"})

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Any:
        request.runtime.stream_writer({"model wrapper": "calling the model"})
        return handler(request)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        get_stream_writer()({"model wrapper": "calling the model"})
        return await handler(request)

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[..., Any]) -> Any:
        get_stream_writer()({"tool wrapper": request.tool_call["name"]})
        return handler(request)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[..., Awaitable[Any]]
    ) -> Any:
        get_stream_writer()({"tool wrapper": request.tool_call["name"]})
        return await handler(request)


def test_hooks_wrappers_and_tools_write_custom_events(how_stream: str) -> None:
    model = RecordingModel([calls(("lookup", {"topic": "otters"})), "Otters hold hands."])
    agent = create_agent(model, [lookup], middleware=[Progress(), sync_only("bridged")])

    chunks = collect(agent, how_stream, stream_mode="custom")

    def model_call(messages_so_far: int) -> list[Any]:
        return [
            {"hook": f"{messages_so_far} messages so far"},
            {"model wrapper": "calling the model"},
            "bridged before",
            "bridged after",
        ]

    assert chunks == [
        *model_call(1),
        {"tool wrapper": "lookup"},
        {"tool": "looking up otters"},
        {"tool": "found it"},
        *model_call(3),
    ]
    assert model.streamed == []


# -- debug ---------------------------------------------------------------------------------------


def test_debug_reports_each_task_and_its_result(how_stream: str, hook_mode: str) -> None:
    model = RecordingModel(["Hello there."])
    agent = create_agent(model, middleware=[EveryNodeHook()])

    events = collect(agent, how_stream, stream_mode="debug")

    steps = [(event["type"], event["payload"]["name"]) for event in events]
    assert steps == [
        (kind, hook_node(node, hook_mode))
        for node in (
            "EveryNodeHook.before_agent",
            "EveryNodeHook.before_model",
            "model",
            "EveryNodeHook.after_model",
            "EveryNodeHook.after_agent",
        )
        for kind in ("task", "task_result")
    ]
    assert events[5]["payload"]["result"]["messages"][0].content == "Hello there."
    assert model.streamed == []


def test_debug_adds_checkpoints_when_the_agent_has_a_checkpointer(how_stream: str) -> None:
    agent = create_agent(RecordingModel(["Hello there."]), checkpointer=InMemorySaver())

    events = collect(
        agent, how_stream, config={"configurable": {"thread_id": "t"}}, stream_mode="debug"
    )

    assert [event["type"] for event in events] == [
        "checkpoint",
        "checkpoint",
        "task",
        "task_result",
        "checkpoint",
    ]
    assert events[-1]["payload"]["values"]["messages"][-1].content == "Hello there."


# -- several modes at once -----------------------------------------------------------------------


def test_a_list_of_modes_yields_mode_and_chunk_pairs(how_stream: str) -> None:
    agent = create_agent(RecordingModel(["Hello there."]), middleware=[EveryNodeHook()])

    items = collect(agent, how_stream, stream_mode=["updates", "messages"])

    assert all(isinstance(item, tuple) and len(item) == 2 for item in items)
    seen = [
        f"{mode}: {next(iter(chunk))}" if mode == "updates" else f"{mode}: {chunk[0].content!r}"
        for mode, chunk in items
    ]
    assert seen == [
        "updates: EveryNodeHook.before_agent",
        "updates: EveryNodeHook.before_model",
        "messages: 'Hello'",
        "messages: ' there.'",
        "updates: model",
        "updates: EveryNodeHook.after_model",
        "updates: EveryNodeHook.after_agent",
    ]


def test_stream_version_v2_yields_typed_parts(how_stream: str) -> None:
    agent = create_agent(RecordingModel(["Hello there."]))

    parts = collect(agent, how_stream, stream_mode=["updates", "messages"], version="v2")

    assert [(part["type"], part["ns"]) for part in parts] == [
        ("messages", ()),
        ("messages", ()),
        ("updates", ()),
    ]
    assert parts[0]["data"][0].content == "Hello"
    assert list(parts[2]["data"]) == ["model"]


# -- structured output ---------------------------------------------------------------------------


class Weather(BaseModel):
    city: str
    celsius: int


def test_structured_output_streams_as_tool_call_chunks(how_stream: str) -> None:
    model = RecordingModel([calls(("Weather", {"city": "Paris", "celsius": 21}), text="Here.")])
    agent = create_agent(model, response_format=ToolStrategy(Weather))

    items = collect(agent, how_stream, stream_mode=["messages", "values"])

    messages = [chunk for mode, chunk in items if mode == "messages"]
    assert {metadata["langgraph_node"] for _, metadata in messages} == {"model"}
    chunks = [m for m, _ in messages if isinstance(m, AIMessageChunk)]
    assert [c.content for c in chunks] == ["Here.", ""]
    (call_chunk,) = chunks[1].tool_call_chunks
    assert call_chunk["name"] == "Weather"
    assert joined(chunks).tool_calls[0]["args"] == {"city": "Paris", "celsius": 21}
    # The answer to the structured-output call is written by the model node, not streamed.
    answer = messages[-1][0]
    assert isinstance(answer, ToolMessage)
    assert answer.tool_call_id == call_chunk["id"]
    final = [chunk for mode, chunk in items if mode == "values"][-1]
    assert final["structured_response"] == Weather(city="Paris", celsius=21)
    assert model.streamed == [streaming_method(how_stream)]


# -- tokens that are not the agent's answer ------------------------------------------------------


def test_filtering_by_node_keeps_only_the_agent_model_tokens(how_stream: str) -> None:
    summariser = RecordingModel(["Earlier: greetings."])

    class Summarise(AgentMiddleware):
        def before_model(self, state: Any, runtime: Any) -> None:
            summariser.invoke(state["messages"])

    agent = create_agent(RecordingModel(["Hello there."]), middleware=[Summarise()])

    items = collect(agent, how_stream, stream_mode="messages")

    by_node = [(metadata["langgraph_node"], message.content) for message, metadata in items]
    assert by_node == [
        ("Summarise.before_model", "Earlier:"),
        ("Summarise.before_model", " greetings."),
        ("model", "Hello"),
        ("model", " there."),
    ]
    answer = [
        message.content for message, metadata in items if metadata["langgraph_node"] == "model"
    ]
    assert "".join(answer) == "Hello there."


def test_every_attempt_of_a_retrying_wrapper_streams(how_stream: str) -> None:
    @wrap_model_call
    def second_try(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        handler(request)
        return handler(request)

    agent = create_agent(RecordingModel(["First try.", "Second try."]), middleware=[second_try])

    items = collect(agent, how_stream, stream_mode=["messages", "updates"])

    tokens = [chunk[0] for mode, chunk in items if mode == "messages"]
    assert [token.content for token in tokens] == ["First", " try.", "Second", " try."]
    assert tokens[0].id == tokens[1].id != tokens[2].id == tokens[3].id
    (update,) = [chunk for mode, chunk in items if mode == "updates"]
    assert [m.content for m in update["model"]["messages"]] == ["Second try."]
    assert update["model"]["messages"][0].id == tokens[2].id


def test_a_reply_replaced_by_a_wrapper_arrives_whole_after_the_tokens(how_stream: str) -> None:
    @wrap_model_call
    def replace(request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        handler(request)
        return AIMessage("Replaced.")

    agent = create_agent(RecordingModel(["Original answer."]), middleware=[replace])

    items = collect(agent, how_stream, stream_mode="messages")

    assert [(type(m).__name__, m.content, md["langgraph_node"]) for m, md in items] == [
        ("AIMessageChunk", "Original", "model"),
        ("AIMessageChunk", " answer.", "model"),
        ("AIMessage", "Replaced.", "model"),
    ]


# -- subgraphs -----------------------------------------------------------------------------------


class ParentState(TypedDict):
    messages: Annotated[list[BaseMessage], add_messages]


def parent_graph(agent: Any) -> Any:
    graph = StateGraph(ParentState)
    graph.add_node("helper", agent)
    graph.add_edge(START, "helper")
    graph.add_edge("helper", END)
    return graph.compile()


def test_subgraph_updates_are_namespaced_by_the_parent_node(how_stream: str) -> None:
    agent = create_agent(add_then_answer(), [add], middleware=[EveryNodeHook()])

    items = collect(parent_graph(agent), how_stream, stream_mode="updates", subgraphs=True)

    assert all(isinstance(item, tuple) and len(item) == 2 for item in items)
    *inner, (outer_ns, outer) = items
    assert (outer_ns, list(outer)) == ((), ["helper"])
    assert outer["helper"]["messages"][-1].content == "The sum is 3."
    (namespace,) = {ns for ns, _ in inner}
    assert len(namespace) == 1
    assert namespace[0].startswith("helper:")
    assert [next(iter(chunk)) for _, chunk in inner] == [
        "EveryNodeHook.before_agent",
        "EveryNodeHook.before_model",
        "model",
        "EveryNodeHook.after_model",
        "tools",
        "EveryNodeHook.before_model",
        "model",
        "EveryNodeHook.after_model",
        "EveryNodeHook.after_agent",
    ]


def test_subgraph_tokens_carry_the_namespace_and_the_model_node(how_stream: str) -> None:
    agent = create_agent(add_then_answer(), [add], middleware=[sync_only("bridged")])

    items = collect(parent_graph(agent), how_stream, stream_mode="messages", subgraphs=True)

    assert all(isinstance(item, tuple) and len(item) == 2 for item in items)
    seen = [
        (ns[0].split(":")[0], metadata["langgraph_node"], message.content)
        for ns, (message, metadata) in items
    ]
    assert seen == [
        ("helper", "model", ""),
        ("helper", "tools", "3"),
        ("helper", "model", "The"),
        ("helper", "model", " sum"),
        ("helper", "model", " is"),
        ("helper", "model", " 3."),
    ]
    ns, (_, metadata) = items[0]
    assert metadata["checkpoint_ns"] == ns[0]
    assert metadata["langgraph_checkpoint_ns"].startswith(f"{ns[0]}|model:")


def test_without_subgraphs_the_parent_sees_the_agent_messages_whole(how_stream: str) -> None:
    agent = create_agent(add_then_answer(), [add])

    items = collect(parent_graph(agent), how_stream, stream_mode="messages")

    assert [(type(m).__name__, m.content, md["langgraph_node"]) for m, md in items] == [
        ("AIMessage", "", "helper"),
        ("ToolMessage", "3", "helper"),
        ("AIMessage", "The sum is 3.", "helper"),
    ]


# -- what the stream shows of private state ------------------------------------------------------


class SecretState(AgentState):
    secret: NotRequired[Annotated[int, PrivateStateAttr]]
    internal: NotRequired[Annotated[str, OmitFromOutput]]


class Gate(AgentMiddleware[SecretState, Any, Any]):
    state_schema = SecretState

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        closed = AIMessage("Closed.", id="closed")
        return {"secret": 42, "internal": "x", "jump_to": "end", "messages": [closed]}


def test_private_fields_stay_out_of_values_and_updates_chunks(
    how_stream: str, hook_mode: str
) -> None:
    """Streams show what invoke returns: ``jump_to``, PrivateStateAttr and OmitFromOutput fields
    stay inside the agent (LangChain's agents stream them)."""
    agent = create_agent(RecordingModel([]), middleware=[Gate()])

    values = collect(agent, how_stream, stream_mode="values")
    updates = collect(agent, how_stream, stream_mode="updates")
    chosen = collect(agent, how_stream, stream_mode="values", output_keys=["messages", "secret"])

    assert set(values[-1]) == {"messages"}
    assert set(updates[0][hook_node("Gate.before_model", hook_mode)]) == {"messages"}
    assert chosen[-1]["secret"] == 42
    assert set(run_agent(agent, "invoke", INPUTS)) == {"messages"}
    assert set(run_agent(agent, "ainvoke", INPUTS)) == {"messages"}
