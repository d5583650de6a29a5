"""The LangChain suite's classification (``make langchain-suite``) names only rows the migration
guide has, at most eight, and sorts a run's failures by them."""

from __future__ import annotations

from pathlib import Path

from tests.compat.langchain_suite.__main__ import report
from tests.compat.langchain_suite.deliberate import DELIBERATE

GUIDE = Path(__file__).parents[2] / "docs" / "migrating-from-langchain.md"


def test_each_deliberate_failure_is_a_row_of_the_migration_guide() -> None:
    guide = GUIDE.read_text(encoding="utf-8")
    rows = set(DELIBERATE.values())

    assert len(rows) <= 8
    for row in rows:
        assert f"| {row.split(': ')[0]}" in guide, row


def test_only_failures_neither_private_nor_listed_are_real() -> None:
    results = {
        "a.py::test_jump_to_is_ephemeral": {"outcome": "failed", "kind": "", "error": ""},
        "a.py::test_uses_a_private_helper": {"outcome": "failed", "kind": "private", "error": ""},
        "a.py::test_simple_agent_graph": {"outcome": "failed", "kind": "", "error": ""},
        "a.py::test_fine": {"outcome": "passed", "kind": "", "error": ""},
    }
    assert report(results) == 0

    results["a.py::test_new_behaviour[x]"] = {"outcome": "failed", "kind": "", "error": ""}
    assert report(results) == 1
