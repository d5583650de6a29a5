"""``HumanInTheLoopMiddleware``: pause before chosen tool calls run, until a person decides.

A reviewer decides about each call of the tools named in ``interrupt_on``:

- ``approve``: the call runs as the model made it;
- ``edit``: the reviewer's call runs instead (batched, maybe of another tool);
- ``reject``: the call never runs; an error ``ToolMessage`` with the reviewer's reason answers it;
- ``respond``: the call never runs; the reviewer's text answers it as the tool's result.

Calls of other tools run as usual. ``interrupt_mode`` says when the agent pauses.

``"batched"`` (the default): after each model turn, one ``langgraph.types.interrupt`` whose value
is a :class:`HITLRequest` (one action request and one review config per call, in call order),
answered with ``Command(resume={"decisions": [...]})``.

- The review is an ``after_model`` node. On resume langgraph runs that node again from its start:
  the request is rebuilt (so ``description`` callables and ``when`` predicates run again and
  must give the same answer) and ``interrupt`` returns the reviewer's answer. Nothing else runs
  twice: the model call finished before the pause, and tools run once, after the decision.
- As in LangChain, the AI message keeps the model's calls; an edited call's replacement goes to
  the private state field ``hitl_edited_tool_calls``, and this middleware's ``wrap_tool_call``
  runs it in place of the model's call, its result opening with ``edit_notice``.
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
- An edit keeps the tool and changes the arguments.

In both modes the answer is checked as the interrupt's ``response_schema``, which langgraph
validates before saving a resume value: an invalid answer raises :class:`InvalidDecisionError`
(batched) or pydantic's ``ValidationError`` (per call, as in LangChain), nothing runs, nothing is
saved, and the same review can be answered again. A rejected or responded call is answered in
LangChain's words, with its notification metadata (``lc_source: "hitl_interrupt_decision"``).
The interrupt needs a checkpointer: the agent's own, or a parent graph's when the agent runs as
a subgraph; a review reached without one says so on the ``graphagent`` logger.

The class lives in this module, not in ``_hitl``, because it looks up ``interrupt`` and
``get_config`` here: code written for LangChain replaces them in this module to call a hook by
hand, and ``interrupt`` is then called with the request alone, as LangChain calls it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Annotated, Any, cast

from langchain_core.messages import ToolCall
from langchain_core.runnables import RunnableConfig
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
from graphagent.middleware._hitl.answers import (
    EditRules,
    as_json_schema,
    checked_response,
    response_json_schema,
    unwrapped,
)
from graphagent.middleware._hitl.edits import (
    DEFAULT_EDIT_NOTICE,
    apply_edit,
    recorded_edit,
    with_notice,
)
from graphagent.middleware._hitl.outcome import (
    DECISION_SOURCE as DECISION_SOURCE,
    answer,
    last_ai_message,
    outcome,
)
from graphagent.middleware._hitl.per_call import DecidedCalls, DecisionShapes, still_open
from graphagent.middleware._hitl.settings import (
    OWNER,
    checked_agent,
    checked_mode,
    checked_text,
    resolved_interrupt_on,
    warn_without_checkpointer,
)
from graphagent.middleware._hitl.types import (
    EDITS_KEY,
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
from graphagent.middleware._kit.cores import ToolCallCore
from graphagent.middleware.base import AgentFacts, StateT, ToolResult, running_agent
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
    "InterruptMode",
    "InterruptOnConfig",
    "InvalidDecisionError",
    "RejectDecision",
    "RespondDecision",
    "ReviewConfig",
    "ToolApprovalRequest",
]


@refuse_unknown_arguments
class HumanInTheLoopMiddleware(ToolCallCore[StateT, ContextT, ResponseT]):
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
        edit_notice: The text that opens the result of a call a reviewer edited, followed by
            the call that ran (the model's message keeps the call it made); ``None`` adds
            nothing.
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
        # Per call, the review is in wrap_tool_call; batched, that layer runs the edited calls.
        self._unused_hooks = frozenset({"after_model"} if self.interrupt_mode == "per_call" else ())
        self.description_prefix: str = checked_text("description_prefix", description_prefix)
        self.edit_notice: str | None = checked_text("edit_notice", edit_notice, optional=True)
        self.interrupt_on: dict[str, InterruptOnConfig] = resolved_interrupt_on(interrupt_on)
        self._named = tuple(interrupt_on)
        self._tools: Mapping[str, BaseTool] | None = None
        self._shapes = DecisionShapes()
        self._decided = DecidedCalls()

    def validate_agent(self, agent: AgentFacts) -> None:
        """The agent must be able to persist a paused run; tools of ``interrupt_on`` the agent
        does not run are noted on the ``graphagent`` logger (one table may serve several
        agents, as in LangChain)."""
        self._tools = checked_agent(agent, self._named)

    def after_model(self, state: StateT, runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        """Put this turn's gated calls to the reviewer in one interrupt, then apply the answer
        (batched mode; with ``"per_call"`` each call is reviewed as it starts)."""
        if self.interrupt_mode == "per_call":
            return None
        values = cast("HumanInTheLoopState[Any]", state)
        pending = pending_tool_calls(values["messages"])
        reviews = [
            self._review(c, values, runtime) for c in pending if self._gated(c, values, runtime)
        ]
        if not reviews:
            # An earlier turn's edits must not apply to a call that reuses one of their ids.
            return {EDITS_KEY: {}} if values.get(EDITS_KEY) else None
        decisions = self._ask(reviews)
        return outcome(last_ai_message(values["messages"]), reviews, decisions)

    async def aafter_model(
        self, state: StateT, runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """:meth:`after_model`, which waits on nothing: it builds the request and reads the
        answer langgraph saved."""
        return self.after_model(state, runtime)

    def _gated(self, call: ToolCall, state: Any, runtime: Runtime[ContextT]) -> bool:
        config = self.interrupt_on.get(call["name"])
        if config is None:
            return False
        when = config.get("when")
        return when is None or bool(when(_when_request(call, state, runtime, _run_config())))

    def _describe(self, call: ToolCall, state: Any, runtime: Runtime[ContextT]) -> str:
        """The text shown to the reviewer for ``call``."""
        described = self.interrupt_on[call["name"]].get("description")
        if callable(described):
            return described(call, state, runtime)
        if described is not None:
            return described
        return f"{self.description_prefix}\n\nTool: {call['name']}\nArgs: {call['args']}"

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

    def _edit_rules(self) -> EditRules:
        return EditRules(self.interrupt_on, self._agent_tools())

    def _agent_tools(
        self, tools: Sequence[BaseTool] | None = None
    ) -> Mapping[str, BaseTool] | None:
        """The tools of the agent this review runs in: ``tools`` (a tool call's runtime has
        them), or those of the agent whose hook is running; ``None`` outside any agent. One
        instance may serve several agents; the tools ``validate_agent`` saw are only the last
        agent's."""
        if tools is None:
            facts = running_agent()
            tools = facts.tools if facts is not None else None
        return self._tools if tools is None else {tool.name: tool for tool in tools}

    def _ask(self, reviews: list[Review]) -> list[Decision]:
        request = HITLRequest(
            action_requests=[r.action for r in reviews],
            review_configs=[r.review for r in reviews],
        )
        rules, config = self._edit_rules(), _run_config()
        if config is None:
            # A hook called by hand, outside any run, with `interrupt` replaced: nothing is saved,
            # so there is nothing to check before saving. Ask as LangChain does; check below.
            response = interrupt(request)
        else:
            # langgraph validates a resume value against `response_schema` before saving it, so
            # an answer our check refuses leaves the interrupt open for a corrected one.
            checked = Annotated[
                Any,
                PlainValidator(partial(checked_response, reviews, rules)),
                WithJsonSchema(response_json_schema(reviews)),
            ]
            warn_without_checkpointer(config, [r.action["name"] for r in reviews])
            try:
                response = interrupt(request, response_schema=cast("type[HITLResponse]", checked))
            except ValidationError as exc:
                raise unwrapped(exc) from None
        return checked_response(reviews, rules, response)["decisions"]

    async def _wrap_tool_call(
        self, mode: Mode, request: ToolCallRequest, handler: Callable[..., Any]
    ) -> ToolResult:
        """Run the reviewer's call in place of an edited one, its result opening with
        ``edit_notice``; with ``"per_call"``, first put a reviewed call to the reviewer as it
        starts, answering it in place when rejected or responded."""
        edited: Action | None
        if self.interrupt_mode == "per_call":
            decision = self._decision(request)
            if decision is not None and decision["type"] in ("reject", "respond"):
                return answer(request.tool_call, decision)
            edited = decision["edited_action"] if decision and decision["type"] == "edit" else None
        else:
            edited = recorded_edit(request)
        if edited is None:
            result: ToolResult = await mode.call(handler, request)
            return result
        tools = self._agent_tools(_runtime_tools(request))
        request = apply_edit(request, edited, list(tools.values()) if tools is not None else None)
        result = await mode.call(handler, request)
        return with_notice(result, request.tool_call["id"], edited, self.edit_notice)

    # -- interrupt_mode="per_call" ---------------------------------------------------------------

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
        tools = self._agent_tools(_runtime_tools(request)) or {}
        tool = request.tool or tools.get(call["name"])
        # langgraph validates the answer against `response_schema` before saving it. It marks
        # the ValidationError of an answer that does not fit as an invalid resume, which no
        # layer around this one takes for a tool failure, so the review stays open.
        shape = self._shapes.get(allowed, call["name"], tool)
        warn_without_checkpointer(get_config(), [call["name"]])
        try:
            decision: Decision = interrupt(value, response_schema=cast("type[Decision]", shape))
        except ValidationError as exc:
            exc.add_note(still_open(call))
            raise
        return decision


def _run_config() -> RunnableConfig | None:
    """The config of the run the hook is part of; ``None`` for a hook called outside any run."""
    try:
        return get_config()
    except RuntimeError:
        return None


def _when_request(
    call: ToolCall, state: Any, runtime: Runtime[Any], config: RunnableConfig | None
) -> ToolCallRequest:
    """What a ``when`` predicate gets in batched mode, as in LangChain: the call, no tool, and a
    ``ToolRuntime`` with the hook's context, store, writer and run facts (no tools)."""
    tool_runtime: ToolRuntime[Any, Any] = ToolRuntime(
        state=state,
        context=runtime.context,
        config=config or {},
        stream_writer=runtime.stream_writer,
        tool_call_id=call["id"],
        store=runtime.store,
        execution_info=runtime.execution_info,
        server_info=runtime.server_info,
    )
    return ToolCallRequest(tool_call=call, tool=None, state=state, runtime=tool_runtime)


def _runtime_tools(request: ToolCallRequest) -> Sequence[BaseTool] | None:
    """The agent's tools, as the tool node hands them to each call's runtime."""
    tools = getattr(request.runtime, "tools", None)
    return tools if isinstance(tools, list) else None
