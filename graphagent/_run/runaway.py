"""A run stopped by langgraph's recursion limit raises graphagent's error naming the loop.

The two wrappers differ only in how they iterate: a generator cannot be written once for both
kinds of stream. ``yield from`` hands a close or a thrown error on to langgraph's stream; the
async one closes it itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from langgraph.errors import GraphRecursionError

from graphagent._core.ceiling import RunLedger
from graphagent.errors import RunawayRunError


def runaway_named(chunks: Iterator[Any], ledger: RunLedger) -> Iterator[Any]:
    try:
        yield from chunks
    except GraphRecursionError as error:
        if isinstance(error, RunawayRunError):
            raise
        raise ledger.recursion_error(error) from error


async def arunaway_named(chunks: AsyncIterator[Any], ledger: RunLedger) -> AsyncIterator[Any]:
    try:
        async for chunk in chunks:
            yield chunk
    except GraphRecursionError as error:
        if isinstance(error, RunawayRunError):
            raise
        raise ledger.recursion_error(error) from error
    finally:
        await chunks.aclose()  # type: ignore[attr-defined]
