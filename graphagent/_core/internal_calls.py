"""Keep the model calls a middleware makes for itself out of what a run streams.

A summarizer, a tool selector, a tool emulator or a classifier calls a model inside a hook. Its
replies are not the agent's and must not reach the caller as if they were:

- for ``stream(stream_mode="messages")``, such a call is tagged ``nostream``;
- for LangGraph's v3 event protocol (``stream_events(version="v3")``), it carries
  :func:`internal_call_metadata`, and :class:`InternalCallTransformer` drops its events from the
  run's event log and from ``run.messages``.

:func:`internal_call_config` gives both; graphagent's built-ins call their models with it. An
agent registers the transformer when a middleware declares it (``transformers``), as in
LangChain; ``nostream`` alone already keeps a call out of ``run.messages``. Users import these
names from ``graphagent.middleware.internal_call_transformer``, the path of LangChain's module,
so middleware written for it moves over by changing the import.
"""

from __future__ import annotations

import secrets
from typing import Any, ClassVar

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.constants import TAG_NOSTREAM
from langgraph.stream import StreamTransformer

__all__ = [
    "INTERNAL_CALL_METADATA_KEY",
    "InternalCallTransformer",
    "internal_call_config",
    "internal_call_metadata",
]

INTERNAL_CALL_METADATA_KEY = "lc_internal_call"
"""The metadata key that marks a model call as internal to a middleware."""

# Known only to this process, so a caller's own metadata cannot hide a real model call.
_TOKEN = secrets.token_hex(16)


def internal_call_metadata() -> dict[str, Any]:
    """The metadata that marks a model call as internal: merge it into the call's config.

    Returns:
        ``{INTERNAL_CALL_METADATA_KEY: <this process's token>}``.
    """
    return {INTERNAL_CALL_METADATA_KEY: _TOKEN}


def internal_call_config(run_name: str, source: str | None = None) -> RunnableConfig:
    """The config of a middleware's own model call: tagged ``nostream`` and marked internal.

    Args:
        run_name: The name the call's run gets in traces, such as ``"summarize_conversation"``.
        source: Stored as the ``lc_source`` metadata (``"summarization"``, ...), as LangChain's
            built-ins do; left out when ``None``.

    Returns:
        A config to pass to ``model.invoke(..., config=...)``.
    """
    metadata = internal_call_metadata()
    if source is not None:
        metadata["lc_source"] = source
    return {"run_name": run_name, "tags": [TAG_NOSTREAM], "metadata": metadata}


class InternalCallTransformer(StreamTransformer):
    """Drops the events of internal model calls from a v3 run's event log and ``run.messages``.

    It runs before LangGraph's built-in transformers: the first event of an internal call is
    turned into one ``run.messages`` ignores, and every event of the call is then dropped. Only
    calls within the transformer's own namespace are touched (a nested agent registers its own).

    Args:
        scope: The namespace of the run stream it serves (``()`` for the root).
    """

    before_builtins: ClassVar[bool] = True
    required_stream_modes: ClassVar[tuple[str, ...]] = ("messages",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._namespace = list(scope)

    def init(self) -> dict[str, Any]:
        """No projection of its own: it only removes events."""
        return {}

    def process(self, event: Any) -> bool:
        """``False`` (drop it) for an event of an internal call in this namespace."""
        if event["method"] != "messages":
            return True
        params = event["params"]
        if params["namespace"] != self._namespace:
            return True
        payload, metadata = params["data"]
        if not metadata or metadata.get(INTERNAL_CALL_METADATA_KEY) != _TOKEN:
            return True
        if isinstance(payload, dict) and payload.get("event") == "message-start":
            payload["role"] = "tool"  # run.messages follows assistant messages only
        elif isinstance(payload, BaseMessage):
            params["data"] = (None, metadata)
        return False
