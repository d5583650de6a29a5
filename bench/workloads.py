"""The workload, built identically by every side.

Everything that is not the framework under test is shared: the model class, the tool and the
middleware class body. Only how the agent is built and the base class of the middleware differ
between the sides (see :class:`Side`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool

TOOL_ROUNDS = 5
"""The model calls one tool per round for this many rounds, then answers."""

FINAL_ANSWER = "done"

# Per run, each middleware sees one model call per tool round plus the final answer.
MODEL_CALLS = TOOL_ROUNDS + 1
# Human message, an AI tool call + tool reply per round, the final AI answer.
EXPECTED_MESSAGES = 1 + 2 * TOOL_ROUNDS + 1

SYNC_HOOKS = ("before_model", "after_model", "wrap_model_call", "wrap_tool_call")
ASYNC_HOOKS = tuple("a" + hook for hook in SYNC_HOOKS)


# -- the sides ------------------------------------------------------------------


Build = Callable[[Sequence[Any], Any], Any]
"""``build(middleware, checkpointer)``: the benchmark agent of one side."""


@dataclass(frozen=True)
class Side:
    """One way to build the benchmark agent, and the base its middleware classes derive from."""

    name: str
    build: Build
    middleware_base: type

    def agent(self, middleware: Sequence[Any] = (), checkpointer: Any = None) -> Any:
        return self.build(middleware, checkpointer)


def graphagent_side(*, fused: bool) -> Side:
    from graphagent import create_agent
    from graphagent.middleware import AgentMiddleware

    def build(middleware: Sequence[Any], checkpointer: Any) -> Any:
        return create_agent(
            LoopModel(),
            [make_tool()],
            middleware=list(middleware),
            checkpointer=checkpointer,
            fuse_hooks=fused,
        )

    return Side("fused" if fused else "default", build, AgentMiddleware)


def langchain_side() -> Side:
    # Imported here, not at module level: only the bench venv has `langchain` (see __main__).
    from langchain.agents import create_agent
    from langchain.agents.middleware import AgentMiddleware

    def build(middleware: Sequence[Any], checkpointer: Any) -> Any:
        return create_agent(
            LoopModel(), [make_tool()], middleware=list(middleware), checkpointer=checkpointer
        )

    return Side("langchain", build, AgentMiddleware)


def langgraph_side() -> Side:
    """The hand-written graph (:mod:`bench.handwritten`); its middleware are plain objects."""
    from bench.handwritten import HandWritten

    def build(middleware: Sequence[Any], checkpointer: Any) -> Any:
        return HandWritten(LoopModel(), [make_tool()], middleware, checkpointer)

    return Side("langgraph", build, object)


# -- the model ----------------------------------------------------------------


def _tool_replies_since_question(messages: Sequence[BaseMessage]) -> int:
    replies = 0
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            break
        replies += isinstance(message, ToolMessage)
    return replies


class LoopModel(BaseChatModel):
    """Zero-latency chat model: one ``lookup`` call per round for ``rounds`` rounds, then text.

    It decides from the messages it receives (the tool replies since the last question, read from
    the end, so that its own work does not grow with the history before it), so it is stateless:
    one agent can be invoked any number of times, on any thread or event loop, and nothing
    accumulates between runs. (``graphagent.testing.ScriptedChatModel`` is a script with
    a cursor that records every call; reused over thousands of benchmark runs it would grow
    without bound and skew later rounds.) Both sides use this same class.
    """

    rounds: int = TOOL_ROUNDS

    @property
    def _llm_type(self) -> str:
        return "bench-loop"

    def _reply(self, messages: list[BaseMessage]) -> ChatResult:
        done = _tool_replies_since_question(messages)
        if done < self.rounds:
            call = {"name": "lookup", "args": {"query": f"q{done}"}, "id": f"call_{done}"}
            message = AIMessage(content="", tool_calls=[{**call, "type": "tool_call"}])
        else:
            message = AIMessage(content=FINAL_ANSWER)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._reply(messages)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._reply(messages)

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[Any, AIMessage]:
        # Like a real provider: convert the tools to the wire format on every bind.
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)


# -- the tool -----------------------------------------------------------------


def _lookup(query: str) -> str:
    return f"result for {query}"


async def _alookup(query: str) -> str:
    return f"result for {query}"


def make_tool() -> BaseTool:
    """The one tool; with a native async body so ``ainvoke`` does not hop to a thread."""
    return StructuredTool.from_function(
        func=_lookup, coroutine=_alookup, name="lookup", description="Look something up."
    )


# -- the middleware -----------------------------------------------------------


def make_middleware(base_cls: type, n: int, *, prefix: str = "Bench") -> list[Any]:
    """``n`` instances of ``n`` distinct subclasses of ``base_cls`` (names must be unique).

    Every class implements before_model, after_model, wrap_model_call and wrap_tool_call and
    their async twins; each hook only bumps a counter, so the frameworks are what is measured.
    """

    class Counting(base_cls):  # type: ignore[valid-type,misc]
        def __init__(self) -> None:
            self.counts = dict.fromkeys(SYNC_HOOKS + ASYNC_HOOKS, 0)

        def before_model(self, state: Any, runtime: Any) -> None:
            self.counts["before_model"] += 1

        async def abefore_model(self, state: Any, runtime: Any) -> None:
            self.counts["abefore_model"] += 1

        def after_model(self, state: Any, runtime: Any) -> None:
            self.counts["after_model"] += 1

        async def aafter_model(self, state: Any, runtime: Any) -> None:
            self.counts["aafter_model"] += 1

        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            self.counts["wrap_model_call"] += 1
            return handler(request)

        async def awrap_model_call(
            self, request: Any, handler: Callable[[Any], Awaitable[Any]]
        ) -> Any:
            self.counts["awrap_model_call"] += 1
            return await handler(request)

        def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            self.counts["wrap_tool_call"] += 1
            return handler(request)

        async def awrap_tool_call(
            self, request: Any, handler: Callable[[Any], Awaitable[Any]]
        ) -> Any:
            self.counts["awrap_tool_call"] += 1
            return await handler(request)

    return [type(f"{prefix}{i:02d}", (Counting,), {})() for i in range(n)]


# -- runs -----------------------------------------------------------------------


def agent_input(history: int = 0) -> dict[str, Any]:
    """A fresh input per run (langgraph assigns ids to input messages in place), after
    ``history`` earlier messages of about 200 characters each."""
    filler = " ".join(["earlier"] * 24)
    earlier = [
        (HumanMessage if i % 2 == 0 else AIMessage)(f"message {i}: {filler}")
        for i in range(history)
    ]
    return {"messages": [*earlier, HumanMessage("Look it up five times.")]}


def check_run(side: Side, result: Any, middleware: Sequence[Any], *, is_async: bool) -> None:
    """Fail loudly unless one run did exactly the intended work (same on both sides)."""
    messages = result["messages"]
    problems = []
    if len(messages) != EXPECTED_MESSAGES or messages[-1].content != FINAL_ANSWER:
        problems.append(
            f"expected {EXPECTED_MESSAGES} messages ending in {FINAL_ANSWER!r}, got "
            f"{len(messages)} ending in {messages[-1].content!r}"
        )
    used, unused = (ASYNC_HOOKS, SYNC_HOOKS) if is_async else (SYNC_HOOKS, ASYNC_HOOKS)
    expected = dict.fromkeys(unused, 0)
    expected.update(zip(used, (MODEL_CALLS, MODEL_CALLS, MODEL_CALLS, TOOL_ROUNDS), strict=True))
    for mw in middleware:
        if mw.counts != expected:
            problems.append(f"{type(mw).__name__} hook counts {mw.counts}, expected {expected}")
            break
    if problems:
        mode = "ainvoke" if is_async else "invoke"
        raise RuntimeError(f"{side.name} {mode} did not run the workload: " + "; ".join(problems))


def reset_counts(middleware: Sequence[Any]) -> None:
    for mw in middleware:
        mw.counts = dict.fromkeys(mw.counts, 0)
