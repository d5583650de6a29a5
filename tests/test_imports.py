"""What ``import graphagent`` loads: the core, not the built-ins, which load on first use."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import textwrap
from pathlib import Path

import langgraph.runtime
import pytest

import graphagent.middleware as middleware


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_building_an_agent_loads_no_built_in() -> None:
    loaded = _run(
        """
        import sys
        from graphagent import create_agent
        from graphagent.middleware import before_model
        from graphagent.testing import ScriptedChatModel

        @before_model
        def log(state, runtime):
            pass

        create_agent(ScriptedChatModel(["hi"]), middleware=[log]).invoke({"messages": ["hi"]})
        core = ("base", "decorators")
        print(sorted(name for name in sys.modules
                     if name.startswith("graphagent.middleware.")
                     and name.rsplit(".", 1)[1] not in core))
        """
    )
    assert loaded == "[]"


def test_a_broken_built_in_breaks_only_its_own_import() -> None:
    out = _run(
        """
        import sys
        sys.modules["graphagent.middleware.todo"] = None  # importing it now fails
        from graphagent import create_agent
        from graphagent.middleware import ModelCallLimitMiddleware
        from graphagent.testing import ScriptedChatModel

        limit = ModelCallLimitMiddleware(run_limit=2)
        agent = create_agent(ScriptedChatModel(["hi"]), middleware=[limit])
        print(agent.invoke({"messages": ["hi"]})["messages"][-1].content)
        try:
            from graphagent.middleware import TodoListMiddleware
        except ImportError:
            print("TodoListMiddleware: ImportError")
        """
    )
    assert out.splitlines() == ["hi", "TodoListMiddleware: ImportError"]


def test_every_exported_name_resolves() -> None:
    for name in middleware.__all__:
        assert getattr(middleware, name) is not None, name
    assert set(middleware.__all__) <= set(dir(middleware))


def test_a_name_that_is_not_exported_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchMiddleware"):
        middleware.NoSuchMiddleware  # type: ignore[attr-defined]  # noqa: B018


def test_runtime_is_langgraphs_as_in_langchain() -> None:
    assert middleware.Runtime is langgraph.runtime.Runtime


def _type_checking_imports() -> dict[str, set[str]]:
    """What the ``if _TYPE_CHECKING:`` block of ``graphagent.middleware`` imports, by module."""
    tree = ast.parse(Path(middleware.__file__).read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "_TYPE_CHECKING"
    )
    imported: dict[str, set[str]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom), ast.unparse(node)
        assert node.module, ast.unparse(node)
        module = node.module.removeprefix("graphagent.middleware.")
        for alias in node.names:
            assert alias.asname == alias.name, f"{alias.name} must be re-exported `as` itself"
            imported.setdefault(module, set()).add(alias.name)
    return imported


def _lazy_table() -> dict[str, set[str]]:
    table: dict[str, set[str]] = {}
    for name, module in middleware._built_ins().items():
        table.setdefault(module, set()).add(name)
    return table


def test_the_type_checking_imports_are_the_lazy_table() -> None:
    """The built-ins are listed once, as imports type checkers read; the package loads them from
    that list, so the two cannot disagree."""
    assert _type_checking_imports() == _lazy_table()
    assert len(_lazy_table()) >= 25


@pytest.mark.parametrize("module", sorted(_lazy_table()))
def test_each_built_in_module_exports_what_the_table_says_it_gives(module: str) -> None:
    loaded = importlib.import_module(f"graphagent.middleware.{module}")
    assert _lazy_table()[module] <= set(loaded.__all__)


def test_the_package_exports_its_eager_names_and_every_built_in() -> None:
    lazy = set(middleware._built_ins())
    eager = set(middleware.__all__) - lazy
    assert {"AgentMiddleware", "before_model", "ModelRequest", "AgentState"} <= eager
    assert all(not name.startswith("_") for name in middleware.__all__)
    assert middleware.__all__ == sorted(middleware.__all__)
