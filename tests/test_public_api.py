"""The public surface: every name the five public modules export."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import pkgutil
import re
import textwrap
import typing
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool
from typing_extensions import is_typeddict

from graphagent import GraphAgentError

PUBLIC_MODULES = (
    "graphagent",
    "graphagent.middleware",
    "graphagent.structured_output",
    "graphagent.testing",
    "graphagent.storage",
)
PUBLIC = sorted(
    {
        f"{module}.{name}": getattr(importlib.import_module(module), name)
        for module in PUBLIC_MODULES
        for name in importlib.import_module(module).__all__
    }.items()
)


def _is_error(value: Any) -> bool:
    return (
        isinstance(value, type)
        and issubclass(value, BaseException)
        and not issubclass(value, Warning)
    )


ERRORS = [(name, value) for name, value in PUBLIC if _is_error(value)]


@pytest.mark.parametrize(("name", "error"), ERRORS, ids=[name for name, _ in ERRORS])
def test_every_exported_error_is_a_graphagent_error(name: str, error: type) -> None:
    assert issubclass(error, GraphAgentError), f"{name} escapes `except GraphAgentError`"


# -- docstrings ---------------------------------------------------------------------------------
# The API reference (mkdocs.yml, docs/reference/) is generated from these docstrings, in Google
# style: a parameter is documented by an entry of an "Args:" or "Attributes:" section, or, for a
# field, by the string right below it.

_SECTIONS = ("Args:", "Attributes:")
_ENTRY = re.compile(r"\**(\w+)(?: \([^)]*\))?:(?:\s|$)")


def _entries(doc: str | None) -> set[str]:
    """The names an "Args:" or "Attributes:" section of ``doc`` documents."""
    lines = inspect.cleandoc(doc or "").splitlines()
    names: set[str] = set()
    for start, line in enumerate(lines):
        if line.strip() not in _SECTIONS:
            continue
        section_depth = _depth(line)
        entry_depth: int | None = None
        for entry in lines[start + 1 :]:
            if not entry.strip():
                continue
            if _depth(entry) <= section_depth:
                break
            entry_depth = entry_depth or _depth(entry)
            match = _ENTRY.match(entry.strip())
            if _depth(entry) == entry_depth and match:
                names.add(match.group(1))
    return names


def _depth(line: str) -> int:
    return len(line) - len(line.lstrip())


def _ours(value: Any) -> bool:
    return str(getattr(value, "__module__", "")).startswith("graphagent")


def _lineage(cls: type) -> list[type]:
    """``cls`` and the graphagent classes it derives from (TypedDict bases included)."""
    found: list[type] = []
    pending = [cls]
    while pending:
        current = pending.pop()
        if isinstance(current, type) and _ours(current) and current not in found:
            found.append(current)
            pending += current.__mro__[1:]
            pending += [typing.get_origin(b) or b for b in getattr(current, "__orig_bases__", ())]
    return found


def _field_docstrings(cls: type) -> set[str]:
    """The fields of ``cls`` (and of its graphagent bases) with a string right below them."""
    documented: set[str] = set()
    for owner in _lineage(cls):
        body = ast.parse(textwrap.dedent(inspect.getsource(owner))).body[0]
        assert isinstance(body, ast.ClassDef)
        documented |= _documented_assignments(body.body)
    return documented


def _documented_assignments(statements: list[ast.stmt]) -> set[str]:
    return {name for name, doc in _assignments(statements).items() if doc}


def _assignments(statements: list[ast.stmt]) -> dict[str, bool]:
    """Each name assigned among ``statements``, and whether a string follows the assignment."""
    assigned: dict[str, bool] = {}
    for statement, following in zip(statements, [*statements[1:], None], strict=True):
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if isinstance(statement, ast.AnnAssign):
            targets = [statement.target]
        documented = (
            isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        )
        for target in targets:
            if isinstance(target, ast.Name):
                assigned[target.id] = assigned.get(target.id, False) or documented
    return assigned


def _module_assignments() -> dict[str, bool]:
    """Module-level names graphagent assigns, and whether a string follows one of them."""
    package = importlib.import_module("graphagent")
    assigned: dict[str, bool] = {}
    for module in pkgutil.walk_packages(package.__path__, "graphagent."):
        spec = importlib.util.find_spec(module.name)
        assert spec is not None
        assert spec.origin is not None
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
        for name, documented in _assignments(tree.body).items():
            assigned[name] = assigned.get(name, False) or documented
    return assigned


def _own_doc(value: Any) -> str | None:
    """The docstring ``value`` has itself (not one inherited, nor a dataclass's signature)."""
    doc = value.__dict__.get("__doc__") if isinstance(value, type) else value.__doc__
    if isinstance(value, type) and doc and doc.startswith(f"{value.__name__}("):
        return None  # what @dataclass writes when the class has no docstring
    return doc if isinstance(doc, str) and doc.strip() else None


def _parameters(value: Any) -> list[str]:
    """What a caller passes: a function's parameters, a class's constructor arguments."""
    if not isinstance(value, type):
        return _signature(value)
    if is_typeddict(value):
        return list(value.__annotations__)
    if _takes_fields(value):
        declared = {n for c in _lineage(value) for n in inspect.get_annotations(c)}
        return [f.name for f in dataclasses.fields(value) if f.init and f.name in declared]
    init = next((c.__dict__["__init__"] for c in value.__mro__ if "__init__" in c.__dict__), None)
    return _signature(init)[1:] if _ours(init) else []  # without self


def _takes_fields(cls: type) -> bool:
    """Whether the constructor takes the class's fields (a TypedDict, a dataclass)."""
    return is_typeddict(cls) or dataclasses.is_dataclass(cls)


def _is_called(value: Any) -> bool:
    """A class, a function, or a callable object of graphagent's (the hook decorators)."""
    return (
        inspect.isclass(value)
        or inspect.isfunction(value)
        or (callable(value) and _ours(type(value)))
    )


def _signature(function: Any) -> list[str]:
    return list(inspect.signature(function).parameters)


MODULE_ASSIGNMENTS = _module_assignments()
# Classes, functions and the hook decorators carry their docstrings; type aliases, type variables
# and constants have theirs right below their assignment. ContextT, Runtime, ToolCallRequest,
# ToolCallWrapper and omit_payload are LangGraph's, re-exported: LangGraph documents them (the
# reference describes them in prose).
LANGGRAPHS = {"ContextT", "Runtime", "ToolCallRequest", "ToolCallWrapper", "omit_payload"}
CALLED = [(name, value) for name, value in PUBLIC if _is_called(value) and _ours(value)]
VALUES = [
    (name, value)
    for name, value in PUBLIC
    if not _is_called(value) and name.rsplit(".", 1)[1] in MODULE_ASSIGNMENTS
]
TOOLS = [(name, value) for name, value in PUBLIC if isinstance(value, BaseTool)]


@pytest.mark.parametrize(("name", "value"), CALLED, ids=[name for name, _ in CALLED])
def test_every_public_class_and_function_has_a_docstring(name: str, value: Any) -> None:
    assert _own_doc(value), f"{name} has no docstring"


@pytest.mark.parametrize("name", [name for name, _ in VALUES])
def test_every_public_value_has_a_docstring(name: str) -> None:
    assert MODULE_ASSIGNMENTS[name.rsplit(".", 1)[1]], (
        f"{name} has no docstring: put a string right below its assignment"
    )


@pytest.mark.parametrize(("name", "tool"), TOOLS, ids=[name for name, _ in TOOLS])
def test_every_public_tool_has_a_description(name: str, tool: BaseTool) -> None:
    assert tool.description.strip(), f"{name} has no description"


@pytest.mark.parametrize(("name", "value"), CALLED, ids=[name for name, _ in CALLED])
def test_every_parameter_is_documented(name: str, value: Any) -> None:
    documented = _entries(_own_doc(value))
    if isinstance(value, type):
        if _takes_fields(value):
            documented |= _field_docstrings(value)
        for owner in _lineage(value):
            documented |= _entries(owner.__dict__.get("__doc__"))
            documented |= _entries(getattr(owner.__dict__.get("__init__"), "__doc__", None))
    missing = [p for p in _parameters(value) if p not in documented]
    assert not missing, (
        f"{name} does not document {missing}: add them to an 'Args:' section of its docstring"
    )


def test_the_only_names_left_out_are_langgraphs() -> None:
    checked = {name for name, _ in CALLED + VALUES + TOOLS}
    left_out = {name.rsplit(".", 1)[1] for name, _ in PUBLIC if name not in checked}
    assert left_out == LANGGRAPHS


# -- the API reference --------------------------------------------------------------------------

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference"
RENDERED = re.compile(r"^::: ([\w.]+)$", re.M)


def test_the_api_reference_shows_every_public_name() -> None:
    shown = {
        identifier.rsplit(".", 1)[1]
        for page in REFERENCE.glob("*.md")
        for identifier in RENDERED.findall(page.read_text(encoding="utf-8"))
    }
    missing = [name for name, _ in PUBLIC if name.rsplit(".", 1)[1] not in shown | LANGGRAPHS]
    assert not missing, (
        f"{missing} are not in the API reference: add a '::: <module>.<name>' line for each to "
        "a page of docs/reference/ (a new built-in goes in built-ins.md)"
    )


@pytest.mark.parametrize("module", ["graphagent", "graphagent.errors"])
def test_a_name_never_emitted_still_imports_with_a_deprecation_warning(module: str) -> None:
    with pytest.warns(DeprecationWarning, match="HooklessMiddlewareWarning is deprecated"):
        hookless = importlib.import_module(module).HooklessMiddlewareWarning

    assert issubclass(hookless, UserWarning)
    assert hookless.__name__ == "HooklessMiddlewareWarning"
    assert "HooklessMiddlewareWarning" not in importlib.import_module("graphagent").__all__
    with pytest.raises(AttributeError, match="NoSuchWarning"):
        importlib.import_module(module).NoSuchWarning  # noqa: B018
