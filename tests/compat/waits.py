"""Record the waits of the retry middleware without waiting: ``time.sleep`` in sync runs,
``asyncio.sleep`` in async ones, as LangChain 1.5's retry loops wait."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

Waits = list[tuple[str, float]]


def record_waits(monkeypatch: pytest.MonkeyPatch) -> Waits:
    """Every wait longer than 0 asked for from now on, as ``("sync" | "async", seconds)``."""
    recorded: Waits = []
    real_async_sleep = asyncio.sleep

    def sleep(seconds: float) -> None:
        if seconds > 0:
            recorded.append(("sync", seconds))

    async def async_sleep(seconds: float, result: Any = None) -> Any:
        if seconds > 0:
            recorded.append(("async", seconds))
        return await real_async_sleep(0, result)

    monkeypatch.setattr(time, "sleep", sleep)
    monkeypatch.setattr(asyncio, "sleep", async_sleep)
    return recorded


def seconds(waits: Waits, how: str) -> list[float]:
    """The recorded seconds, after checking that a sync run slept and an async run awaited."""
    kind = "async" if how.startswith("a") else "sync"
    assert {k for k, _ in waits} <= {kind}, f"{how} waited with {waits}"
    return [s for _, s in waits]
