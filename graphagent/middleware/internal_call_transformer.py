"""Keep the model calls a middleware makes for itself out of what a run streams.

A middleware that calls a model inside a hook (a summarizer, a selector, a classifier) runs the
call with :func:`internal_call_config`: tagged ``nostream`` for ``stream(stream_mode="messages")``
and marked with :func:`internal_call_metadata` for LangGraph's v3 event protocol
(``stream_events(version="v3")``), whose ``run.messages`` leaves it out (``nostream`` sends no
events of it). A middleware marking its calls with :func:`internal_call_metadata` alone declares
``transformers = (InternalCallTransformer,)``, as in LangChain: :class:`InternalCallTransformer`
then drops their events. The names are those of LangChain's
``langchain.agents.middleware.internal_call_transformer``.
"""

from graphagent._core.internal_calls import (
    INTERNAL_CALL_METADATA_KEY,
    InternalCallTransformer,
    internal_call_config,
    internal_call_metadata,
)

__all__ = [
    "INTERNAL_CALL_METADATA_KEY",
    "InternalCallTransformer",
    "internal_call_config",
    "internal_call_metadata",
]
