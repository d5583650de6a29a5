"""The checkpointers a scenario runs with: none, ``InMemorySaver``, ``SqliteSaver`` on a file."""

from __future__ import annotations

import sqlite3
import tempfile
import uuid
from pathlib import Path
from typing import Any

SAVERS = {
    "none": "no checkpointer",
    "memory": "InMemorySaver",
    "sqlite": "SqliteSaver",
}


class Saver:
    """One side's checkpointer of one kind. Every run gets a thread of its own."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._directory: tempfile.TemporaryDirectory[str] | None = None
        self._connection: sqlite3.Connection | None = None
        self.checkpointer: Any = None
        if kind == "memory":
            from langgraph.checkpoint.memory import InMemorySaver

            self.checkpointer = InMemorySaver()
        elif kind == "sqlite":
            from langgraph.checkpoint.sqlite import SqliteSaver

            self._directory = tempfile.TemporaryDirectory(prefix="graphagent-bench-")
            self._connection = sqlite3.connect(self.path, check_same_thread=False)
            self.checkpointer = SqliteSaver(self._connection)

    @property
    def path(self) -> Path:
        if self._directory is None:
            raise ValueError(f"a {self.kind} checkpointer has no file")
        return Path(self._directory.name) / "checkpoints.sqlite"

    def config(self) -> dict[str, Any] | None:
        """The config of one run: a new thread, when there is a checkpointer."""
        if self.checkpointer is None:
            return None
        return {"configurable": {"thread_id": uuid.uuid4().hex}}

    def checkpoints(self, config: dict[str, Any]) -> int:
        """How many checkpoints the thread of ``config`` holds."""
        return sum(1 for _ in self.checkpointer.list(config))

    def close(self) -> int:
        """Close it; returns the bytes its file holds then (0 without a file)."""
        size = 0
        if self._connection is not None:
            self._connection.close()  # folds the write-ahead log into the file
            size = sum(p.stat().st_size for p in self.path.parent.iterdir())
        if self._directory is not None:
            self._directory.cleanup()
        return size
