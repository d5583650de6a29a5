"""Execute every ``notebooks/*.ipynb`` end to end; any erroring cell fails its test. The
committed files keep their outputs (``make notebooks``), so they must also be portable."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError

from tests.notebook_runner import NOTEBOOKS, execute, this_python_kernel, unportable

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
IDS = [p.name for p in NOTEBOOKS]


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    # Agg: figures are drawn but never rendered to images, which only regenerating needs.
    with this_python_kernel(tmp_path_factory.mktemp("jupyter"), env={"MPLBACKEND": "Agg"}):
        yield


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_runs(path: Path, kernel: None) -> None:
    committed = path.read_bytes()
    error = None
    try:
        execute(path)
    except CellExecutionError as exc:
        error = ANSI_ESCAPE.sub("", str(exc))
    if error is not None:  # failed outside the except block: no chained traceback noise
        pytest.fail(f"{path.name}: {error}", pytrace=False)
    assert path.read_bytes() == committed, f"running {path.name} in the suite rewrote it"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_committed_notebook_is_portable(path: Path) -> None:
    problems = unportable(nbformat.read(path, as_version=4))
    assert not problems, f"{path.name}: {'; '.join(problems)} (run `make notebooks`)"
