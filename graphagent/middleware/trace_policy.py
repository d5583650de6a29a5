"""Trace policies: what the traces of a middleware's hook calls record.

``TracePolicy`` and ``omit_payload`` are langgraph's (``langgraph.types``), as in LangChain;
graphagent's ``TracePolicy`` also checks its arguments when it is made. A middleware's
``trace_policy`` attribute, else the default set by :func:`configure_trace_policy`, shapes what
the callback (LangSmith) runs of its node hooks and its ``OtelTracingMiddleware`` hook spans
record.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.types import TracePolicy as LangGraphTracePolicy, omit_payload

from graphagent._core import trace_policy as _trace_policy
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import MiddlewareTypeError

__all__ = ["TracePolicy", "configure_trace_policy", "omit_payload"]

Processor = Callable[[Any], Any]


@refuse_unknown_arguments
class TracePolicy(LangGraphTracePolicy):
    """What a middleware's hook traces record; the trace and its timing are kept in every case.

    Set it as a middleware's ``trace_policy`` attribute, or as the default of every middleware
    with :func:`configure_trace_policy`. It is langgraph's ``TracePolicy``, whose arguments are
    checked when it is made; graphagent accepts langgraph's own class wherever it takes this one.

    Args:
        process_inputs: A function of what a hook received, returning what to record
            (``omit_payload`` records nothing). ``None`` (the default) records it as it is.
        process_outputs: The same for what a hook returned.

    Raises:
        MiddlewareError: ``process_inputs`` or ``process_outputs`` is not callable.
    """

    __slots__ = ()

    def __init__(
        self, *, process_inputs: Processor | None = None, process_outputs: Processor | None = None
    ) -> None:
        for name, value in (
            ("process_inputs", process_inputs),
            ("process_outputs", process_outputs),
        ):
            if value is not None and not callable(value):
                raise MiddlewareTypeError(
                    f"TracePolicy({name}={value!r}) is not callable; pass a function taking the "
                    "payload and returning what to record (omit_payload records nothing), or "
                    "leave it out to record the payload as it is."
                )
        super().__init__(process_inputs=process_inputs, process_outputs=process_outputs)


def configure_trace_policy(policy: LangGraphTracePolicy | None) -> None:
    """Set the process-wide default ``TracePolicy`` of middleware hook traces.

    A middleware's own ``trace_policy`` replaces it as a whole (no field-by-field merge). It is
    read each time a hook runs, so it applies to agents built before the call too.

    Args:
        policy: The default policy (graphagent's ``TracePolicy`` or langgraph's), or ``None``
            to clear the default.

    Raises:
        MiddlewareError: ``policy`` is neither a ``TracePolicy`` nor ``None``.
    """
    if policy is not None and not isinstance(policy, LangGraphTracePolicy):
        raise MiddlewareTypeError(
            f"configure_trace_policy({policy!r}) got {type(policy).__name__}; pass a "
            "TracePolicy (from graphagent.middleware), or None to clear the default."
        )
    _trace_policy.set_default(policy)
