"""The parts of the import contract (docs/architecture.md) that ``lint-imports`` cannot see: it
knows which packages a module imports, not which names from langgraph's own modules."""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "graphagent"


def _imports(path: Path) -> Iterator[tuple[str, str]]:
    """``(module, name)`` for every ``from module import name`` of ``path`` (``name`` is ``""``
    for a plain ``import module``), lazy imports and type-checking imports included."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield from ((node.module, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            yield from ((alias.name, "") for alias in node.names)


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _where(path: Path) -> str:
    return path.relative_to(PACKAGE.parent).as_posix()


def test_only_the_build_stage_touches_state_graph() -> None:
    users = {
        _where(path)
        for path in _modules()
        for module, name in _imports(path)
        if module.startswith("langgraph.graph") and name == "StateGraph"
    }
    assert users == {"graphagent/_graph/graph.py"}


def _private(module: str, name: str) -> bool:
    return module.startswith("langgraph") and (
        any(part.startswith("_") for part in module.split(".")) or name.startswith("_")
    )


def test_only_the_compat_adapter_touches_langgraph_internals() -> None:
    users = {
        _where(path)
        for path in _modules()
        for module, name in _imports(path)
        if _private(module, name)
    }
    assert users == {"graphagent/_core/langgraph_internals.py"}


def test_the_plan_stage_builds_nothing() -> None:
    """``compile_plan`` is pure data: it imports no stage after it and nothing of langgraph's
    graph or runtime machinery."""
    for path in (PACKAGE / "_plan").glob("*.py"):
        for module, _ in _imports(path):
            assert not module.startswith(("graphagent._graph", "graphagent._run")), _where(path)
            assert not module.startswith(("langgraph.graph", "langgraph.pregel")), _where(path)


def test_every_folder_is_a_package() -> None:
    """A folder without ``__init__.py`` imports as a namespace package, which the docs' API
    reader cannot follow and a wheel may leave out."""
    folders = {p for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__"}
    assert not [_where(f) for f in folders if not (f / "__init__.py").exists()]


def test_the_package_logger_is_made_once() -> None:
    """Every module logs to ``graphagent`` through ``_core/log.py``'s ``log``; only the LangChain
    shim, which imports none of the engine, names the logger itself. Built-ins may log to their
    own child loggers (``graphagent.middleware.pii``), which the package's configuration covers."""
    makers = {
        _where(path)
        for path in _modules()
        if 'getLogger("graphagent")' in path.read_text(encoding="utf-8")
    }
    assert makers == {"graphagent/_core/log.py", "graphagent/_langchain/install.py"}


def _independent_built_ins() -> set[str]:
    """The modules of the contract keeping built-ins independent (pyproject.toml)."""
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c["type"] == "independence"]
    return {module.removeprefix("graphagent.middleware.") for module in contract["modules"]}


_FRAMEWORK = {"__init__", "base", "decorators", "types", "trace_policy"}
"""The middleware package's public modules that are no built-in."""


def test_nothing_private_sits_at_the_top_of_the_middleware_package() -> None:
    """A built-in's own parts are in its folder (``_pii/``), shared ones in ``_kit/``."""
    middleware = PACKAGE / "middleware"
    assert not [p.name for p in middleware.glob("_*.py") if p.name != "__init__.py"]
    folders = {p.name for p in middleware.glob("_*") if p.is_dir() and p.name != "__pycache__"}
    assert folders - {"_kit"} <= _independent_built_ins()
    assert "_kit" in folders


def test_every_built_in_is_kept_independent_of_the_others() -> None:
    middleware = PACKAGE / "middleware"
    built_ins = {p.stem for p in middleware.glob("*.py") if p.stem not in _FRAMEWORK}
    assert built_ins <= _independent_built_ins()


def test_the_core_types_against_nothing_of_the_middleware_package() -> None:
    """``_core`` reads a middleware through its own ``Middleware`` protocol: not even a
    type-checking import leads from the engine's records back to ``graphagent.middleware``."""
    users = {
        _where(path)
        for path in (PACKAGE / "_core").glob("*.py")
        for module, _ in _imports(path)
        if module.startswith("graphagent.middleware")
    }
    assert not users
