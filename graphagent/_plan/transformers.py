"""The stream transformers of an agent's ``stream_events(version="v3")`` runs.

LangGraph's experimental v3 event protocol builds typed projections of a run (``run.values``,
``run.messages``, ...) with ``StreamTransformer``s registered when the graph is compiled. As in
LangChain, an agent registers langgraph's ``ToolCallTransformer`` (``run.tool_calls``) and
``SubagentTransformer`` (``run.subagents``: named agents run inside it), then those its
middleware declare (``InternalCallTransformer`` among them, for a middleware whose own model
calls carry ``internal_call_metadata()`` only), then those given to ``create_agent``; a
transformer met twice is registered once (by identity: factories need not be hashable).
graphagent's built-ins tag their own model calls ``nostream`` as well, which keeps them out of
every stream without a transformer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from langgraph.prebuilt import ToolCallTransformer

from graphagent._core.subagents import SubagentTransformer
from graphagent.errors import MiddlewareTypeError
from graphagent.middleware.base import AgentMiddleware

Factory = Callable[[tuple[str, ...]], Any]


def stream_transformers(
    middleware: Iterable[AgentMiddleware[Any, Any, Any]], extra: Sequence[Factory] | None
) -> list[Factory]:
    """Every transformer the agent registers, in order, each once."""
    found: list[Factory] = [ToolCallTransformer, SubagentTransformer]
    for item in middleware:
        found += _checked(f"'{item.name}'.transformers", item.transformers)
    found += _checked("create_agent(transformers=...)", extra or ())
    unique: dict[int, Factory] = {}
    for factory in found:
        unique.setdefault(id(factory), factory)
    return list(unique.values())


def _checked(where: str, transformers: Any) -> list[Factory]:
    if isinstance(transformers, str | type) or not isinstance(transformers, Iterable):
        raise MiddlewareTypeError(
            f"{where} is {_shown(transformers)}; give a list of StreamTransformer classes or "
            f"factories, even of one: [{_shown(transformers)}]."
        )
    listed = list(transformers)
    for position, factory in enumerate(listed):
        if not callable(factory):
            raise MiddlewareTypeError(
                f"{where}[{position}] is {_shown(factory)}, which is not callable; give a "
                "StreamTransformer class or a factory called as factory(scope)."
            )
    return listed


def _shown(value: Any) -> str:
    return getattr(value, "__name__", None) or f"{value!r} ({type(value).__name__})"
