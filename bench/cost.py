"""What an agent costs: a 30-turn thread through the real ChatOpenAI and ChatAnthropic clients,
against the local servers the tests use (tests/openai_stub.py, tests/anthropic_stub.py), which
apply each provider's documented prompt-caching rules (tests/prompt_cache_rules.py).

The thread: a 3,000-token system prompt, 6 tools with long descriptions, a tool call in every turn
answered with about 500 tokens, a to-do list written every fifth turn, and summarization that
fires once, near turn 25. The servers answer as a model would (a tool call for a question, an
answer after the tools, a summary when asked for one), so every side sees the same conversation.

For each route and side: the share of input tokens read from the cache, and the cost at list
prices (``DEFAULT_PRICES``: gpt-5 and claude-sonnet-4-5), output included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver

from graphagent.middleware.budget import DEFAULT_PRICES, ModelPrice
from tests.anthropic_stub import AnthropicStub
from tests.openai_stub import CachingOpenAIStub, Reply, Usage, call, text, tool_calls
from tests.prompt_cache_rules import AnthropicUsage

TURNS = 30
QUICK_TURNS = 5
TODO_EVERY = 5
SUMMARY_TRIGGER = ("tokens", 20_000)
"""Summarization's trigger: about turn 25 of this thread."""
SUMMARY_KEEP = ("messages", 6)
ANSWER_TOKENS = 120
OPENAI_MODEL, ANTHROPIC_MODEL = "gpt-5", "claude-sonnet-4-5"
SYSTEM = "You are the operations assistant of a travel company. " + " ".join(
    f"Policy {i}: check the booking, the traveller's preferences and the supplier's terms "
    "before you answer, and say which tool gave each fact."
    for i in range(80)
)
TOPICS = ("flights", "hotels", "trains", "weather", "visas", "events")


def _tool(topic: str) -> BaseTool:
    def run(city: str) -> str:
        return f"{topic} in {city}: " + " ".join(
            f"item {i}: available, priced in euros, refundable within 24 hours." for i in range(30)
        )

    description = f"Look up {topic} for a city. " + " ".join(
        f"Use it when the traveller asks about {topic}; mention the supplier and the price; "
        f"never guess ({n})."
        for n in range(12)
    )
    return StructuredTool.from_function(run, name=f"lookup_{topic}", description=description)


TOOLS = tuple(_tool(topic) for topic in TOPICS)


@dataclass
class Turns:
    """The model's side of the conversation, decided from each request as a model would."""

    questions: int = 0
    calls: int = 0

    def reply(self, last: str, tools_offered: bool, tool_name: str | None) -> Reply:
        answer = Usage(completion_tokens=ANSWER_TOKENS)
        if not tools_offered:  # the summarizer's own call
            return text("The traveller asked about many cities; all answered.", usage=answer)
        self.calls += 1
        if last == "user":
            self.questions += 1
            topic = TOPICS[self.questions % len(TOPICS)]
            city = {"city": f"City {self.questions}"}
            return tool_calls(call(f"lookup_{topic}", city, id=f"call_{self.calls}"))
        if tool_name and tool_name.startswith("lookup_") and self.questions % TODO_EVERY == 0:
            todos = {"todos": [{"content": f"Book city {self.questions}", "status": "pending"}]}
            return tool_calls(call("write_todos", todos, id=f"call_{self.calls}"))
        return text(f"Here is what I found for city {self.questions}.", usage=answer)


@dataclass
class Ledger:
    """What each request of one side read, wrote and cost."""

    price: ModelPrice
    input: int = 0
    read: int = 0
    cost: float = 0.0
    requests: int = 0
    per_call: list[int] = field(default_factory=list)

    def add(self, total: int, read: int, written: int, output: int) -> None:
        self.input += total
        self.read += read
        self.requests += 1
        self.per_call.append(read)
        self.cost += self.price.cost(total, output, read, written)

    @property
    def share(self) -> float:
        return self.read / self.input if self.input else 0.0


class OpenAIServer(CachingOpenAIStub):
    """The OpenAI stub answering as the conversation goes, keeping the ledger."""

    def __init__(self) -> None:
        super().__init__(lifetime=3600)
        self.turns = Turns()
        self.ledger = Ledger(DEFAULT_PRICES[OPENAI_MODEL])

    def take(self, body: dict[str, Any]) -> Reply | None:
        last = body["messages"][-1]
        name = None
        if last["role"] == "tool":
            name = _called(body["messages"], last["tool_call_id"], _openai_calls)
        self.script(self.turns.reply(last["role"], bool(body.get("tools")), name))
        reply = super().take(body)
        if reply is not None and reply.status == 200:
            usage: Usage = reply.usage
            self.ledger.add(usage.prompt_tokens, usage.cached_tokens, 0, usage.completion_tokens)
        return reply


class AnthropicServer(AnthropicStub):
    """The Anthropic stub answering as the conversation goes, keeping the ledger."""

    def __init__(self) -> None:
        super().__init__(lifetime=3600)
        self.turns = Turns()
        self.ledger = Ledger(DEFAULT_PRICES[ANTHROPIC_MODEL])

    def answer(self, body: dict[str, Any]) -> tuple[Reply, AnthropicUsage | None]:
        last = body["messages"][-1]
        blocks = last["content"] if isinstance(last["content"], list) else []
        results = [b for b in blocks if b.get("type") == "tool_result"]
        role = "tool" if results else "user"
        name = (
            _called(body["messages"], results[-1]["tool_use_id"], _anthropic_calls)
            if results
            else None
        )
        self.script(self.turns.reply(role, bool(body.get("tools")), name))
        reply, usage = super().answer(body)
        if usage is not None:
            output = reply.usage.completion_tokens
            self.ledger.add(
                usage.total,
                usage.cache_read_input_tokens,
                usage.cache_creation_input_tokens,
                output,
            )
        return reply, usage


def _openai_calls(message: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["id"], c["function"]["name"]) for c in message.get("tool_calls") or ()]


def _anthropic_calls(message: dict[str, Any]) -> list[tuple[str, str]]:
    content = message["content"] if isinstance(message["content"], list) else []
    return [(b["id"], b["name"]) for b in content if b.get("type") == "tool_use"]


def _called(
    messages: list[dict[str, Any]],
    call_id: str,
    calls_of: Callable[[dict[str, Any]], list[tuple[str, str]]],
) -> str | None:
    for message in reversed(messages):
        for found, name in calls_of(message):
            if found == call_id:
                return name
    return None


# -- the sides ------------------------------------------------------------------------------------


def openai_model(server: OpenAIServer) -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(base_url=server.url, api_key="bench", model=OPENAI_MODEL, max_retries=0)


def anthropic_model(server: AnthropicServer) -> Any:
    from langchain_anthropic import ChatAnthropic

    return ChatAnthropic(  # type: ignore[call-arg]
        base_url=server.url, api_key="bench", model=ANTHROPIC_MODEL, max_retries=0
    )


def graphagent_agent(model: Any, *, prompt_caching: bool = True) -> Any:
    from graphagent import create_agent
    from graphagent.middleware import SummarizationMiddleware, TodoListMiddleware

    summary = SummarizationMiddleware(model, trigger=SUMMARY_TRIGGER, keep=SUMMARY_KEEP)
    return create_agent(
        model,
        list(TOOLS),
        system_prompt=SYSTEM,
        middleware=[TodoListMiddleware(), summary],
        checkpointer=InMemorySaver(),
        prompt_caching=prompt_caching,
    )


def langchain_agent(model: Any, extra: tuple[Any, ...] = ()) -> Any:
    from langchain.agents import create_agent
    from langchain.agents.middleware import SummarizationMiddleware, TodoListMiddleware

    summary = SummarizationMiddleware(model, trigger=SUMMARY_TRIGGER, keep=SUMMARY_KEEP)
    return create_agent(
        model,
        list(TOOLS),
        system_prompt=SYSTEM,
        middleware=[TodoListMiddleware(), summary, *extra],
        checkpointer=InMemorySaver(),
    )


def keyed_by_hand() -> Any:
    """LangChain's way to a stable OpenAI cache: a ``prompt_cache_key`` set per thread."""
    from langchain.agents.middleware import wrap_model_call
    from langgraph.config import get_config

    @wrap_model_call
    def prompt_cache_key(request: Any, handler: Any) -> Any:
        thread = str(get_config()["configurable"]["thread_id"])
        settings = {**request.model_settings, "prompt_cache_key": thread}
        return handler(request.override(model_settings=settings))

    return prompt_cache_key


def anthropic_caching() -> Any:
    from langchain_anthropic.middleware import AnthropicPromptCachingMiddleware

    return AnthropicPromptCachingMiddleware()


@dataclass(frozen=True)
class Side:
    name: str
    route: str
    build: Callable[[Any], Any]


SIDES = (
    Side("LangChain 1.5.2, defaults", "openai", lambda m: langchain_agent(m)),
    Side("graphagent, defaults", "openai", lambda m: graphagent_agent(m)),
    Side(
        "LangChain + prompt_cache_key by hand",
        "openai",
        lambda m: langchain_agent(m, (keyed_by_hand(),)),
    ),
    Side("LangChain 1.5.2, defaults", "anthropic", lambda m: langchain_agent(m)),
    Side("graphagent, defaults", "anthropic", lambda m: graphagent_agent(m)),
    Side(
        "LangChain + AnthropicPromptCachingMiddleware",
        "anthropic",
        lambda m: langchain_agent(m, (anthropic_caching(),)),
    ),
)


GRAPHAGENT_UNCACHED = (
    Side(
        "graphagent, prompt_caching=False",
        "openai",
        partial(graphagent_agent, prompt_caching=False),
    ),
    Side(
        "graphagent, prompt_caching=False",
        "anthropic",
        partial(graphagent_agent, prompt_caching=False),
    ),
)
"""graphagent as LangChain sends its requests (the notebook compares them; LangChain itself is
not installed there)."""


def run_side(side: Side, turns: int = TURNS) -> Ledger:
    """One thread of ``turns`` turns on a fresh server; what its requests read and cost."""
    server: OpenAIServer | AnthropicServer
    server = OpenAIServer() if side.route == "openai" else AnthropicServer()
    with server:
        model = openai_model(server) if side.route == "openai" else anthropic_model(server)
        agent = side.build(model)
        config = {"configurable": {"thread_id": "thread-1"}}
        for turn in range(1, turns + 1):
            result = agent.invoke(
                {"messages": [f"Question {turn}: what about city {turn}?"]}, config
            )
            if not isinstance(result["messages"][-1], AIMessage):
                raise RuntimeError(f"{side.name}: turn {turn} did not end with an answer")
        if server.problems:
            raise RuntimeError(f"{side.name}: {server.problems}")
        return server.ledger


def measure_all(turns: int = TURNS) -> dict[tuple[str, str], Ledger]:
    return {(side.route, side.name): run_side(side, turns) for side in SIDES}


def print_cost(ledgers: dict[tuple[str, str], Ledger], turns: int = TURNS) -> None:
    print(f"What a {turns}-turn thread costs (share of input read from cache, list-price cost)")
    print(f"{'':<48}{'OpenAI route':>22}{'Anthropic route':>22}")
    names = dict.fromkeys(name for _, name in ledgers)
    for name in names:
        cells = []
        for route in ("openai", "anthropic"):
            ledger = ledgers.get((route, name))
            cells.append(f"{ledger.share:.2f}, ${ledger.cost:.2f}" if ledger else "")
        print(f"{name:<48}{cells[0]:>22}{cells[1]:>22}")
