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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Annotated, Any, Literal, NotRequired, cast, get_args

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.constants import CONF, CONFIG_KEY_CHECKPOINTER
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from langgraph.typing import ContextT
from pydantic import BaseModel, PlainValidator, ValidationError, WithJsonSchema
from typing_extensions import TypedDict

from graphagent._history import pending_tool_calls
from graphagent.errors import GraphAgentError, MiddlewareError
from graphagent.middleware.base import AgentFacts, AgentMiddleware
from graphagent.state import AgentState, PrivateStateAttr, ResponseT

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

_OWNER = "HumanInTheLoopMiddleware"

DecisionType = Literal["approve", "edit", "reject", "respond"]
"""What a reviewer can decide about one tool call."""

DECISION_TYPES: tuple[DecisionType, ...] = get_args(DecisionType)


class Action(TypedDict):
    """A tool call as a reviewer sees or rewrites it: the tool's name and its arguments."""

    name: str
    args: dict[str, Any]


class ActionRequest(TypedDict):
    """One tool call awaiting review, with the text shown to the reviewer."""

    name: str
    args: dict[str, Any]
    description: NotRequired[str]


class ReviewConfig(TypedDict):
    """What the reviewer may decide about the action request at the same position."""

    action_name: str
    allowed_decisions: list[DecisionType]
    args_schema: NotRequired[dict[str, Any]]
    """With ``edit`` allowed: the JSON schema an edit's arguments are checked against."""


class HITLRequest(TypedDict):
    """The value of the interrupt: every call of one model turn that awaits review."""

    action_requests: list[ActionRequest]
    review_configs: list[ReviewConfig]


class ApproveDecision(TypedDict):
    """Run the call as the model made it."""

    type: Literal["approve"]


class EditDecision(TypedDict):
    """Run ``edited_action`` in place of the model's call."""

    type: Literal["edit"]
    edited_action: Action


class RejectDecision(TypedDict):
    """Do not run the call; ``message`` (the reviewer's reason) goes to the model."""

    type: Literal["reject"]
    message: NotRequired[str]


class RespondDecision(TypedDict):
    """Do not run the call; ``message`` goes to the model as the tool's result."""

    type: Literal["respond"]
    message: str


Decision = ApproveDecision | EditDecision | RejectDecision | RespondDecision


class HITLResponse(TypedDict):
    """The resume value: one decision per action request, in the same order."""

    decisions: list[Decision]


DescriptionFactory = Callable[[ToolCall, AgentState[Any], Runtime[Any]], str]
"""Writes the reviewer's text for one call from the call, the agent state and the runtime."""


class InterruptOnConfig(TypedDict):
    """How calls of one tool are reviewed."""

    allowed_decisions: list[DecisionType]
    description: NotRequired[str | DescriptionFactory]
    """The reviewer's text: fixed, or written per call (default: the prefix, tool and args)."""
    args_schema: NotRequired[dict[str, Any] | type[BaseModel]]
    """A JSON schema or pydantic model that edited arguments must also satisfy."""
    when: NotRequired[Callable[[ToolCallRequest], bool]]
    """Review only the calls for which this returns True (it must answer alike on resume)."""


_CONFIG_KEYS = frozenset(InterruptOnConfig.__annotations__)


def _merge_decisions(
    current: dict[str, DecisionType] | None, update: dict[str, DecisionType]
) -> dict[str, DecisionType]:
    return {**(current or {}), **update}


class HumanInTheLoopState(AgentState[ResponseT]):
    """The agent state with the decision made for each reviewed tool call, by call id."""

    hitl_decisions: NotRequired[
        Annotated[dict[str, DecisionType], _merge_decisions, PrivateStateAttr]
    ]


class InvalidDecisionError(GraphAgentError, ValueError):
    """A resume answer that does not fit the open review. Nothing ran and nothing was saved, so
    the same review can be answered again.

    ``index`` is the position of the faulty decision (``None`` when the answer as a whole is
    wrong), ``tool_name`` the reviewed tool, ``allowed`` the decisions allowed for it.
    """

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
class _Review:
    """One pending call put to the reviewer: what is shown, and what may be decided."""

    call: ToolCall
    action: ActionRequest
    review: ReviewConfig

    @property
    def allowed(self) -> list[DecisionType]:
        return self.review["allowed_decisions"]


class HumanInTheLoopMiddleware(
    AgentMiddleware[HumanInTheLoopState[ResponseT], ContextT, ResponseT]
):
    """Pause the agent before calls of the tools in ``interrupt_on`` run, so a person can
    approve, edit, reject or answer them.

    ``interrupt_on`` maps a tool name to ``True`` (review, every decision allowed), ``False``
    (no review) or an :class:`InterruptOnConfig`. ``description_prefix`` starts the default
    text shown for a call. The agent needs a checkpointer (its own or a parent graph's).
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
                f"{_OWNER}: description_prefix must be a str, got {description_prefix!r}."
            )
        self.interrupt_on: dict[str, InterruptOnConfig] = _resolved(interrupt_on)
        self.description_prefix = description_prefix
        self._named = tuple(interrupt_on)
        self._tools: Mapping[str, BaseTool] = MappingProxyType({})

    def validate_agent(self, agent: AgentFacts) -> None:
        """Every tool named in ``interrupt_on`` must be one the agent runs."""
        tools = {tool.name: tool for tool in agent.tools}
        unknown = [name for name in self._named if name not in tools]
        if unknown:
            provider = sorted(set(unknown) & agent.tool_names)
            note = (
                f" {provider} run at the model provider and cannot be reviewed." if provider else ""
            )
            raise MiddlewareError(
                f"{_OWNER}: interrupt_on names {unknown}, which the agent does not run; its "
                f"tools are {sorted(tools)}.{note} Fix the name or remove the entry."
            )
        self._tools = MappingProxyType(tools)

    def before_agent(
        self, state: HumanInTheLoopState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Refuse to start a run that could pause but never resume."""
        _require_checkpointer()
        return None

    async def abefore_agent(
        self, state: HumanInTheLoopState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`before_agent`."""
        return self.before_agent(state, runtime)

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

    async def aafter_model(
        self, state: HumanInTheLoopState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`after_model`."""
        return self.after_model(state, runtime)

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

    def _review(self, call: ToolCall, state: Any, runtime: Runtime[ContextT]) -> _Review:
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
        schemas = self._edit_schemas(name) if "edit" in config["allowed_decisions"] else []
        shown = _as_json_schema(schemas[0]) if schemas else None
        if shown is not None:
            review["args_schema"] = shown
        return _Review(call, action, review)

    def _edit_schemas(self, name: str) -> list[Any]:
        """What an edit of ``name`` must satisfy: the configured schema, then the tool's own."""
        config = self.interrupt_on.get(name)
        tool = self._tools.get(name)
        schemas = [config and config.get("args_schema"), tool and tool.tool_call_schema]
        return [schema for schema in schemas if schema]

    def _ask(self, reviews: list[_Review]) -> list[Decision]:
        request = HITLRequest(
            action_requests=[r.action for r in reviews],
            review_configs=[r.review for r in reviews],
        )
        # langgraph validates a resume value against `response_schema` before saving it, so an
        # answer our check refuses leaves the interrupt open for a corrected one.
        checked = Annotated[
            Any,
            PlainValidator(partial(self._checked_response, reviews)),
            WithJsonSchema(_response_json_schema(reviews)),
        ]
        try:
            response = interrupt(request, response_schema=cast("type[HITLResponse]", checked))
        except ValidationError as exc:
            raise _unwrapped(exc) from None
        return response["decisions"]

    def _checked_response(self, reviews: list[_Review], value: Any) -> HITLResponse:
        decisions = value.get("decisions") if isinstance(value, Mapping) else None
        if not isinstance(decisions, list):
            raise InvalidDecisionError(
                f"{_OWNER}: resume with {{'decisions': [...]}} (one decision per action "
                f"request), got {value!r}. {_STILL_OPEN}"
            )
        if len(decisions) != len(reviews):
            names = ", ".join(r.call["name"] for r in reviews)
            raise InvalidDecisionError(
                f"{_OWNER}: got {len(decisions)} decision(s) for {len(reviews)} tool call(s) "
                f"awaiting review ({names}); send exactly one per action request, in order. "
                f"{_STILL_OPEN}"
            )
        for index, (review, decision) in enumerate(zip(reviews, decisions, strict=True)):
            problem = self._decision_problem(review, decision)
            if problem:
                name = review.call["name"]
                raise InvalidDecisionError(
                    f"{_OWNER}: decision {index} (for the call to '{name}') {problem}. "
                    f"{_STILL_OPEN}",
                    index=index,
                    tool_name=name,
                    allowed=review.allowed,
                )
        return HITLResponse(decisions=decisions)

    def _decision_problem(self, review: _Review, decision: Any) -> str | None:
        kind = decision.get("type") if isinstance(decision, Mapping) else None
        if kind not in DECISION_TYPES:
            return f"is {decision!r}; a decision is a dict whose 'type' is one of {review.allowed}"
        if kind not in review.allowed:
            return f"is {kind!r}, which is not allowed for this tool; allowed: {review.allowed}"
        message = decision.get("message")
        if kind == "respond" and not isinstance(message, str):
            return "is 'respond' without a 'message' str, the text the model gets as the result"
        if kind == "reject" and not isinstance(message, str | None):
            return f"is 'reject' with message={message!r}; the reason must be a str"
        return self._edit_problem(decision.get("edited_action")) if kind == "edit" else None

    def _edit_problem(self, edited: Any) -> str | None:
        action = edited if isinstance(edited, Mapping) else {}
        name, args = action.get("name"), action.get("args")
        if not isinstance(name, str) or not isinstance(args, Mapping):
            return (
                f"is 'edit' with edited_action={edited!r}; it must be {{'name': str, 'args': dict}}"
            )
        if name not in self._tools:
            known = sorted(self._tools)
            return (
                f"edits the call to '{name}', which the agent does not run; its tools are {known}"
            )
        problems = [p for schema in self._edit_schemas(name) for p in _args_problems(schema, args)]
        if problems:
            return f"edits '{name}' with invalid arguments {dict(args)!r}: {'; '.join(problems)}"
        return None


_STILL_OPEN = "Nothing ran; the review is still open, so resume again with corrected decisions."


def _resolved(interrupt_on: Any) -> dict[str, InterruptOnConfig]:
    """The reviewed tools and their checked settings; ``True`` allows every decision."""
    if not isinstance(interrupt_on, Mapping):
        raise MiddlewareError(
            f"{_OWNER}: interrupt_on must map tool names to True, False or an "
            f"InterruptOnConfig, got {interrupt_on!r}."
        )
    resolved: dict[str, InterruptOnConfig] = {}
    for name, setting in interrupt_on.items():
        if setting is True:
            resolved[name] = InterruptOnConfig(allowed_decisions=list(DECISION_TYPES))
        elif isinstance(setting, Mapping):
            resolved[name] = _checked_config(f"{_OWNER}: interrupt_on['{name}']", setting)
        elif setting is not False:
            raise MiddlewareError(
                f"{_OWNER}: interrupt_on['{name}'] is {setting!r}; use True, False or "
                "InterruptOnConfig(allowed_decisions=[...])."
            )
    return resolved


def _is_schema(value: Any) -> bool:
    return isinstance(value, dict) or (isinstance(value, type) and issubclass(value, BaseModel))


_OPTIONAL_CHECKS: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    (
        "description",
        lambda v: isinstance(v, str) or callable(v),
        "a str or a function (tool_call, state, runtime) -> str",
    ),
    ("args_schema", _is_schema, "a JSON schema dict or a pydantic model"),
    ("when", callable, "a function (request) -> bool"),
)


def _checked_config(where: str, config: Mapping[str, Any]) -> InterruptOnConfig:
    unknown = sorted(set(config) - _CONFIG_KEYS)
    if unknown:
        raise MiddlewareError(
            f"{where} has unknown key(s) {unknown}; the keys are {sorted(_CONFIG_KEYS)}."
        )
    allowed = config.get("allowed_decisions")
    if not isinstance(allowed, list | tuple) or not allowed:
        raise MiddlewareError(
            f"{where} needs allowed_decisions, a non-empty list drawn from "
            f"{list(DECISION_TYPES)}, got {allowed!r}."
        )
    wrong = [d for d in allowed if d not in DECISION_TYPES]
    if wrong:
        raise MiddlewareError(
            f"{where} allows unknown decision(s) {wrong}; the decisions are {list(DECISION_TYPES)}."
        )
    for key, fits, hint in _OPTIONAL_CHECKS:
        value = config.get(key)
        if value is not None and not fits(value):
            raise MiddlewareError(f"{where} has {key}={value!r}; use {hint}.")
    return cast("InterruptOnConfig", dict(config, allowed_decisions=list(dict.fromkeys(allowed))))


def _require_checkpointer() -> None:
    # langgraph puts the saver a run persists to in the config of every task: the graph's own,
    # or the one a parent graph lends its subgraphs. Without one an interrupt can never resume.
    if get_config().get(CONF, {}).get(CONFIG_KEY_CHECKPOINTER) is None:
        raise MiddlewareError(
            f"{_OWNER} pauses runs for review, which needs a checkpointer, and this run has "
            "none; pass create_agent(..., checkpointer=InMemorySaver()) (or another saver), "
            "or run the agent inside a graph compiled with one."
        )


def _as_json_schema(schema: Any) -> dict[str, Any] | None:
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    return schema if isinstance(schema, dict) else None


def _args_problems(schema: Any, args: Mapping[str, Any]) -> list[str]:
    """Why ``args`` do not fit ``schema`` (a pydantic model or a JSON schema); [] if they do."""
    if isinstance(schema, dict):
        return _json_schema_problems(schema, args)
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        return []
    try:
        schema.model_validate(dict(args))
    except ValidationError as exc:
        return [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
    return []


_JSON_TYPES: Mapping[str, tuple[type, ...]] = MappingProxyType(
    {
        "string": (str,),
        "integer": (int,),
        "number": (int, float),
        "boolean": (bool,),
        "array": (list, tuple),
        "object": (dict,),
        "null": (type(None),),
    }
)


def _json_schema_problems(schema: dict[str, Any], args: Mapping[str, Any]) -> list[str]:
    """Checks the top level only: required keys, unknown keys (with ``additionalProperties:
    false``) and each argument's JSON type. The tool validates the rest when it runs."""
    properties = schema.get("properties") or {}
    problems = [f"{key}: required" for key in schema.get("required", ()) if key not in args]
    if schema.get("additionalProperties") is False:
        problems += [
            f"{key}: not an argument of this tool" for key in args if key not in properties
        ]
    for key, value in args.items():
        expected = (properties.get(key) or {}).get("type")
        if expected is not None and not _has_json_type(value, expected):
            problems.append(f"{key}: expected {expected}, got {type(value).__name__}")
    return problems


def _has_json_type(value: Any, expected: str | list[str]) -> bool:
    names = [expected] if isinstance(expected, str) else expected
    types = tuple(t for name in names for t in _JSON_TYPES.get(name, (object,)))
    # bool is an int in Python, but not a JSON integer or number.
    return isinstance(value, types) and (bool in types or not isinstance(value, bool))


def _response_json_schema(reviews: list[_Review]) -> dict[str, Any]:
    """Published with the interrupt, so a client can render the answer it expects."""
    action = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "args": {"type": "object"}},
    }
    decisions = [
        {
            "type": "object",
            "required": ["type"],
            "properties": {
                "type": {"enum": r.allowed},
                "edited_action": action,
                "message": {"type": "string"},
            },
        }
        for r in reviews
    ]
    items = {
        "type": "array",
        "prefixItems": decisions,
        "minItems": len(reviews),
        "maxItems": len(reviews),
    }
    return {"type": "object", "required": ["decisions"], "properties": {"decisions": items}}


def _unwrapped(exc: ValidationError) -> Exception:
    """Our own error, raised by the response check and wrapped by pydantic."""
    for error in exc.errors():
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, InvalidDecisionError):
            return cause
    return exc


def _last_ai_message(messages: Sequence[Any]) -> AIMessage:
    return next(m for m in reversed(messages) if isinstance(m, AIMessage))


def _outcome(
    message: AIMessage, reviews: list[_Review], decisions: list[Decision]
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
