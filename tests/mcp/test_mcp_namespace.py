"""``graphagent.mcp`` itself: its names, the beta warning its import emits as LangChain's
``langchain.mcp`` does, and the error naming the extra when FastMCP is missing."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest
from langchain_core._api import (
    LangChainBetaWarning,
    beta_decorator,
    suppress_langchain_beta_warning,
)

import graphagent.mcp


def reimported() -> list[warnings.WarningMessage]:
    """The warnings of running the module again (it ran once, when this test module imported
    it, and a module runs once per process)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        importlib.reload(graphagent.mcp)
    return [w for w in caught if issubclass(w.category, LangChainBetaWarning)]


def test_importing_it_warns_once_that_it_is_in_beta_pointing_at_the_importer() -> None:
    [warning] = reimported()

    assert str(warning.message) == (
        "`langchain.mcp` is in beta, and so is `graphagent.mcp`, which serves it: the API may "
        "still change."
    )
    assert warning.filename == importlib.__file__  # the line that imported it: reload's


def test_the_warning_can_be_silenced_by_a_filter() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=LangChainBetaWarning)
        importlib.reload(graphagent.mcp)

    assert [w for w in caught if issubclass(w.category, LangChainBetaWarning)] == []


def test_the_warning_is_suppressed_inside_langchain_cores_context() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", LangChainBetaWarning)
        with suppress_langchain_beta_warning():
            importlib.reload(graphagent.mcp)
            with suppress_langchain_beta_warning():
                importlib.reload(graphagent.mcp)
            importlib.reload(graphagent.mcp)
        with pytest.raises(LangChainBetaWarning, match="is in beta"):
            importlib.reload(graphagent.mcp)


def test_a_core_without_that_context_still_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(beta_decorator, "_SUPPRESSING_LANGCHAIN_BETA_WARNING", raising=False)

    assert len(reimported()) == 1


def test_it_exports_langchains_names_and_they_survive_the_warning() -> None:
    reimported()

    assert sorted(graphagent.mcp.__all__) == ["MCPAdapter", "MCPToolArtifact", "as_langchain_tool"]
    for name in graphagent.mcp.__all__:
        assert getattr(graphagent.mcp, name) is not None


def test_without_fastmcp_the_import_error_names_the_extra() -> None:
    code = "import sys; sys.modules['fastmcp'] = None; import graphagent.mcp"
    process = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert process.returncode == 1
    assert process.stderr.strip().endswith(
        "ImportError: graphagent.mcp needs FastMCP, which the `mcp` extra installs: "
        "pip install 'graphagent-langgraph[mcp]'"
    )


def test_install_as_langchain_makes_langchain_mcp_this_module() -> None:
    code = """
import asyncio, warnings
warnings.simplefilter("ignore")
import graphagent
graphagent.install_as_langchain()
import graphagent.mcp, graphagent.mcp.elicitation, graphagent.mcp.adapter, graphagent.mcp.tools
import langchain.mcp, langchain.mcp.elicitation, langchain.mcp.adapter, langchain.mcp.tools
from langchain.agents import create_agent
from langchain.mcp import MCPAdapter
from langchain.mcp.elicitation import ELICITATION_INTERRUPT_TYPE
from langgraph.checkpoint.memory import InMemorySaver
from graphagent.testing import ScriptedChatModel, calls
from tests.mcp import servers

assert langchain.mcp is graphagent.mcp
assert langchain.mcp.elicitation is graphagent.mcp.elicitation
assert langchain.mcp.adapter is graphagent.mcp.adapter
assert langchain.mcp.tools is graphagent.mcp.tools
tools = asyncio.run(MCPAdapter(servers.process_server(servers.Counts())).list_tools())
model = ScriptedChatModel([calls(("book_table", {})), "done"])
agent = create_agent(model, tools, checkpointer=InMemorySaver())
paused = agent.invoke({"messages": [("user", "Book")]}, {"configurable": {"thread_id": "t"}})
print(paused["__interrupt__"][0].value["type"] == ELICITATION_INTERRUPT_TYPE)
"""
    process = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )

    assert process.returncode == 0, process.stderr
    assert process.stdout.strip() == "True"
