"""``HumanInTheLoopMiddleware``: pause before chosen tool calls run, until a person decides.

After each model turn, the pending tool calls of the tools named in ``interrupt_on`` are put to
a reviewer in one ``langgraph.types.interrupt`` whose value is a :class:`HITLRequest` (one action
request and one review config per call, in call order). The run continues with
``Command(resume={"decisions": [...]})``, one decision per request, in the same order:

- ``approve``: the call runs as the model made it;
- ``edit``: the call runs with the reviewer's tool name and arguments, which replace the model's
  in the AI message (same message id, so the history shows the call that ran);
- ``reject``: the call never runs; an error ``ToolMessage`` with the reviewer's reason answers it;
- ``respond``: the call never runs; the reviewer's text answers it as the tool's result.

Calls of other tools run as usual. How it fits the core:

- The review is an ``after_model`` node. On resume langgraph runs that node again from its start:
  the request is rebuilt (so ``description`` callables and ``when`` predicates run again and
  must give the same answer) and ``interrupt`` returns the reviewer's answer. Nothing else runs
  twice: the model call finished before the pause, and tools run once, after the decision. So no
  ``wrap_model_call`` or ``wrap_tool_call`` layer is ever paused mid-call; a tool wrapper can
  tell a reviewed call by ``request.state["hitl_decisions"][call_id]``.
- The answer is checked as the interrupt's ``response_schema``, which langgraph validates before
  saving a resume value: an invalid answer raises :class:`InvalidDecisionError`, nothing runs,
  nothing is saved, and the same review can be answered again.
- Rejected and responded calls are answered by a ``ToolMessage``. The core only ever runs
  pending (unanswered) calls, so neither a later ``jump_to="tools"`` nor a retrying wrapper can
  run them.
- The interrupt needs a checkpointer: the agent's own, or a parent graph's when the agent runs
  as a subgraph. ``before_agent`` checks that one is in the run's config, so a missing one fails
  the first invocation before anything happens, not the resume.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import partial
from types import MappingProxyType
from typing import Annotated, Any, cast

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from langgraph.typing import ContextT
from pydantic import PlainValidator, ValidationError, WithJsonSchema

from graphagent._history import pending_tool_calls
from graphagent.errors import MiddlewareError
from graphagent.middleware._hitl_checks import (
    OWNER,
    EditRules,
    as_json_schema,
    checked_response,
    require_checkpointer,
    resolved_interrupt_on,
    response_json_schema,
    unwrapped,
)
from graphagent.middleware._hitl_types import (
    Action,
    ActionRequest,
    ApproveDecision,
    Decision,
    DecisionType,
    EditDecision,
    HITLRequest,
    HITLResponse,
    HumanInTheLoopState,
    InterruptOnConfig,
    InvalidDecisionError,
    RejectDecision,
    RespondDecision,
    Review,
    ReviewConfig,
)
from graphagent.middleware.base import AgentFacts, AgentMiddleware
from graphagent.state import ResponseT

__all__ = [
    "Action",
    "ActionRequest",
    "ApproveDecision",
    "Decision",
    "DecisionType",
    "EditDecision",
    "HITLRequest",
    "HITLResponse",
    "HumanInTheLoopMiddleware",
    "HumanInTheLoopState",
    "InterruptOnConfig",
    "InvalidDecisionError",
    "RejectDecision",
    "RespondDecision",
    "ReviewConfig",
]


class HumanInTheLoopMiddleware(
    AgentMiddleware[HumanInTheLoopState[ResponseT], ContextT, ResponseT]
):
    """Pause the agent before calls of the tools in ``interrupt_on`` run, so a person can
    approve, edit, reject or answer them.

    The agent needs a checkpointer (its own or a parent graph's). The interrupt's value is a
    ``HITLRequest``; the run resumes with ``Command(resume={"decisions": [...]})``, an
    ``HITLResponse``.

    Args:
        interrupt_on: Maps a tool name to ``True`` (review, every decision allowed), ``False``
            (no review) or an ``InterruptOnConfig``. A name the agent does not have fails when
            the agent is built.
        description_prefix: The start of the default text shown to the reviewer for a call,
            followed by the tool's name and arguments.

    Raises:
        MiddlewareError: A malformed ``interrupt_on`` entry; when the agent is built, an
            unknown tool or ``checkpointer=False``.
    """

    state_schema = HumanInTheLoopState

    def __init__(
        self,
        interrupt_on: Mapping[str, bool | InterruptOnConfig],
        *,
        description_prefix: str = "Tool execution requires approval",
    ) -> None:
        if not isinstance(description_prefix, str):
            raise MiddlewareError(
                f"{OWNER}: description_prefix must be a str, got {description_prefix!r}."
            )
        self.interrupt_on: dict[str, InterruptOnConfig] = resolved_interrupt_on(interrupt_on)
        self.description_prefix = description_prefix
        self._named = tuple(interrupt_on)
        self._tools: Mapping[str, BaseTool] = MappingProxyType({})

    def validate_agent(self, agent: AgentFacts) -> None:
        """Every tool named in ``interrupt_on`` must be one the agent runs, and the agent must be
        able to persist a paused run (a missing checkpointer is caught on the first run)."""
        if agent.checkpointing_disabled:
            raise MiddlewareError(
                f"{OWNER} needs a checkpointer to resume a review, but the agent was built with "
                "checkpointer=False; pass a checkpointer (or leave it None under a parent graph "
                "that has one)."
            )
        tools = {tool.name: tool for tool in agent.tools}
        unknown = [name for name in self._named if name not in tools]
        if unknown:
            provider = sorted(set(unknown) & agent.tool_names)
            note = (
                f" {provider} run at the model provider and cannot be reviewed." if provider else ""
            )
            raise MiddlewareError(
                f"{OWNER}: interrupt_on names {unknown}, which the agent does not run; its "
                f"tools are {sorted(tools)}.{note} Fix the name or remove the entry."
            )
        self._tools = MappingProxyType(tools)

    def before_agent(
        self, state: HumanInTheLoopState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Refuse to start a run that could pause but never resume."""
        require_checkpointer()
        return None

    def after_model(
        self, state: HumanInTheLoopState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Put this turn's gated calls to the reviewer in one interrupt, then apply the answer."""
        pending = pending_tool_calls(state["messages"])
        reviews = [
            self._review(c, state, runtime) for c in pending if self._gated(c, state, runtime)
        ]
        if not reviews:
            return None
        decisions = self._ask(reviews)
        return _outcome(_last_ai_message(state["messages"]), reviews, decisions)

    def _gated(self, call: ToolCall, state: Any, runtime: Runtime[ContextT]) -> bool:
        config = self.interrupt_on.get(call["name"])
        if config is None:
            return False
        when = config.get("when")
        return when is None or bool(when(self._tool_request(call, state, runtime)))

    def _tool_request(
        self, call: ToolCall, state: Any, runtime: Runtime[ContextT]
    ) -> ToolCallRequest:
        """The request the call will become in the tools node, for ``when`` predicates."""
        tool_runtime: ToolRuntime[Any, Any] = ToolRuntime(
            state=state,
            context=runtime.context,
            config=get_config(),
            stream_writer=runtime.stream_writer,
            tool_call_id=call["id"],
            store=runtime.store,
            tools=list(self._tools.values()),
            execution_info=runtime.execution_info,
            server_info=runtime.server_info,
        )
        tool = self._tools.get(call["name"])
        return ToolCallRequest(tool_call=call, tool=tool, state=state, runtime=tool_runtime)

    def _review(self, call: ToolCall, state: Any, runtime: Runtime[ContextT]) -> Review:
        name, config = call["name"], self.interrupt_on[call["name"]]
        described = config.get("description")
        if callable(described):
            description = described(call, state, runtime)
        elif described is None:
            args = json.dumps(call["args"], ensure_ascii=False, default=str)
            description = f"{self.description_prefix}\n\nTool: {name}\nArguments: {args}"
        else:
            description = described
        action = ActionRequest(name=name, args=call["args"], description=description)
        review = ReviewConfig(action_name=name, allowed_decisions=config["allowed_decisions"])
        schemas = self._edit_rules().schemas(name) if "edit" in config["allowed_decisions"] else []
        shown = as_json_schema(schemas[0]) if schemas else None
        if shown is not None:
            review["args_schema"] = shown
        return Review(call, action, review)

    def _edit_rules(self) -> EditRules:
        return EditRules(self.interrupt_on, self._tools)

    def _ask(self, reviews: list[Review]) -> list[Decision]:
        request = HITLRequest(
            action_requests=[r.action for r in reviews],
            review_configs=[r.review for r in reviews],
        )
        # langgraph validates a resume value against `response_schema` before saving it, so an
        # answer our check refuses leaves the interrupt open for a corrected one.
        checked = Annotated[
            Any,
            PlainValidator(partial(checked_response, reviews, self._edit_rules())),
            WithJsonSchema(response_json_schema(reviews)),
        ]
        try:
            response = interrupt(request, response_schema=cast("type[HITLResponse]", checked))
        except ValidationError as exc:
            raise unwrapped(exc) from None
        return response["decisions"]


def _last_ai_message(messages: Sequence[Any]) -> AIMessage:
    return next(m for m in reversed(messages) if isinstance(m, AIMessage))


def _outcome(
    message: AIMessage, reviews: list[Review], decisions: list[Decision]
) -> dict[str, Any]:
    """The state update that carries out the decisions."""
    replaced: dict[str | None, ToolCall] = {}
    answers: list[ToolMessage] = []
    chosen: dict[str, DecisionType] = {}
    for review, decision in zip(reviews, decisions, strict=True):
        call = review.call
        chosen[call["id"] or ""] = decision["type"]
        if decision["type"] == "edit":
            edited = decision["edited_action"]
            replaced[call["id"]] = {**call, "name": edited["name"], "args": dict(edited["args"])}
        elif decision["type"] != "approve":
            answers.append(_answer(call, decision))
    messages: list[Any] = answers
    if replaced:
        calls = [replaced.get(c["id"], c) for c in message.tool_calls]
        messages = [message.model_copy(update={"tool_calls": calls}), *answers]
    return {"messages": messages, "hitl_decisions": chosen}


def _answer(call: ToolCall, decision: RejectDecision | RespondDecision) -> ToolMessage:
    """What the model reads in place of the tool's result."""
    name, reason = call["name"], decision.get("message")
    if decision["type"] == "respond":
        content, status = decision["message"], "success"
    elif reason:
        content, status = f"The user declined this call to '{name}': {reason}", "error"
    else:
        content = (
            f"The user declined this call to '{name}', so it did not run. Do not make it again "
            "unless the user asks for it."
        )
        status = "error"
    return ToolMessage(content=content, tool_call_id=call["id"] or "", name=name, status=status)
