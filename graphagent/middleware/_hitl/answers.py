"""A reviewer's answer to a batched review, checked before langgraph saves it: the decisions,
an edit's tool and arguments; and the shape of the answer, published with the interrupt."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from langchain_core.messages import ToolCall
from langchain_core.tools import BaseTool
from pydantic import ValidationError

from graphagent.middleware._hitl.settings import OWNER, is_model
from graphagent.middleware._hitl.types import (
    DECISION_KEYS,
    DECISION_TYPES,
    HITLResponse,
    InterruptOnConfig,
    InvalidDecisionError,
    Review,
)

_STILL_OPEN = "Nothing ran; the review is still open, so resume again with corrected decisions."
_ONE_DECISION = (
    " A single decision answers a review of interrupt_mode='per_call'; this review is batched "
    "(one per model turn): put the decision in the list, {'decisions': [decision]}."
)


@dataclass(frozen=True, slots=True)
class EditRules:
    """What an edited action may name (the agent's tools) and what its arguments must fit.
    ``tools`` is ``None`` when the middleware runs outside an agent (its hook called by hand):
    an edit's tool and the tool's schema are then unknown, and only ``args_schema`` applies."""

    interrupt_on: Mapping[str, InterruptOnConfig]
    tools: Mapping[str, BaseTool] | None

    def schemas(self, name: str) -> list[Any]:
        """What an edit of ``name`` must satisfy: the configured schema, then the tool's own."""
        config = self.interrupt_on.get(name)
        tool = self.tools.get(name) if self.tools is not None else None
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
        if self.tools is not None and name not in self.tools:
            known = sorted(self.tools)
            return (
                f"edits the call to '{name}', which the agent does not run; its tools are {known}"
            )
        # Arguments the tool does not declare pass: it ignores them, as it would from the model.
        problems = [p for schema in self.schemas(name) for p in _args_problems(schema, args)]
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
    if isinstance(name, str) and edits.tools is not None and name not in edits.tools:
        return f"{unavailable_tool(call, name, edits.tools)} "
    return ""


def unavailable_tool(call: ToolCall, name: str, tools: Iterable[str]) -> str:
    """LangChain's words for an edit that names a tool the agent does not have."""
    return (
        f"Reviewer edited tool call {call['id']!r} to {name!r}, which is not an available "
        f"tool. Available tools: {', '.join(sorted(tools))}."
    )


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
    if is_model(schema):
        return schema.model_json_schema()
    return schema if isinstance(schema, dict) else None


_NOT_AN_ARGUMENT = "not an argument of this tool"


def _args_problems(schema: Any, args: Mapping[str, Any]) -> list[str]:
    """Why ``args`` do not fit ``schema`` (a pydantic model or a JSON schema); [] if they do."""
    if isinstance(schema, dict):
        return _json_schema_problems(schema, args)
    if not is_model(schema):
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
