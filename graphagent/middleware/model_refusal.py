"""``ModelRefusalMiddleware``: a reply the provider marked as a refusal fails the model call.

Providers report an explicit refusal as a successful response (OpenAI's ``refusal`` field,
Anthropic's ``stop_reason="refusal"``, Gemini's safety finish reasons); langchain-core turns each
into a standard ``{"type": "refusal"}`` content block of ``AIMessage.content_blocks``. Without
this middleware such a reply is the agent's answer; with it, the call raises langchain-core's
``ModelRefusalError``, which a ``ModelFallbackMiddleware`` or ``ModelRetryMiddleware`` listed
before (outside) this one handles like any other failed call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from langchain_core.exceptions import ModelRefusalError
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.content import RefusalContentBlock
from langgraph.typing import ContextT

from graphagent._core.bridge import Mode
from graphagent._core.options import refuse_unknown_arguments
from graphagent.middleware._kit.cores import ModelCallCore
from graphagent.middleware.trace_policy import TracePolicy, omit_payload
from graphagent.requests import ModelRequest, ModelResponse
from graphagent.state import AgentState, ResponseT
from graphagent.structured_output import StructuredOutputError

__all__ = ["ModelRefusalError", "ModelRefusalMiddleware"]


@refuse_unknown_arguments
class ModelRefusalMiddleware(ModelCallCore[AgentState[ResponseT], ContextT, ResponseT]):
    """Raise ``ModelRefusalError`` when the model's reply holds a standard refusal block.

    Only refusals the provider reports explicitly are caught; a refusal the model writes as
    ordinary text is an ordinary answer. A refusal that made structured-output parsing fail
    raises ``ModelRefusalError`` (chained to the parsing error) instead of the parsing error.
    With ``stream_mode="messages"`` the refused reply's tokens may already have been streamed
    before the error is raised.
    """

    trace_policy = TracePolicy(process_inputs=omit_payload)
    """Hook traces keep their timing but not the request (its messages are on the call's span)."""

    async def _wrap_model_call(
        self, mode: Mode, request: ModelRequest[ContextT], handler: Callable[..., Any]
    ) -> ModelResponse:
        """Call the model; raise ``ModelRefusalError`` if its reply is a refusal."""
        try:
            response: ModelResponse = await mode.call(handler, request)
        except StructuredOutputError as error:
            raise_if_refused([error.ai_message], cause=error)
            raise
        raise_if_refused(response.result)
        return response


def raise_if_refused(
    messages: Iterable[BaseMessage | None], *, cause: BaseException | None = None
) -> None:
    """Raise ``ModelRefusalError`` for the first AI message holding a refusal block."""
    for message in messages:
        if not isinstance(message, AIMessage):
            continue
        refusal = first_refusal(message)
        if refusal is not None:
            raise ModelRefusalError.from_refusal(refusal, raw_message=message) from cause


def first_refusal(message: AIMessage) -> RefusalContentBlock | None:
    """The message's first standard refusal block, if it has one."""
    blocks: list[Any] = list(message.content_blocks)
    return next((block for block in blocks if block.get("type") == "refusal"), None)
