"""The records of a human review: what the reviewer is shown, what they answer, how a tool is
reviewed, the state field and the errors. ``human_in_the_loop`` re-exports the public ones."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired, get_args

from langchain_core.messages import ToolCall
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from pydantic import BaseModel
from typing_extensions import TypedDict

from graphagent.errors import ResumeError
from graphagent.state import AgentState, PrivateStateAttr, ResponseT

DecisionType = Literal["approve", "edit", "reject", "respond"]
"""What a reviewer can decide about one tool call."""

DECISION_TYPES: tuple[DecisionType, ...] = get_args(DecisionType)

InterruptMode = Literal["batched", "per_call"]
"""How the agent pauses for review: once per model turn for all its reviewed calls
(``"batched"``), or once per reviewed call, as the call starts (``"per_call"``)."""

INTERRUPT_MODES: tuple[InterruptMode, ...] = get_args(InterruptMode)


class Action(TypedDict):
    """A tool call as a reviewer sees or rewrites it: the tool's name and its arguments."""

    name: str
    """The tool to call."""
    args: dict[str, Any]
    """The arguments to call it with."""


class ActionRequest(TypedDict):
    """One tool call awaiting review, with the text shown to the reviewer."""

    name: str
    """The tool the model called."""
    args: dict[str, Any]
    """The arguments the model gave."""
    description: NotRequired[str]
    """The text shown to the reviewer."""


class ReviewConfig(TypedDict):
    """What the reviewer may decide about the action request at the same position."""

    action_name: str
    """The tool of that action request."""
    allowed_decisions: list[DecisionType]
    """The decisions the reviewer may make about it."""
    args_schema: NotRequired[dict[str, Any]]
    """With ``edit`` allowed: the JSON schema an edit's arguments are checked against."""


class HITLRequest(TypedDict):
    """The value of the interrupt: every call of one model turn that awaits review."""

    action_requests: list[ActionRequest]
    """The calls awaiting review, in the order the model made them."""
    review_configs: list[ReviewConfig]
    """What may be decided about each, at the same positions."""


class ToolApprovalRequest(TypedDict):
    """The value of one interrupt in ``interrupt_mode="per_call"``: one tool call awaiting review.

    It is answered with a single :data:`Decision`, keyed by the interrupt's id
    (``Command(resume={interrupt.id: decision})``); the interrupt's ``response_schema`` is the
    JSON schema of the decisions allowed for the tool.
    """

    type: Literal["tool_approval"]
    """Always ``"tool_approval"``: tells a client which kind of review this is."""
    tool_call_id: str
    """The id of the model's tool call under review."""
    name: str
    """The tool the model called."""
    args: dict[str, Any]
    """The arguments the model gave."""
    description: str
    """The text shown to the reviewer."""


class ApproveDecision(TypedDict):
    """Run the call as the model made it."""

    type: Literal["approve"]
    """Always ``"approve"``."""


class EditDecision(TypedDict):
    """Run ``edited_action`` in place of the model's call."""

    type: Literal["edit"]
    """Always ``"edit"``."""
    edited_action: Action
    """The call to run instead: the same tool with other arguments, or another tool (whose
    own review policy then applies)."""


class RejectDecision(TypedDict):
    """Do not run the call; ``message`` (the reviewer's reason) goes to the model."""

    type: Literal["reject"]
    """Always ``"reject"``."""
    message: NotRequired[str]
    """Why the call was rejected, for the model to read."""


class RespondDecision(TypedDict):
    """Do not run the call; ``message`` goes to the model as the tool's result."""

    type: Literal["respond"]
    """Always ``"respond"``."""
    message: str
    """The answer the model receives in place of the tool's result."""


Decision = ApproveDecision | EditDecision | RejectDecision | RespondDecision
"""A reviewer's answer about one tool call: approve, edit, reject or respond."""


class HITLResponse(TypedDict):
    """The resume value: one decision per action request, in the same order."""

    decisions: list[Decision]
    """One decision per action request of the ``HITLRequest``, in its order."""


DECISION_KEYS: dict[str, frozenset[str]] = {
    kind: frozenset(shape.__annotations__)
    for kind, shape in zip(
        DECISION_TYPES,
        (ApproveDecision, EditDecision, RejectDecision, RespondDecision),
        strict=True,
    )
}
"""The keys each kind of decision takes; any other key would be ignored, so it is refused."""

DescriptionFactory = Callable[[ToolCall, AgentState[Any], Runtime[Any]], str]
"""Writes the reviewer's text for one call from the call, the agent state and the runtime."""


class InterruptOnConfig(TypedDict):
    """How calls of one tool are reviewed."""

    allowed_decisions: list[DecisionType]
    """The decisions the reviewer may make: some of approve, edit, reject and respond."""
    description: NotRequired[str | DescriptionFactory]
    """The reviewer's text: fixed, or written per call (default: the prefix, tool and args)."""
    args_schema: NotRequired[dict[str, Any] | type[BaseModel]]
    """A JSON schema or pydantic model that edited arguments must also satisfy."""
    when: NotRequired[Callable[[ToolCallRequest], bool]]
    """Review only the calls for which this returns True (it must answer alike on resume).
    Batched, it gets the call with no tool and a ``ToolRuntime`` made from the hook's runtime
    (no tools); per call, the tools step's own request."""


CONFIG_KEYS = frozenset(InterruptOnConfig.__annotations__)


def _merge_decisions(
    current: dict[str, DecisionType] | None, update: dict[str, DecisionType]
) -> dict[str, DecisionType]:
    return {**(current or {}), **update}


EDITS_KEY = "hitl_edited_tool_calls"
"""The state field holding the calls a batched review edited (LangChain's name for it)."""


class HumanInTheLoopState(AgentState[ResponseT]):
    """The agent state with the decision made for each reviewed tool call, by call id, and the
    calls the last batched review edited."""

    hitl_decisions: NotRequired[
        Annotated[dict[str, DecisionType], _merge_decisions, PrivateStateAttr]
    ]
    """The decision made for each reviewed call, by tool call id (private)."""
    hitl_edited_tool_calls: NotRequired[Annotated[dict[str, Action], PrivateStateAttr]]
    """The reviewer's call for each call the last batched review edited, by tool call id
    (private): the tools step runs it in place of the model's. Each review replaces it, and a
    turn with nothing to review empties it."""


class InvalidDecisionError(ResumeError):
    """A resume answer that does not fit the open review. Nothing ran and nothing was saved, so
    the same review can be answered again. Each argument but ``message`` is kept as an
    attribute of the same name. It answers batched reviews; a per-call review refuses an answer
    with pydantic's ``ValidationError``, as LangChain's does.

    Args:
        message: What is wrong with the answer and how to fix it.
        index: The position of the faulty decision; ``None`` when the answer as a whole is
            wrong, and for a per-call review (one decision).
        tool_name: The reviewed tool.
        allowed: The decisions allowed for it.
    """

    # Tracebacks, traces and pickles name the error by its public home, as before the split.
    __module__ = "graphagent.middleware.human_in_the_loop"

    def __init__(
        self,
        message: str,
        *,
        index: int | None = None,
        tool_name: str | None = None,
        allowed: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.index = index
        self.tool_name = tool_name
        self.allowed = tuple(allowed)

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (str(self),), self.__dict__


@dataclass(frozen=True, slots=True)
class Review:
    """One pending call put to the reviewer: what is shown, and what may be decided."""

    call: ToolCall
    action: ActionRequest
    review: ReviewConfig

    @property
    def allowed(self) -> list[DecisionType]:
        return self.review["allowed_decisions"]
