"""What a pip user meets: the distribution's name, its metadata and the version it reports."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
DISTRIBUTION = "graphagent-langgraph"
# Where install lines are shown to users: docs, README, notebooks, error messages.
USER_TEXT = [ROOT / "README.md", *ROOT.glob("docs/*.md"), *ROOT.glob("notebooks/*.ipynb")]
USER_TEXT += [*ROOT.glob("graphagent/**/*.py"), *ROOT.glob("examples/**/*.py")]
# `pip install graphagent` or `pip install 'graphagent[otel]'`: the unrelated project on the index.
WRONG_INSTALL = re.compile(r"pip install\s+['\"]?graphagent(?![\w-])")


def test_the_distribution_has_a_name_of_its_own() -> None:
    assert PYPROJECT["name"] == DISTRIBUTION


def test_install_lines_name_the_distribution() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in USER_TEXT
        for match in WRONG_INSTALL.finditer(path.read_text(encoding="utf-8"))
    ]
    assert WRONG_INSTALL.search("pip install 'graphagent[otel]'")  # the line this test caught
    assert not WRONG_INSTALL.search(f"pip install '{DISTRIBUTION}[otel]'")
    assert not wrong, f"these install the unrelated 'graphagent' from the index: {wrong}"
