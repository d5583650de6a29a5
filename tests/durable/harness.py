"""Test-side helpers: run a :class:`Turn` in a fresh Python process and read its answer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.durable.agent import Turn

ROOT = Path(__file__).resolve().parents[2]
WORKER_TIMEOUT = 120  # seconds; a sanity bound for a hung worker, not a speed assertion


def start_worker(turn: Turn) -> subprocess.Popen[str]:
    """Start a worker process doing ``turn``; read it with :func:`finish_worker`."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "tests.durable.worker", turn.to_json()],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish_worker(process: subprocess.Popen[str]) -> dict[str, Any]:
    """Wait for a worker and return the thread summary it printed; fail with its stderr."""
    stdout, stderr = _communicate(process)
    assert process.returncode == 0, f"worker exited with {process.returncode}:\n{stderr}"
    return json.loads(stdout)  # type: ignore[no-any-return]


def run_in_worker(turn: Turn) -> dict[str, Any]:
    """Do ``turn`` in a new Python process and return its summary of the thread."""
    return finish_worker(start_worker(turn))


def die_in_worker(turn: Turn) -> None:
    """Do ``turn`` in a new process that must die as ``turn.die_after_tool`` says: killed by
    SIGKILL, or exiting with the model's exception."""
    process = start_worker(turn)
    _, stderr = _communicate(process)
    if turn.die_after_tool == "kill":
        assert process.returncode == -signal.SIGKILL, (
            f"the worker should have killed itself, it exited with {process.returncode}:\n{stderr}"
        )
    else:
        assert process.returncode == 1, f"the worker exited with {process.returncode}:\n{stderr}"
        assert "ProviderDown: the model provider is down" in stderr, stderr


def _communicate(process: subprocess.Popen[str]) -> tuple[str, str]:
    """The worker's output once it has ended; a hung worker is killed, never left behind."""
    try:
        return process.communicate(timeout=WORKER_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
