"""LangChain 1.5's ``model_refusal``: ``ModelRefusalMiddleware`` turns a reply holding a standard
refusal content block into langchain-core's ``ModelRefusalError`` (its exact message and
``raw_message``), leaves every other reply alone, does not read refusals into text, does not
retry, lets a ``ModelFallbackMiddleware`` listed before it recover, and raises the refusal
instead of the structured-output error it caused."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.exceptions import ModelRefusalError
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

from graphagent import create_agent
from graphagent.middleware import (
    ModelFallbackMiddleware,
    ModelRefusalMiddleware,
    TracePolicy,
    omit_payload,
)
from graphagent.structured_output import (
    MultipleStructuredOutputsError,
    ProviderStrategy,
    StructuredOutputValidationError,
    ToolStrategy,
)
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent

ASK = {"messages": [HumanMessage("Write the exploit.")]}
PREFIX = "Model refused to produce the requested output"


def refusal_block(text: str | None = None, category: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "refusal"}
    if text is not None:
        block["refusal"] = text
    if category is not None:
        block["extras"] = {"category": category}
    return block


def refused(text: str | None = "I won't do that.", category: str | None = None) -> AIMessage:
    return AIMessage(content=[refusal_block(text, category)])


def openai_refused(text: str) -> AIMessage:
    """langchain-openai's form: the ``refusal`` field and no content."""
    return AIMessage(
        content="",
        additional_kwargs={"refusal": text},
        response_metadata={"model_provider": "openai"},
    )


def anthropic_refused() -> AIMessage:
    """langchain-anthropic's form: stop reason ``refusal`` and no text."""
    return AIMessage(
        content="", response_metadata={"model_provider": "anthropic", "stop_reason": "refusal"}
    )


def guarded(model: ScriptedChatModel, *before: Any, **options: Any) -> Any:
    return create_agent(model, middleware=[*before, ModelRefusalMiddleware()], **options)


@tool
def encyclopedia(topic: str) -> str:
    """Read about a topic."""
    return f"about {topic}"


class Plan(BaseModel):
    steps: list[str]


# -- the middleware itself -------------------------------------------------------------------


def test_it_takes_no_arguments() -> None:
    middleware = ModelRefusalMiddleware()

    assert middleware.name == "ModelRefusalMiddleware"
    with pytest.raises(TypeError):
        ModelRefusalMiddleware(True)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ModelRefusalMiddleware(retry=True)  # type: ignore[call-arg]


def test_its_traces_omit_the_request() -> None:
    policy = ModelRefusalMiddleware.trace_policy

    assert isinstance(policy, TracePolicy)
    assert policy.process_inputs is omit_payload
    assert policy.process_outputs is None


# -- a refusal raises ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (refused("I won't do that.", "cyber"), f"{PREFIX} (category='cyber'): I won't do that."),
        (refused("I won't do that."), f"{PREFIX}: I won't do that."),
        (refused(None, "cyber"), f"{PREFIX} (category='cyber')"),
        (refused(None), PREFIX),
        (refused(""), PREFIX),
        (openai_refused("Not allowed."), f"{PREFIX}: Not allowed."),
        (anthropic_refused(), PREFIX),
    ],
    ids=["category-and-text", "text", "category", "bare", "empty-text", "openai", "anthropic"],
)
def test_a_refusal_raises_model_refusal_error(
    reply: AIMessage, message: str, how_call: str
) -> None:
    model = ScriptedChatModel([reply])

    with pytest.raises(ModelRefusalError) as caught:
        run_agent(guarded(model), how_call, ASK)

    assert str(caught.value) == message
    raw = caught.value.raw_message
    assert isinstance(raw, AIMessage)
    assert raw.content == reply.content
    assert raw.content_blocks == reply.content_blocks
    assert model.call_count == 1


def test_a_refusal_beside_text_and_tool_calls_raises_and_no_tool_runs(how_call: str) -> None:
    ran: list[str] = []

    @tool
    def act(what: str) -> str:
        """Do something."""
        ran.append(what)
        return "done"

    reply = calls(("act", {"what": "x"}))
    reply.content = [{"type": "text", "text": "Partly."}, refusal_block("Not the rest.")]
    agent = create_agent(ScriptedChatModel([reply]), [act], middleware=[ModelRefusalMiddleware()])

    with pytest.raises(ModelRefusalError) as caught:
        run_agent(agent, how_call, ASK)
    assert str(caught.value) == f"{PREFIX}: Not the rest."
    assert ran == []


def test_a_refusal_after_a_tool_round_raises(how_call: str) -> None:
    model = ScriptedChatModel([calls(("encyclopedia", {"topic": "locks"})), refused()])
    agent = create_agent(model, [encyclopedia], middleware=[ModelRefusalMiddleware()])

    with pytest.raises(ModelRefusalError):
        run_agent(agent, how_call, ASK)
    assert model.call_count == 2


def test_the_refused_reply_is_not_saved_to_the_thread(how_call: str) -> None:
    agent = guarded(ScriptedChatModel([refused()]), checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "refused"}}

    with pytest.raises(ModelRefusalError):
        run_agent(agent, how_call, ASK, config=thread)

    saved = agent.get_state(thread).values["messages"]
    assert [m.type for m in saved] == ["human"]


# -- what passes unchanged -------------------------------------------------------------------


def test_without_the_middleware_the_refusal_is_the_answer(how_call: str) -> None:
    agent = create_agent(ScriptedChatModel([refused("No.")]))

    result = run_agent(agent, how_call, ASK)

    assert result["messages"][-1].content == [{"type": "refusal", "refusal": "No."}]


@pytest.mark.parametrize(
    "text", ["I'm sorry, but I can't help with that.", "I refuse.", '{"type": "refusal"}']
)
def test_a_refusal_in_words_is_an_ordinary_answer(text: str, how_call: str) -> None:
    result = run_agent(guarded(ScriptedChatModel([text])), how_call, ASK)

    assert result["messages"][-1].content == text


def test_tool_rounds_and_answers_pass_unchanged(how_call: str) -> None:
    model = ScriptedChatModel([calls(("encyclopedia", {"topic": "locks"})), "Locks have pins."])
    agent = create_agent(model, [encyclopedia], middleware=[ModelRefusalMiddleware()])

    result = run_agent(agent, how_call, ASK)

    assert [m.type for m in result["messages"]] == ["human", "ai", "tool", "ai"]
    assert result["messages"][2].content == "about locks"
    assert result["messages"][-1].content == "Locks have pins."


# -- fallbacks -------------------------------------------------------------------------------


def test_a_fallback_listed_before_it_answers_instead(how_call: str) -> None:
    primary = ScriptedChatModel([refused()])
    backup = ScriptedChatModel(["A safe answer."])
    agent = guarded(primary, ModelFallbackMiddleware(backup))

    result = run_agent(agent, how_call, ASK)

    assert [m.type for m in result["messages"]] == ["human", "ai"]
    assert result["messages"][-1].content == "A safe answer."
    assert (primary.call_count, backup.call_count) == (1, 1)


def test_a_fallback_listed_after_it_never_sees_the_refusal(how_call: str) -> None:
    primary = ScriptedChatModel([refused()])
    backup = ScriptedChatModel(["unused"])
    agent = create_agent(
        primary, middleware=[ModelRefusalMiddleware(), ModelFallbackMiddleware(backup)]
    )

    with pytest.raises(ModelRefusalError):
        run_agent(agent, how_call, ASK)
    assert backup.call_count == 0


def test_a_fallback_that_refuses_too_raises(how_call: str) -> None:
    agent = guarded(
        ScriptedChatModel([refused("first")]),
        ModelFallbackMiddleware(ScriptedChatModel([refused("second")])),
    )

    with pytest.raises(ModelRefusalError) as caught:
        run_agent(agent, how_call, ASK)
    assert str(caught.value) == f"{PREFIX}: second"


# -- structured output -----------------------------------------------------------------------


def test_a_refusal_that_broke_provider_output_raises_the_refusal(how_call: str) -> None:
    agent = guarded(
        ScriptedChatModel([openai_refused("No plans for that.")]),
        response_format=ProviderStrategy(Plan),
    )

    with pytest.raises(ModelRefusalError) as caught:
        run_agent(agent, how_call, ASK)

    assert str(caught.value) == f"{PREFIX}: No plans for that."
    assert isinstance(caught.value.__context__, StructuredOutputValidationError)


def test_a_refusal_under_tool_strategy_raises(how_call: str) -> None:
    agent = guarded(ScriptedChatModel([refused("No.")]), response_format=ToolStrategy(Plan))

    with pytest.raises(ModelRefusalError) as caught:
        run_agent(agent, how_call, ASK)
    assert str(caught.value) == f"{PREFIX}: No."


def test_a_broken_structured_output_without_a_refusal_raises_as_before(how_call: str) -> None:
    agent = guarded(ScriptedChatModel(["not json"]), response_format=ProviderStrategy(Plan))

    with pytest.raises(StructuredOutputValidationError):
        run_agent(agent, how_call, ASK)


def test_structured_output_that_is_not_refused_is_returned(how_call: str) -> None:
    agent = guarded(
        ScriptedChatModel(['{"steps": ["plan", "do"]}']), response_format=ProviderStrategy(Plan)
    )

    result = run_agent(agent, how_call, ASK)

    assert result["structured_response"] == Plan(steps=["plan", "do"])


def test_a_refusal_beside_two_structured_answers_raises_the_refusal(how_call: str) -> None:
    # Difference ("A refusal that broke structured output", docs/testing-and-refusals.md):
    # graphagent raises ModelRefusalError for any structured-output error carrying the refused
    # reply; LangChain only for validation errors, so this MultipleStructuredOutputsError
    # would propagate there.
    reply = calls(("Plan", {"steps": ["a"]}), ("Plan", {"steps": ["b"]}))
    reply.content = [refusal_block("No plans.")]
    agent = guarded(
        ScriptedChatModel([reply]), response_format=ToolStrategy(Plan, handle_errors=False)
    )

    with pytest.raises(ModelRefusalError) as caught:
        run_agent(agent, how_call, ASK)

    assert str(caught.value) == f"{PREFIX}: No plans."

    assert isinstance(caught.value.__context__, MultipleStructuredOutputsError)
