"""``HumanInTheLoopMiddleware``: pause before chosen tool calls run, until a person decides.

A reviewer decides about each call of the tools named in ``interrupt_on``:

- ``approve``: the call runs as the model made it;
- ``edit``: the call runs with the reviewer's arguments (and, batched, maybe another tool);
- ``reject``: the call never runs; an error ``ToolMessage`` with the reviewer's reason answers it;
- ``respond``: the call never runs; the reviewer's text answers it as the tool's result.

Calls of other tools run as usual. ``interrupt_mode`` says when the agent pauses.

``"batched"`` (the default): after each model turn, one ``langgraph.types.interrupt`` whose value
is a :class:`HITLRequest` (one action request and one review config per call, in call order),
answered with ``Command(resume={"decisions": [...]})``.

- The review is an ``after_model`` node. On resume langgraph runs that node again from its start:
  the request is rebuilt (so ``description`` callables and ``when`` predicates run again and
  must give the same answer) and ``interrupt`` returns the reviewer's answer. Nothing else runs
  twice: the model call finished before the pause, and tools run once, after the decision. So no
  ``wrap_model_call`` or ``wrap_tool_call`` layer is ever paused mid-call; a tool wrapper can
  tell a reviewed call by ``request.state["hitl_decisions"][call_id]``.
- An edit replaces the model's call in its AI message (same message id), so the history shows
  the call that ran.
- Rejected and responded calls are answered by a ``ToolMessage``. The core only ever runs
  pending (unanswered) calls, so neither a later ``jump_to="tools"`` nor a retrying wrapper can
  run them.

``"per_call"``: one interrupt per reviewed call, raised in ``wrap_tool_call`` as the call starts;
its value is a :class:`ToolApprovalRequest`, answered with one decision keyed by the interrupt's
id, ``Command(resume={interrupt.id: decision})`` (see ``_hitl.per_call``).

- Each call is a task of its own, so parallel calls pause together, one interrupt each, and a
  resume runs again only the tasks that paused: a call answered or not reviewed never runs twice.
- The layers listed before this middleware (outside it) run up to the review, are left by
  langgraph's ``GraphInterrupt`` (control flow: no retry, no error), and run again on resume. The
  layers listed after it, and the tool, run only once decided. A layer outside that calls its
  handler again for the same call (a retry) gets the decision already taken.
- An edit keeps the tool and changes the arguments; the AI message keeps the model's call, and
  the result opens with ``edit_notice`` naming the call that ran ("Executed instead: ...").

In both modes the answer is checked as the interrupt's ``response_schema``, which langgraph
validates before saving a resume value: an invalid answer raises :class:`InvalidDecisionError`
(batched) or pydantic's ``ValidationError`` (per call, as in LangChain), nothing runs, nothing is
saved, and the same review can be answered again. A rejected or responded call is answered in
LangChain's words, with its notification metadata (``lc_source: "hitl_interrupt_decision"``).
The interrupt needs a checkpointer: the agent's own, or a parent graph's when the agent runs as
a subgraph.
``before_agent`` checks that one is in the run's config, so a missing one fails the first
invocation before anything happens, not the resume.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from types import MappingProxyType
from typing import Annotated, Any, cast

from langchain_core.messages import ToolCall
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import interrupt
from langgraph.typing import ContextT
from pydantic import PlainValidator, ValidationError, WithJsonSchema

from graphagent._core.bridge import Mode
from graphagent._core.history import pending_tool_calls
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import MiddlewareError
from graphagent.middleware._cores import ToolCallCore
from graphagent.middleware._hitl.checks import (
    OWNER,
    EditRules,
    as_json_schema,
    checked_mode,
    checked_response,
    checked_text,
    resolved_interrupt_on,
    response_json_schema,
    unwrapped,
    warn_without_checkpointer,
)
from graphagent.middleware._hitl.outcome import (
    DECISION_SOURCE as DECISION_SOURCE,
    answer,
    last_ai_message,
    outcome,
)
from graphagent.middleware._hitl.per_call import (
    DEFAULT_EDIT_NOTICE,
    DecidedCalls,
    DecisionShapes,
    edited_request,
    still_open,
    with_notice,
)
from graphagent.middleware._hitl.types import (
    Action,
    ActionRequest,
    ApproveDecision,
    Decision,
    DecisionType,
    EditDecision,
    HITLRequest,
    HITLResponse,
    HumanInTheLoopState,
    InterruptMode,
    InterruptOnConfig,
    InvalidDecisionError,
    RejectDecision,
    RespondDecision,
    Review,
    ReviewConfig,
    ToolApprovalRequest,
)
from graphagent.middleware.base import AgentFacts, ToolResult, running_agent
from graphagent.state import ResponseT

_log = logging.getLogger("graphagent")

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
    "InterruptMode",
    "InterruptOnConfig",
    "InvalidDecisionError",
    "RejectDecision",
    "RespondDecision",
    "ReviewConfig",
    "ToolApprovalRequest",
]


@refuse_unknown_arguments
class HumanInTheLoopMiddleware(ToolCallCore[HumanInTheLoopState[ResponseT], ContextT, ResponseT]):
    """Pause the agent before calls of the tools in ``interrupt_on`` run, so a person can
    approve, edit, reject or answer them.

    A review is resumed from a checkpoint, so the agent needs a checkpointer (its own or a
    parent graph's); a review reached without one ends the run with the interrupt, as in
    LangChain, and says so on the ``graphagent`` logger. With
    ``interrupt_mode="batched"`` the agent pauses once per model turn: the interrupt's value is
    a ``HITLRequest`` and the run resumes with ``Command(resume={"decisions": [...]})``, an
    ``HITLResponse``. With ``"per_call"`` it pauses once per reviewed call, as the call starts:
    each interrupt's value is a ``ToolApprovalRequest``, answered with one ``Decision`` keyed by
    the interrupt's id, ``Command(resume={interrupt.id: decision})``.

    Args:
        interrupt_on: Maps a tool name to ``True`` (review, every decision allowed), ``False``
            (no review) or an ``InterruptOnConfig``. A name the agent does not have is never
            reviewed (one table may serve several agents); building the agent notes it on the
            ``graphagent`` logger.
        description_prefix: The start of the default text shown to the reviewer for a call,
            followed by the tool's name and arguments.
        edit_notice: With ``"per_call"``, the text that opens the result of a call a reviewer
            edited, followed by the call that ran (the model's message keeps the call it
            made); ``None`` adds nothing. Batched edits replace the call in the model's message
            instead, so they need no notice.
        interrupt_mode: ``"batched"`` (one interrupt per model turn) or ``"per_call"`` (one
            interrupt per reviewed call, each with the ``response_schema`` of its tool). With
            ``"per_call"``, list this middleware before retry or error-handling middleware that
            should run only once the call is decided; layers listed before it run again on
            resume, up to the review.

    Raises:
        MiddlewareError: A malformed ``interrupt_on`` entry or an unknown ``interrupt_mode``;
            when the agent is built, ``checkpointer=False``.
        UnknownArgumentError: A keyword argument this class does not take.
    """

    state_schema = HumanInTheLoopState

    def __init__(
        self,
        interrupt_on: Mapping[str, bool | InterruptOnConfig],
        *,
        description_prefix: str = "Tool execution requires approval",
        edit_notice: str | None = DEFAULT_EDIT_NOTICE,
        interrupt_mode: InterruptMode = "batched",
    ) -> None:
        self.interrupt_mode: InterruptMode = checked_mode(interrupt_mode)
        # Each mode reviews in its own hook; the other one would be a node or layer doing nothing.
        unused = "after_model" if self.interrupt_mode == "per_call" else "wrap_tool_call"
        self._unused_hooks = frozenset({unused})
        self.description_prefix: str = checked_text("description_prefix", description_prefix)
        self.edit_notice: str | None = checked_text("edit_notice", edit_notice, optional=True)
        self.interrupt_on: dict[str, InterruptOnConfig] = resolved_interrupt_on(interrupt_on)
        self._named = tuple(interrupt_on)
        self._tools: Mapping[str, BaseTool] = MappingProxyType({})
        self._shapes = DecisionShapes()
        self._decided = DecidedCalls()

    def validate_agent(self, agent: AgentFacts) -> None:
        """The agent must be able to persist a paused run; tools of ``interrupt_on`` the agent
        does not run are noted on the ``graphagent`` logger (one table may serve several
        agents, as in LangChain)."""
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
                f"; {provider} run at the model provider and cannot be reviewed" if provider else ""
            )
            _log.info(
                "%s: interrupt_on names %s, which this agent does not run, so they are never "
                "reviewed here (its tools are %s%s)",
                OWNER,
                unknown,
                sorted(tools),
                note,
            )
        self._tools = MappingProxyType(tools)

    def after_model(
        self, state: HumanInTheLoopState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Put this turn's gated calls to the reviewer in one interrupt, then apply the answer
        (batched mode; with ``"per_call"`` each call is reviewed as it starts)."""
        pending = pending_tool_calls(state["messages"])
        reviews = [
            self._review(c, state, runtime) for c in pending if self._gated(c, state, runtime)
        ]
        if not reviews:
            return None
        decisions = self._ask(reviews)
        return outcome(last_ai_message(state["messages"]), reviews, decisions)

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
            tools=list(self._agent_tools().values()),
            execution_info=runtime.execution_info,
            server_info=runtime.server_info,
        )
        tool = self._agent_tools().get(call["name"])
        return ToolCallRequest(tool_call=call, tool=tool, state=state, runtime=tool_runtime)

    def _describe(self, call: ToolCall, state: Any, runtime: Runtime[ContextT]) -> str:
        """The text shown to the reviewer for ``call``."""
        described = self.interrupt_on[call["name"]].get("description")
        if callable(described):
            return described(call, state, runtime)
        if described is not None:
            return described
        args = json.dumps(call["args"], ensure_ascii=False, default=str)
        return f"{self.description_prefix}\n\nTool: {call['name']}\nArguments: {args}"

    def _review(self, call: ToolCall, state: Any, runtime: Runtime[ContextT]) -> Review:
        name, config = call["name"], self.interrupt_on[call["name"]]
        description = self._describe(call, state, runtime)
        action = ActionRequest(name=name, args=call["args"], description=description)
        review = ReviewConfig(action_name=name, allowed_decisions=config["allowed_decisions"])
        schemas = self._edit_rules().schemas(name) if "edit" in config["allowed_decisions"] else []
        shown = as_json_schema(schemas[0]) if schemas else None
        if shown is not None:
            review["args_schema"] = shown
        return Review(call, action, review)

    def _edit_rules(self, tools: Sequence[BaseTool] | None = None) -> EditRules:
        return EditRules(self.interrupt_on, self._agent_tools(tools))

    def _agent_tools(self, tools: Sequence[BaseTool] | None = None) -> Mapping[str, BaseTool]:
        """The tools of the agent this review runs in: ``tools`` (a tool call's runtime has
        them), or those of the agent whose hook is running. One instance may serve several
        agents; the tools ``validate_agent`` saw are only the last agent's."""
        if tools is None:
            facts = running_agent()
            tools = facts.tools if facts is not None else None
        return self._tools if tools is None else {tool.name: tool for tool in tools}

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
        warn_without_checkpointer([r.action["name"] for r in reviews])
        try:
            response = interrupt(request, response_schema=cast("type[HITLResponse]", checked))
        except ValidationError as exc:
            raise unwrapped(exc) from None
        return response["decisions"]

    # -- interrupt_mode="per_call" ---------------------------------------------------------------

    async def _wrap_tool_call(
        self, mode: Mode, request: ToolCallRequest, handler: Callable[..., Any]
    ) -> ToolResult:
        """With ``"per_call"``, put a reviewed call to the reviewer as it starts and carry out
        the decision; other calls run as they are."""
        decision = self._decision(request)
        result: ToolResult
        if decision is None or decision["type"] == "approve":
            result = await mode.call(handler, request)
            return result
        if decision["type"] == "edit":
            edited = decision["edited_action"]
            result = await mode.call(handler, edited_request(request, edited))
            return with_notice(result, request.tool_call["id"], edited, self.edit_notice)
        return answer(request.tool_call, decision)

    def _decision(self, request: ToolCallRequest) -> Decision | None:
        """The reviewer's decision about this call; ``None`` for a call that is not reviewed."""
        call = request.tool_call
        config = self.interrupt_on.get(call["name"])
        when = config.get("when") if config is not None else None
        if config is None or (when is not None and not when(request)):
            return None
        if call["id"] is None:
            raise MiddlewareError(
                f"Tool call `{call['name']}` has no ID, so its result can't be matched to it. "
                f"{OWNER} (interrupt_mode='per_call') cannot put it to a reviewer; use a chat "
                "model that gives every tool call an id."
            )
        decided = self._decided.get(request)
        if decided is None:
            decided = self._ask_about(request, config["allowed_decisions"])
            self._decided.put(request, decided)
        return decided

    def _ask_about(self, request: ToolCallRequest, allowed: list[DecisionType]) -> Decision:
        call, state = request.tool_call, request.state
        value = ToolApprovalRequest(
            type="tool_approval",
            tool_call_id=call["id"] or "",
            name=call["name"],
            args=call["args"],
            # As in batched mode, a description function gets the graph's runtime.
            description=self._describe(call, state, get_runtime()),
        )
        tools = self._agent_tools(_runtime_tools(request))
        tool = request.tool or tools.get(call["name"])
        # langgraph validates the answer against `response_schema` before saving it. It marks
        # the ValidationError of an answer that does not fit as an invalid resume, which no
        # layer around this one takes for a tool failure, so the review stays open.
        shape = self._shapes.get(allowed, call["name"], tool)
        warn_without_checkpointer([call["name"]])
        try:
            decision: Decision = interrupt(value, response_schema=cast("type[Decision]", shape))
        except ValidationError as exc:
            exc.add_note(still_open(call))
            raise
        return decision


def _runtime_tools(request: ToolCallRequest) -> Sequence[BaseTool] | None:
    """The agent's tools, as the tool node hands them to each call's runtime."""
    tools = getattr(request.runtime, "tools", None)
    return tools if isinstance(tools, list) else None
