"""Execute every ``notebooks/*.ipynb`` end to end; any erroring cell fails its test."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
KERNEL_NAME = "python3"
CELL_TIMEOUT_S = 120
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def kernel_python(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Make kernel ``python3`` launch this very interpreter (the venv's), whatever else is
    installed on the machine: a kernelspec in a temp dir on ``JUPYTER_PATH`` takes precedence
    over user, venv and system kernelspecs."""
    root = tmp_path_factory.mktemp("jupyter")
    spec_dir = root / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"Python 3 ({sys.prefix})",
        "language": "python",
        # Silences debugpy's "frozen modules" warning on kernel start-up.
        "env": {"PYDEVD_DISABLE_FILE_VALIDATION": "1"},
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(root))
        # Opt in to jupyter_core's platformdirs paths; avoids its DeprecationWarning.
        mp.setenv("JUPYTER_PLATFORM_DIRS", "1")
        argv0 = KernelSpecManager().get_kernel_spec(KERNEL_NAME).argv[0]
        assert argv0 == sys.executable, f"kernel {KERNEL_NAME!r} resolves to {argv0}"
        yield argv0


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path, kernel_python: str) -> None:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        kernel_name=KERNEL_NAME,
        timeout=CELL_TIMEOUT_S,
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
    )
    error = None
    try:
        client.execute()
    except CellExecutionError as exc:
        error = ANSI_ESCAPE.sub("", str(exc))
    if error is not None:  # failed outside the except block: no chained traceback noise
        pytest.fail(f"{path.name}: {error}", pytrace=False)
