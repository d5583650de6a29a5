"""What a pip user meets: the distribution's name, its metadata and the version it reports."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

import graphagent
from graphagent._version import DISTRIBUTION

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
# Where install lines are shown to users: docs, README, notebooks, error messages.
USER_TEXT = [ROOT / "README.md", *ROOT.glob("docs/*.md"), *ROOT.glob("notebooks/*.ipynb")]
USER_TEXT += [*ROOT.glob("graphagent/**/*.py"), *ROOT.glob("examples/**/*.py")]
# `pip install graphagent` or `pip install 'graphagent[otel]'`: the unrelated project on the index.
WRONG_INSTALL = re.compile(r"pip install\s+['\"]?graphagent(?![\w-])")


def test_the_distribution_is_the_one_the_package_reads_its_version_from() -> None:
    assert PYPROJECT["name"] == DISTRIBUTION == "graphagent-langgraph"


def test_version_comes_from_the_installed_distribution() -> None:
    assert graphagent.__version__ == metadata.version(DISTRIBUTION) == PYPROJECT["version"]


def test_version_of_a_source_tree_never_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)

    assert graphagent._version.installed_version() == "0+unknown"


def test_install_lines_name_the_distribution() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in USER_TEXT
        for match in WRONG_INSTALL.finditer(path.read_text(encoding="utf-8"))
    ]
    assert WRONG_INSTALL.search("pip install 'graphagent[otel]'")  # the line this test caught
    assert not WRONG_INSTALL.search(f"pip install '{DISTRIBUTION}[otel]'")
    assert not wrong, f"these install the unrelated 'graphagent' from the index: {wrong}"


def test_installed_metadata_names_the_license_authors_and_keywords() -> None:
    installed = metadata.metadata(DISTRIBUTION)

    assert installed["License-Expression"] == "MIT"
    assert installed.get_all("License-File") == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert installed["Author"] == "the graphagent authors"
    assert {"llm", "agents", "langgraph"} <= set(installed["Keywords"].split(","))
    assert installed["Description-Content-Type"] == "text/markdown"  # the README


def test_check_wheel_runs_the_readme_install_lines_as_written() -> None:
    """The README's install from a clone and from a built wheel are the blocks `make
    check-wheel` runs, each in a fresh venv; this keeps the marks and the target together."""
    recipe = (ROOT / "Makefile").read_text(encoding="utf-8").split("\ncheck-wheel:", 1)[1]
    recipe = recipe.split("\n\n", 1)[0]
    assert "for way in clone wheel; do" in recipe
    assert ".ci/readme_block.py README.md $$way" in recipe
    shown = {}
    for way in ("clone", "wheel"):
        printed = subprocess.run(
            [sys.executable, str(ROOT / ".ci" / "readme_block.py"), str(README), way],
            capture_output=True,
            text=True,
            check=True,
        )
        shown[way] = printed.stdout
    assert shown["clone"].startswith("python3 -m pip install .")
    assert "python3 -m build --wheel" in shown["wheel"]
    assert "python3 -m pip install dist/graphagent_langgraph-*.whl" in shown["wheel"]
    assert "pip install graphagent-langgraph " in README.read_text(encoding="utf-8")


def test_the_docs_extra_installs_what_the_api_reference_imports() -> None:
    # `pip install -e '.[docs]' && mkdocs build --strict` on a fresh venv: the reference
    # documents graphagent.mcp, which imports what the `mcp` extra installs.
    extras = PYPROJECT["optional-dependencies"]
    assert set(extras["mcp"]) <= set(extras["docs"])
