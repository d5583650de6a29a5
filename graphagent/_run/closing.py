"""Closing an agent's sync stream stops its run at the next step, with the agents inside it.

``_core/langgraph_internals.py``'s ``stop_when_closed`` gives the run its control; this wrapper
drains it when the caller closes the stream, before langgraph's loop waits for the nodes still
running (a thread cannot be cancelled: they end at their next step instead).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from langgraph.runtime import RunControl

from graphagent._core.langgraph_internals import STREAM_CLOSED


def drained_when_closed(chunks: Iterator[Any], control: RunControl | None) -> Iterator[Any]:
    """``chunks``, whose closing drains ``control`` first (``None``: ``chunks`` as they are)."""
    return chunks if control is None else _drained(chunks, control)


def _drained(chunks: Iterator[Any], control: RunControl) -> Iterator[Any]:
    # Not ``yield from``: it would close ``chunks`` before this frame sees the GeneratorExit.
    try:
        for chunk in chunks:  # noqa: UP028 - see above
            yield chunk
    except GeneratorExit:
        control.request_drain(STREAM_CLOSED)
        raise
    finally:
        chunks.close()  # type: ignore[attr-defined]
