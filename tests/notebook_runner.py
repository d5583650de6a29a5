"""Execute the notebooks in ``notebooks/`` with this interpreter.

The suite executes them and keeps nothing (``tests/test_notebooks.py``); ``make notebooks``
(``python -m tests.notebook_runner``) writes the outputs back into the files, so the notebooks
read well on the web without running them.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
KERNEL_NAME = "python3"
CELL_TIMEOUT_S = 120
# What a committed notebook's metadata holds: nothing that differs between machines.
PORTABLE_METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": KERNEL_NAME},
    "language_info": {"name": "python"},
}


@contextmanager
def this_python_kernel(root: Path, env: Mapping[str, str] | None = None) -> Iterator[None]:
    """Make kernel ``python3`` launch this very interpreter (the venv's), whatever else is
    installed on the machine: a kernelspec under ``root``, put first on ``JUPYTER_PATH``, takes
    precedence over user, venv and system kernelspecs. ``env`` is added to the kernel's."""
    spec_dir = root / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"Python 3 ({sys.prefix})",
        "language": "python",
        # Silences debugpy's "frozen modules" warning on kernel start-up.
        "env": {"PYDEVD_DISABLE_FILE_VALIDATION": "1", **(env or {})},
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
    # JUPYTER_PLATFORM_DIRS opts in to jupyter_core's platformdirs paths (no DeprecationWarning).
    with mock.patch.dict(os.environ, {"JUPYTER_PATH": str(root), "JUPYTER_PLATFORM_DIRS": "1"}):
        argv0 = KernelSpecManager().get_kernel_spec(KERNEL_NAME).argv[0]
        if argv0 != sys.executable:
            raise RuntimeError(f"kernel {KERNEL_NAME!r} resolves to {argv0}, not {sys.executable}")
        yield


def execute(path: Path) -> nbformat.NotebookNode:
    """``path`` run top to bottom in a fresh kernel (inside ``this_python_kernel``); raises
    ``nbclient.exceptions.CellExecutionError`` at the first failing cell."""
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook,
        kernel_name=KERNEL_NAME,
        timeout=CELL_TIMEOUT_S,
        record_timing=False,  # no wall-clock timestamps in the cells' metadata
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
    ).execute()
    return notebook


def unportable(notebook: nbformat.NotebookNode) -> list[str]:
    """What keeps ``notebook`` from being committed as it is: machine-specific metadata, this
    machine's paths in an output, code cells that were not run top to bottom."""
    problems = []
    if notebook.metadata != PORTABLE_METADATA:
        problems.append(f"its metadata is {dict(notebook.metadata)}, not {PORTABLE_METADATA}")
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    counts = [cell.execution_count for cell in code]
    if counts != list(range(1, len(code) + 1)):
        problems.append(f"its code cells were not run top to bottom (execution counts {counts})")
    local_paths = {str(ROOT), sys.prefix}  # where tracebacks and warnings point
    for number, cell in enumerate(code, 1):
        shown = json.dumps(cell.outputs)
        problems += [f"code cell {number} shows {path}" for path in local_paths if path in shown]
    return problems


def regenerate(path: Path) -> None:
    """Run ``path`` and write it back with its outputs and portable metadata."""
    notebook = execute(path)
    notebook.metadata = nbformat.from_dict(PORTABLE_METADATA)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = _joined_streams(cell.outputs)
    problems = unportable(notebook)
    if problems:
        raise SystemExit(f"{path.name} was not written: " + "; ".join(problems))
    nbformat.write(notebook, path)


def _joined_streams(outputs: list[nbformat.NotebookNode]) -> list[nbformat.NotebookNode]:
    """One output per run of printed text: how the kernel happened to split it into messages
    depends on timing, and would change the file on every run."""
    joined: list[nbformat.NotebookNode] = []
    for output in outputs:
        previous = joined[-1] if joined else None
        if (
            previous is not None
            and output.output_type == previous.output_type == "stream"
            and output.name == previous.name
        ):
            previous.text += output.text
        else:
            joined.append(output)
    return joined


def main() -> None:
    with tempfile.TemporaryDirectory() as root, this_python_kernel(Path(root)):
        for path in NOTEBOOKS:
            print(f"running {path.relative_to(ROOT)}", flush=True)
            regenerate(path)


if __name__ == "__main__":
    main()
