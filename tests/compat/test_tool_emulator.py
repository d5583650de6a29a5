"""LangChain 1.5's ``LLMToolEmulator`` without ``model``: deprecated, it warns and emulates with
LangChain's default model, ``"anthropic:claude-sonnet-4-5-20250929"``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from graphagent import create_agent
from graphagent.middleware import LLMToolEmulator
from graphagent.models import MissingIntegrationError
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent
from tests.test_models import install_fake_package, not_installed

WARNING = r"leaving out model \(default 'anthropic:claude-sonnet-4-5-20250929'\) is deprecated"


@tool
def send_email(to: str) -> str:
    """Send an email."""
    raise AssertionError("an emulated tool never runs")


def test_without_a_model_it_emulates_with_langchains_default(
    how_call: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    install_fake_package(monkeypatch, tmp_path, "langchain_anthropic", class_name="ChatAnthropic")
    with pytest.warns(DeprecationWarning, match=WARNING):
        emulator = LLMToolEmulator()
    model = ScriptedChatModel([calls(("send_email", {"to": "ana@example.com"})), "sent"])
    agent = create_agent(model, [send_email], middleware=[emulator])

    result = run_agent(agent, how_call, {"messages": ["mail Ana"]})

    [answer] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert answer.text == "fake answer"  # the fake ChatAnthropic's reply
    assert type(emulator.model) is sys.modules["langchain_anthropic"].ChatAnthropic
    assert emulator.model.model == "claude-sonnet-4-5-20250929"  # type: ignore[attr-defined]


def test_without_langchain_anthropic_it_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    not_installed(monkeypatch, "langchain_anthropic")

    with (
        pytest.warns(DeprecationWarning, match=WARNING),
        pytest.raises(MissingIntegrationError, match="pip install langchain-anthropic"),
    ):
        LLMToolEmulator(tools=["send_email"])
