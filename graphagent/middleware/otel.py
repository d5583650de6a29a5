"""``OtelTracingMiddleware``: OpenTelemetry spans for agent runs, model calls and tool calls.

The spans follow the OpenTelemetry semantic conventions for generative AI (``gen_ai.*``,
Development status): ``invoke_agent {agent}`` around each run, ``chat {model}`` around each model
call, ``execute_tool {tool}`` around each tool call. Needs the ``otel`` extra
(``pip install 'graphagent[otel]'``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage, convert_to_messages
from langgraph.errors import GraphBubbleUp, GraphInterrupt

from graphagent._run import INTERRUPT
from graphagent.errors import MiddlewareError
from graphagent.middleware.base import AgentMiddleware, ToolResult
from graphagent.requests import ModelCallResult, ModelRequest, ModelResponse

try:
    from opentelemetry import context as otel_context
    from opentelemetry import trace
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, TracerProvider
except ImportError as missing:
    raise ImportError(
        "OtelTracingMiddleware needs OpenTelemetry, which is not installed; install it with "
        "pip install 'graphagent[otel]'"
    ) from missing

if TYPE_CHECKING:
    from contextvars import Token

    from langgraph.prebuilt.tool_node import ToolCallRequest
    from langgraph.runtime import Runtime

__all__ = ["OtelTracingMiddleware"]

# Attribute names of the GenAI semantic conventions (spelled out: the semconv package's GenAI
# module is "incubating" and may move).
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
OUTPUT_TYPE = "gen_ai.output.type"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"
# graphagent's own attributes and events.
INTERRUPTED = "graphagent.interrupted"
CLOSED_EARLY = "graphagent.closed_early"
INTERRUPT_EVENT = "graphagent.interrupt"
TOOL_ERROR = "tool_error"
"""``error.type`` of a tool call answered with an error ToolMessage (the exception, if any, was
turned into that message by a wrapper inside this one)."""

_SETTINGS = (
    ("ls_temperature", "gen_ai.request.temperature"),
    ("ls_max_tokens", "gen_ai.request.max_tokens"),
    ("ls_stop", "gen_ai.request.stop_sequences"),
)
# langchain's provider ids that differ from the semantic conventions' well-known values.
_PROVIDERS = {
    "azure": "azure.ai.openai",
    "google_genai": "gcp.gen_ai",
    "google_vertexai": "gcp.vertex_ai",
    "amazon_bedrock": "aws.bedrock",
    "mistral": "mistral_ai",
    "mistralai": "mistral_ai",
    "xai": "x_ai",
}
_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
_RUN_KEY = otel_context.create_key("graphagent.otel.run")


def _scope_version() -> str | None:
    try:
        return metadata.version("graphagent")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return None


_VERSION = _scope_version()


@dataclass(slots=True)
class _Run:
    """One recording run, found by its model and tool calls through the OpenTelemetry context.
    Mutable: the agent's name and the token totals are learned as the run goes."""

    owner: OtelTracingMiddleware
    tracer: Tracer
    span: Span
    named: bool = False
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class _RunScope:
    """What ``wrap_agent`` must undo: the run's span, and the context it attached."""

    span: Span
    run: _Run | None
    context: Context
    token: Token[Context]


class OtelTracingMiddleware(AgentMiddleware):
    """Trace every run, model call and tool call as OpenTelemetry spans.

    Spans (GenAI semantic conventions): ``invoke_agent {agent name}`` around the whole run, with
    ``chat {model}`` (one per model call) and ``execute_tool {tool}`` (one per tool call) as its
    children; an agent run inside a tool (``as_tool``) or as a node of a traced graph nests under
    the span that was current there. Every span ends on every path out of a run; an exception
    sets status ERROR and ``error.type``; an interrupt ends the run normally with
    ``graphagent.interrupted = true`` and one ``graphagent.interrupt`` event per interrupt.

    Args:
        tracer_provider: Where spans go. ``None`` (the default) uses the global provider,
            looked up at each run, so configuring OpenTelemetry after building the agent works.
        record_content: Also record messages, system instructions, tool arguments and tool
            results (``gen_ai.input.messages`` etc., as JSON strings). Off by default: they may
            hold personal or secret data.

    ``order = 1000``: observers sit outermost wherever they are listed, so the run span covers
    every other ``wrap_agent`` hook, and a ``chat``/``execute_tool`` span covers the call as the
    agent experiences it: the time of retries and fallbacks of inner middleware included, and the
    outcome they settled on. Lower ``order`` on an instance to trace each attempt instead.

    When tracing is a no-op (no SDK configured, or the run is sampled out), a run costs one
    span start and a check; model and tool calls cost a context lookup.
    """

    order = 1000

    def __init__(
        self, tracer_provider: TracerProvider | None = None, record_content: bool = False
    ) -> None:
        if tracer_provider is not None and not callable(getattr(tracer_provider, "get_tracer", 0)):
            raise MiddlewareError(
                f"OtelTracingMiddleware: tracer_provider={tracer_provider!r} is not a "
                "TracerProvider (it has no get_tracer); pass an "
                "opentelemetry.sdk.trace.TracerProvider, or None for the global provider."
            )
        if not isinstance(record_content, bool):
            raise MiddlewareError(
                f"OtelTracingMiddleware: record_content={record_content!r} must be True or False."
            )
        self.tracer_provider = tracer_provider
        self.record_content = record_content
        self._cached: tuple[TracerProvider, Tracer] | None = None

    # -- the run ------------------------------------------------------------------------------

    def wrap_agent(self, state: Any, runtime: Runtime[Any]) -> Generator[None, Any, None]:
        scope = self._open_run(state)
        outcome: Any = None
        try:
            outcome = yield
        except BaseException as error:
            outcome = error
            raise
        finally:
            if scope is not None:
                _close_run(scope, outcome, self.record_content)

    async def awrap_agent(self, state: Any, runtime: Runtime[Any]) -> AsyncGenerator[None, Any]:
        scope = self._open_run(state)
        outcome: Any = None
        try:
            outcome = yield
        except BaseException as error:
            outcome = error
            raise
        finally:
            if scope is not None:
                _close_run(scope, outcome, self.record_content)

    # -- model and tool calls -----------------------------------------------------------------

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse]
    ) -> ModelCallResult:
        started = self._start_chat(request)
        if started is None:
            return handler(request)
        with _current(started[1]):
            response = handler(request)
        _end_chat(*started, response, self.record_content)
        return response

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse]],
    ) -> ModelCallResult:
        started = self._start_chat(request)
        if started is None:
            return await handler(request)
        with _current(started[1]):
            response = await handler(request)
        _end_chat(*started, response, self.record_content)
        return response

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        span = self._start_tool(request)
        if span is None:
            return handler(request)
        with _current(span):
            result = handler(request)
        _end_tool(span, result, self.record_content)
        return result

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        span = self._start_tool(request)
        if span is None:
            return await handler(request)
        with _current(span):
            result = await handler(request)
        _end_tool(span, result, self.record_content)
        return result

    # -- starting spans -----------------------------------------------------------------------

    def _tracer(self) -> Tracer:
        provider = self.tracer_provider or trace.get_tracer_provider()
        cached = self._cached
        if cached is not None and cached[0] is provider:
            return cached[1]
        tracer = provider.get_tracer("graphagent", _VERSION)
        self._cached = (provider, tracer)
        return tracer

    def _open_run(self, state: Any) -> _RunScope | None:
        """Start the run's span and make it current; ``None`` when tracing is a no-op."""
        tracer = self._tracer()
        span = tracer.start_span(
            "invoke_agent", kind=SpanKind.INTERNAL, attributes={OPERATION: "invoke_agent"}
        )
        recording = span.is_recording()
        if not recording and not span.get_span_context().is_valid:
            return None
        # A sampled-out run still becomes current, so agents nested in it are sampled out too;
        # _RUN_KEY is reset in any case, so this run's calls never join an outer run.
        run = _Run(self, tracer, span) if recording else None
        context = otel_context.set_value(_RUN_KEY, run, trace.set_span_in_context(span))
        token = otel_context.attach(context)
        if run is not None and self.record_content:
            _set_json(span, INPUT_MESSAGES, _messages_json(_input_messages(state)))
        return _RunScope(span, run, context, token)

    def _current_run(self) -> _Run | None:
        run = otel_context.get_value(_RUN_KEY)
        return run if isinstance(run, _Run) and run.owner is self else None

    def _start_chat(self, request: ModelRequest[Any]) -> tuple[_Run, Span] | None:
        run = self._current_run()
        if run is None:
            return None
        attributes = _chat_attributes(request)
        span = run.tracer.start_span(
            f"chat {attributes[REQUEST_MODEL]}", kind=SpanKind.CLIENT, attributes=attributes
        )
        if self.record_content and span.is_recording():
            _set_json(span, INPUT_MESSAGES, _messages_json(request.messages))
            if request.system_message is not None:
                text = request.system_message.text
                _set_json(span, SYSTEM_INSTRUCTIONS, [{"type": "text", "content": text}])
        return run, span

    def _start_tool(self, request: ToolCallRequest) -> Span | None:
        run = self._current_run()
        if run is None:
            return None
        call = request.tool_call
        attributes = {OPERATION: "execute_tool", TOOL_NAME: call["name"], TOOL_TYPE: "function"}
        call_id = call.get("id")
        if call_id:
            attributes[TOOL_CALL_ID] = call_id
        if request.tool is not None and request.tool.description:
            attributes[TOOL_DESCRIPTION] = request.tool.description
        span = run.tracer.start_span(
            f"execute_tool {call['name']}", kind=SpanKind.INTERNAL, attributes=attributes
        )
        if self.record_content and span.is_recording():
            _set_json(span, TOOL_ARGUMENTS, call.get("args"))
        return span


# -- ending spans -------------------------------------------------------------------------------


@contextmanager
def _current(span: Span) -> Iterator[None]:
    """Make ``span`` current while the call runs; if the call raises, end the span with it.

    Attach and detach happen in the same frame, hence in the same context."""
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        yield
    except BaseException as error:
        _record_error(span, error)
        span.end()
        raise
    finally:
        otel_context.detach(token)


def _close_run(scope: _RunScope, outcome: Any, record_content: bool) -> None:
    span, run = scope.span, scope.run
    try:
        if isinstance(outcome, BaseException):
            _record_error(span, outcome)
        elif run is not None:
            _record_run_result(run, outcome, record_content)
        if run is not None:
            _record_usage(span, run.input_tokens, run.output_tokens)
        span.end()
    finally:
        # A stream whose steps were awaited from different tasks (e.g. asyncio.wait_for on
        # Python 3.11) ends in another context, where there is nothing of ours to undo.
        if otel_context.get_current() is scope.context:
            otel_context.detach(scope.token)


def _record_error(span: Span, error: BaseException) -> None:
    """How a span ends when its call raised: control flow is no error, the rest is."""
    if not span.is_recording():
        return
    if isinstance(error, GraphInterrupt):
        span.set_attribute(INTERRUPTED, True)
    elif isinstance(error, GeneratorExit):
        span.set_attribute(CLOSED_EARLY, True)
    elif not isinstance(error, GraphBubbleUp):
        span.set_attribute(ERROR_TYPE, _qualified_name(type(error)))
        span.record_exception(error)
        span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))


def _record_run_result(run: _Run, result: Any, record_content: bool) -> None:
    span = run.span
    interrupts = result.get(INTERRUPT) if isinstance(result, Mapping) else None
    if interrupts:
        span.set_attribute(INTERRUPTED, True)
        for interrupt in interrupts:
            attributes = {"graphagent.interrupt.id": str(getattr(interrupt, "id", ""))}
            if record_content:
                attributes["graphagent.interrupt.value"] = _json(getattr(interrupt, "value", None))
            span.add_event(INTERRUPT_EVENT, attributes)
    messages = result.get("messages") if isinstance(result, Mapping) else None
    if record_content and messages and isinstance(messages[-1], AIMessage):
        _set_json(span, OUTPUT_MESSAGES, [_output_json(messages[-1])])


def _end_chat(run: _Run, span: Span, response: ModelResponse, record_content: bool) -> None:
    if span.is_recording():
        replies = [m for m in response.result if isinstance(m, AIMessage)]
        _record_reply(span, replies)
        input_tokens, output_tokens = _usage(replies)
        _record_usage(span, input_tokens, output_tokens)
        run.input_tokens = _add(run.input_tokens, input_tokens)
        run.output_tokens = _add(run.output_tokens, output_tokens)
        if record_content:
            _set_json(span, OUTPUT_MESSAGES, [_output_json(m) for m in replies])
        if not run.named and replies:
            _name_run(run, replies[0])
    span.end()


def _end_tool(span: Span, result: ToolResult, record_content: bool) -> None:
    if span.is_recording() and isinstance(result, ToolMessage):
        if record_content:
            span.set_attribute(TOOL_RESULT, _text_or_json(result.content))
        if result.status == "error":
            span.set_attribute(ERROR_TYPE, TOOL_ERROR)
            span.set_status(Status(StatusCode.ERROR, "the tool answered with an error message"))
    span.end()


def _name_run(run: _Run, reply: AIMessage) -> None:
    """Name the run after its agent, which the core sets as the ``name`` of the model's replies
    (``create_agent(name=...)``); ``wrap_agent`` does not get the name."""
    run.named = True
    if reply.name:
        run.span.update_name(f"invoke_agent {reply.name}")
        run.span.set_attribute(AGENT_NAME, reply.name)


# -- attributes ---------------------------------------------------------------------------------


def _chat_attributes(request: ModelRequest[Any]) -> dict[str, Any]:
    """What the semantic conventions ask for at span start (samplers may read them)."""
    model = request.model
    params = _model_params(model, request.model_settings)
    attributes: dict[str, Any] = {OPERATION: "chat", REQUEST_MODEL: _model_name(model, params)}
    provider = params.get("ls_provider")
    if isinstance(provider, str):
        attributes[PROVIDER] = _PROVIDERS.get(provider, provider)
    for param, key in _SETTINGS:
        value = params.get(param)
        if value is not None:
            attributes[key] = list(value) if isinstance(value, list | tuple) else value
    if request.response_format is not None:
        attributes[OUTPUT_TYPE] = "json"
    info = getattr(request.runtime, "execution_info", None)
    if info is not None and info.thread_id:
        attributes[CONVERSATION] = info.thread_id
    return attributes


def _model_params(model: Any, settings: Mapping[str, Any]) -> Mapping[str, Any]:
    """langchain's tracing parameters of a chat model (provider, model, temperature, ...)."""
    try:
        params = model._get_ls_params(**settings)
    except Exception:  # telemetry never fails a run: a model without them is just less described
        return {}
    return params if isinstance(params, Mapping) else {}


def _model_name(model: Any, params: Mapping[str, Any]) -> str:
    for value in (
        getattr(model, "model_name", None),
        getattr(model, "model", None),
        params.get("ls_model_name"),
    ):
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def _record_reply(span: Span, replies: list[AIMessage]) -> None:
    reasons = [r for r in map(_finish_reason, replies) if r is not None]
    if reasons:
        span.set_attribute(FINISH_REASONS, reasons)
    for reply in replies:
        model = reply.response_metadata.get("model_name") or reply.response_metadata.get("model")
        if isinstance(model, str) and model:
            span.set_attribute(RESPONSE_MODEL, model)
            return


def _finish_reason(message: AIMessage) -> str | None:
    metadata = message.response_metadata
    reason = metadata.get("finish_reason") or metadata.get("stop_reason")
    return reason if isinstance(reason, str) else None


def _usage(replies: list[AIMessage]) -> tuple[int | None, int | None]:
    input_tokens: int | None = None
    output_tokens: int | None = None
    for reply in replies:
        usage = reply.usage_metadata
        if usage is not None:
            input_tokens = _add(input_tokens, usage.get("input_tokens"))
            output_tokens = _add(output_tokens, usage.get("output_tokens"))
    return input_tokens, output_tokens


def _record_usage(span: Span, input_tokens: int | None, output_tokens: int | None) -> None:
    if input_tokens is not None:
        span.set_attribute(INPUT_TOKENS, input_tokens)
    if output_tokens is not None:
        span.set_attribute(OUTPUT_TOKENS, output_tokens)


def _add(total: int | None, value: int | None) -> int | None:
    if value is None:
        return total
    return value if total is None else total + value


def _qualified_name(cls: type) -> str:
    """``error.type``: the exception's class, with its module unless it is a builtin."""
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


# -- content (record_content=True only) -------------------------------------------------------


def _input_messages(state: Any) -> list[BaseMessage]:
    messages = state.get("messages") if isinstance(state, Mapping) else None
    if not messages:
        return []
    try:
        return convert_to_messages(messages)
    except (ValueError, TypeError, NotImplementedError):  # the run itself will report it
        return []


def _messages_json(messages: list[Any]) -> list[dict[str, Any]]:
    """Messages in the conventions' input-message shape: a role and a list of parts."""
    return [_message_json(m) for m in messages if isinstance(m, BaseMessage)]


def _message_json(message: BaseMessage) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if isinstance(message, ToolMessage):
        response = {"type": "tool_call_response", "id": message.tool_call_id}
        parts.append({**response, "response": message.text})
    elif message.text:
        parts.append({"type": "text", "content": message.text})
    if isinstance(message, AIMessage):
        parts += [
            {"type": "tool_call", "id": c["id"], "name": c["name"], "arguments": c["args"]}
            for c in message.tool_calls
        ]
    return {"role": _ROLES.get(message.type, message.type), "parts": parts}


def _output_json(message: AIMessage) -> dict[str, Any]:
    """An output message: an input-shaped message plus why the model stopped."""
    reason = _finish_reason(message) or ("tool_call" if message.tool_calls else "stop")
    return {**_message_json(message), "finish_reason": reason}


def _text_or_json(content: Any) -> str:
    return content if isinstance(content, str) else _json(content)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _set_json(span: Span, key: str, value: Any) -> None:
    """Structured values go on spans as JSON strings (span attributes cannot nest)."""
    span.set_attribute(key, _json(value))
