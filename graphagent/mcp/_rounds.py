"""A tool call whose server may ask questions first: each round of questions is one interrupt.

A server on the current protocol answers ``tools/call`` with an ``InputRequiredResult`` when it
needs input, and expects the call again with the answers (and the opaque ``request_state`` it
sent, echoed back). This module sends those rounds itself, against the client's session, instead
of leaving them to FastMCP, which answers a round's questions from concurrent callbacks: LangGraph
pairs resume values with ``interrupt()`` calls by their order in the task, so the questions must
be put one round at a time, from the tool call's own frame (where ``interrupt`` finds the run).

Only questions for the person (elicitation) are answered; a server asking for a model sample,
for the client's roots, or only to be called again later is refused with a clear error.
"""

from __future__ import annotations

import warnings
from collections.abc import Coroutine
from functools import partial
from typing import Annotated, Any, TypeVar, cast

import jsonschema
from fastmcp.client import Client
from langgraph.types import interrupt
from mcp.types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequests,
    InputRequiredResult,
    InputResponses,
)
from pydantic import PlainValidator, ValidationError, WithJsonSchema

from graphagent.mcp._answers import Round, checked, resume_schema
from graphagent.mcp._content import ToolFailed
from graphagent.mcp._listing import schema_problem
from graphagent.mcp.elicitation import (
    ELICITATION_INTERRUPT_TYPE,
    MAX_ELICITATION_ROUNDS,
    MCPElicitationInterrupt,
)
from graphagent.mcp.errors import MCPElicitationAnswerError

T = TypeVar("T")


async def call_asking(
    client: Client[Any],
    upstream_name: str,
    tool_name: str,
    arguments: dict[str, Any],
    server: str,
) -> CallToolResult:
    """Call ``upstream_name`` on the connected ``client``, answering each round of the server's
    questions with an interrupt; ``tool_name`` is the tool as the agent knows it, ``server``
    the server as errors name it. A server that asks more than
    :data:`MAX_ELICITATION_ROUNDS` rounds, or asks with a broken form, fails the call."""
    session = client.session
    result = await _guarded(
        client, session.call_tool(upstream_name, arguments, allow_input_required=True)
    )
    rounds = 0
    while isinstance(result, InputRequiredResult):
        rounds += 1
        if rounds > MAX_ELICITATION_ROUNDS:
            raise _past_the_cap(tool_name, server)
        responses = _ask(_round(result, tool_name, server))
        result = await _guarded(
            client,
            session.call_tool(
                upstream_name,
                arguments,
                input_responses=responses,
                request_state=result.request_state,
                allow_input_required=True,
            ),
        )
    return result


def _round(result: InputRequiredResult, tool_name: str, server: str) -> Round:
    """The round's questions; anything but questions for a person is refused."""
    requests: InputRequests = result.input_requests or {}
    if not requests:
        raise NotImplementedError(
            f"The MCP tool {tool_name!r} returned a continuation round with no input requests. "
            "It asks to be called again later with nothing to ask (a long-running call), which "
            "graphagent.mcp does not drive: only questions for a person (elicitation) are "
            "answered, with an interrupt."
        )
    others = sorted(
        f"{key} ({request.method})"
        for key, request in requests.items()
        if not isinstance(request, ElicitRequest)
    )
    if others:
        raise NotImplementedError(
            f"The MCP tool {tool_name!r} asked for input that interrupt-based elicitation cannot "
            f"answer: {', '.join(others)}. graphagent.mcp puts only questions for a person "
            "(elicitation/create) to the run, as an interrupt; a model sample or the client's "
            "roots it cannot give."
        )
    questions = {key: cast("ElicitRequest", request) for key, request in requests.items()}
    for key, question in questions.items():
        _check_form(tool_name, server, key, question)
    return Round(tool_name, questions)


def _check_form(tool_name: str, server: str, key: str, question: ElicitRequest) -> None:
    """Refuse a form whose schema no answer could be checked against, before anyone is asked."""
    params = question.params
    if not isinstance(params, ElicitRequestFormParams):
        return
    schema = params.requested_schema
    problem = schema_problem(schema)
    if problem is None:
        try:
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except jsonschema.SchemaError as error:
            problem = f"is not a valid JSON schema ({error.message})"
    if problem is not None:
        raise ToolFailed(
            f"The tool {tool_name!r} could not finish: {server} asked the question {key!r} "
            f"with a form whose requested schema {problem}, so no answer could be checked. "
            "Nothing was asked; the server's tool needs fixing."
        )


def _past_the_cap(tool_name: str, server: str) -> ToolFailed:
    return ToolFailed(
        f"The tool {tool_name!r} did not finish: {server} kept asking questions, "
        f"{MAX_ELICITATION_ROUNDS} rounds of them, and graphagent.mcp asks no more than that "
        "in one call. The call was abandoned; whether it took effect is unknown."
    )


def _ask(round_: Round) -> InputResponses:
    """Pause the run with the round's questions; on resume, the checked answers."""
    value = MCPElicitationInterrupt(
        type=ELICITATION_INTERRUPT_TYPE, tool_name=round_.tool_name, requests=round_.requests()
    )
    schema = Annotated[
        Any, PlainValidator(partial(checked, round_)), WithJsonSchema(resume_schema(round_))
    ]
    try:
        responses: InputResponses = interrupt(value, response_schema=cast("type[Any]", schema))
    except ValidationError as error:
        raise _unwrapped(error) from None
    return responses


def _unwrapped(error: ValidationError) -> Exception:
    """The answer error our check raised, which pydantic wrapped."""
    for detail in error.errors():
        cause = (detail.get("ctx") or {}).get("error")
        if isinstance(cause, MCPElicitationAnswerError):
            return cause
    return error


async def _guarded(client: Client[Any], request: Coroutine[Any, Any, T]) -> T:
    """``request``, raced against the client's session task: over HTTP a server's failure ends
    that task rather than the request, which would otherwise wait forever. The race is
    FastMCP's (private) helper; without it the request is awaited alone, with a warning."""
    monitored = getattr(client, "_await_with_session_monitoring", None)
    if monitored is not None:
        return cast("T", await monitored(request))
    warnings.warn(
        "This FastMCP has no Client._await_with_session_monitoring, so graphagent.mcp cannot "
        "watch the connection during a call that may ask questions: a server that fails then may "
        "leave the call waiting. Install a FastMCP that graphagent supports (the `mcp` extra).",
        RuntimeWarning,
        stacklevel=2,
    )
    return await request
