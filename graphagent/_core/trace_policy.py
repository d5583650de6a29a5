"""Trace policies in the engine: which policy is in effect for a middleware, and what it records.

The policy in effect for a middleware is its own ``trace_policy``, else the process-wide default
(``configure_trace_policy`` in :mod:`graphagent.middleware.trace_policy`, the public side). Both
are read each time a hook runs, so a default configured after the agent was built still applies.
It shapes:

- the runs langchain-core callbacks (LangSmith) record for the middleware's node hooks, through
  langgraph's ``add_node(trace_policy=...)``;
- the hook spans of ``OtelTracingMiddleware(trace_hooks=True, record_content=True)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from langgraph.types import TracePolicy

from graphagent._core.hooks import CALL_WRAPPERS
from graphagent.errors import MiddlewareError

if TYPE_CHECKING:
    from graphagent._core.agent_facts import Middleware

Field = Literal["process_inputs", "process_outputs"]

_default: TracePolicy | None = None


def set_default(policy: TracePolicy | None) -> None:
    """Make ``policy`` the process-wide default (checked by the caller)."""
    global _default
    _default = policy


def check_trace_policy(middleware: Middleware) -> None:
    """Refuse, when the agent is built, a ``trace_policy`` attribute that is not a policy."""
    policy = middleware.trace_policy
    if policy is not None and not isinstance(policy, TracePolicy):
        raise MiddlewareError(
            f"'{middleware.name}' has trace_policy={policy!r} ({type(policy).__name__}); set it "
            "to a TracePolicy (from graphagent.middleware), e.g. "
            "TracePolicy(process_inputs=omit_payload), or to None."
        )


def effective_policy(middleware: Middleware) -> TracePolicy | None:
    """The middleware's own policy, else the process-wide default."""
    own = middleware.trace_policy
    return own if own is not None else _default


def recorded(middleware: Middleware, field: Field, value: Any) -> Any:
    """What the policy in effect for ``middleware`` records of ``value``: ``value`` itself (the
    same object) when no policy sets ``field``."""
    policy = effective_policy(middleware)
    process = getattr(policy, field) if policy is not None else None
    return value if process is None else process(value)


def node_trace_policy(middleware: Sequence[Middleware]) -> TracePolicy:
    """The policy of the graph node running node hooks of ``middleware``, for langgraph's
    ``add_node``: it looks up the policy in effect for each one each time the node runs. A node
    that runs several middleware's hooks (``fuse_hooks``) records what every one of their
    policies lets through: each processes what the one before it recorded."""
    return TracePolicy(
        process_inputs=partial(_recorded_by_all, middleware, "process_inputs"),
        process_outputs=partial(_recorded_by_all, middleware, "process_outputs"),
    )


def _recorded_by_all(middleware: Sequence[Middleware], field: Field, value: Any) -> Any:
    for item in middleware:
        value = recorded(item, field, value)
    return value


def hook_inputs(hook: str, payload: Any) -> Any:
    """What ``process_inputs`` is given for one call of ``hook``, in the shapes LangChain's traces
    give it: a node hook's state; for a wrap hook, ``{"request": {field: value}}`` with the
    request's fields but its runtime."""
    if hook not in CALL_WRAPPERS or not dataclasses.is_dataclass(payload):
        return payload
    fields = dataclasses.fields(payload)
    return {"request": {f.name: getattr(payload, f.name) for f in fields if f.name != "runtime"}}
