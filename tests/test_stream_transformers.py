"""Stream transformers for LangGraph's experimental v3 event protocol
(``stream_events(version="v3")``): langgraph's ``ToolCallTransformer`` and the
``SubagentTransformer`` (``run.subagents``) by default, then those the
middleware declare (``InternalCallTransformer`` among them), then
``create_agent(transformers=...)``, each once; bad ones are refused when the agent is built."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.tools import tool
from langgraph.stream._types import StreamTransformer
from langgraph.stream.stream_channel import StreamChannel

from graphagent import create_agent
from graphagent.errors import MiddlewareTypeError
from graphagent.middleware import AgentMiddleware
from graphagent.middleware.internal_call_transformer import (
    InternalCallTransformer,
    internal_call_config,
    internal_call_metadata,
)
from graphagent.testing import ScriptedChatModel, calls, tool_call
from tests.tools import add

QUESTION = {"messages": ["What is 1 + 2?"]}


class Steps(StreamTransformer):
    """``run.extensions["steps"]``: the nodes of each root-level update."""

    required_stream_modes = ("updates",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self.log: StreamChannel[str] = StreamChannel()

    def init(self) -> dict[str, Any]:
        return {"steps": self.log}

    def process(self, event: Any) -> bool:
        if event["method"] == "updates" and event["params"]["namespace"] == []:
            self.log.push(",".join(event["params"]["data"]))
        return True


class Registers(AgentMiddleware):
    transformers = (Steps,)

    def before_model(self, state: Any, runtime: Any) -> None:
        return None


def adding_model() -> ScriptedChatModel:
    return ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "3"])


def test_tool_calls_are_projected_by_default() -> None:
    run = create_agent(adding_model(), [add]).stream_events(QUESTION, version="v3")

    [call] = list(run.tool_calls)

    assert (call.tool_name, call.input) == ("add", {"a": 1, "b": 2})
    assert run.output is not None
    assert run.output["messages"][-1].text == "3"


def test_middleware_and_create_agent_transformers_are_registered_once_each() -> None:
    agent = create_agent(adding_model(), [add], middleware=[Registers()], transformers=[Steps])

    assert list(agent.stream_transformers).count(Steps) == 1
    run = agent.stream_events(QUESTION, version="v3")
    assert list(run.extensions["steps"]) == [
        "Registers.before_model",
        "model",
        "tools",
        "Registers.before_model",
        "model",
    ]


def test_async_runs_use_them_too() -> None:
    agent = create_agent(adding_model(), [add], transformers=[Steps])

    async def steps() -> list[str]:
        run = await agent.astream_events(QUESTION, version="v3")
        return [step async for step in run.extensions["steps"]]

    assert asyncio.run(asyncio.wait_for(steps(), 30)) == ["model", "tools", "model"]


@pytest.mark.parametrize(
    ("transformers", "message"),
    [
        (Steps, r"create_agent\(transformers=...\) is Steps; give a list of"),
        (
            [Steps, 42],
            r"create_agent\(transformers=...\)\[1\] is 42 \(int\), which is not callable",
        ),
    ],
)
def test_bad_transformers_are_refused_when_the_agent_is_built(
    transformers: Any, message: str
) -> None:
    with pytest.raises(MiddlewareTypeError, match=message):
        create_agent(adding_model(), [add], transformers=transformers)


def test_a_middlewares_bad_transformers_name_the_middleware() -> None:
    class Wrong(Registers):
        transformers = Steps  # type: ignore[assignment]

    with pytest.raises(TypeError, match=r"^'Wrong'.transformers is Steps; give a list"):
        create_agent(adding_model(), [add], middleware=[Wrong()])


class AsksAside(AgentMiddleware):
    """Calls a model of its own before each model call, marked internal or not."""

    def __init__(self, marked: bool) -> None:
        self.aside = ScriptedChatModel(["an aside"] * 3)
        self.marked = marked

    def before_model(self, state: Any, runtime: Any) -> None:
        metadata = internal_call_metadata() if self.marked else {}
        self.aside.invoke("Anything to add?", config={"metadata": metadata})


class DeclaresTheFilter(AsksAside):
    transformers = (InternalCallTransformer,)


@pytest.mark.parametrize(
    ("middleware", "texts"),
    [
        (DeclaresTheFilter(marked=True), ["3"]),
        (DeclaresTheFilter(marked=False), ["an aside", "3"]),
        (AsksAside(marked=True), ["an aside", "3"]),
    ],
    ids=["marked and declared", "not marked", "marked, not declared"],
)
def test_model_calls_marked_internal_stay_out_of_run_messages_where_the_filter_is_declared(
    middleware: AgentMiddleware, texts: list[str]
) -> None:
    # As in LangChain: the middleware whose calls are marked declares InternalCallTransformer.
    agent = create_agent(ScriptedChatModel(["3"]), middleware=[middleware])

    run = agent.stream_events(QUESTION, version="v3")

    assert [str(message.text) for message in run.messages] == texts


def test_an_agent_registers_the_filter_only_when_a_middleware_declares_it() -> None:
    plain = create_agent(ScriptedChatModel(["3"]), middleware=[AsksAside(marked=True)])
    declared = create_agent(ScriptedChatModel(["3"]), middleware=[DeclaresTheFilter(True)])

    assert InternalCallTransformer not in list(plain.stream_transformers)
    assert list(declared.stream_transformers).count(InternalCallTransformer) == 1


class Aside(AsksAside):
    def before_model(self, state: Any, runtime: Any) -> None:
        self.aside.invoke("Anything to add?", config=internal_call_config("aside", "mine"))


def test_internal_call_config_keeps_a_call_out_of_the_messages_stream() -> None:
    agent = create_agent(ScriptedChatModel(["3"]), middleware=[Aside(marked=True)])

    streamed = [chunk.text for chunk, _ in agent.stream(QUESTION, stream_mode="messages")]

    assert "".join(streamed) == "3"


def test_internal_call_config_keeps_a_call_out_of_run_messages_without_the_filter() -> None:
    # nostream: the call sends no messages events at all, so nothing needs filtering.
    agent = create_agent(ScriptedChatModel(["3"]), middleware=[Aside(marked=True)])

    run = agent.stream_events(QUESTION, version="v3")

    assert [str(message.text) for message in run.messages] == ["3"]


# -- run.subagents -----------------------------------------------------------------------------


def supervisor(name: str | None, own_name: str | None = "boss") -> Any:
    """A supervisor whose ``ask_expert`` tool runs a nested agent, named ``name`` (or not)."""
    expert = create_agent(ScriptedChatModel(["sunny"]), name=name)

    @tool
    def ask_expert(question: str) -> str:
        """Ask the expert."""
        return str(expert.invoke({"messages": [question]})["messages"][-1].text)

    ask = tool_call("ask_expert", {"question": "weather?"}, id="c-ask")
    model = ScriptedChatModel([calls(ask), "done"])
    return create_agent(model, [ask_expert], name=own_name)


def test_a_named_agent_run_inside_a_tool_is_on_run_subagents() -> None:
    run = supervisor("weather").stream_events(QUESTION, version="v3")

    seen = [(handle, list(handle.values)) for handle in run.subagents]

    [(handle, values)] = seen
    assert (handle.name, handle.cause) == ("weather", {"type": "toolCall", "tool_call_id": "c-ask"})
    assert [m.text for m in values[-1]["messages"]] == ["weather?", "sunny"]
    assert handle.status == "completed"
    assert run.output["messages"][-1].text == "done"


def test_a_run_without_agent_names_has_no_subagents() -> None:
    # A nested run inherits the name of the agent it runs in, so it shows under that name, as in
    # LangChain; without any name there is no agent to show.
    run = supervisor(None, own_name=None).stream_events(QUESTION, version="v3")

    assert list(run.subagents) == []
    assert run.output["messages"][-1].text == "done"


def test_async_runs_show_subagents_too() -> None:
    async def names() -> list[tuple[str | None, str]]:
        run = await supervisor("weather").astream_events(QUESTION, version="v3")
        found = []
        async for handle in run.subagents:
            values = [value async for value in handle.values]
            found.append((handle.name, values[-1]["messages"][-1].text))
        return found

    assert asyncio.run(asyncio.wait_for(names(), 30)) == [("weather", "sunny")]
