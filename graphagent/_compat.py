"""The one place that reaches into langgraph internals, because no public way exists.

``RunnableCallable`` lets a node carry a sync and an async function without the per-call
tracing overhead of ``RunnableLambda``; langgraph's own nodes are built from it.
"""

from langgraph._internal._runnable import RunnableCallable

__all__ = ["RunnableCallable"]
