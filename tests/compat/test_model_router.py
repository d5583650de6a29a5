"""``ModelRouterMiddleware`` and ``ModelChoice``, as LangChain 1.5 documents them: a decision
model picks each run's model from the latest user message, and its whole answer is kept in the
state as ``model_route``."""

from __future__ import annotations

import inspect
import runpy
import warnings
from typing import Any

import pytest
from langchain_core._api import LangChainBetaWarning
from langchain_core.decisions import Choice, ChoiceAnswer
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.types import Command, interrupt
from pydantic import ValidationError

from graphagent import create_agent
from graphagent.errors import MiddlewareError, UnknownArgumentError
from graphagent.middleware import ModelChoice, ModelRouterMiddleware, model_router
from graphagent.middleware.trace_policy import omit_payload
from graphagent.testing import ScriptedChatModel, calls
from tests.compat.classifiers import (
    ChatBackedClassifier,
    ScriptedClassifier,
    answering,
    streamed_text,
)
from tests.conftest import run_agent
from tests.openai_stub import OpenAIStub, text

INSTRUCTIONS = "Choose the least costly model suited to the task."


def router(
    classifier: Any, fast: ScriptedChatModel, powerful: ScriptedChatModel
) -> ModelRouterMiddleware:
    return ModelRouterMiddleware(
        choices={
            "fast": ModelChoice(model=fast, criteria="Simple, well-scoped tasks."),
            "powerful": ModelChoice(model=powerful, criteria="Complex reasoning."),
        },
        instructions=INSTRUCTIONS,
        classifier=classifier,
    )


def test_each_model_call_of_the_run_goes_to_the_chosen_model(how_call: str) -> None:
    @tool
    def lookup(topic: str) -> str:
        """Look a topic up."""
        return f"notes on {topic}"

    default, fast = ScriptedChatModel([]), ScriptedChatModel([])
    powerful = ScriptedChatModel([calls(("lookup", {"topic": "proofs"})), "A proof."])
    classifier = answering("powerful")
    agent = create_agent(default, [lookup], middleware=[router(classifier, fast, powerful)])

    result = run_agent(agent, how_call, {"messages": [("user", "Prove it.")]})

    assert result["messages"][-1].content == "A proof."
    assert (default.call_count, fast.call_count, powerful.call_count) == (0, 0, 2)
    route = result["model_route"]
    assert isinstance(route, ChoiceAnswer)
    assert (route.choice, route.probabilities) == ("powerful", {"fast": 0.0, "powerful": 1.0})
    assert len(classifier.requests) == 1  # once per run, not per model call
    assert classifier.requests[0].asynchronous is (how_call == "ainvoke")


def test_the_classifier_is_asked_one_choice_about_the_latest_user_message(how_call: str) -> None:
    classifier = answering("fast")
    fast = ScriptedChatModel(["Hi."])
    agent = create_agent(
        ScriptedChatModel([]), middleware=[router(classifier, fast, ScriptedChatModel([]))]
    )
    history = [HumanMessage("First."), AIMessage("Noted."), HumanMessage("Second.")]

    run_agent(agent, how_call, {"messages": history})

    [request] = classifier.requests
    assert isinstance(request.state, HumanMessage)
    assert request.state.content == "Second."
    assert list(request.questions) == ["model_route"]
    question = request.questions["model_route"]
    assert isinstance(question, Choice)
    assert question.instructions == INSTRUCTIONS
    assert question.criteria == {
        "fast": "Simple, well-scoped tasks.",
        "powerful": "Complex reasoning.",
    }


def test_every_run_on_a_thread_is_routed_again(how_call: str) -> None:
    labels = iter(["fast", "powerful"])
    classifier = ScriptedClassifier(decide=lambda state: next(labels))
    fast, powerful = ScriptedChatModel(["Quick."]), ScriptedChatModel(["Deep."])
    agent = create_agent(
        ScriptedChatModel([]),
        middleware=[router(classifier, fast, powerful)],
        checkpointer=InMemorySaver(),
    )
    thread = {"configurable": {"thread_id": "t"}}

    first = run_agent(agent, how_call, {"messages": [("user", "Easy one.")]}, config=thread)
    second = run_agent(agent, how_call, {"messages": [("user", "Hard one.")]}, config=thread)

    assert first["model_route"].choice == "fast"
    assert second["model_route"].choice == "powerful"
    assert [m.content for m in second["messages"] if isinstance(m, AIMessage)] == [
        "Quick.",
        "Deep.",
    ]


def test_a_resumed_run_keeps_its_route_from_a_strict_checkpoint(how_call: str) -> None:
    # A checkpointer that refuses unregistered types gives the answer back as a plain dict.
    @tool
    def ask_user(question: str) -> str:
        """Ask the user."""
        return str(interrupt(question))

    powerful = ScriptedChatModel([calls(("ask_user", {"question": "Which?"})), "Done."])
    saver = InMemorySaver(serde=JsonPlusSerializer(allowed_msgpack_modules=None))
    agent = create_agent(
        ScriptedChatModel([]),
        [ask_user],
        middleware=[router(answering("powerful"), ScriptedChatModel([]), powerful)],
        checkpointer=saver,
    )
    thread = {"configurable": {"thread_id": "t"}}

    run_agent(agent, how_call, {"messages": [("user", "Go.")]}, config=thread)
    result = run_agent(agent, how_call, Command(resume="the blue one"), config=thread)

    assert result["messages"][-1].content == "Done."
    assert powerful.call_count == 2


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_the_classification_is_not_streamed_as_messages(how: str) -> None:
    chooser = ScriptedChatModel(["powerful"])
    powerful = ScriptedChatModel(["The answer."])
    middleware = router(ChatBackedClassifier(chat=chooser), ScriptedChatModel([]), powerful)
    agent = create_agent(ScriptedChatModel([]), middleware=[middleware])

    text = streamed_text(agent, how, {"messages": [("user", "Think hard.")]})

    assert text == "The answer."
    assert chooser.call_count == 1


def test_without_a_user_message_the_run_fails_before_any_model_call(how_call: str) -> None:
    fast = ScriptedChatModel(["Hi."])
    agent = create_agent(fast, middleware=[router(answering("fast"), fast, fast)])

    with pytest.raises(ValueError, match="requires a HumanMessage in the agent state to route on"):
        run_agent(agent, how_call, {"messages": [AIMessage("Hello, I am the assistant.")]})
    assert fast.call_count == 0


def test_a_label_that_is_no_route_fails_the_run(how_call: str) -> None:
    fast = ScriptedChatModel(["Hi."])
    agent = create_agent(fast, middleware=[router(answering("medium"), fast, fast)])

    with pytest.raises(ValueError, match="chose 'medium', which is not one of the routes"):
        run_agent(agent, how_call, {"messages": [("user", "Hi")]})
    assert fast.call_count == 0


def test_a_failing_classifier_fails_the_run(how_call: str) -> None:
    def unavailable(state: Any) -> str:
        raise ConnectionError("classifier unavailable")

    fast = ScriptedChatModel(["Hi."])
    classifier = ScriptedClassifier(decide=unavailable)
    agent = create_agent(fast, middleware=[router(classifier, fast, fast)])

    with pytest.raises(ConnectionError, match="classifier unavailable"):
        run_agent(agent, how_call, {"messages": [("user", "Hi")]})
    assert fast.call_count == 0


# -- model ids --------------------------------------------------------------------------------


def test_a_model_id_is_built_when_the_router_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    from langchain_openai import ChatOpenAI

    middleware = ModelRouterMiddleware(
        choices={"fast": ModelChoice(model="openai:gpt-4o-mini", criteria="Anything.")},
        instructions=INSTRUCTIONS,
        classifier=answering("fast"),
    )

    [model] = middleware.models.values()
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "gpt-4o-mini"
    assert middleware.models["fast"] is model


def test_a_model_id_answers_the_run(how_call: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with OpenAIStub(lifetime=60) as stub:
        stub.script(text("Answer from gpt-test."))
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", stub.url)
        middleware = ModelRouterMiddleware(
            choices={"fast": ModelChoice(model="openai:gpt-test", criteria="Anything.")},
            instructions=INSTRUCTIONS,
            classifier=answering("fast"),
        )
        agent = create_agent(ScriptedChatModel([]), middleware=[middleware])

        result = run_agent(agent, how_call, {"messages": [("user", "Hi")]})

    assert result["messages"][-1].content == "Answer from gpt-test."
    assert [r["model"] for r in stub.requests] == ["gpt-test"]


def test_a_model_id_is_built_once_by_the_modules_init_chat_model(
    how_call: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    model = ScriptedChatModel(["Built."])

    def fake_init(model_id: str) -> ScriptedChatModel:
        built.append(model_id)
        return model

    monkeypatch.setattr(model_router, "init_chat_model", fake_init)
    middleware = ModelRouterMiddleware(
        choices={"fast": ModelChoice(model="openai:gpt-4o-mini", criteria="Anything.")},
        instructions=INSTRUCTIONS,
        classifier=answering("fast"),
    )
    assert built == ["openai:gpt-4o-mini"]
    assert middleware.models == {"fast": model}

    agent = create_agent(ScriptedChatModel([]), middleware=[middleware])
    result = run_agent(agent, how_call, {"messages": [("user", "Hi")]})

    assert result["messages"][-1].content == "Built."
    assert built == ["openai:gpt-4o-mini"]


def test_the_first_router_built_warns_that_it_is_in_beta() -> None:
    # A fresh copy of the module, so that its class has not warned yet.
    namespace = runpy.run_path(inspect.getfile(ModelRouterMiddleware))
    fresh_router, fresh_choice = namespace["ModelRouterMiddleware"], namespace["ModelChoice"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LangChainBetaWarning)
        for _ in range(2):
            fresh_router(
                choices={"fast": fresh_choice(model=ScriptedChatModel([]), criteria="Any.")},
                instructions=INSTRUCTIONS,
                classifier=answering("fast"),
            )

    beta = [w for w in caught if w.category is LangChainBetaWarning]
    assert [str(w.message) for w in beta] == [
        "The middleware `ModelRouterMiddleware` is in beta. It is actively being worked on, so "
        "the API may change."
    ]


def test_the_trace_policy_leaves_the_inputs_out() -> None:
    assert ModelRouterMiddleware.trace_policy is not None
    assert ModelRouterMiddleware.trace_policy.process_inputs is omit_payload


# -- bad input --------------------------------------------------------------------------------


def test_a_misspelt_argument_names_the_class_and_the_closest_name() -> None:
    with pytest.raises(UnknownArgumentError, match="'choice'; did you mean 'choices'"):
        ModelRouterMiddleware(choice={}, instructions="", classifier=answering("x"))  # type: ignore[call-arg]
    with pytest.raises(UnknownArgumentError, match="'criterion'; did you mean 'criteria'"):
        ModelChoice(model="openai:gpt-4o", criterion="Simple.")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        # LangChain checks its configuration with pydantic: a ValidationError (a ValueError).
        ({"choices": {}}, ValidationError, "at least 1 item.*choices must be a non-empty"),
        (
            {"choices": {"fast": "openai:gpt-4o"}},
            ValidationError,
            r"choices\['fast'\] is str; pass ModelChoice",
        ),
        ({"instructions": 42}, ValidationError, "instructions is int"),
        (
            {"choices": {"fast": ModelChoice(model="nowhere:model-x", criteria="")}},
            ValueError,
            "'nowhere' is no known model provider",
        ),
        ({"classifier": "a classifier"}, MiddlewareError, "classifier is str; pass a decision"),
    ],
)
def test_bad_options_are_refused_when_built(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    given: dict[str, Any] = {
        "choices": {"fast": ModelChoice(model=ScriptedChatModel([]), criteria="Anything.")},
        "instructions": INSTRUCTIONS,
        "classifier": answering("fast"),
        **options,
    }

    with pytest.raises(error, match=message):
        ModelRouterMiddleware(**given)
