"""``HumanInTheLoopMiddleware``'s checks: its settings when built, the checkpointer when a run
starts, and a reviewer's answer (decisions, edited arguments) when a run resumes."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeGuard, cast

from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.constants import CONF, CONFIG_KEY_CHECKPOINTER
from pydantic import BaseModel, ValidationError

from graphagent.errors import MiddlewareError
from graphagent.middleware._hitl.types import (
    CONFIG_KEYS,
    DECISION_KEYS,
    DECISION_TYPES,
    INTERRUPT_MODES,
    HITLResponse,
    InterruptMode,
    InterruptOnConfig,
    InvalidDecisionError,
    Review,
)

OWNER = "HumanInTheLoopMiddleware"
_log = logging.getLogger("graphagent")

_STILL_OPEN = "Nothing ran; the review is still open, so resume again with corrected decisions."
_ONE_DECISION = (
    " A single decision answers a review of interrupt_mode='per_call'; this review is batched "
    "(one per model turn): put the decision in the list, {'decisions': [decision]}."
)


def checked_mode(interrupt_mode: Any) -> InterruptMode:
    """``interrupt_mode``, if it is one of the modes."""
    if interrupt_mode not in INTERRUPT_MODES:
        modes = " or ".join(map(repr, INTERRUPT_MODES))
        raise MiddlewareError(
            f"`interrupt_mode` must be {modes}, got {interrupt_mode!r}. {OWNER}: 'batched' "
            "pauses once per model turn for all its reviewed calls, 'per_call' once per "
            "reviewed call."
        )
    return cast("InterruptMode", interrupt_mode)


def checked_text(name: str, value: Any, *, optional: bool = False) -> Any:
    """``value``, if it is a str (or ``None`` when ``optional``)."""
    if isinstance(value, str) or (optional and value is None):
        return value
    kind = "a str or None" if optional else "a str"
    raise MiddlewareError(f"{OWNER}: {name} must be {kind}, got {value!r}.")


def resolved_interrupt_on(interrupt_on: Any) -> dict[str, InterruptOnConfig]:
    """The reviewed tools and their checked settings; ``True`` allows every decision."""
    if not isinstance(interrupt_on, Mapping):
        raise MiddlewareError(
            f"{OWNER}: interrupt_on must map tool names to True, False or an "
            f"InterruptOnConfig, got {interrupt_on!r}."
        )
    resolved: dict[str, InterruptOnConfig] = {}
    for name, setting in interrupt_on.items():
        if setting is True:
            resolved[name] = InterruptOnConfig(allowed_decisions=list(DECISION_TYPES))
        elif isinstance(setting, Mapping):
            resolved[name] = _checked_config(name, setting)
        elif setting is not False:
            raise MiddlewareError(
                f"{OWNER}: interrupt_on['{name}'] is {setting!r}; use True, False or "
                "InterruptOnConfig(allowed_decisions=[...])."
            )
    return resolved


def _is_model(value: Any) -> TypeGuard[type[BaseModel]]:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _is_schema(value: Any) -> bool:
    return isinstance(value, dict) or _is_model(value)


_OPTIONAL_CHECKS: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    (
        "description",
        lambda v: isinstance(v, str) or callable(v),
        "a str or a function (tool_call, state, runtime) -> str",
    ),
    ("args_schema", _is_schema, "a JSON schema dict or a pydantic model"),
    ("when", callable, "a function (request) -> bool"),
)


def _checked_config(name: str, config: Mapping[str, Any]) -> InterruptOnConfig:
    where = f"{OWNER}: interrupt_on['{name}']"
    unknown = sorted(set(config) - CONFIG_KEYS)
    allowed = config.get("allowed_decisions")
    if not isinstance(allowed, list | tuple) or not allowed:
        misspelt = f" (unknown key(s) {unknown}; the keys are {sorted(CONFIG_KEYS)})"
        raise MiddlewareError(
            f"Invalid `interrupt_on` config for tool '{name}': `allowed_decisions` must be a "
            "non-empty list of decision types (e.g. ['approve', 'reject']). "
            f"{where} has allowed_decisions={allowed!r}{misspelt if unknown else ''}; draw it "
            f"from {list(DECISION_TYPES)}."
        )
    if unknown:
        raise MiddlewareError(
            f"{where} has unknown key(s) {unknown}; the keys are {sorted(CONFIG_KEYS)}."
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


def warn_without_checkpointer(tools: Sequence[str]) -> None:
    """Before a review pauses a run, say so on the ``graphagent`` logger if nothing can resume
    it: the run then ends with the interrupt, as in LangChain, and stays unfinished."""
    # langgraph puts the saver a run persists to in the config of every task: the graph's own,
    # or the one a parent graph lends its subgraphs. Without one an interrupt can never resume.
    if get_config().get(CONF, {}).get(CONFIG_KEY_CHECKPOINTER) is not None:
        return
    _log.warning(
        "%s: a review of %s pauses this run, which has no checkpointer, so it cannot be "
        "resumed: the run ends with the interrupt and Command(resume=...) cannot carry it on. "
        "Pass create_agent(..., checkpointer=InMemorySaver()) (or another saver), or run the "
        "agent inside a graph compiled with one.",
        OWNER,
        ", ".join(tools),
    )


@dataclass(frozen=True, slots=True)
class EditRules:
    """What an edited action may name (the agent's tools) and what its arguments must fit."""

    interrupt_on: Mapping[str, InterruptOnConfig]
    tools: Mapping[str, BaseTool]

    def schemas(self, name: str) -> list[Any]:
        """What an edit of ``name`` must satisfy: the configured schema, then the tool's own."""
        config = self.interrupt_on.get(name)
        tool = self.tools.get(name)
        schemas = [config and config.get("args_schema"), tool and tool.tool_call_schema]
        return [schema for schema in schemas if schema]

    def problem(self, edited: Any) -> str | None:
        """Why ``edited`` cannot run in place of the model's call; ``None`` if it can."""
        action = edited if isinstance(edited, Mapping) else {}
        name, args = action.get("name"), action.get("args")
        if (
            set(action) != {"name", "args"}
            or not isinstance(name, str)
            or not isinstance(args, Mapping)
        ):
            return (
                f"is 'edit' with edited_action={edited!r}; it must be {{'name': str, 'args': dict}}"
            )
        if name not in self.tools:
            known = sorted(self.tools)
            return (
                f"edits the call to '{name}', which the agent does not run; its tools are {known}"
            )
        problems = [p for schema in self.schemas(name) for p in _args_problems(schema, args)]
        problems += [f"{key}: {_NOT_AN_ARGUMENT}" for key in _dropped_args(self.tools[name], args)]
        problems = list(dict.fromkeys(problems))
        if problems:
            return f"edits '{name}' with invalid arguments {dict(args)!r}: {'; '.join(problems)}"
        return None


def checked_response(reviews: list[Review], edits: EditRules, value: Any) -> HITLResponse:
    """``value`` as the answer to ``reviews``, or :class:`InvalidDecisionError` saying why not."""
    decisions = value.get("decisions") if isinstance(value, Mapping) else None
    if not isinstance(decisions, list) or set(value) - {"decisions"}:
        hint = _ONE_DECISION if isinstance(value, Mapping) and "type" in value else ""
        raise InvalidDecisionError(
            f"{OWNER}: resume with {answer_format(reviews)}; got {value!r}.{hint} {_STILL_OPEN}"
        )
    if len(decisions) != len(reviews):
        names = ", ".join(r.call["name"] for r in reviews)
        raise InvalidDecisionError(
            f"Number of human decisions ({len(decisions)}) does not match number of hanging "
            f"tool calls ({len(reviews)}). "
            f"{OWNER}: got {len(decisions)} decision(s) for {len(reviews)} tool call(s) "
            f"awaiting review ({names}); send exactly one per action request, in order. "
            f"{_STILL_OPEN}"
        )
    for index, (review, decision) in enumerate(zip(reviews, decisions, strict=True)):
        problem = decision_problem(review.allowed, decision, edits)
        if problem:
            name = review.call["name"]
            raise InvalidDecisionError(
                f"{_langchain_words(review, decision, edits)}"
                f"{OWNER}: decision {index} (for the call to '{name}') {problem}. {_STILL_OPEN}",
                index=index,
                tool_name=name,
                allowed=review.allowed,
            )
    return HITLResponse(decisions=decisions)


def _langchain_words(review: Review, decision: Any, edits: EditRules) -> str:
    """LangChain's message for the two decision checks it makes too, to lead ours; else ''."""
    if not isinstance(decision, Mapping):
        return ""
    kind, call = decision.get("type"), review.call
    if kind not in review.allowed:
        return (
            f"Unexpected human decision: {decision}. Decision type '{kind}' is not allowed for "
            f"tool '{call['name']}'. Expected one of {list(review.allowed)} based on the tool's "
            "configuration. "
        )
    action = decision.get("edited_action")
    name = action.get("name") if kind == "edit" and isinstance(action, Mapping) else None
    if isinstance(name, str) and name not in edits.tools:
        return (
            f"Reviewer edited tool call {call['id']!r} to {name!r}, which is not an available "
            f"tool. Available tools: {', '.join(sorted(edits.tools))}. "
        )
    return ""


def decision_problem(allowed: Sequence[str], decision: Any, edits: EditRules) -> str | None:
    """Why ``decision`` cannot answer a review that allows ``allowed``; ``None`` if it can."""
    kind = decision.get("type") if isinstance(decision, Mapping) else None
    allowed = list(allowed)
    if kind not in DECISION_TYPES:
        near = difflib.get_close_matches(str(kind), allowed, n=1) if isinstance(kind, str) else []
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        return f"is {decision!r}; a decision is a dict whose 'type' is one of {allowed}{hint}"
    if kind not in allowed:
        return f"is {kind!r}, which is not allowed for this tool; allowed: {allowed}"
    unknown = sorted(set(decision) - DECISION_KEYS[kind])
    if unknown:
        return f"is {kind!r} with unknown key(s) {unknown}; it takes {_DECISION_SHAPES[kind]}"
    message = decision.get("message")
    if kind == "respond" and not isinstance(message, str):
        return "is 'respond' without a 'message' str, the text the model gets as the result"
    if kind == "reject" and not isinstance(message, str | None):
        return f"is 'reject' with message={message!r}; the reason must be a str"
    return edits.problem(decision.get("edited_action")) if kind == "edit" else None


def unwrapped(exc: ValidationError) -> Exception:
    """Our own error, raised by the response check and wrapped by pydantic."""
    for error in exc.errors():
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, InvalidDecisionError):
            return cause
    return exc


_DECISION_SHAPES: Mapping[str, str] = MappingProxyType(
    {
        "approve": "{'type': 'approve'}",
        "edit": "{'type': 'edit', 'edited_action': {'name': <tool>, 'args': {...}}}",
        "reject": "{'type': 'reject', 'message': <optional reason>}",
        "respond": "{'type': 'respond', 'message': <the tool's result>}",
    }
)


def answer_format(reviews: Sequence[Review]) -> str:
    """The answer ``reviews`` take, in words: what errors quote and the response schema says."""
    allowed = "; ".join(f"{r.call['name']}: {', '.join(r.allowed)}" for r in reviews)
    kinds = [kind for kind in DECISION_TYPES if any(kind in r.allowed for r in reviews)]
    shapes = ", ".join(_DECISION_SHAPES[kind] for kind in kinds)
    return (
        f"{{'decisions': [...]}} with one decision per action request, in order ({allowed}); "
        f"a decision is one of {shapes}"
    )


def response_json_schema(reviews: Sequence[Review]) -> dict[str, Any]:
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
    return {
        "type": "object",
        "description": answer_format(reviews),
        "required": ["decisions"],
        "properties": {"decisions": items},
    }


def as_json_schema(schema: Any) -> dict[str, Any] | None:
    """``schema`` as a JSON schema a reviewer can read; ``None`` if it is neither kind."""
    if _is_model(schema):
        return schema.model_json_schema()
    return schema if isinstance(schema, dict) else None


_NOT_AN_ARGUMENT = "not an argument of this tool"


def _dropped_args(tool: BaseTool, args: Mapping[str, Any]) -> list[str]:
    """Arguments the tool would silently drop: pydantic ignores keys its model does not declare
    (unless the model allows extra keys). Injected arguments are the agent's to give."""
    model, offered = tool.args_schema, tool.tool_call_schema
    if not (_is_model(model) and _is_model(offered)) or model.model_config.get("extra") == "allow":
        return []
    return [key for key in args if key not in offered.model_fields]


def _args_problems(schema: Any, args: Mapping[str, Any]) -> list[str]:
    """Why ``args`` do not fit ``schema`` (a pydantic model or a JSON schema); [] if they do."""
    if isinstance(schema, dict):
        return _json_schema_problems(schema, args)
    if not _is_model(schema):
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
        problems += [f"{key}: {_NOT_AN_ARGUMENT}" for key in args if key not in properties]
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
