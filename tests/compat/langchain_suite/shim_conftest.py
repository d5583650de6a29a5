"""Runs LangChain 1.5.2's own agent tests against graphagent: every langchain.agents import
resolves to graphagent (install_as_langchain), nothing of LangChain is installed.

LangChain-private names a test module imports (``_retry``, ``_fetch_last_ai_and_tool_messages``)
are given placeholders so that the module's other tests still run; a test that uses one fails
with PrivateNameError and is classed "private". Each test's outcome goes to results.json."""

from __future__ import annotations

import ast
import importlib
import json
import re
import sys
import types
from pathlib import Path

import graphagent

graphagent.install_as_langchain()

import pytest  # noqa: E402


class PrivateNameError(Exception):
    pass


class PrivateName:
    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_lc_name", name)

    def __call__(self, *args, **kwargs):
        raise PrivateNameError(self._lc_name)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise PrivateNameError(f"{self._lc_name}.{attr}")

    def __iter__(self):
        raise PrivateNameError(self._lc_name)

    def __repr__(self) -> str:
        return f"<LangChain-private {self._lc_name}>"


class PrivateModule(types.ModuleType):
    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return PrivateName(f"{self.__name__}.{attr}")


def _module(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        # langchain.chat_models.base is private too: graphagent's chat_models is a module
        if name != "langchain.chat_models.base" and not any(
            part.startswith("_") for part in name.split(".")
        ):
            return None
        module = PrivateModule(name)
        module.__path__ = []
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent in sys.modules:
            setattr(sys.modules[parent], child, module)
        return module


def _stand_in_private_names(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("langchain"):
                    _module(alias.name)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("langchain"):
            module = _module(node.module)
            if module is None:
                continue
            for alias in node.names:
                try:
                    getattr(module, alias.name)
                    continue
                except (AttributeError, ImportError):
                    pass
                if alias.name.startswith("_"):
                    setattr(module, alias.name, PrivateName(f"{node.module}.{alias.name}"))


for _path in sorted(Path(__file__).parent.rglob("*.py")):
    try:
        _stand_in_private_names(_path)
    except Exception as error:
        print("shim: could not prepare", _path, error)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--only-extended", action="store_true")
    parser.addoption("--only-core", action="store_true")


RESULTS: dict[str, dict[str, str]] = {}
PRIVATE = re.compile(
    r"PrivateNameError|PrivateName|PrivateModule|LangChain-private|has no attribute '_\w+'"
    r"|does not have the attribute '_\w+'|cannot import name '_\w+'"
    r"|No module named 'langchain\.[\w.]*\._\w+"
    r"|isinstance\([^)]*, _[A-Za-z]\w*\)"
)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" or (report.when == "setup" and not report.passed):
        text = report.longreprtext if report.failed else ""
        kind = "private" if report.failed and PRIVATE.search(text) else ""
        RESULTS[item.nodeid] = {"outcome": report.outcome, "kind": kind, "error": text[-3000:]}


def pytest_sessionfinish(session, exitstatus):
    Path("results.json").write_text(json.dumps(RESULTS, indent=1))
