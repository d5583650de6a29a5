"""``PIIMiddleware``: find personal data in messages and redact, mask, hash or block it."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar, get_args

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    convert_to_messages,
)
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.typing import ContextT

from graphagent._core.bridge import Mode
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import GraphAgentError, MiddlewareError
from graphagent.middleware._kit.cores import ModelCallCore, ToolCallCore
from graphagent.middleware._kit.replay import hold_back
from graphagent.middleware._pii.detectors import (
    BUILTIN_DETECTORS,
    BuiltinType,
    Detector,
    FindMatches,
    PIIMatch,
    detect_credit_card,
    detect_email,
    detect_ip,
    detect_mac_address,
    detect_url,
    resolve_detector,
)
from graphagent.middleware._pii.redaction import (
    Strategy,
    content_leaves_rewritten,
    leaves_rewritten,
    replaced,
    text_rewritten,
    with_content,
    without_overlaps,
)
from graphagent.middleware._pii.stream import PIIStreamTransformer
from graphagent.middleware.base import ToolResult
from graphagent.requests import ModelRequest, ModelResponse
from graphagent.state import AgentState, ResponseT

__all__ = [
    "PIIDetectionError",
    "PIIMatch",
    "PIIMiddleware",
    "RedactionRule",
    "ResolvedRedactionRule",
    "detect_credit_card",
    "detect_email",
    "detect_ip",
    "detect_mac_address",
    "detect_url",
]

M = TypeVar("M", bound=BaseMessage)

logger = logging.getLogger(__name__)


class PIIDetectionError(GraphAgentError):
    """Personal data was found where the strategy is ``"block"``. The message names the type and
    where it was found, never the data itself (that is in :attr:`matches`).

    Args:
        pii_type: The type that was found (``"email"``, ...).
        matches: What was found (also the ``matches`` attribute).
        where: Where it was found, such as ``"tool result of 'lookup'"``.
    """

    def __init__(
        self, pii_type: str, matches: Sequence[PIIMatch], where: str = "text content"
    ) -> None:
        self.pii_type = pii_type
        self.matches = list(matches)
        self.where = where
        place = "" if where == "text content" else f", in {where}"
        super().__init__(
            f"Detected {len(self.matches)} instance(s) of {pii_type} in text content{place}; "
            "the strategy is 'block', so the run stopped before the data went any further. "
            "Remove it, or use strategy='redact', 'mask' or 'hash'."
        )


def _unknown_strategy(owner: str, strategy: object) -> str:
    """LangChain's words (it says them when it applies the strategy), then ours."""
    return (
        f"Unknown redaction strategy: {strategy}. {owner}: strategy={strategy!r} is unknown; "
        f"use one of {list(get_args(Strategy))}."
    )


# -- applying one type's rule ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Rule:
    """What one middleware looks for, and what it does with what it finds."""

    owner: str
    pii_type: str
    strategy: Strategy
    detect: FindMatches

    def apply(self, text: str, where: str, strategy: Strategy | None = None) -> str:
        """``text`` with every match replaced (or PIIDetectionError under ``"block"``)."""
        matches = without_overlaps(self.detect(text))
        if not matches:
            return text
        strategy = strategy or self.strategy
        if strategy == "block":
            raise PIIDetectionError(self.pii_type, matches, f"{where} ({self.owner})")
        return replaced(text, matches, strategy)


# -- rules as values of their own ----------------------------------------------------------


@refuse_unknown_arguments
@dataclass(frozen=True, slots=True)
class RedactionRule:
    """One type of personal data and what becomes of it: the ``pii_type``, ``strategy`` and
    ``detector`` of a :class:`PIIMiddleware`, as a value to keep and share (``ShellToolMiddleware``
    takes a list of them). :meth:`resolve` makes it ready to apply to a text.

    Args:
        pii_type: The type of data: a built-in type (``"email"``, ``"credit_card"``, ``"ip"``,
            ``"mac_address"``, ``"url"``) or a name of your own, which needs a ``detector``.
        strategy: What a match becomes, as in :class:`PIIMiddleware`: ``"redact"`` (the
            default), ``"mask"``, ``"hash"``, or ``"block"`` (applying the rule raises
            ``PIIDetectionError``).
        detector: A regular expression (a str) or a function of the text returning
            ``PIIMatch`` dicts; ``None`` (the default): the built-in detector of ``pii_type``.

    Raises:
        MiddlewareError: An empty ``pii_type``, a type of your own without a ``detector``, an
            unknown ``strategy``, or a ``detector`` that is neither a valid pattern nor a
            function. The rule is checked when made.
    """

    pii_type: BuiltinType | str
    strategy: Strategy = "redact"
    detector: Detector | str | None = None

    def __post_init__(self) -> None:
        self.resolve()

    def resolve(self) -> ResolvedRedactionRule:
        """The rule with its detector as a checked function, ready to :meth:`apply
        <ResolvedRedactionRule.apply>`."""
        owner = f"RedactionRule({self.pii_type!r})"
        if not isinstance(self.pii_type, str) or not self.pii_type:
            raise MiddlewareError(
                f"RedactionRule: pii_type={self.pii_type!r} must be a non-empty string; the "
                f"built-in types are {sorted(BUILTIN_DETECTORS)}."
            )
        if self.strategy not in get_args(Strategy):
            raise MiddlewareError(_unknown_strategy(owner, self.strategy))
        detect = resolve_detector(owner, self.pii_type, self.detector)
        return ResolvedRedactionRule(self.pii_type, self.strategy, detect)


@dataclass(frozen=True, slots=True)
class ResolvedRedactionRule:
    """A :class:`RedactionRule` ready to apply: its detector always returns checked matches."""

    pii_type: str
    strategy: Strategy
    detector: FindMatches

    def apply(self, content: str) -> tuple[str, list[PIIMatch]]:
        """``content`` with every match replaced as ``PIIMiddleware`` replaces it, and the
        matches replaced (``content`` itself and ``[]`` when there are none). Under ``"block"``
        a match raises :class:`PIIDetectionError`."""
        if not isinstance(content, str):
            raise TypeError(
                f"RedactionRule({self.pii_type!r}).apply() takes a str, got "
                f"{type(content).__name__}; apply it to each text of a message."
            )
        matches = without_overlaps(self.detector(content))
        if not matches:
            return content, []
        if self.strategy == "block":
            raise PIIDetectionError(self.pii_type, matches)
        return replaced(content, matches, self.strategy), matches


# -- the middleware -------------------------------------------------------------------------


@refuse_unknown_arguments
class PIIMiddleware(
    ModelCallCore[AgentState[ResponseT], ContextT, ResponseT],
    ToolCallCore[AgentState[ResponseT], ContextT, ResponseT],
):
    """Find one type of personal data and redact, mask, hash or block it.

    Use one instance per type; each is named ``PIIMiddleware[<type>]``.

    Args:
        pii_type: A built-in type (``"email"``, ``"credit_card"``, ``"ip"``, ``"mac_address"``,
            ``"url"``) or a name of your own, which needs a ``detector``.
        strategy: What a match becomes: ``"redact"`` (``[REDACTED_EMAIL]``), ``"mask"``
            (mostly stars, a few characters kept), ``"hash"`` (``<email_hash:1a2b3c4d>``, the
            same for the same value), or ``"block"`` (raise ``PIIDetectionError``).
        detector: How to find the data: a regular expression (a str), or a function of the text
            returning ``PIIMatch`` dicts (``start`` and ``end`` at least). Replaces the
            built-in detector of a built-in type.
        apply_to_input: Rewrite every user message a caller writes (the run's input,
            ``Command(update=...)``, ``update_state``) before the agent stores, streams or
            traces it, and every user message in the state before each model call (those
            hooks added).
        apply_to_output: Rewrite the model's replies before they enter the state. Their tokens
            are held back from ``stream_mode="messages"`` and the rewritten reply is streamed
            in one chunk once complete; tool-call arguments stay as the model wrote them in the
            state (tools need them) but are redacted in that chunk.
        apply_to_tool_results: Rewrite each tool's result before it enters the state.

    With ``apply_to_output`` or ``apply_to_tool_results`` it also registers a stream transformer
    (``transformers``), as LangChain's does: every surface of a ``stream_events(version="v3")``
    run (streamed text and tool-call arguments, the ``tools`` channel's inputs, outputs and
    errors, the ``values`` snapshots) is rewritten in flight, and under ``"block"`` a match
    there fails the stream.

    ``before_model`` and ``after_model`` also do what LangChain's do when called by hand (the
    last AI message rewritten; tool results after it, with ``apply_to_tool_results``); the
    agent runs ``after_model`` in no node, since replies are rewritten before the state gets
    them.

    Raises:
        MiddlewareError: An unknown type without a ``detector``, an unknown ``strategy``, or a
            ``detector`` that is neither a valid pattern nor a function.

    ``order = 500``: it sits outside every middleware of default order wherever it is listed,
    so what answers a call is rewritten whoever wrote it: a tool's result and a model's reply,
    and also a retry's failure message, an error handler's text or a fallback's reply, which may
    quote an exception's text. Observers (``OtelTracingMiddleware``, ``order = 1000``) stay
    outside it and see the rewritten text.
    """

    order = 500

    def __init__(
        self,
        pii_type: BuiltinType | str,
        *,
        strategy: Strategy = "redact",
        detector: Detector | str | None = None,
        apply_to_input: bool = True,
        apply_to_output: bool = False,
        apply_to_tool_results: bool = False,
    ) -> None:
        owner = type(self).__name__
        if not isinstance(pii_type, str) or not pii_type or any(c in pii_type for c in ":|"):
            raise MiddlewareError(
                f"{owner}: pii_type={pii_type!r} must be a non-empty string without ':' or '|' "
                "(it names the middleware); the built-in types are "
                f"{sorted(BUILTIN_DETECTORS)}."
            )
        if strategy not in get_args(Strategy):
            raise MiddlewareError(_unknown_strategy(owner, strategy))
        if not (apply_to_input or apply_to_output or apply_to_tool_results):
            logger.warning(
                "%s[%s]: apply_to_input, apply_to_output and apply_to_tool_results are all off, "
                "so it checks nothing; turn one on.",
                owner,
                pii_type,
            )
        self.name = f"{owner}[{pii_type}]"
        self.pii_type = pii_type
        self.strategy: Strategy = strategy
        self.detector = resolve_detector(self.name, pii_type, detector)
        self.apply_to_input = apply_to_input
        self.apply_to_output = apply_to_output
        self.apply_to_tool_results = apply_to_tool_results
        self._rule = _Rule(self.name, pii_type, strategy, self.detector)
        # The agent rewrites replies in wrap_model_call; after_model is for callers only.
        unused = {"after_model"} if apply_to_input else {"after_model", "before_model"}
        self._unused_hooks = frozenset(unused)
        if apply_to_output or apply_to_tool_results:
            resolved = ResolvedRedactionRule(pii_type, strategy, self.detector)
            self.transformers = (partial(PIIStreamTransformer, rule=resolved),)

    # -- input -----------------------------------------------------------------------------

    def transform_input(self, values: dict[str, Any]) -> dict[str, Any]:
        """Rewrite the user messages a caller writes (a run's input, ``Command(update=...)``,
        ``update_state``) before the agent stores or streams any of them."""
        if not self.apply_to_input or "messages" not in values:
            return values
        given = values["messages"]
        # As the messages reducer reads them: one message or a list of message-likes.
        messages = convert_to_messages(given if isinstance(given, list) else [given])
        rewritten = [
            self._rewritten(m, "a user message") if isinstance(m, HumanMessage) else m
            for m in messages
        ]
        if all(new is old for new, old in zip(rewritten, messages, strict=True)):
            return values
        return {**values, "messages": rewritten}

    def before_model(
        self, state: AgentState[Any], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Rewrite the user messages holding matches and, with ``apply_to_tool_results``, the
        tool results after the last AI message; the messages, those replaced, as LangChain's
        returns them. (In the agent, tool results are rewritten as the tools return.)"""
        messages = list(state["messages"])
        last_ai = _last_index(messages, AIMessage)
        for index, message in enumerate(messages):
            if self.apply_to_input and isinstance(message, HumanMessage):
                messages[index] = self._rewritten(message, "a user message")
            elif (
                self.apply_to_tool_results
                and isinstance(message, ToolMessage)
                and last_ai is not None
                and index > last_ai
            ):
                messages[index] = self._rewritten(message, "a tool result")
        return _changed(messages, state["messages"])

    def after_model(
        self, state: AgentState[Any], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """With ``apply_to_output``, the messages with the last AI message rewritten, for a
        caller who calls the hook (the agent rewrites each reply before the state gets it)."""
        messages = list(state["messages"])
        last_ai = _last_index(messages, AIMessage)
        if self.apply_to_output and last_ai is not None:
            messages[last_ai] = self._rewritten(messages[last_ai], "the model's reply")
        return _changed(messages, state["messages"])

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """:meth:`before_model`, for a caller who awaits it (the agent runs the sync one)."""
        return self.before_model(state, runtime)

    async def aafter_model(
        self, state: AgentState[Any], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """:meth:`after_model`, for a caller who awaits it."""
        return self.after_model(state, runtime)

    # -- output ----------------------------------------------------------------------------

    async def _wrap_model_call(
        self, mode: Mode, request: ModelRequest[ContextT], handler: Callable[..., Any]
    ) -> ModelResponse:
        """Call the model with its tokens held back; rewrite the reply, then stream it."""
        if not self.apply_to_output:
            passed: ModelResponse = await mode.call(handler, request)
            return passed
        with hold_back(self._stream_view) as replay:
            response = await mode.call(handler, request)
        return await replay.play(mode, self._response_rewritten(response))

    def _response_rewritten(self, response: ModelResponse) -> ModelResponse:
        result = [self._rewritten(m, "the model's reply") for m in response.result]
        return ModelResponse(result, response.structured_response)

    def _stream_view(self, message: AIMessage) -> AIMessage:
        """What streams of a reply: every string redacted, tool-call arguments included."""
        strategy: Strategy = "redact" if self.strategy == "block" else self.strategy

        def rewrite(text: str) -> str:
            return self._rule.apply(text, "the model's reply", strategy)

        return message.model_copy(
            update={
                "content": content_leaves_rewritten(message.content, rewrite),
                "tool_calls": [
                    {**call, "args": leaves_rewritten(call["args"], rewrite)}
                    for call in message.tool_calls
                ],
                "invalid_tool_calls": [
                    {**call, "args": leaves_rewritten(call["args"], rewrite)}
                    for call in message.invalid_tool_calls
                ],
            }
        )

    # -- tool results ----------------------------------------------------------------------

    async def _wrap_tool_call(
        self, mode: Mode, request: ToolCallRequest, handler: Callable[..., Any]
    ) -> ToolResult:
        """Run the tool; rewrite its result before the state (and the stream) gets it."""
        return self._tool_result_rewritten(await mode.call(handler, request), request)

    def _tool_result_rewritten(self, result: ToolResult, request: ToolCallRequest) -> ToolResult:
        if not self.apply_to_tool_results:
            return result
        where = f"the result of tool {request.tool_call['name']!r}"
        if isinstance(result, ToolMessage):
            return self._rewritten(result, where)
        update = result.update
        if not isinstance(update, dict) or not isinstance(update.get("messages"), list):
            return result
        messages = [
            self._rewritten(m, where) if isinstance(m, ToolMessage) else m
            for m in update["messages"]
        ]
        return dataclasses.replace(result, update={**update, "messages": messages})

    def _rewritten(self, message: M, where: str) -> M:
        """``message`` with its text rewritten; the same object when nothing matched."""
        return with_content(
            message, text_rewritten(message.content, lambda t: self._rule.apply(t, where))
        )


def _last_index(messages: Sequence[Any], kind: type[BaseMessage]) -> int | None:
    return next(
        (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], kind)), None
    )


def _changed(messages: list[Any], given: Sequence[Any]) -> dict[str, Any] | None:
    """``{"messages": messages}`` if any differs from ``given`` (replaced by id), else ``None``."""
    if all(new is old for new, old in zip(messages, given, strict=True)):
        return None
    return {"messages": messages}
