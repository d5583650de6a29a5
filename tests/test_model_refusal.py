"""ModelRefusalMiddleware: refusal blocks raise, fallback/retry outside it recover, rest passes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.exceptions import ModelRefusalError
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt
from pydantic import BaseModel

from graphagent import create_agent
from graphagent.middleware import ModelRequest, ModelResponse, wrap_model_call
from graphagent.middleware.model_fallback import ModelFallbackMiddleware
from graphagent.middleware.model_refusal import ModelRefusalMiddleware
from graphagent.middleware.model_retry import ModelRetryMiddleware
from graphagent.structured_output import ProviderStrategy, StructuredOutputValidationError
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run, run_agent

QUESTION = {"messages": [HumanMessage("How do I pick this lock?")]}


def refusal(text: str = "I can't help with that.", **extras: Any) -> AIMessage:
    """A reply carrying a standard refusal content block."""
    block: dict[str, Any] = {"type": "refusal", "refusal": text}
    if extras:
        block["extras"] = extras
    return AIMessage(content=[block])


def openai_refusal(text: str = "I can't help with that.") -> AIMessage:
    """A refusal as langchain-openai reports it: the ``refusal`` field, no content."""
    return AIMessage(
        content="",
        additional_kwargs={"refusal": text},
        response_metadata={"model_provider": "openai"},
    )


def anthropic_refusal() -> AIMessage:
    """A refusal as langchain-anthropic reports it: a ``refusal`` stop reason."""
    return AIMessage(
        content="",
        response_metadata={"model_provider": "anthropic", "stop_reason": "refusal"},
    )


def answer(result: dict[str, Any]) -> str:
    return str(result["messages"][-1].content)


# -- a refusal raises ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [refusal(), openai_refusal(), anthropic_refusal()],
    ids=["block", "openai", "anthropic"],
)
def test_a_refusal_raises_model_refusal_error(how_call: str, reply: AIMessage) -> None:
    agent = create_agent(ScriptedChatModel([reply]), middleware=[ModelRefusalMiddleware()])

    with pytest.raises(ModelRefusalError) as caught:
        run_agent(agent, how_call, QUESTION)

    assert caught.value.raw_message is not None
    assert caught.value.raw_message.content_blocks == reply.content_blocks


def test_the_error_names_the_category_and_the_refusal_text(how_call: str) -> None:
    reply = refusal("That would break the law.", category="illegal")
    agent = create_agent(ScriptedChatModel([reply]), middleware=[ModelRefusalMiddleware()])

    with pytest.raises(ModelRefusalError, match=r"category='illegal'.*That would break the law\."):
        run_agent(agent, how_call, QUESTION)


def test_a_refusal_raises_through_every_entry_point(run: Run) -> None:
    agent = create_agent(ScriptedChatModel([refusal()]), middleware=[ModelRefusalMiddleware()])

    with pytest.raises(ModelRefusalError):
        run(agent, QUESTION)


def test_a_refusal_next_to_text_still_raises(how_call: str) -> None:
    reply = AIMessage(
        content=[{"type": "text", "text": "Sorry."}, {"type": "refusal", "refusal": "No."}]
    )
    agent = create_agent(ScriptedChatModel([reply]), middleware=[ModelRefusalMiddleware()])

    with pytest.raises(ModelRefusalError, match=r"No\."):
        run_agent(agent, how_call, QUESTION)


# -- what is not a refusal -------------------------------------------------------------------


def test_without_the_middleware_a_refusal_is_the_answer(how_call: str) -> None:
    agent = create_agent(ScriptedChatModel([refusal()]))

    result = run_agent(agent, how_call, QUESTION)

    assert result["messages"][-1].content_blocks[0]["type"] == "refusal"


def test_a_refusal_written_as_text_is_an_ordinary_answer(run: Run) -> None:
    model = ScriptedChatModel(["I'm sorry, but I can't help with that."])
    agent = create_agent(model, middleware=[ModelRefusalMiddleware()])

    assert answer(run(agent, QUESTION)) == "I'm sorry, but I can't help with that."


def test_tool_calls_and_answers_pass_unchanged(run: Run) -> None:
    @tool
    def lookup(topic: str) -> str:
        """Look a topic up."""
        return f"all about {topic}"

    model = ScriptedChatModel([calls(("lookup", {"topic": "locks"})), "Locks have pins."])
    agent = create_agent(model, tools=[lookup], middleware=[ModelRefusalMiddleware()])

    result = run(agent, QUESTION)

    assert [m.type for m in result["messages"]] == ["human", "ai", "tool", "ai"]
    assert result["messages"][2].content == "all about locks"
    assert answer(result) == "Locks have pins."


# -- composition: fallback and retry outside -------------------------------------------------


def test_a_fallback_listed_outside_answers_instead(run: Run) -> None:
    primary = ScriptedChatModel([refusal()])
    fallback = ScriptedChatModel(["Here is how locks work."])
    agent = create_agent(
        primary, middleware=[ModelFallbackMiddleware(fallback), ModelRefusalMiddleware()]
    )

    result = run(agent, QUESTION)

    assert answer(result) == "Here is how locks work."
    assert (primary.call_count, fallback.call_count) == (1, 1)
    assert [m.type for m in result["messages"]] == ["human", "ai"]


def test_a_fallback_listed_inside_does_not_see_the_refusal(how_call: str) -> None:
    primary = ScriptedChatModel([refusal()])
    fallback = ScriptedChatModel(["unused"])
    agent = create_agent(
        primary, middleware=[ModelRefusalMiddleware(), ModelFallbackMiddleware(fallback)]
    )

    with pytest.raises(ModelRefusalError):
        run_agent(agent, how_call, QUESTION)
    assert fallback.call_count == 0


def test_a_retry_listed_outside_asks_again_when_told_to(how_call: str) -> None:
    model = ScriptedChatModel([refusal(), "Locks have pins."])
    retry = ModelRetryMiddleware(
        max_retries=1, retry_on=(ModelRefusalError,), initial_delay=0, jitter=False
    )
    agent = create_agent(model, middleware=[retry, ModelRefusalMiddleware()])

    result = run_agent(agent, how_call, QUESTION)

    assert answer(result) == "Locks have pins."
    assert model.call_count == 2


def test_a_default_retry_does_not_repeat_a_refused_request(how_call: str) -> None:
    # ModelRefusalError is a ModelError with is_retryable=False.
    model = ScriptedChatModel([refusal(), "unused"])
    retry = ModelRetryMiddleware(max_retries=2, initial_delay=0, jitter=False, on_failure="error")
    agent = create_agent(model, middleware=[retry, ModelRefusalMiddleware()])

    with pytest.raises(ModelRefusalError):
        run_agent(agent, how_call, QUESTION)
    assert model.call_count == 1


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_a_refused_stream_streams_the_fallback_answer(how: str) -> None:
    primary = ScriptedChatModel([refusal()])
    fallback = ScriptedChatModel(["Locks have pins."])
    agent = create_agent(
        primary, middleware=[ModelFallbackMiddleware(fallback), ModelRefusalMiddleware()]
    )

    if how == "stream":
        chunks = list(agent.stream(QUESTION, stream_mode="messages"))
    else:

        async def collect() -> list[Any]:
            return [c async for c in agent.astream(QUESTION, stream_mode="messages")]

        chunks = asyncio.run(collect())

    texts = [m.text for m, _ in chunks if isinstance(m, AIMessageChunk)]
    assert "".join(texts) == "Locks have pins."


# -- structured output -----------------------------------------------------------------------


class Steps(BaseModel):
    steps: list[str]


def test_a_refusal_that_broke_structured_output_raises_the_refusal(how_call: str) -> None:
    model = ScriptedChatModel([openai_refusal("No lock picking.")])
    agent = create_agent(
        model, response_format=ProviderStrategy(Steps), middleware=[ModelRefusalMiddleware()]
    )

    with pytest.raises(ModelRefusalError, match=r"No lock picking\.") as caught:
        run_agent(agent, how_call, QUESTION)

    assert isinstance(caught.value.__cause__, StructuredOutputValidationError)


def test_a_structured_output_error_without_refusal_is_left_alone(how_call: str) -> None:
    model = ScriptedChatModel(["not json"])
    agent = create_agent(
        model, response_format=ProviderStrategy(Steps), middleware=[ModelRefusalMiddleware()]
    )

    with pytest.raises(StructuredOutputValidationError):
        run_agent(agent, how_call, QUESTION)


def test_structured_output_passes_when_not_refused(how_call: str) -> None:
    model = ScriptedChatModel(['{"steps": ["insert", "turn"]}'])
    agent = create_agent(
        model, response_format=ProviderStrategy(Steps), middleware=[ModelRefusalMiddleware()]
    )

    result = run_agent(agent, how_call, QUESTION)

    assert result["structured_response"] == Steps(steps=["insert", "turn"])


# -- control flow ----------------------------------------------------------------------------


def test_an_interrupt_inside_passes_through_and_resumes(how_call: str) -> None:
    @wrap_model_call
    def ask_first(request: ModelRequest[Any], handler: Any) -> ModelResponse:
        approved = interrupt("call the model?")
        if not approved:
            return ModelResponse([AIMessage("Not asked.")])
        return handler(request)  # type: ignore[no-any-return]

    model = ScriptedChatModel([refusal(), "unused"])
    agent = create_agent(
        model,
        middleware=[ModelRefusalMiddleware(), ask_first],
        checkpointer=InMemorySaver(),
    )
    thread = {"configurable": {"thread_id": "t"}}

    paused = run_agent(agent, how_call, QUESTION, config=thread)
    assert "__interrupt__" in paused
    assert model.call_count == 0

    with pytest.raises(ModelRefusalError):
        run_agent(agent, how_call, Command(resume=True), config=thread)
    assert model.call_count == 1


def test_the_middleware_calls_the_handler_once(how_call: str) -> None:
    seen: list[int] = []

    @wrap_model_call
    def count(request: ModelRequest[Any], handler: Any) -> ModelResponse:
        seen.append(1)
        return handler(request)  # type: ignore[no-any-return]

    agent = create_agent(ScriptedChatModel(["fine"]), middleware=[ModelRefusalMiddleware(), count])

    assert answer(run_agent(agent, how_call, QUESTION)) == "fine"
    assert seen == [1]
