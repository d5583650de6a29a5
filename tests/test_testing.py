"""Tests for graphagent.testing.ScriptedChatModel and its helpers."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import operator
import sys
import threading
from collections.abc import Iterator
from typing import Any
from unittest.mock import AsyncMock, MagicMock

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
    SystemMessage,
)
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from pydantic import BaseModel

import graphagent.testing as testing_module
from graphagent import GraphAgentError, create_agent
from graphagent.testing import (
    ModelCall,
    ScriptedChatModel,
    ScriptExhaustedError,
    calls,
    tool_call,
)
from tests.conftest import run_agent

# -- fixtures / helpers -----------------------------------------------------------


@tool
def get_weather(city: str) -> str:
    """Return the weather for a city."""
    return f"sunny in {city}"


class Lookup(BaseModel):
    """Look something up."""

    query: str


def concat(chunks: list[Any]) -> AIMessageChunk:
    assert chunks, "stream produced no chunks"
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    merged: AIMessageChunk = functools.reduce(operator.add, chunks)
    return merged


@pytest.fixture
def fast_thread_switching() -> Iterator[None]:
    """Make the interpreter switch threads very often so races actually happen."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


# -- module surface ---------------------------------------------------------------


def test_public_api() -> None:
    assert set(testing_module.__all__) == {
        "ScriptedChatModel",
        "ModelCall",
        "ScriptExhaustedError",
        "tool_call",
        "calls",
    }
    assert issubclass(ScriptExhaustedError, RuntimeError)
    assert issubclass(ScriptExhaustedError, GraphAgentError)
    assert ScriptedChatModel(["x"])._llm_type == "scripted-chat-model"


# -- replies ----------------------------------------------------------------------


def test_text_replies_in_order() -> None:
    model = ScriptedChatModel(replies=["first", "second"])
    a = model.invoke("q1")
    b = model.invoke("q2")
    assert isinstance(a, AIMessage)
    assert (a.content, b.content) == ("first", "second")
    assert a.tool_calls == []
    assert a.id is not None
    assert b.id is not None
    assert a.id.startswith("run-scripted-")
    assert a.id != b.id


def test_positional_and_keyword_construction_are_equivalent() -> None:
    assert ScriptedChatModel(["a"]).invoke("x").content == "a"
    assert ScriptedChatModel(replies=["a"]).invoke("x").content == "a"
    assert ScriptedChatModel(["a"]).replies == ScriptedChatModel(replies=["a"]).replies


def test_constructor_rejects_bad_scripts() -> None:
    with pytest.raises(TypeError, match="wrap a single reply in a list"):
        ScriptedChatModel("hello")  # a bare str would otherwise become one reply per char
    with pytest.raises(TypeError, match="reply #2 is int"):
        ScriptedChatModel(["ok", 42])  # type: ignore[list-item]


def test_aimessage_reply_is_copied_with_fresh_id() -> None:
    tc_id = "call_weather"
    scripted = AIMessage(
        content="hi", tool_calls=[tool_call("get_weather", {"city": "Oslo"}, id=tc_id)]
    )
    model = ScriptedChatModel([scripted, scripted])
    first = model.invoke("x")
    second = model.invoke("y")
    for out in (first, second):
        assert out is not scripted
        assert out.content == "hi"
        assert out.tool_calls == scripted.tool_calls
    assert scripted.id is None, "the scripted object must not be mutated"
    # Patching a returned tool call in place must not leak into the script.
    first.tool_calls[0]["args"]["city"] = "Bergen"
    first.tool_calls.append(tool_call("extra"))
    assert scripted.tool_calls == [tool_call("get_weather", {"city": "Oslo"}, id=tc_id)]
    assert second.tool_calls[0]["args"] == {"city": "Oslo"}
    assert first.id is not None
    assert second.id is not None
    assert first.id != second.id


def test_aimessage_reply_keeps_explicit_id() -> None:
    model = ScriptedChatModel([AIMessage(content="hi", id="my-id")])
    assert model.invoke("x").id == "my-id"


def test_callable_reply_receives_messages() -> None:
    seen: list[list[BaseMessage]] = []

    def echo(messages: list[BaseMessage]) -> str:
        seen.append(messages)
        return f"you said {messages[-1].content}"

    def ask_tool(messages: list[BaseMessage]) -> AIMessage:
        return calls(("get_weather", {"city": str(messages[-1].content)}))

    model = ScriptedChatModel([echo, ask_tool])
    out = model.invoke([SystemMessage("be nice"), HumanMessage("hello")])
    assert out.content == "you said hello"
    assert len(seen) == 1
    assert [type(m) for m in seen[0]] == [SystemMessage, HumanMessage]
    assert [m.content for m in seen[0]] == ["be nice", "hello"]

    out2 = model.invoke("Paris")
    assert out2.tool_calls[0]["name"] == "get_weather"
    assert out2.tool_calls[0]["args"] == {"city": "Paris"}
    assert out2.id is not None


def test_callable_returning_wrong_type_raises() -> None:
    model = ScriptedChatModel([lambda messages: 123])  # type: ignore[list-item,return-value]
    with pytest.raises(TypeError, match="expected str or AIMessage"):
        model.invoke("x")


# -- exhaustion / repeat_last --------------------------------------------------------


def test_exhaustion_error_message() -> None:
    model = ScriptedChatModel(["a", "b"])
    model.invoke("one")
    model.invoke("two")
    with pytest.raises(ScriptExhaustedError) as info:
        model.invoke([HumanMessage("first"), HumanMessage("the third question")])
    text = str(info.value)
    assert "2 replies were scripted" in text
    assert "called 3 times" in text
    assert "HumanMessage" in text
    assert "the third question" in text
    assert "Add more replies" in text
    # The failed call is still recorded, which helps debugging.
    assert model.call_count == 3
    assert model.calls[-1].messages[-1].content == "the third question"


def test_exhaustion_with_empty_script() -> None:
    with pytest.raises(
        ScriptExhaustedError, match=r"0 replies were scripted, but the model was called once\. Last"
    ):
        ScriptedChatModel([]).invoke("hi")
    model = ScriptedChatModel(["only"])
    model.invoke("a")
    with pytest.raises(ScriptExhaustedError, match="1 reply was scripted"):
        model.invoke("b")


def test_exhaustion_truncates_long_messages() -> None:
    model = ScriptedChatModel([])
    with pytest.raises(ScriptExhaustedError) as info:
        model.invoke("z" * 5000)
    assert len(str(info.value)) < 600


@pytest.mark.asyncio
async def test_exhaustion_async_and_streaming() -> None:
    model = ScriptedChatModel([])
    with pytest.raises(ScriptExhaustedError):
        await model.ainvoke("x")
    with pytest.raises(ScriptExhaustedError):
        [c async for c in model.astream("x")]
    with pytest.raises(ScriptExhaustedError):
        list(model.stream("x"))


def test_an_agent_run_past_the_script_is_caught_as_a_graphagent_error(how: str) -> None:
    model = ScriptedChatModel([calls(("get_weather", {"city": "Oslo"}))])
    agent = create_agent(model, [get_weather])
    with pytest.raises(GraphAgentError) as info:
        run_agent(agent, how, {"messages": ["q"]})
    assert isinstance(info.value, ScriptExhaustedError)


def test_repeat_last() -> None:
    model = ScriptedChatModel(["a", "b"], repeat_last=True)
    outs = [model.invoke(str(i)) for i in range(5)]
    assert [o.content for o in outs] == ["a", "b", "b", "b", "b"]
    assert len({o.id for o in outs}) == 5, "each repeated reply gets its own id"
    assert model.call_count == 5


def test_repeat_last_with_empty_script_still_raises() -> None:
    with pytest.raises(ScriptExhaustedError):
        ScriptedChatModel([], repeat_last=True).invoke("x")


# -- helpers ------------------------------------------------------------------------


def test_tool_call_helper() -> None:
    tc = tool_call("get_weather", {"city": "Oslo"})
    assert tc["name"] == "get_weather"
    assert tc["args"] == {"city": "Oslo"}
    assert tc["type"] == "tool_call"
    assert tc["id"] is not None
    assert tc["id"].startswith("call_")
    assert tool_call("noargs")["args"] == {}
    assert tool_call("x", id="abc")["id"] == "abc"
    ids = {tool_call("x")["id"] for _ in range(100)}
    assert len(ids) == 100


def test_calls_helper() -> None:
    msg = calls(
        ("get_weather", {"city": "Oslo"}),
        tool_call("lookup", {"query": "q"}, id="fixed"),
        ("ping", None),
        text="Checking.",
    )
    assert isinstance(msg, AIMessage)
    assert msg.content == "Checking."
    assert [tc["name"] for tc in msg.tool_calls] == ["get_weather", "lookup", "ping"]
    assert [tc["args"] for tc in msg.tool_calls] == [{"city": "Oslo"}, {"query": "q"}, {}]
    ids = [tc["id"] for tc in msg.tool_calls]
    assert ids[1] == "fixed"
    assert all(i is not None for i in ids)
    assert len(set(ids)) == 3
    assert calls().tool_calls == []


# -- call recording / bind_tools ---------------------------------------------------------


def test_calls_record_messages_without_tools() -> None:
    model = ScriptedChatModel(["a"])
    model.invoke([SystemMessage("sys"), HumanMessage("hi")])
    (call,) = model.calls
    assert isinstance(call, ModelCall)
    assert isinstance(call.messages, tuple)
    assert [m.content for m in call.messages] == ["sys", "hi"]
    assert call.tools == ()
    assert call.tool_names == ()
    assert call.tool_choice is None
    assert dict(call.settings) == {}


def test_model_call_is_frozen_and_slotted() -> None:
    model = ScriptedChatModel(["a"])
    model.invoke("hi")
    call = model.calls[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.tool_choice = "any"  # type: ignore[misc]
    assert not hasattr(call, "__dict__")


def test_calls_is_a_snapshot() -> None:
    model = ScriptedChatModel(["a", "b"])
    model.invoke("1")
    snapshot = model.calls
    model.invoke("2")
    assert len(snapshot) == 1
    assert len(model.calls) == 2
    assert model.call_count == 2


def test_bind_tools_records_tools_choice_and_settings() -> None:
    model = ScriptedChatModel(["a", "b"])
    bound = model.bind_tools([get_weather, Lookup], tool_choice="any", temperature=0.2)
    out = bound.invoke("weather?")
    assert out.content == "a"
    model.invoke("plain", stop=["END"])

    first, second = model.calls
    assert first.tool_names == ("get_weather", "Lookup")
    assert all(t["type"] == "function" for t in first.tools)
    assert first.tools[0]["function"]["parameters"]["properties"]["city"]["type"] == "string"
    assert first.tool_choice == "any"
    assert dict(first.settings) == {"temperature": 0.2}

    # Unbound call on the same model: nothing leaks from the binding.
    assert second.tool_names == ()
    assert second.tool_choice is None
    assert dict(second.settings) == {"stop": ["END"]}


def test_bind_tools_without_tool_choice() -> None:
    model = ScriptedChatModel(["a"])
    model.bind_tools([get_weather]).invoke("x")
    assert model.calls[0].tool_names == ("get_weather",)
    assert model.calls[0].tool_choice is None


@pytest.mark.asyncio
async def test_bind_tools_recorded_when_streaming_async() -> None:
    model = ScriptedChatModel(["a b"])
    bound = model.bind_tools([get_weather], tool_choice="get_weather", temperature=0)
    chunks = [c async for c in bound.astream("x")]
    assert concat(chunks).content == "a b"
    (call,) = model.calls
    assert call.tool_names == ("get_weather",)
    assert call.tool_choice == "get_weather"
    assert dict(call.settings) == {"temperature": 0}


# -- invoke / ainvoke / stream / astream equivalence -------------------------------------

EQUIVALENCE_REPLIES: list[Any] = [
    "Hello there friend",
    "  leading and trailing spaces  ",
    "multi\n\nline\ttext with  double  spaces\n",
    "",
    "single",
    calls(("get_weather", {"city": "Oslo"}), text="Let me check the weather."),
    calls(("get_weather", {"city": "Oslo"})),
    calls(("get_weather", {"city": "Oslo"}), ("lookup", {"query": "x", "n": [1, 2]})),
    AIMessage(content=[{"type": "text", "text": "block content"}]),
]


def _fresh(reply: Any) -> ScriptedChatModel:
    return ScriptedChatModel([reply])


@pytest.mark.asyncio
@pytest.mark.parametrize("reply", EQUIVALENCE_REPLIES)
async def test_invoke_ainvoke_stream_astream_agree(reply: Any) -> None:
    invoked = _fresh(reply).invoke("hi")
    ainvoked = await _fresh(reply).ainvoke("hi")
    streamed = list(_fresh(reply).stream("hi"))
    astreamed = [c async for c in _fresh(reply).astream("hi")]

    for chunks in (streamed, astreamed):
        assert all(isinstance(c, AIMessageChunk) for c in chunks)
        merged = concat(chunks)
        assert merged.content == invoked.content
        assert merged.tool_calls == invoked.tool_calls
        # Exactly the last chunk is marked as last; tool calls only travel on it.
        assert [c.chunk_position for c in chunks] == [None] * (len(chunks) - 1) + ["last"]
        assert all(not c.tool_call_chunks for c in chunks[:-1])
        # All chunks of one reply share one id.
        assert len({c.id for c in chunks}) == 1

    assert ainvoked.content == invoked.content
    assert ainvoked.tool_calls == invoked.tool_calls
    if isinstance(reply, AIMessage):
        assert invoked.tool_calls == reply.tool_calls


def test_stream_splits_text_into_word_tokens() -> None:
    chunks = list(ScriptedChatModel(["Hello there  friend\n"]).stream("hi"))
    assert [c.content for c in chunks] == ["Hello", " there", "  friend", "\n"]


def test_stream_puts_tool_calls_in_final_chunk() -> None:
    reply = calls(("get_weather", {"city": "Oslo"}), text="One moment")
    chunks = list(ScriptedChatModel([reply]).stream("hi"))
    assert [c.content for c in chunks] == ["One", " moment", ""]
    final = chunks[-1]
    assert [(t["name"], t["args"], t["index"]) for t in final.tool_call_chunks] == [
        ("get_weather", '{"city": "Oslo"}', 0)
    ]
    assert final.tool_call_chunks[0]["id"] == reply.tool_calls[0]["id"]


def test_stream_of_empty_reply_yields_one_chunk() -> None:
    chunks = list(ScriptedChatModel([""]).stream("hi"))
    assert len(chunks) == 1
    assert chunks[0].content == ""


@pytest.mark.asyncio
async def test_async_paths_do_not_hop_threads() -> None:
    thread_ids: list[int] = []

    def record_thread(messages: list[BaseMessage]) -> str:
        thread_ids.append(threading.get_ident())
        return "ok go"

    model = ScriptedChatModel([record_thread], repeat_last=True)
    await model.ainvoke("x")
    [c async for c in model.astream("x")]
    assert thread_ids == [threading.get_ident()] * 2


def test_stream_fires_each_token_callback_once() -> None:
    class Collect(BaseCallbackHandler):
        def __init__(self) -> None:
            self.tokens: list[Any] = []
            self.chunks: list[Any] = []

        def on_llm_new_token(self, token: Any, **kwargs: Any) -> None:
            self.tokens.append(token)
            self.chunks.append(kwargs.get("chunk"))

    handler = Collect()
    model = ScriptedChatModel(["a b c"])
    list(model.stream("hi", config={"callbacks": [handler]}))
    assert handler.tokens == ["a", " b", " c"]
    assert all(isinstance(c, ChatGenerationChunk) for c in handler.chunks)


def test_stream_reports_tokens_to_a_given_run_manager() -> None:
    # BaseChatModel passes a run manager to _stream on its v2 event-bridge path.
    run_manager = MagicMock(spec=CallbackManagerForLLMRun)
    model = ScriptedChatModel([calls(("f", {}), text="x y")])
    out = list(model._stream([HumanMessage("hi")], run_manager=run_manager))
    tokens = [c.args[0] for c in run_manager.on_llm_new_token.call_args_list]
    sent = [c.kwargs["chunk"] for c in run_manager.on_llm_new_token.call_args_list]
    assert tokens == ["x", " y", ""]
    assert sent == out


@pytest.mark.asyncio
async def test_astream_reports_tokens_to_a_given_run_manager() -> None:
    run_manager = MagicMock(spec=AsyncCallbackManagerForLLMRun)
    run_manager.on_llm_new_token = AsyncMock()
    model = ScriptedChatModel(["x y"])
    out = [c async for c in model._astream([HumanMessage("hi")], run_manager=run_manager)]
    assert [c.args[0] for c in run_manager.on_llm_new_token.await_args_list] == ["x", " y"]
    assert [c.kwargs["chunk"] for c in run_manager.on_llm_new_token.await_args_list] == out


# -- usage metadata ---------------------------------------------------------------------


def test_usage_metadata_invoke() -> None:
    model = ScriptedChatModel(["r" * 20], usage=True)
    out = model.invoke([SystemMessage("s" * 8), HumanMessage("h" * 32)])
    assert out.usage_metadata is not None
    assert out.usage_metadata["input_tokens"] == 10  # 40 chars // 4
    assert out.usage_metadata["output_tokens"] == 5  # 20 chars // 4
    assert out.usage_metadata["total_tokens"] == 15


def test_usage_metadata_is_at_least_one() -> None:
    out = ScriptedChatModel([""], usage=True).invoke("hi")
    assert out.usage_metadata is not None
    assert out.usage_metadata["input_tokens"] == 1
    assert out.usage_metadata["output_tokens"] == 1


def test_usage_metadata_counts_tool_calls() -> None:
    out = ScriptedChatModel([calls(("get_weather", {"city": "Oslo"}))], usage=True).invoke("x")
    assert out.usage_metadata is not None
    assert out.usage_metadata["output_tokens"] > 1


def test_usage_metadata_off_by_default() -> None:
    assert ScriptedChatModel(["abc"]).invoke("hi").usage_metadata is None
    assert concat(list(ScriptedChatModel(["a b"]).stream("hi"))).usage_metadata is None


@pytest.mark.asyncio
async def test_usage_metadata_streaming_matches_invoke() -> None:
    prompt = [HumanMessage("q" * 40)]
    reply = "some streamed answer text"
    invoked = ScriptedChatModel([reply], usage=True).invoke(prompt)
    for chunks in (
        list(ScriptedChatModel([reply], usage=True).stream(prompt)),
        [c async for c in ScriptedChatModel([reply], usage=True).astream(prompt)],
    ):
        assert len(chunks) > 1
        assert all(c.usage_metadata is None for c in chunks[:-1])
        assert chunks[-1].usage_metadata == invoked.usage_metadata
        assert concat(chunks).usage_metadata == invoked.usage_metadata


# -- concurrency ---------------------------------------------------------------------------


def _numbered_echo(k: int) -> Any:
    def reply(messages: list[BaseMessage]) -> str:
        return f"{k}:{messages[-1].content}"

    return reply


@pytest.mark.usefixtures("fast_thread_switching")
def test_thread_safety() -> None:
    n_threads, per_thread = 16, 25
    total = n_threads * per_thread
    # Reply k echoes its own number and the question it answered.
    model = ScriptedChatModel([_numbered_echo(k) for k in range(total)])
    barrier = threading.Barrier(n_threads)
    results: list[str] = []
    results_lock = threading.Lock()
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            barrier.wait()
            got = [str(model.invoke(f"t{t}-{j}").content) for j in range(per_thread)]
            with results_lock:
                results.extend(got)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()

    assert errors == []
    assert len(results) == total
    numbers = sorted(int(r.split(":", 1)[0]) for r in results)
    assert numbers == list(range(total)), "every reply handed out exactly once"
    assert model.call_count == total
    questions = {f"t{t}-{j}" for t in range(n_threads) for j in range(per_thread)}
    recorded = model.calls
    assert {str(c.messages[-1].content) for c in recorded} == questions
    # calls[k] is the call that consumed reply k.
    for r in results:
        k, question = r.split(":", 1)
        assert recorded[int(k)].messages[-1].content == question
    with pytest.raises(ScriptExhaustedError):
        model.invoke("one too many")


@pytest.mark.asyncio
async def test_concurrent_async_calls_get_distinct_replies() -> None:
    replies = [f"r{i}" for i in range(50)]
    model = ScriptedChatModel(replies)
    outs = await asyncio.gather(*(model.ainvoke(f"q{i}") for i in range(50)))
    assert sorted(str(o.content) for o in outs) == sorted(replies)
    assert model.call_count == 50


# -- LangGraph integration ----------------------------------------------------------------


def _graph_with(model: ScriptedChatModel, *, use_async: bool) -> Any:
    def call_model(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    async def acall_model(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", acall_model if use_async else call_model)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    return builder.compile()


def test_langgraph_messages_stream_sees_tokens() -> None:
    model = ScriptedChatModel(["Hello there friend"])
    graph = _graph_with(model, use_async=False)
    events = list(graph.stream({"messages": [HumanMessage("hi")]}, stream_mode="messages"))
    chunks = [msg for msg, _meta in events]
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    assert [c.content for c in chunks] == ["Hello", " there", " friend"]
    assert {meta["langgraph_node"] for _msg, meta in events} == {"agent"}
    assert model.call_count == 1


@pytest.mark.asyncio
async def test_langgraph_messages_astream_sees_tokens_and_tool_calls() -> None:
    reply = calls(("get_weather", {"city": "Oslo"}), text="Checking now")
    model = ScriptedChatModel([reply])
    graph = _graph_with(model, use_async=True)
    chunks = [
        msg
        async for msg, _meta in graph.astream(
            {"messages": [HumanMessage("hi")]}, stream_mode="messages"
        )
    ]
    assert [c.content for c in chunks] == ["Checking", " now", ""]
    merged = concat(chunks)
    assert merged.tool_calls == reply.tool_calls
    assert model.call_count == 1
