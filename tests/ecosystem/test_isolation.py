"""The alias of this package's fixture does not outlive it."""

from __future__ import annotations

import importlib
import sys

import pytest

import graphagent
import graphagent.middleware
from tests.ecosystem.conftest import langchain_on_graphagent


def test_the_alias_is_gone_after_the_block() -> None:
    with langchain_on_graphagent():
        agents = importlib.import_module("langchain.agents.middleware")
        assert agents is graphagent.middleware

    assert not any(name.partition(".")[0] == "langchain" for name in sys.modules)
    with pytest.raises(ModuleNotFoundError, match="No module named 'langchain'"):
        importlib.import_module("langchain.agents")
