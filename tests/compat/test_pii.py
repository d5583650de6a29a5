"""LangChain 1.5's ``PIIMiddleware(apply_to_tool_results=True, strategy="mask")``: tool results
are masked in LangChain's formats (graphagent keeps an email's domain rather than its name)."""

from __future__ import annotations

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from graphagent import create_agent
from graphagent.middleware import PIIMiddleware
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent


@pytest.mark.parametrize(
    ("pii_type", "value", "masked"),
    [
        ("credit_card", "4111 1111 1111 1111", "**** **** **** 1111"),
        ("credit_card", "4111-1111-1111-1111", "****-****-****-1111"),
        ("credit_card", "4111111111111111", "************1111"),
        ("credit_card", "3782 822463 10005", "**** **** **** 0005"),  # LangChain's grouping
        ("mac_address", "00-1A-2B-3C-4D-5E", "**-**-**-**-**-5E"),
        ("ip", "192.168.0.7", "*.*.*.7"),
        ("url", "https://example.com/a", "[MASKED_URL]"),
        ("email", "jane.doe@example.com", "j***@example.com"),  # graphagent's: the name hidden
    ],
)
def test_tool_results_are_masked_in_langchains_formats(
    how_call: str, pii_type: str, value: str, masked: str
) -> None:
    @tool
    def lookup(query: str) -> str:
        """Look something up."""
        return f"found {value} here"

    model = ScriptedChatModel([calls(("lookup", {"query": "x"})), "done"])
    middleware = PIIMiddleware(
        pii_type, strategy="mask", apply_to_input=False, apply_to_tool_results=True
    )
    agent = create_agent(model, [lookup], middleware=[middleware])

    result = run_agent(agent, how_call, {"messages": ["go"]})

    [answer] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert answer.text == f"found {masked} here"
