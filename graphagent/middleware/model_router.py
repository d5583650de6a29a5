"""``ModelRouterMiddleware``: a decision model picks, once per run, the model that does the work.

Before each run, the latest user message is classified with one ``Choice`` question: its labels
are the route names, its criteria the routes' ``criteria``, its instructions the middleware's. The
whole answer (the label, every label's probability, the confidence) is stored in the state as
``model_route``, and every model call of the run goes to the chosen route's model. A classifier
that fails, or answers with a label that is not a route, ends the run: no model is picked
silently in its place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NotRequired

from langchain_core._api import beta
from langchain_core.decisions import Choice, ChoiceAnswer, Content
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from pydantic import JsonValue

from graphagent._core.bridge import ASYNC, SYNC, Mode, run_sync
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import hook_label
from graphagent.middleware._kit.cores import ModelCallCore
from graphagent.middleware._kit.decisions import (
    answer_to,
    checked_classifier,
    classify,
    invalid_option,
)
from graphagent.middleware.trace_policy import TracePolicy, omit_payload
from graphagent.models import HelperModel, init_chat_model
from graphagent.requests import ModelCallResult, ModelRequest
from graphagent.state import AgentState, ResponseT

if TYPE_CHECKING:
    from langchain_core.decisions import BaseDecisionModel
    from langgraph.runtime import Runtime

__all__ = ["ModelChoice", "ModelRouterMiddleware"]

_QUESTION = "model_route"


@refuse_unknown_arguments
@dataclass(frozen=True)
class ModelChoice:
    """A route of :class:`ModelRouterMiddleware`: a model the router may pick, and what it is
    good for.

    Args:
        model: A chat model, or a model id (``"openai:gpt-4o-mini"``) that the router builds
            with ``init_chat_model`` when it is built.
        criteria: What tasks to send to this model, as text or any JSON value, for the
            classifier to read.
    """

    model: str | BaseChatModel
    criteria: JsonValue


class ModelRouterState(AgentState[ResponseT]):
    """The state of an agent with a model router: the classifier's whole answer for this run."""

    model_route: NotRequired[ChoiceAnswer]


@dataclass(frozen=True, slots=True)
class RouterConfig:
    """The router's checked configuration: its routes and the classifier's instructions."""

    choices: Mapping[str, ModelChoice]
    instructions: Content


@refuse_unknown_arguments
# Not generic, as LangChain's is not (its type parameters are fixed here). In beta, as LangChain's
# is: the first one built emits a LangChainBetaWarning.
@beta(obj_type="middleware")
class ModelRouterMiddleware(ModelCallCore[ModelRouterState[Any], Any, Any]):
    """Send each run's model calls to the model a decision model picks for the user's request.

    The latest user message is classified once per run, before anything else; the answer is
    kept in the state as ``model_route`` (a ``ChoiceAnswer``), and every model call of the run
    uses the chosen model. A classifier that fails, or names a label that is not a route, ends
    the run. The classification is an internal call: it never shows in
    ``stream_mode="messages"``.

    Args:
        choices: The routes (at least one): a non-empty name for each, mapped to a
            :class:`ModelChoice`. The names are the labels the classifier chooses among.
        instructions: How the classifier should choose, as text (or a JSON object or array).
        classifier: The decision model (a ``langchain_core.decisions.BaseDecisionModel``) that
            picks a route.

    Raises:
        pydantic.ValidationError: ``choices`` is empty or not a mapping of names to
            ``ModelChoice``; ``instructions`` is not text, a JSON object or an array.
        MiddlewareTypeError: ``classifier`` is not a decision model.
        ValueError: A route's model id names no known provider (from ``init_chat_model``).
        MissingIntegrationError: A route's model id needs a package that is not installed.
    """

    state_schema = ModelRouterState
    trace_policy = TracePolicy(process_inputs=omit_payload)
    """Hook traces keep their timing but not the inputs (the user's message is classified)."""

    cache_volatile = ("model",)
    """What of a prompt's cached prefix this middleware may change (docs/prompt-caching.md)."""

    def __init__(
        self,
        *,
        choices: Mapping[str, ModelChoice],
        instructions: Content,
        classifier: BaseDecisionModel,
    ) -> None:
        super().__init__()
        owner = type(self).__name__
        self.config = RouterConfig(
            _checked_choices(owner, choices), _checked_content(owner, instructions)
        )
        self.classifier = checked_classifier(owner, classifier)
        self.models: dict[str, BaseChatModel] = {
            route: init_chat_model(choice.model) if isinstance(choice.model, str) else choice.model
            for route, choice in self.config.choices.items()
        }
        self._models = {
            route: HelperModel(owner, f"choices[{route!r}].model", model)
            for route, model in self.models.items()
        }
        criteria = {route: choice.criteria for route, choice in self.config.choices.items()}
        self._questions = {_QUESTION: Choice(instructions=instructions, criteria=criteria)}

    def before_agent(self, state: ModelRouterState[Any], runtime: Runtime[Any]) -> dict[str, Any]:
        """Classify the latest user message and store the answer as ``model_route``."""
        return run_sync(self._route(SYNC, state), hook_label(self.name, "before_agent"))

    async def abefore_agent(
        self, state: ModelRouterState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any]:
        """Async twin of :meth:`before_agent`."""
        return await self._route(ASYNC, state)

    async def _route(self, mode: Mode, state: ModelRouterState[Any]) -> dict[str, Any]:
        message = self._latest_user_message(state)
        response = await classify(mode, self.name, self.classifier, message, self._questions)
        answer: ChoiceAnswer = answer_to(self.name, response, _QUESTION, ChoiceAnswer)
        self._model_of(answer.choice)  # an unknown label ends the run here, before any model call
        return {"model_route": answer}

    async def _wrap_model_call(
        self, mode: Mode, request: ModelRequest[Any], handler: Callable[..., Any]
    ) -> ModelCallResult:
        """Call the model of this run's route (a configurable one is built off the event loop)."""
        model = await self._model_of(_chosen(self.name, request.state)).get(mode)
        result: ModelCallResult = await mode.call(handler, request.override(model=model))
        return result

    def _model_of(self, route: str) -> HelperModel:
        model = self._models.get(route)
        if model is None:
            raise ValueError(
                f"{self.name}: the classifier chose {route!r}, which is not one of the routes "
                f"{sorted(self._models)}; use a classifier that picks one of the criteria it is "
                "given."
            )
        return model

    def _latest_user_message(self, state: ModelRouterState[Any]) -> HumanMessage:
        for message in reversed(state["messages"]):
            if isinstance(message, HumanMessage):
                return message
        raise ValueError(
            f"{self.name} requires a HumanMessage in the agent state to route on; start the run "
            "with a user message."
        )


def _chosen(owner: str, state: Mapping[str, Any]) -> str:
    """The route label stored in the state (as a ``ChoiceAnswer``, or as the plain dict a
    checkpointer that refuses unregistered types gives back)."""
    answer = state.get("model_route")
    label = answer.get("choice") if isinstance(answer, Mapping) else getattr(answer, "choice", None)
    if not isinstance(label, str):
        raise ValueError(
            f"{owner}: the state holds no model_route to route this model call by; the route is "
            "chosen in before_agent, at the start of each run."
        )
    return label


def _checked_choices(owner: str, choices: object) -> dict[str, ModelChoice]:
    if not isinstance(choices, Mapping) or not choices:
        raise invalid_option(
            owner,
            "choices",
            choices,
            "Dictionary should have at least 1 item after validation: choices must be a "
            "non-empty mapping of route names to ModelChoice; e.g. choices={'fast': "
            "ModelChoice(model=..., criteria='Simple tasks.')}.",
        )
    for route, choice in choices.items():
        if not isinstance(route, str) or not route:
            raise invalid_option(
                owner, "choices", choices, f"the route name {route!r} is not a non-empty str."
            )
        if not isinstance(choice, ModelChoice):
            raise invalid_option(
                owner,
                "choices",
                choices,
                f"choices[{route!r}] is {type(choice).__name__}; pass "
                "ModelChoice(model=..., criteria=...).",
            )
    return dict(choices)


def _checked_content(owner: str, instructions: object) -> Content:
    if not isinstance(instructions, str | dict | list):
        raise invalid_option(
            owner,
            "instructions",
            instructions,
            f"instructions is {type(instructions).__name__}; pass text (or a JSON object or "
            "array) telling the classifier how to pick a route.",
        )
    return instructions
