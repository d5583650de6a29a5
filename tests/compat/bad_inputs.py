"""The bad inputs of tests/compat/test_errors.py, built through graphagent's public API only
(the same code builds them under a package that answers graphagent's import paths with
LangChain's names). Each is a function of how to run an agent (``invoke`` or ``ainvoke``); the
ones for checks made when something is built ignore it."""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel

from graphagent import create_agent
from graphagent.middleware import (
    AgentMiddleware,
    ExtendedModelResponse,
    HostExecutionPolicy,
    HumanInTheLoopMiddleware,
    LLMToolEmulator,
    LLMToolSelectorMiddleware,
    ModelCallLimitMiddleware,
    ModelChoice,
    ModelRequest,
    ModelRouterMiddleware,
    PIIMiddleware,
    ProviderToolSearchMiddleware,
    ShellToolMiddleware,
    SummarizationMiddleware,
    ToolCallLimitMiddleware,
    ToolErrorMiddleware,
    wrap_model_call,
    wrap_tool_call,
)
from graphagent.structured_output import ProviderStrategy, ToolStrategy
from graphagent.testing import ScriptedChatModel, calls
from tests.compat.classifiers import answering

Run = Callable[..., Any]
"""``agent.invoke`` or ``agent.ainvoke`` (run to completion): ``run(agent, inputs, config)``."""


def invoke(agent: Any, inputs: Any, config: Any = None) -> Any:
    return agent.invoke(inputs, config)


def ainvoke(agent: Any, inputs: Any, config: Any = None) -> Any:
    return asyncio.run(agent.ainvoke(inputs, config))


ENTRY_POINTS: dict[str, Run] = {"invoke": invoke, "ainvoke": ainvoke}
RUNS = ("invoke", "ainvoke")


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


class Answer(BaseModel):
    value: int


class Other(BaseModel):
    text: str


def model(*replies: str | AIMessage) -> ScriptedChatModel:
    return ScriptedChatModel(list(replies))


def ask(text: str = "Hello") -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


THREAD = {"configurable": {"thread_id": "errors"}}


# -- factory.py ------------------------------------------------------------------------------


class Audit(AgentMiddleware):
    def before_model(self, state: Any, runtime: Any) -> None:
        return None


def duplicate_middleware(run: Run) -> object:
    return create_agent(model("Done."), middleware=[Audit(), Audit()])


def wrap_model_call_command(**command: Any) -> Callable[[Run], object]:
    def build(run: Run) -> object:
        @wrap_model_call
        def route(request: ModelRequest, handler: Callable[..., Any]) -> Any:
            return ExtendedModelResponse(
                model_response=handler(request), command=Command(**command)
            )

        @wrap_model_call
        async def aroute(request: ModelRequest, handler: Callable[..., Any]) -> Any:
            return ExtendedModelResponse(
                model_response=await handler(request), command=Command(**command)
            )

        hook = route if run is invoke else aroute
        return run(create_agent(model("Done."), middleware=[hook]), ask())

    return build


def unregistered_tool(run: Run) -> object:
    @wrap_model_call
    def offer(request: ModelRequest, handler: Callable[..., Any]) -> Any:
        return handler(request.override(tools=[*request.tools, lookup]))

    @wrap_model_call
    async def aoffer(request: ModelRequest, handler: Callable[..., Any]) -> Any:
        return await handler(request.override(tools=[*request.tools, lookup]))

    hook = offer if run is invoke else aoffer
    return run(create_agent(model("Done."), [search], middleware=[hook]), ask())


def invalid_structured_call(run: Run) -> object:
    reply = calls(("Answer", {"value": "not a number"}))
    strategy = ToolStrategy(Answer, handle_errors=False)
    return run(create_agent(model(reply), response_format=strategy), ask())


def two_structured_calls(run: Run) -> object:
    reply = calls(("Answer", {"value": 1}), ("Other", {"text": "one"}))
    strategy = ToolStrategy(Answer | Other, handle_errors=False)
    return run(create_agent(model(reply), response_format=strategy), ask())


def invalid_native_json(run: Run) -> object:
    agent = create_agent(model("not JSON"), response_format=ProviderStrategy(Answer))
    return run(agent, ask())


# -- middleware/_shell/execution.py -----------------------------------------------------------


def spawn_missing(policy: Any) -> Callable[[Run], object]:
    def build(run: Run) -> object:
        return policy().spawn(workspace=Path.cwd(), env={}, command=["/bin/bash"])

    return build


# -- middleware/_redaction.py, pii.py --------------------------------------------------------


def pii_run(**options: Any) -> Callable[[Run], object]:
    def build(run: Run) -> object:
        agent = create_agent(model("Done."), middleware=[PIIMiddleware("email", **options)])
        return run(agent, ask("Write to ada@example.com"))

    return build


# -- middleware/human_in_the_loop.py ---------------------------------------------------------


def review(
    decisions: Any, allowed: Sequence[str] = ("approve", "reject")
) -> Callable[[Run], object]:
    """Pause on a call to ``search`` that ``allowed`` decisions answer, then resume with
    ``decisions``."""

    def build(run: Run) -> object:
        middleware = HumanInTheLoopMiddleware({"search": {"allowed_decisions": list(allowed)}})  # type: ignore[dict-item]
        call = calls({"name": "search", "args": {"query": "x"}, "id": "call-1"})
        agent = create_agent(
            model(call, "Done."), [search], middleware=[middleware], checkpointer=InMemorySaver()
        )
        run(agent, ask(), THREAD)
        return run(agent, Command(resume={"decisions": decisions}), THREAD)

    return build


def call_without_id(run: Run) -> object:
    reply = AIMessage("", tool_calls=[{"name": "search", "args": {"query": "x"}, "id": None}])
    middleware = HumanInTheLoopMiddleware({"search": True}, interrupt_mode="per_call")
    agent = create_agent(
        model(reply, "Done."), [search], middleware=[middleware], checkpointer=InMemorySaver()
    )
    return run(agent, ask(), THREAD)


# -- limits ----------------------------------------------------------------------------------


def model_calls_over_limit(run: Run) -> object:
    limiter = ModelCallLimitMiddleware(run_limit=1, exit_behavior="error")
    reply = calls(("search", {"query": "x"}))
    return run(create_agent(model(reply, "Done."), [search], middleware=[limiter]), ask())


def tool_calls_over_limit(run: Run) -> object:
    limiter = ToolCallLimitMiddleware(run_limit=1, exit_behavior="error")
    reply = calls(("search", {"query": "x"}), ("search", {"query": "y"}))
    return run(create_agent(model(reply, "Done."), [search], middleware=[limiter]), ask())


# -- model_router.py, provider_tool_search.py ------------------------------------------------


def route_without_user_message(run: Run) -> object:
    router = ModelRouterMiddleware(
        choices={"fast": ModelChoice(model=model("Fast."), criteria="Anything.")},
        instructions="Pick a model.",
        classifier=answering("fast"),
    )
    agent = create_agent(model("Done."), middleware=[router])
    return run(agent, {"messages": [AIMessage("I start.")]})


def unknown_searchable_tool(run: Run) -> object:
    middleware = ProviderToolSearchMiddleware(searchable_tools=["nope"])
    return run(create_agent(model("Done."), [search], middleware=[middleware]), ask())


def deferred_to_scripted_model(run: Run) -> object:
    middleware = ProviderToolSearchMiddleware(searchable_tools=["search"])
    return run(create_agent(model("Done."), [search], middleware=[middleware]), ask())


# -- shell_tool.py ---------------------------------------------------------------------------


class NoPipesPolicy(HostExecutionPolicy):
    def spawn(self, *, workspace: Path, env: Any, command: Sequence[str]) -> Any:
        return subprocess.Popen(["true"], cwd=workspace)


def shell_run(**options: Any) -> Callable[[Run], object]:
    def build(run: Run) -> object:
        shell = ShellToolMiddleware(**options)
        return run(create_agent(model("Done."), middleware=[shell]), ask())

    return build


# -- summarization.py ------------------------------------------------------------------------


def summarize(**options: Any) -> Callable[[Run], object]:
    return lambda run: SummarizationMiddleware(model(), **options)


def summarizer_returning(value: object) -> Callable[[Run], object]:
    def build(run: Run) -> object:
        middleware = SummarizationMiddleware(
            model(),
            trigger=("messages", 2),
            keep=("messages", 1),
            summarizer=lambda messages: value,  # type: ignore[arg-type]
        )
        history = [HumanMessage("One."), AIMessage("Two."), HumanMessage("Three.")]
        return run(create_agent(model("Done."), middleware=[middleware]), {"messages": history})

    return build


# -- tool_emulator.py, tool_selection.py -----------------------------------------------------


def default_emulator(run: Run) -> object:
    if importlib.util.find_spec("langchain_anthropic") is not None:
        pytest.skip("langchain-anthropic is installed: the default model can be built")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return LLMToolEmulator()


def select(*replies: str | AIMessage, **options: Any) -> Callable[[Run], object]:
    """Select among two tools with a selection model answering ``replies``."""

    def build(run: Run) -> object:
        chooser = ScriptedChatModel(list(replies), repeat_last=True)
        middleware = LLMToolSelectorMiddleware(model=chooser, **options)
        agent = create_agent(model("Done."), [search, lookup], middleware=[middleware])
        return run(agent, ask("Find the weather."))

    return build


def chose(*names: str) -> AIMessage:
    """A selection model's structured answer naming ``names`` (a ``ToolSelectionResponse``)."""
    return calls(("ToolSelectionResponse", {"tools": list(names)}))


# -- middleware/types.py ---------------------------------------------------------------------


def request(**fields: Any) -> Callable[[Run], object]:
    return lambda run: ModelRequest(model=model(), messages=[], **fields)


def override(**fields: Any) -> Callable[[Run], object]:
    return lambda run: ModelRequest(model=model(), messages=[]).override(**fields)


def async_only(hook: str) -> Callable[[Run], object]:
    def build(run: Run) -> object:
        if hook == "wrap_model_call":

            @wrap_model_call
            async def pass_model(request: ModelRequest, handler: Callable[..., Any]) -> Any:
                return await handler(request)

            middleware: Any = pass_model
        else:

            @wrap_tool_call
            async def pass_tool(request: Any, handler: Callable[..., Any]) -> Any:
                return await handler(request)

            middleware = pass_tool
        reply = calls(("search", {"query": "x"}))
        return run(create_agent(model(reply, "Done."), [search], middleware=[middleware]), ask())

    return build


def aon_error_only(run: Run) -> object:
    async def explain(error: Exception, request: Any) -> str:
        return "failed"

    @tool
    def broken(query: str) -> str:
        """Always fails."""
        raise RuntimeError("down")

    middleware = ToolErrorMiddleware(aon_error=explain)
    reply = calls(("broken", {"query": "x"}))
    return run(create_agent(model(reply, "Done."), [broken], middleware=[middleware]), ask())
