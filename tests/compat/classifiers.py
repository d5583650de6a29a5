"""Decision models for tests: answers computed from the state, every request recorded."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.decisions import BaseDecisionModel, Choice, ClassifierResponse, Question
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessageChunk
from pydantic import PrivateAttr, SkipValidation

Decide = Callable[[Any], Any]
"""The state classified -> a Choice's label or a Noul's probability."""


@dataclass(frozen=True)
class Request:
    state: Any
    questions: dict[str, Question]
    asynchronous: bool


class ScriptedClassifier(BaseDecisionModel):
    """Answers every question with ``decide(state)``: a label for a ``Choice`` (with all the
    probability on it), a probability for a ``Noul``."""

    model: str = "scripted-classifier"
    decide: SkipValidation[Decide]
    _requests: list[Request] = PrivateAttr(default_factory=list)

    @property
    def _provider(self) -> str:
        return "scripted"

    @property
    def requests(self) -> list[Request]:
        return list(self._requests)

    def _classify(self, state: Any, questions: dict[str, Question]) -> ClassifierResponse:
        self._requests.append(Request(state, questions, asynchronous=False))
        return _response(self.model, questions, self.decide(state))

    async def _aclassify(self, state: Any, questions: dict[str, Question]) -> ClassifierResponse:
        self._requests.append(Request(state, questions, asynchronous=True))
        return _response(self.model, questions, self.decide(state))


class ChatBackedClassifier(BaseDecisionModel):
    """Asks a chat model, as a decision model built on one would; the reply's text is the
    answer. Its tokens would show in an agent's messages stream unless the call is hidden."""

    model: str = "chat-backed-classifier"
    chat: SkipValidation[BaseChatModel]

    @property
    def _provider(self) -> str:
        return "scripted"

    def _classify(self, state: Any, questions: dict[str, Question]) -> ClassifierResponse:
        return _response(self.model, questions, self.chat.invoke("Classify.").text)

    async def _aclassify(self, state: Any, questions: dict[str, Question]) -> ClassifierResponse:
        reply = await self.chat.ainvoke("Classify.")
        return _response(self.model, questions, reply.text)


def _response(model: str, questions: dict[str, Question], value: Any) -> ClassifierResponse:
    answers = {qid: _answer_to(question, value) for qid, question in questions.items()}
    return ClassifierResponse(model=model, answers=answers)


def _answer_to(question: Question, value: Any) -> dict[str, Any]:
    if isinstance(question, Choice):
        probabilities = {label: float(label == value) for label in question.criteria}
        return {"type": "choice", "choice": value, "probabilities": probabilities, "confidence": 1}
    return {"type": "noul", "noul": value}


def answering(value: Any) -> ScriptedClassifier:
    """A classifier that gives ``value`` whatever it is asked about."""
    return ScriptedClassifier(decide=lambda state: value)


def streamed_text(agent: Any, how: str, inputs: Any, **kwargs: Any) -> str:
    """The text of every message chunk a run streams with ``stream_mode="messages"``, through
    ``stream`` or ``astream``."""
    if how == "stream":
        chunks = list(agent.stream(inputs, stream_mode="messages", **kwargs))
    else:

        async def collect() -> list[Any]:
            return [c async for c in agent.astream(inputs, stream_mode="messages", **kwargs)]

        chunks = asyncio.run(asyncio.wait_for(collect(), 60))
    return "".join(m.text for m, _ in chunks if isinstance(m, AIMessageChunk))
