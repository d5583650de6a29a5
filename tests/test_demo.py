"""``python -m graphagent.demo``: the hook trace, the conversation and the --model path."""

from __future__ import annotations

import pytest

import graphagent
from graphagent.demo import main

MODEL_TURN = """\
M1.before_model
M2.before_model
M3.before_model
M1.wrap_model_call enter
  M2.wrap_model_call enter
    M3.wrap_model_call enter
    M3.wrap_model_call exit
  M2.wrap_model_call exit
M1.wrap_model_call exit
M3.after_model
M2.after_model
M1.after_model
"""

TOOL_TURN = """\
M1.wrap_tool_call enter (add)
  M2.wrap_tool_call enter (add)
    M3.wrap_tool_call enter (add)
    M3.wrap_tool_call exit (add)
  M2.wrap_tool_call exit (add)
M1.wrap_tool_call exit (add)
"""

EXPECTED = (
    "=== middleware=[M1, M2, M3]: execution order ===\n"
    "M1.before_agent\nM2.before_agent\nM3.before_agent\n"
    + MODEL_TURN
    + TOOL_TURN
    + MODEL_TURN
    + "M3.after_agent\nM2.after_agent\nM1.after_agent\n"
    + """
=== conversation ===
human: What is 17 + 25?
   ai: calls add({'a': 17, 'b': 25})
 tool: 42
   ai: 17 + 25 = 42.

=== answer ===
17 + 25 = 42.
"""
)


def test_demo_prints_the_hook_order_and_the_answer(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out, err = capsys.readouterr()
    assert out == EXPECTED
    assert err == ""


def test_model_id_without_init_chat_model_explains_and_exits(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(graphagent, "init_chat_model", raising=False)
    assert main(["--model", "openai:gpt-4o"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert "--model openai:gpt-4o" in err
    assert "init_chat_model" in err
    assert "without --model" in err
