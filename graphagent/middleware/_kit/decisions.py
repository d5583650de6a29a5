"""A middleware's calls to a decision model (``langchain_core.decisions``): the classifier is
checked when the middleware is built, and its calls stay off the agent's ``messages`` stream."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import Runnable
from pydantic_core import InitErrorDetails, PydanticCustomError, ValidationError

from graphagent._core.bridge import Mode
from graphagent._core.internal_calls import internal_call_config
from graphagent.errors import MiddlewareTypeError

try:
    from langchain_core.decisions import ClassifierResponse, Question
except ImportError as error:  # langchain-core before 1.8
    raise ImportError(
        "graphagent's decision-model middleware (ModelRouterMiddleware, AutoModeMiddleware) "
        "needs langchain_core.decisions, which langchain-core 1.8 added; upgrade it with "
        "`pip install -U 'langchain-core>=1.8'`."
    ) from error


def invalid_option(owner: str, option: str, value: object, message: str) -> ValidationError:
    """The error for a bad ``option``: a ``pydantic.ValidationError`` (also a ``ValueError``),
    as LangChain's pydantic-checked configuration raises; ``message`` says what is wrong and how
    to fix it."""
    detail: InitErrorDetails = {
        "type": PydanticCustomError("invalid_option", f"{owner}: {message}"),
        "loc": (option,),
        "input": value,
    }
    return ValidationError.from_exception_data(owner, [detail])


def checked_classifier(owner: str, classifier: object) -> Runnable[Any, ClassifierResponse]:
    """``classifier`` if it can be invoked like a decision model; a build-time error if not."""
    if not isinstance(classifier, Runnable):
        raise MiddlewareTypeError(
            f"{owner}: classifier is {type(classifier).__name__}; pass a decision model "
            "(a langchain_core.decisions.BaseDecisionModel)."
        )
    return classifier


async def classify(
    mode: Mode,
    owner: str,
    classifier: Runnable[Any, ClassifierResponse],
    state: Any,
    questions: Mapping[str, Question],
) -> ClassifierResponse:
    """Ask ``classifier`` the ``questions`` about ``state``, through ``mode``, for ``owner``."""
    # Internal: a classifier built on a chat model stays out of what the run streams.
    config = internal_call_config(f"{owner}.classify")
    request = {"state": state, "questions": questions}
    response = await mode.invoke(classifier, request, config=config)
    if not isinstance(response, ClassifierResponse):
        raise TypeError(
            f"{owner}: the classifier returned {type(response).__name__}, not a "
            "langchain_core.decisions.ClassifierResponse."
        )
    return response


def answer_to(owner: str, response: ClassifierResponse, question: str, kind: type[Any]) -> Any:
    """The answer of type ``kind`` to ``question``; an error naming ``owner`` if it is missing."""
    found = response.answers.get(question)
    if not isinstance(found, kind):
        raise ValueError(
            f"{owner}: the classifier gave no {kind.__name__} for the question {question!r} "
            f"(its answers: {sorted(response.answers)}); use a decision model that answers "
            "every question it is asked."
        )
    return found
