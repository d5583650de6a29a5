"""An agent with three tracing middleware, offline: ``python -m graphagent.demo``.

It prints the order in which every hook runs (before hooks in list order, after hooks
reversed, wrap hooks nested with the first middleware outermost), then the conversation.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

import graphagent
from graphagent.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from graphagent.testing import ScriptedChatModel, calls

QUESTION = "What is 17 + 25?"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Trace:
    """Prints one line per hook, indented by how many wrap hooks are open."""

    def __init__(self) -> None:
        self.depth = 0

    def line(self, text: str) -> None:
        print("  " * self.depth + text)

    @contextmanager
    def around(self, hook: str, detail: str = "") -> Iterator[None]:
        self.line(f"{hook} enter{detail}")
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            self.line(f"{hook} exit{detail}")


State = AgentState[Any]


class Traced(AgentMiddleware[State, None, Any]):
    """Implements all six hooks; each one only reports that it ran."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    def before_agent(self, state: State, runtime: Runtime[None]) -> None:
        self.trace.line(f"{self.name}.before_agent")

    def before_model(self, state: State, runtime: Runtime[None]) -> None:
        self.trace.line(f"{self.name}.before_model")

    def wrap_model_call(
        self,
        request: ModelRequest[None],
        handler: Callable[[ModelRequest[None]], ModelResponse],
    ) -> ModelResponse:
        with self.trace.around(f"{self.name}.wrap_model_call"):
            return handler(request)

    def after_model(self, state: State, runtime: Runtime[None]) -> None:
        self.trace.line(f"{self.name}.after_model")

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        with self.trace.around(f"{self.name}.wrap_tool_call", f" ({request.tool_call['name']})"):
            return handler(request)

    def after_agent(self, state: State, runtime: Runtime[None]) -> None:
        self.trace.line(f"{self.name}.after_agent")


class M1(Traced):
    """First in the list: outermost wrapper."""


class M2(Traced):
    """Second in the list."""


class M3(Traced):
    """Last in the list: innermost wrapper, first to see the model's reply."""


def scripted_model() -> ScriptedChatModel:
    """Asks for ``add(17, 25)``, then answers with the tool's result."""
    return ScriptedChatModel(
        [
            calls(("add", {"a": 17, "b": 25})),
            lambda messages: f"17 + 25 = {messages[-1].content}.",
        ]
    )


def show(message: AnyMessage) -> str:
    if isinstance(message, AIMessage) and message.tool_calls:
        text = ", ".join(f"{c['name']}({c['args']})" for c in message.tool_calls)
        return f"{message.type:>5}: calls {text}"
    return f"{message.type:>5}: {message.text}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m graphagent.demo",
        description="Run an agent with three middleware and print the order its hooks run in.",
    )
    parser.add_argument(
        "--model",
        metavar="PROVIDER:NAME",
        help="a real chat model instead of the offline scripted one",
    )
    args = parser.parse_args(argv)

    model: BaseChatModel
    if args.model is None:
        model = scripted_model()
    elif hasattr(graphagent, "init_chat_model"):
        model = graphagent.init_chat_model(args.model)
    else:
        print(
            f"--model {args.model}: model ids arrive with graphagent.init_chat_model, which this "
            "version does not have yet; the demo runs offline without --model.",
            file=sys.stderr,
        )
        return 2

    trace = Trace()
    agent = graphagent.create_agent(model, [add], middleware=[M1(trace), M2(trace), M3(trace)])
    print("=== middleware=[M1, M2, M3]: execution order ===")
    result = agent.invoke({"messages": [("user", QUESTION)]})

    print("\n=== conversation ===")
    for message in result["messages"]:
        print(show(message))
    print(f"\n=== answer ===\n{result['messages'][-1].text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
