"""MCP servers as tools: the names and behaviour of LangChain's ``langchain.mcp``, on FastMCP.

``MCPAdapter(target)`` connects to one or several MCP servers and ``list_tools()`` turns their
tools into LangChain tools for ``create_agent``; ``as_langchain_tool`` converts one tool; an
``MCPToolArtifact`` is the artifact of each result's ``ToolMessage``. A server's questions in the
middle of a call become interrupts: :mod:`graphagent.mcp.elicitation` has their types. Errors:
:mod:`graphagent.mcp.errors`. Needs the ``mcp`` extra: ``pip install 'graphagent-langgraph[mcp]'``.

This namespace is in beta, as LangChain's is: importing it emits a ``LangChainBetaWarning`` once
per process, worded as LangChain's. Silence it with
``warnings.filterwarnings("ignore", category=LangChainBetaWarning)``, or around the import with
``langchain_core._api.suppress_langchain_beta_warning()``.
"""

import warnings

from langchain_core._api import LangChainBetaWarning, beta_decorator

try:
    import fastmcp as _fastmcp  # noqa: F401  # the extra's presence, checked before anything else
except ImportError as missing:
    raise ImportError(
        "graphagent.mcp needs FastMCP, which the `mcp` extra installs: "
        "pip install 'graphagent-langgraph[mcp]'"
    ) from missing

from graphagent.mcp.adapter import MCPAdapter
from graphagent.mcp.tools import MCPToolArtifact, as_langchain_tool

# Warned when the module runs, not through `@beta` on each name (which warns only when a name is
# used): the status belongs to the namespace, and importing a submodule runs this module first.
# langchain-core's `suppress_langchain_beta_warning()` sets this context variable; older cores
# have neither.
_suppressing = getattr(beta_decorator, "_SUPPRESSING_LANGCHAIN_BETA_WARNING", None)
if _suppressing is None or not _suppressing.get():
    warnings.warn(
        "`langchain.mcp` is in beta, and so is `graphagent.mcp`, which serves it: the API may "
        "still change.",
        LangChainBetaWarning,
        stacklevel=2,
    )

__all__ = ["MCPAdapter", "MCPToolArtifact", "as_langchain_tool"]
