"""Every docs page, and the README, is a session: its ```python blocks run in order in one
namespace, and a ```text block right after a python block must be exactly what it printed.

A block meant to be read, not run, is fenced as ```py instead.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = [*sorted(DOCS.glob("*.md")), README]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_examples_run_and_print_what_they_show(
    page: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(DOCS)
    text = page.read_text(encoding="utf-8")
    blocks = [
        (m.group(1), m.group(2), text[: m.start()].count("\n") + 1) for m in FENCE.finditer(text)
    ]
    module = types.ModuleType(f"docs_{page.stem}")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # dataclasses look their module up
    namespace = module.__dict__
    printed: str | None = None
    for language, body, line in blocks:
        if language == "python":
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                exec(compile(body, f"{page.name}:{line}", "exec"), namespace)
            printed = buffer.getvalue()
        elif language == "text" and printed is not None:
            assert printed == body, f"{page.name}:{line}: the block above prints something else"
            printed = None
        else:
            printed = None


def test_the_readme_opens_with_an_example_that_runs_and_shows_what_it_prints() -> None:
    languages = [m.group(1) for m in FENCE.finditer(README.read_text(encoding="utf-8"))]
    assert languages[:2] == ["python", "text"]
