"""``OtelTracingMiddleware``: OpenTelemetry spans for agent runs, model calls and tool calls.

The spans follow the OpenTelemetry semantic conventions for generative AI (``gen_ai.*``,
Development status): ``invoke_agent {agent}`` around each run, ``chat {model}`` around each model
call, ``execute_tool {tool}`` around each tool call. Needs the ``otel`` extra
(``pip install 'graphagent-langgraph[otel]'``).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.errors import GraphBubbleUp, GraphInterrupt

from graphagent._core import cache_health
from graphagent._core.agent_facts import Middleware
from graphagent._core.bridge import Mode
from graphagent._core.langgraph_internals import INTERRUPT
from graphagent._core.options import refuse_unknown_arguments
from graphagent._core.runtime import DEFAULT_AGENT_NAME, AgentRuntime
from graphagent.errors import MiddlewareError
from graphagent.middleware._kit.cores import ModelCallCore, ToolCallCore
from graphagent.middleware._otel import content, semconv

# A name of this module: the tests replace it to check that a no-op run builds no attributes.
from graphagent.middleware._otel.semconv import chat_attributes as _chat_attributes
from graphagent.middleware.base import ToolResult
from graphagent.requests import ModelRequest, ModelResponse

try:
    from opentelemetry import context as otel_context, trace
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, TracerProvider
except ImportError as missing:
    raise ImportError(
        "OtelTracingMiddleware needs OpenTelemetry, which is not installed; install it with "
        "pip install 'graphagent-langgraph[otel]'"
    ) from missing

if TYPE_CHECKING:
    from contextvars import Token

    from langgraph.prebuilt.tool_node import ToolCallRequest

    from graphagent._core.observe import HookObserver

__all__ = ["OtelTracingMiddleware"]

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
    Mutable: the token totals are learned as the run goes."""

    owner: OtelTracingMiddleware
    tracer: Tracer
    span: Span
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class _RunScope:
    """What ``wrap_agent`` must undo: the run's span, and the context it attached."""

    span: Span
    run: _Run | None
    context: Context
    token: Token[Context]


@refuse_unknown_arguments
class OtelTracingMiddleware(ModelCallCore, ToolCallCore):
    """Trace every run, model call and tool call as OpenTelemetry spans.

    Spans (GenAI semantic conventions): ``invoke_agent {agent name}`` around the whole run, with
    ``chat {model}`` (one per model call) and ``execute_tool {tool}`` (one per tool call) as its
    children; an agent run inside a tool (``as_tool``) or as a node of a traced graph nests under
    the span that was current there. Every span ends on every path out of a run; an exception
    sets status ERROR and ``error.type``; an interrupt ends the run normally with
    ``graphagent.interrupted = true`` and one ``graphagent.interrupt`` event per interrupt.
    With ``trace_hooks``, each call of another middleware's hook gets a span of its own.

    Args:
        tracer_provider: Where spans go. ``None`` (the default) uses the global provider,
            looked up at each run, so configuring OpenTelemetry after building the agent works.
        record_content: Also record messages, system instructions, tool arguments and tool
            results (``gen_ai.input.messages`` etc., as JSON strings). Off by default: they may
            hold personal or secret data.
        trace_hooks: Also open a span for every call of the other middleware's hooks (node
            hooks, ``wrap_model_call``, ``wrap_tool_call``), named ``{middleware}.{hook}`` like
            its graph node. With ``record_content`` it records what the hook received and
            returned, as the middleware's ``TracePolicy`` (or ``configure_trace_policy``'s
            default) shapes it.

    ``order = 1000``: observers sit outermost wherever they are listed, so the run span covers
    every other ``wrap_agent`` hook, and a ``chat``/``execute_tool`` span covers the call as the
    agent experiences it: the time of retries and fallbacks of inner middleware included, and the
    outcome they settled on. Lower ``order`` on an instance to trace each attempt instead.

    When tracing is a no-op (no SDK configured, or the run is sampled out), a run costs one
    span start and a check; model and tool calls cost a context lookup.
    """

    order = 1000

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        record_content: bool = False,
        trace_hooks: bool = False,
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
        if not isinstance(trace_hooks, bool):
            raise MiddlewareError(
                f"OtelTracingMiddleware: trace_hooks={trace_hooks!r} must be True or False."
            )
        self.tracer_provider = tracer_provider
        self.record_content = record_content
        self.trace_hooks = trace_hooks
        self._cached: tuple[TracerProvider, Tracer] | None = None

    # -- the run ------------------------------------------------------------------------------

    def wrap_agent(self, state: Any, runtime: AgentRuntime[Any]) -> Generator[None, Any, None]:
        # A sync generator serves async runs too (driven inline), so no async twin is needed.
        scope = self._open_run(state, runtime.agent_name)
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

    async def _wrap_model_call(
        self, mode: Mode, request: ModelRequest[Any], handler: Callable[..., Any]
    ) -> ModelResponse:
        response: ModelResponse
        started = self._start_chat(request)
        if started is None:
            response = await mode.call(handler, request)
            return response
        with _current(started[1], self.record_content):
            response = await mode.call(handler, request)
        _end_chat(*started, response, self.record_content)
        return response

    async def _wrap_tool_call(
        self, mode: Mode, request: ToolCallRequest, handler: Callable[..., Any]
    ) -> ToolResult:
        result: ToolResult
        span = self._start_tool(request)
        if span is None:
            result = await mode.call(handler, request)
            return result
        with _current(span, self.record_content):
            result = await mode.call(handler, request)
        _end_tool(span, result, self.record_content)
        return result

    # -- the other middleware's hooks ---------------------------------------------------------

    def _hook_observer(self) -> HookObserver | None:
        return self._hook_span if self.trace_hooks else None

    @contextmanager
    def _hook_span(
        self, middleware: Middleware, hook: str, payload: Any
    ) -> Iterator[Callable[[Any], None]]:
        """A span around one call of another middleware's hook, current while it runs."""
        run = self._current_run()
        if run is None:
            yield _ignore
            return
        attributes = semconv.hook_attributes(middleware.name, hook)
        span = run.tracer.start_span(
            f"{middleware.name}.{hook}", kind=SpanKind.INTERNAL, attributes=attributes
        )
        recording = self.record_content and span.is_recording()
        if recording:
            _set_attributes(span, content.hook_input(middleware, hook, payload))
        with _current(span, self.record_content):
            yield (
                (lambda result: _record_hook_output(span, middleware, result))
                if recording
                else _ignore
            )
        span.end()

    # -- starting spans -----------------------------------------------------------------------

    def _tracer(self) -> Tracer:
        provider = self.tracer_provider or trace.get_tracer_provider()
        cached = self._cached
        if cached is not None and cached[0] is provider:
            return cached[1]
        tracer = provider.get_tracer("graphagent", _VERSION)
        self._cached = (provider, tracer)
        return tracer

    def _open_run(self, state: Any, agent_name: str) -> _RunScope | None:
        """Start the run's span and make it current; ``None`` when tracing is a no-op."""
        tracer = self._tracer()
        name, attributes = "invoke_agent", {semconv.OPERATION: "invoke_agent"}
        if agent_name != DEFAULT_AGENT_NAME:  # a name the application gave
            name = f"invoke_agent {agent_name}"
            attributes[semconv.AGENT_NAME] = agent_name
        span = tracer.start_span(name, kind=SpanKind.INTERNAL, attributes=attributes)
        recording = span.is_recording()
        if not recording and not span.get_span_context().is_valid:
            return None
        # A sampled-out run still becomes current, so agents nested in it are sampled out too;
        # _RUN_KEY is reset in any case, so this run's calls never join an outer run.
        run = _Run(self, tracer, span) if recording else None
        context = otel_context.set_value(_RUN_KEY, run, trace.set_span_in_context(span))
        token = otel_context.attach(context)
        if run is not None and self.record_content:
            _set_attributes(span, content.run_input(state))
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
            f"chat {attributes[semconv.REQUEST_MODEL]}", kind=SpanKind.CLIENT, attributes=attributes
        )
        if self.record_content and span.is_recording():
            _set_attributes(span, content.chat_input(request))
        return run, span

    def _start_tool(self, request: ToolCallRequest) -> Span | None:
        run = self._current_run()
        if run is None:
            return None
        attributes = semconv.tool_attributes(request)
        span = run.tracer.start_span(
            f"execute_tool {attributes[semconv.TOOL_NAME]}",
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        if self.record_content and span.is_recording():
            _set_attributes(span, content.tool_input(request))
        return span


# -- ending spans -------------------------------------------------------------------------------


@contextmanager
def _current(span: Span, record_content: bool) -> Iterator[None]:
    """Make ``span`` current while the call runs; if the call raises, end the span with it.

    Attach and detach happen in the same frame, hence in the same context."""
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        yield
    except BaseException as error:
        _record_error(span, error, record_content)
        span.end()
        raise
    finally:
        otel_context.detach(token)


def _close_run(scope: _RunScope, outcome: Any, record_content: bool) -> None:
    span, run = scope.span, scope.run
    try:
        if isinstance(outcome, BaseException):
            _record_error(span, outcome, record_content)
        elif run is not None:
            _record_run_result(run, outcome, record_content)
        if run is not None:
            _set_attributes(span, semconv.usage_attributes(run.input_tokens, run.output_tokens))
        span.end()
    finally:
        # A stream whose steps were awaited from different tasks (e.g. asyncio.wait_for on
        # Python 3.11) ends in another context, where there is nothing of ours to undo.
        if otel_context.get_current() is scope.context:
            otel_context.detach(scope.token)


def _record_error(span: Span, error: BaseException, record_content: bool) -> None:
    """How a span ends when its call raised: control flow is no error, the rest is. The
    exception's message is content (it may quote personal data): without ``record_content``
    the span gets its type and the frames it passed, not what it said."""
    if not span.is_recording():
        return
    if isinstance(error, GraphInterrupt):
        span.set_attribute(semconv.INTERRUPTED, True)
    elif isinstance(error, GeneratorExit):
        span.set_attribute(semconv.CLOSED_EARLY, True)
    elif not isinstance(error, GraphBubbleUp):
        kind = semconv.error_type(type(error))
        span.set_attribute(semconv.ERROR_TYPE, kind)
        if record_content:
            span.record_exception(error)
            span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
        else:
            span.add_event(semconv.EXCEPTION_EVENT, semconv.exception_attributes(error))
            span.set_status(Status(StatusCode.ERROR, kind))


def _record_run_result(run: _Run, result: Any, record_content: bool) -> None:
    span = run.span
    interrupts = result.get(INTERRUPT) if isinstance(result, Mapping) else None
    if interrupts:
        span.set_attribute(semconv.INTERRUPTED, True)
        for interrupt in interrupts:
            attributes = {semconv.INTERRUPT_ID: str(getattr(interrupt, "id", ""))}
            if record_content:
                attributes |= content.interrupt_value(interrupt)
            span.add_event(semconv.INTERRUPT_EVENT, attributes)
    if record_content:
        _set_attributes(span, content.run_output(result))


def _end_chat(run: _Run, span: Span, response: ModelResponse, record_content: bool) -> None:
    if span.is_recording():
        replies = [m for m in response.result if isinstance(m, AIMessage)]
        _set_attributes(span, semconv.reply_attributes(replies))
        input_tokens, output_tokens = semconv.reply_usage(replies)
        _set_attributes(span, semconv.usage_attributes(input_tokens, output_tokens))
        _set_attributes(span, cache_health.span_attributes(replies))
        run.input_tokens = semconv.add_tokens(run.input_tokens, input_tokens)
        run.output_tokens = semconv.add_tokens(run.output_tokens, output_tokens)
        if record_content:
            _set_attributes(span, content.chat_output(replies))
    span.end()


def _end_tool(span: Span, result: ToolResult, record_content: bool) -> None:
    if span.is_recording() and isinstance(result, ToolMessage):
        if record_content:
            _set_attributes(span, content.tool_output(result))
        if result.status == "error":
            span.set_attribute(semconv.ERROR_TYPE, semconv.TOOL_ERROR)
            span.set_status(Status(StatusCode.ERROR, "the tool answered with an error message"))
    span.end()


def _record_hook_output(span: Span, middleware: Middleware, result: Any) -> None:
    _set_attributes(span, content.hook_output(middleware, result))


def _ignore(result: Any) -> None:
    """What a hook returned, when its call is not recorded."""


def _set_attributes(span: Span, attributes: Mapping[str, Any]) -> None:
    for key, value in attributes.items():
        span.set_attribute(key, value)
