"""The check of a resume value against the questions it answers, and the schema it must fit.

The check runs as the interrupt's ``response_schema``: LangGraph validates the resume value
before it saves it, so an answer refused here is never sent to the server, and the question
stays open for another one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NoReturn

import jsonschema
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputResponses

from graphagent.mcp.elicitation import (
    MCPElicitationFormRequest,
    MCPElicitationRequest,
    MCPElicitationUrlRequest,
)
from graphagent.mcp.errors import answer_error

ACTIONS: Final = ("accept", "decline", "cancel")


@dataclass(frozen=True, slots=True)
class Round:
    """One round of questions for the call to ``tool_name``, keyed by the server's keys."""

    tool_name: str
    questions: Mapping[str, ElicitRequest]

    def requests(self) -> list[MCPElicitationRequest]:
        """The questions as the interrupt shows them, in the server's order."""
        return [_shown(key, question) for key, question in self.questions.items()]


def _shown(key: str, question: ElicitRequest) -> MCPElicitationRequest:
    params = question.params
    if isinstance(params, ElicitRequestFormParams):
        return MCPElicitationFormRequest(
            key=key, message=params.message, mode="form", requested_schema=params.requested_schema
        )
    return MCPElicitationUrlRequest(key=key, message=params.message, mode="url", url=params.url)


def checked(round_: Round, value: Any) -> InputResponses:
    """``value`` as the server's responses to ``round_``, or an ``MCPElicitationAnswerError``
    that says what is wrong."""
    responses = value.get("responses") if isinstance(value, Mapping) else None
    if not isinstance(responses, Mapping):
        _refuse(round_, f"Resume with {answer_format(round_)}; got {value!r}.")
    missing = [key for key in round_.questions if key not in responses]
    if missing:
        _refuse(
            round_,
            f"Resuming the MCP tool {round_.tool_name!r} needs an answer for every elicitation "
            f"request, but these had none: {', '.join(sorted(missing))}. Answer each request "
            f"of the interrupt under its key ({_keys(list(round_.questions))}).",
        )
    return {key: _response(round_, key, responses[key]) for key in round_.questions}


def _response(round_: Round, key: str, answer: Any) -> ElicitResult:
    action = answer.get("action") if isinstance(answer, Mapping) else None
    if action not in ACTIONS:
        _refuse(
            round_,
            f"Elicitation answer for {key!r} has action {action!r}; expected 'accept', "
            f"'decline', or 'cancel'. The answer was {answer!r}.",
        )
    params = round_.questions[key].params
    if action != "accept" or not isinstance(params, ElicitRequestFormParams):
        return ElicitResult(action=action)
    content = answer.get("content")
    problem = _content_problem(content, params.requested_schema)
    if problem:
        _refuse(round_, f"The content accepted for {key!r} {problem}.")
    return ElicitResult(action="accept", content=content)


def _content_problem(content: Any, schema: dict[str, Any]) -> str | None:
    if not isinstance(content, Mapping):
        return f"must be an object fitting the requested schema, got {content!r}"
    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(dict(content)))
    if error is None:
        return None
    where = "".join(f"[{part!r}]" for part in error.absolute_path)
    return f"does not fit the requested schema: {where + ' ' if where else ''}{error.message}"


def _refuse(round_: Round, problem: str) -> NoReturn:
    raise answer_error(
        f"{problem} graphagent.mcp refused this answer to the questions of the MCP tool "
        f"{round_.tool_name!r}: nothing was sent to the server, and the question is still open "
        "for another Command(resume=...).",
        tool_name=round_.tool_name,
    )


def _keys(keys: Sequence[str]) -> str:
    return ", ".join(repr(key) for key in keys)


def answer_format(round_: Round) -> str:
    """The resume value ``round_`` takes, in words: what errors quote and the schema says."""
    keys = _keys(list(round_.questions))
    return (
        f"{{'responses': {{<key>: <answer>}}}} with an answer for each of {keys}, each "
        "{'action': 'accept', 'content': {...}} (a form's content fits its requested_schema), "
        "{'action': 'decline'} or {'action': 'cancel'}"
    )


def resume_schema(round_: Round) -> dict[str, Any]:
    """The JSON schema of the resume value, shown as the interrupt's ``response_schema``."""
    answers = {key: _answer_schema(question) for key, question in round_.questions.items()}
    return {
        "type": "object",
        "description": (
            f"answers to the questions of the MCP tool {round_.tool_name!r}: "
            f"{answer_format(round_)}"
        ),
        "properties": {
            "responses": {
                "type": "object",
                "properties": answers,
                "required": list(answers),
            }
        },
        "required": ["responses"],
    }


def _answer_schema(question: ElicitRequest) -> dict[str, Any]:
    accept: dict[str, Any] = {"type": "object", "properties": {"action": {"const": "accept"}}}
    if isinstance(question.params, ElicitRequestFormParams):
        accept["properties"]["content"] = question.params.requested_schema
        accept["required"] = ["action", "content"]
    else:
        accept["required"] = ["action"]
    refusals = [
        {"type": "object", "properties": {"action": {"const": action}}, "required": ["action"]}
        for action in ("decline", "cancel")
    ]
    return {"oneOf": [accept, *refusals]}
