"""LangChain 1.5's ``RedactionRule``: one type of personal data and what becomes of it, as a
value of its own (``resolve()``, then ``apply(text)``); it redacts exactly as ``PIIMiddleware``
with the same ``pii_type``, ``strategy`` and ``detector`` does, and ``ShellToolMiddleware``
applies a list of them to command output."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from graphagent import MiddlewareError, create_agent
from graphagent.middleware import (
    PIIDetectionError,
    PIIMatch,
    PIIMiddleware,
    RedactionRule,
    ShellToolMiddleware,
)
from graphagent.testing import ScriptedChatModel, calls
from tests.compat.test_shell_tool import agent_for, replies, run, shell
from tests.conftest import run_agent

EMAIL = "jane.doe@example.com"
CARD = "4111 1111 1111 1111"  # passes the Luhn check
TEXT = f"Mail {EMAIL} about card {CARD}, key sk-abcdef123456."


def api_keys(text: str) -> list[PIIMatch]:
    """A function detector (its value is left empty: the rule reads it off the text)."""
    start = text.find("sk-")
    return [] if start < 0 else [PIIMatch(type="key", value="", start=start, end=start + 15)]


RULES = [
    RedactionRule("email"),
    RedactionRule("email", strategy="mask"),
    RedactionRule("credit_card", strategy="hash"),
    RedactionRule("api_key", detector=r"sk-[A-Za-z0-9]{8,}"),
    RedactionRule("key", strategy="mask", detector=api_keys),
]


def test_a_rule_is_a_frozen_value_with_langchains_fields_and_defaults() -> None:
    rule = RedactionRule("email")

    assert (rule.pii_type, rule.strategy, rule.detector) == ("email", "redact", None)
    assert rule == RedactionRule(pii_type="email", strategy="redact", detector=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rule.strategy = "mask"  # type: ignore[misc]


def test_apply_returns_the_rewritten_text_and_the_matches() -> None:
    resolved = RedactionRule("email").resolve()

    text, matches = resolved.apply(TEXT)

    assert text == f"Mail [REDACTED_EMAIL] about card {CARD}, key sk-abcdef123456."
    assert matches == [PIIMatch(type="email", value=EMAIL, start=5, end=5 + len(EMAIL))]
    assert (resolved.pii_type, resolved.strategy) == ("email", "redact")


def test_text_without_a_match_comes_back_as_it_was() -> None:
    text, matches = RedactionRule("credit_card").resolve().apply("nothing here")

    assert (text, matches) == ("nothing here", [])


def test_block_raises_pii_detection_error_with_the_matches() -> None:
    rule = RedactionRule("email", strategy="block").resolve()

    with pytest.raises(PIIDetectionError) as caught:
        rule.apply(TEXT)

    assert caught.value.pii_type == "email"
    assert [m["value"] for m in caught.value.matches] == [EMAIL]
    assert EMAIL not in str(caught.value)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: f"{r.pii_type}-{r.strategy}")
def test_a_rule_rewrites_user_messages_as_pii_middleware_does(
    rule: RedactionRule, how_call: str
) -> None:
    model = ScriptedChatModel(["ok"])
    middleware = PIIMiddleware(rule.pii_type, strategy=rule.strategy, detector=rule.detector)
    result = run_agent(create_agent(model, middleware=[middleware]), how_call, {"messages": [TEXT]})

    expected, matches = rule.resolve().apply(TEXT)
    assert matches
    assert result["messages"][0].content == expected
    assert model.calls[0].messages[0].content == expected


@tool
def lookup(name: str) -> str:
    """Look a person up."""
    return f"{name}: {TEXT}"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: f"{r.pii_type}-{r.strategy}")
def test_one_list_of_rules_can_configure_pii_middleware_for_tool_results(
    rule: RedactionRule, how_call: str
) -> None:
    model = ScriptedChatModel([calls(("lookup", {"name": "Jane"})), "Found her."])
    middleware = PIIMiddleware(
        rule.pii_type,
        strategy=rule.strategy,
        detector=rule.detector,
        apply_to_input=False,
        apply_to_tool_results=True,
    )
    agent = create_agent(model, [lookup], middleware=[middleware])
    result = run_agent(agent, how_call, {"messages": ["Find Jane"]})

    answer = result["messages"][2]
    assert isinstance(answer, ToolMessage)
    assert answer.content == rule.resolve().apply(f"Jane: {TEXT}")[0]


def test_block_stops_pii_middleware_and_the_rule_alike(how_call: str) -> None:
    rule = RedactionRule("email", strategy="block")
    model = ScriptedChatModel(["ok"])
    agent = create_agent(model, middleware=[PIIMiddleware("email", strategy="block")])

    with pytest.raises(PIIDetectionError):
        run_agent(agent, how_call, {"messages": [TEXT]})
    with pytest.raises(PIIDetectionError):
        rule.resolve().apply(TEXT)
    assert model.calls == []


def test_the_shell_tool_applies_rules_to_command_output(how_call: str) -> None:
    rules = [RedactionRule("email", strategy="hash"), RedactionRule("credit_card")]
    command = shell(f"echo '{TEXT}'")

    (reply,) = replies(
        run(agent_for(ShellToolMiddleware(redaction_rules=rules), [command]), how_call)
    )

    expected = TEXT
    for rule in rules:
        expected = rule.resolve().apply(expected)[0]
    assert reply.content == expected + "\n"
    assert [m["value"] for m in reply.artifact["redaction_matches"]["email"]] == [EMAIL]


def test_a_blocking_rule_keeps_the_output_from_the_model(how_call: str) -> None:
    rule = RedactionRule("api_key", strategy="block", detector=r"sk-[A-Za-z0-9]{8,}")
    agent = agent_for(ShellToolMiddleware(redaction_rules=[rule]), [shell(f"echo '{TEXT}'")])

    (reply,) = replies(run(agent, how_call))

    assert (reply.content, reply.status) == ("Output blocked: detected api_key.", "error")
    assert [m["value"] for m in reply.artifact["matches"]["api_key"]] == ["sk-abcdef123456"]


# -- bad input ------------------------------------------------------------------------------------


def test_the_shell_tool_refuses_what_is_not_a_rule() -> None:
    with pytest.raises(MiddlewareError, match=r"ShellToolMiddleware: the redaction rule 'email'"):
        ShellToolMiddleware(redaction_rules=["email"])


def test_a_misspelled_argument_names_the_class_and_the_closest_name() -> None:
    with pytest.raises(
        TypeError, match=r"RedactionRule.__init__\(\) .* 'stratgy'; did you mean 'strategy'"
    ):
        RedactionRule("email", stratgy="mask")  # type: ignore[call-arg]
    with pytest.raises(
        TypeError, match=r"PIIMiddleware.__init__\(\) .* 'detektor'; did you mean 'detector'"
    ):
        PIIMiddleware("email", detektor=r"\d+")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("passport",), r"pii_type='passport' is not a built-in type.*detector="),
        (("email", "shred"), r"strategy='shred' is unknown"),
        (("key", "redact", "sk-[unclosed"), r"not a valid regular expression"),
        (("",), r"pii_type='' must be a non-empty string"),
    ],
)
def test_a_rule_that_cannot_work_fails_when_made(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        RedactionRule(*args)

    assert "RedactionRule" in str(caught.value)


def test_apply_takes_text() -> None:
    with pytest.raises(TypeError, match=r"apply\(\) takes a str, got list"):
        RedactionRule("email").resolve().apply([EMAIL])  # type: ignore[arg-type]
