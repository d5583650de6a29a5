"""Libraries built on LangChain, run on graphagent through ``install_as_langchain()``.

The alias lives only as long as the ``deepagents`` fixture of a test module: it is installed
before deepagents is imported, and afterwards the finder and every ``langchain`` and
``deepagents`` module are taken out again, so no other test module sees them.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator
from types import ModuleType

import pytest

import graphagent

DEEPAGENTS_VERSION = "0.7.32"


@contextlib.contextmanager
def langchain_on_graphagent() -> Iterator[None]:
    """``install_as_langchain()`` for the length of the block, then undone."""
    finders = list(sys.meta_path)
    graphagent.install_as_langchain()
    try:
        yield
    finally:
        sys.meta_path[:] = finders
        for name in list(sys.modules):
            if name.partition(".")[0] in ("langchain", "deepagents"):
                del sys.modules[name]


@pytest.fixture(scope="module")
def deepagents() -> Iterator[ModuleType]:
    """deepagents, imported with ``langchain.*`` resolving to graphagent."""
    with langchain_on_graphagent():
        module = importlib.import_module("deepagents")
        assert module.__version__ == DEEPAGENTS_VERSION
        yield module
