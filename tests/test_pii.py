"""PIIMiddleware: detectors, strategies, where it looks, and what reaches the token stream."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command
from pydantic import BaseModel, field_validator

from graphagent import create_agent
from graphagent.errors import MiddlewareError
from graphagent.middleware.final_answer_filter import FinalAnswerFilterMiddleware
from graphagent.middleware.model_fallback import ModelFallbackMiddleware
from graphagent.middleware.model_retry import ModelRetryMiddleware
from graphagent.middleware.pii import (
    PIIDetectionError,
    PIIMatch,
    PIIMiddleware,
    detect_credit_card,
    detect_email,
    detect_ip,
    detect_mac_address,
    detect_url,
)
from graphagent.middleware.tool_error import ToolErrorMiddleware
from graphagent.middleware.tool_retry import ToolRetryMiddleware
from graphagent.structured_output import ToolStrategy
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run, run_agent

EMAIL = "jane.doe@example.com"
CARD = "4111 1111 1111 1111"  # passes the Luhn check
EMAIL_DIGEST = hashlib.sha256(EMAIL.encode()).hexdigest()[:8]
QUESTION = {"messages": [("user", f"Mail {EMAIL} about card {CARD}.")]}


def values(text: str, found: list[PIIMatch]) -> list[str]:
    assert all(text[m["start"] : m["end"]] == m["value"] for m in found)
    return [m["value"] for m in found]


def stream_messages(agent: Any, how: str, inputs: Any = QUESTION) -> list[tuple[Any, Any]]:
    """``(chunk, metadata)`` pairs of ``stream_mode="messages"`` through stream or astream."""
    if how == "stream":
        return list(agent.stream(inputs, stream_mode="messages"))

    async def collect() -> list[tuple[Any, Any]]:
        return [item async for item in agent.astream(inputs, stream_mode="messages")]

    return asyncio.run(collect())


def streamed_text(items: list[tuple[Any, Any]]) -> str:
    """Everything a caller could read in the items: contents and tool-call arguments."""
    parts = []
    for chunk, _ in items:
        parts.append(str(chunk.content))
        parts += [str(c["args"]) for c in getattr(chunk, "tool_call_chunks", [])]
    return "\n".join(parts)


# -- detectors ------------------------------------------------------------------------------


def test_detect_email() -> None:
    text = f"write to {EMAIL} or to a+b@mail.co.uk, not to @nobody or x@y"
    assert values(text, detect_email(text)) == [EMAIL, "a+b@mail.co.uk"]


@pytest.mark.parametrize(
    "number",
    ["4111 1111 1111 1111", "4111-1111-1111-1111", "4111111111111111", "3782 822463 10005"],
)
def test_detect_credit_card_finds_numbers_passing_luhn(number: str) -> None:
    text = f"card: {number}."
    assert values(text, detect_credit_card(text)) == [number]
    assert detect_credit_card(text)[0]["type"] == "credit_card"


@pytest.mark.parametrize(
    "number",
    ["4111 1111 1111 1112", "4111111111111121", "1234-5678-9012-3456", "4111 1111-1111 1111"],
)
def test_detect_credit_card_ignores_numbers_failing_luhn_or_mixed_grouping(number: str) -> None:
    assert detect_credit_card(f"card: {number}.") == []


def test_detect_ip() -> None:
    text = "hosts 10.0.0.1, 2001:db8::1 and fe80::1; not 999.1.1.1, 12:30:45 or std::vector"
    assert values(text, detect_ip(text)) == ["10.0.0.1", "2001:db8::1", "fe80::1"]


def test_detect_mac_address() -> None:
    text = "nic 00:1A:2b:3C:4d:5E, nic 00-1A-2B-3C-4D-5E, not 00:1A-2B:3C:4D:5E"
    assert values(text, detect_mac_address(text)) == ["00:1A:2b:3C:4d:5E", "00-1A-2B-3C-4D-5E"]


def test_detect_url() -> None:
    text = "see https://x.com/a?b=1. Or www.foo.org, or (docs.io/guide) but not example.com"
    assert values(text, detect_url(text)) == ["https://x.com/a?b=1", "www.foo.org", "docs.io/guide"]


# -- strategies on the user's input ---------------------------------------------------------


@pytest.mark.parametrize(
    ("pii_type", "strategy", "expected"),
    [
        ("email", "redact", f"Mail [REDACTED_EMAIL] about card {CARD}."),
        ("email", "mask", f"Mail jane.doe@****.com about card {CARD}."),
        ("credit_card", "redact", f"Mail {EMAIL} about card [REDACTED_CREDIT_CARD]."),
        ("credit_card", "mask", f"Mail {EMAIL} about card **** **** **** 1111."),
        ("email", "hash", f"Mail <email_hash:{EMAIL_DIGEST}> about card {CARD}."),
    ],
)
def test_input_strategies_rewrite_the_user_message_before_the_model_sees_it(
    run: Run, pii_type: str, strategy: Any, expected: str
) -> None:
    model = ScriptedChatModel(["ok"])
    agent = create_agent(model, middleware=[PIIMiddleware(pii_type, strategy=strategy)])

    result = run(agent, QUESTION)

    assert model.calls[0].messages[0].content == expected
    assert result["messages"][0].content == expected  # rewritten in the state too
    assert result["messages"][-1].content == "ok"


def test_other_masks_keep_a_few_characters(how_call: str) -> None:
    text = "ip 10.1.2.3 mac 00:1A:2B:3C:4D:5E url https://x.com/a code ABC-12345"
    model = ScriptedChatModel(["ok"])
    middleware = [
        PIIMiddleware("ip", strategy="mask"),
        PIIMiddleware("mac_address", strategy="mask"),
        PIIMiddleware("url", strategy="mask"),
        PIIMiddleware("code", strategy="mask", detector=r"ABC-\d+"),
    ]
    run_agent(create_agent(model, middleware=middleware), how_call, {"messages": [text]})
    assert model.calls[0].messages[0].content == (
        "ip *.*.*.3 mac **:**:**:**:**:5E url [MASKED_URL] code ****2345"
    )


def test_hash_is_deterministic_and_tells_values_apart(how_call: str) -> None:
    model = ScriptedChatModel(["ok"])
    agent = create_agent(model, middleware=[PIIMiddleware("email", strategy="hash")])
    text = "a@x.com, b@x.com, a@x.com"
    run_agent(agent, how_call, {"messages": [text]})
    first, second, third = model.calls[0].messages[0].content.split(", ")
    assert first == third != second
    assert first.startswith("<email_hash:")
    assert len(first) == len("<email_hash:12345678>")


def test_every_user_message_is_checked_not_only_the_last(how_call: str) -> None:
    model = ScriptedChatModel(["ok"])
    agent = create_agent(model, middleware=[PIIMiddleware("email")])
    history = [HumanMessage(f"I am {EMAIL}"), AIMessage("Hi"), HumanMessage("What's my mail?")]
    run_agent(agent, how_call, {"messages": history})
    assert [m.content for m in model.calls[0].messages] == [
        "I am [REDACTED_EMAIL]",
        "Hi",
        "What's my mail?",
    ]


def test_text_blocks_are_rewritten_and_other_blocks_kept(how_call: str) -> None:
    model = ScriptedChatModel(["ok"])
    agent = create_agent(model, middleware=[PIIMiddleware("email")])
    image = {"type": "image", "url": "https://example.com/cat.png"}
    content = [{"type": "text", "text": f"from {EMAIL}"}, image]
    run_agent(agent, how_call, {"messages": [HumanMessage(content)]})  # type: ignore[arg-type]
    assert model.calls[0].messages[0].content == [
        {"type": "text", "text": "from [REDACTED_EMAIL]"},
        image,
    ]


def test_block_raises_before_the_model_is_called(how_call: str) -> None:
    model = ScriptedChatModel(["never"])
    agent = create_agent(model, middleware=[PIIMiddleware("email", strategy="block")])
    with pytest.raises(PIIDetectionError) as caught:
        run_agent(agent, how_call, QUESTION)
    assert model.call_count == 0
    error = caught.value
    assert (error.pii_type, error.where) == ("email", "a user message (PIIMiddleware[email])")
    assert [m["value"] for m in error.matches] == [EMAIL]
    assert "email" in str(error)
    assert "user message" in str(error)
    assert EMAIL not in str(error)
    assert EMAIL not in repr(error)


def test_input_is_left_alone_when_apply_to_input_is_off(how_call: str) -> None:
    model = ScriptedChatModel(["ok"])
    middleware = PIIMiddleware("email", apply_to_input=False, apply_to_output=True)
    run_agent(create_agent(model, middleware=[middleware]), how_call, QUESTION)
    assert EMAIL in model.calls[0].messages[0].content


# -- custom detectors -----------------------------------------------------------------------


def test_custom_regex_detector(how_call: str) -> None:
    model = ScriptedChatModel(["ok"])
    middleware = PIIMiddleware("api_key", detector=r"sk-[A-Za-z0-9]{8,}")
    agent = create_agent(model, middleware=[middleware])
    run_agent(agent, how_call, {"messages": ["key sk-abcdef123456 and sk-short"]})
    assert model.calls[0].messages[0].content == "key [REDACTED_API_KEY] and sk-short"


def test_custom_function_detector(how_call: str) -> None:
    def employee_ids(text: str) -> list[PIIMatch]:
        start = text.find("EMP")
        if start < 0:
            return []
        end = start + 7
        return [PIIMatch(type="employee_id", value=text[start:end], start=start, end=end)]

    def plain_dicts(text: str) -> list[dict[str, Any]]:  # LangChain-style, without type/value
        start = text.find("secret")
        return [] if start < 0 else [{"text": "secret", "start": start, "end": start + 6}]

    model = ScriptedChatModel(["ok"])
    middleware = [
        PIIMiddleware("employee_id", detector=employee_ids, strategy="mask"),
        PIIMiddleware("word", detector=plain_dicts),
    ]
    agent = create_agent(model, middleware=middleware)
    run_agent(agent, how_call, {"messages": ["EMP1234 knows the secret"]})
    assert model.calls[0].messages[0].content == "****1234 knows the [REDACTED_WORD]"


def test_a_detector_returning_bad_bounds_fails_clearly(how_call: str) -> None:
    model = ScriptedChatModel(["ok"])
    bad = PIIMiddleware("x", detector=lambda text: [{"start": 3, "end": 999}])
    with pytest.raises(TypeError, match=r"PIIMiddleware\[x\].*start=3, end=999"):
        run_agent(create_agent(model, middleware=[bad]), how_call, {"messages": ["hello"]})


# -- construction ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("passport",), {}, r"pii_type='passport' is not a built-in type.*detector="),
        (("key",), {"detector": "sk-[unclosed"}, r"not a valid regular expression"),
        (("email",), {"strategy": "shred"}, r"strategy='shred' is unknown"),
        (("email",), {"detector": 42}, r"detector is int"),
        (("a:b",), {"detector": "x"}, r"without ':' or '\|'"),
    ],
)
def test_bad_options_raise_middleware_error(
    args: tuple[Any, ...], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(MiddlewareError, match=message) as caught:
        PIIMiddleware(*args, **kwargs)
    assert "PIIMiddleware" in str(caught.value)


def test_a_middleware_with_every_apply_to_off_is_accepted_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="graphagent.middleware.pii"):
        middleware = PIIMiddleware("email", apply_to_input=False)

    assert "all off, so it checks nothing" in caplog.text
    agent = create_agent(ScriptedChatModel(["ok"]), middleware=[middleware])
    assert agent.invoke({"messages": ["mail me at a@b.io"]})["messages"][0].text == (
        "mail me at a@b.io"
    )


def test_each_instance_is_named_after_its_type() -> None:
    middleware = PIIMiddleware("credit_card", strategy="mask", apply_to_output=True)
    assert middleware.name == "PIIMiddleware[credit_card]"
    assert (middleware.pii_type, middleware.strategy) == ("credit_card", "mask")
    assert (middleware.apply_to_input, middleware.apply_to_output) == (True, True)
    assert middleware.apply_to_tool_results is False
    assert middleware.detector is detect_credit_card


# -- tool results ---------------------------------------------------------------------------


@tool
def lookup(name: str) -> str:
    """Look a person up."""
    return f"{name} can be reached at {EMAIL}"


@tool
def lookup_command(name: str, tool_call_id: Any = None) -> Command[Any]:
    """Look a person up, answering with a Command."""
    return Command(update={"messages": [ToolMessage(f"{name}: {EMAIL}", tool_call_id="call_c")]})


def tool_agent(**options: Any) -> tuple[ScriptedChatModel, Any]:
    model = ScriptedChatModel([calls(("lookup", {"name": "Jane"})), "Found her."])
    middleware = PIIMiddleware("email", apply_to_tool_results=True, **options)
    return model, create_agent(model, [lookup], middleware=[middleware])


def test_tool_results_are_rewritten_before_the_state_gets_them(run: Run) -> None:
    model, agent = tool_agent()
    result = run(agent, {"messages": ["Find Jane"]})
    answer = result["messages"][2]
    assert isinstance(answer, ToolMessage)
    assert answer.content == "Jane can be reached at [REDACTED_EMAIL]"
    assert model.calls[1].messages[-1].content == answer.content


def test_tool_results_in_a_command_are_rewritten(how_call: str) -> None:
    model = ScriptedChatModel(
        [calls({"name": "lookup_command", "args": {"name": "Jane"}, "id": "call_c"}), "ok"]
    )
    middleware = PIIMiddleware("email", apply_to_tool_results=True)
    agent = create_agent(model, [lookup_command], middleware=[middleware])
    result = run_agent(agent, how_call, {"messages": ["Find Jane"]})
    assert result["messages"][2].content == "Jane: [REDACTED_EMAIL]"


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_tool_results_stream_rewritten(how: str) -> None:
    _, agent = tool_agent()
    items = stream_messages(agent, how, {"messages": ["Find Jane"]})
    tool_messages = [c for c, m in items if m["langgraph_node"] == "tools"]
    assert [m.content for m in tool_messages] == ["Jane can be reached at [REDACTED_EMAIL]"]
    assert EMAIL not in streamed_text(items)


def test_tool_results_can_be_blocked(how_call: str) -> None:
    model, agent = tool_agent(strategy="block")
    with pytest.raises(PIIDetectionError, match="the result of tool 'lookup'"):
        run_agent(agent, how_call, {"messages": ["Find Jane"]})
    assert model.call_count == 1  # the model never saw the result


# -- the model's replies, in the state and in the token stream ------------------------------


def reply_agent(*middleware: Any) -> tuple[ScriptedChatModel, Any]:
    model = ScriptedChatModel([f"Sure: her address is {EMAIL} and card {CARD}."])
    return model, create_agent(model, middleware=list(middleware))


def test_replies_are_rewritten_in_the_state(run: Run) -> None:
    _, agent = reply_agent(PIIMiddleware("email", apply_to_input=False, apply_to_output=True))
    result = run(agent, {"messages": ["Who?"]})
    assert result["messages"][-1].content == (
        f"Sure: her address is [REDACTED_EMAIL] and card {CARD}."
    )


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_raw_tokens_stream_without_apply_to_output(how: str) -> None:
    _, agent = reply_agent(PIIMiddleware("email"))
    assert EMAIL in streamed_text(stream_messages(agent, how, {"messages": ["Who?"]}))


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_no_raw_pii_reaches_the_messages_stream(how: str) -> None:
    _, agent = reply_agent(
        PIIMiddleware("email", apply_to_output=True),
        PIIMiddleware("credit_card", strategy="mask", apply_to_output=True),
    )
    items = stream_messages(agent, how, {"messages": ["Who?"]})

    text = streamed_text(items)
    assert EMAIL not in text
    assert CARD not in text
    chunks = [c for c, m in items if m["langgraph_node"] == "model"]
    assert len(chunks) == 1  # one replay, by the outermost layer, with both rewrites
    assert isinstance(chunks[0], AIMessageChunk)
    assert chunks[0].content == (
        "Sure: her address is [REDACTED_EMAIL] and card **** **** **** 1111."
    )
    assert items[0][1]["langgraph_node"] == "model"


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_tool_call_arguments_stream_redacted_but_reach_the_tool(how: str) -> None:
    received: list[str] = []

    @tool
    def send(to: str) -> str:
        """Send a mail."""
        received.append(to)
        return "sent"

    model = ScriptedChatModel([calls(("send", {"to": EMAIL}), text=f"Mailing {EMAIL}"), "Done."])
    middleware = PIIMiddleware("email", apply_to_output=True)
    items = stream_messages(create_agent(model, [send], middleware=[middleware]), how)

    assert received == [EMAIL]
    assert EMAIL not in streamed_text(items)
    first = items[0][0]
    assert first.content == "Mailing [REDACTED_EMAIL]"
    assert first.tool_call_chunks[0]["args"] == '{"to": "[REDACTED_EMAIL]"}'


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_block_on_output_raises_and_streams_nothing(how: str) -> None:
    _, agent = reply_agent(PIIMiddleware("email", strategy="block", apply_to_output=True))
    items: list[Any] = []

    async def consume() -> None:
        async for item in agent.astream({"messages": ["Who?"]}, stream_mode="messages"):
            items.append(item)

    def consume_sync() -> None:
        items.extend(agent.stream({"messages": ["Who?"]}, stream_mode="messages"))

    with pytest.raises(PIIDetectionError, match="the model's reply"):
        consume_sync() if how == "stream" else asyncio.run(consume())
    assert EMAIL not in streamed_text(items)


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_pii_and_final_answer_filter_compose_in_either_order(how: str) -> None:
    for order in ("pii first", "filter first"):
        pii = PIIMiddleware("email", apply_to_output=True)
        middleware = [pii, FinalAnswerFilterMiddleware()]
        if order == "filter first":
            middleware.reverse()
        model = ScriptedChatModel(
            [calls(("lookup", {"name": "Jane"}), text="Checking..."), f"Write to {EMAIL}."]
        )
        items = stream_messages(create_agent(model, [lookup], middleware=middleware), how)
        texts = [c.content for c, m in items if m["langgraph_node"] == "model"]
        assert texts == ["", "Write to [REDACTED_EMAIL]."], order


def test_all_three_places_at_once(run: Run) -> None:
    model = ScriptedChatModel([calls(("lookup", {"name": "Jane"})), f"It is {EMAIL}."])
    middleware = PIIMiddleware(
        "email", strategy="hash", apply_to_output=True, apply_to_tool_results=True
    )
    result = run(create_agent(model, [lookup], middleware=[middleware]), QUESTION)
    assert not any(EMAIL in str(m.content) for m in result["messages"])
    assert not any(EMAIL in str(m.content) for call in model.calls for m in call.messages)


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_a_model_picked_by_an_inner_fallback_is_held_back_too(how: str) -> None:
    def times_out(messages: list[Any]) -> str:
        raise TimeoutError("provider down")

    fallback = ScriptedChatModel([f"Fallback says {EMAIL}."])
    middleware = [
        PIIMiddleware("email", apply_to_output=True),
        ModelFallbackMiddleware(fallback),
    ]
    agent = create_agent(ScriptedChatModel([times_out]), middleware=middleware)
    items = stream_messages(agent, how, {"messages": ["Who?"]})
    assert [c.content for c, _ in items] == ["Fallback says [REDACTED_EMAIL]."]


# -- messages quoting an exception, whatever the order ----------------------------------------


@tool
def find_account(name: str) -> str:
    """Fails, quoting personal data."""
    raise LookupError(f"no account for {EMAIL}")


def fails_quoting_the_address(messages: list[Any]) -> str:
    raise ConnectionError(f"the provider refused a prompt about {EMAIL}")


def quote_the_exception(error: Exception, request: Any = None) -> str:
    return f"It failed: {error}"


def answered_tool_failure() -> tuple[Any, ...]:
    model = ScriptedChatModel([calls(("find_account", {"name": "Jane"})), "Sorry."])
    return model, [find_account], PIIMiddleware("email", apply_to_tool_results=True)


WRITERS = {
    "tool retry": lambda: ToolRetryMiddleware(max_retries=1, initial_delay=0),
    "tool retry, on_failure": lambda: ToolRetryMiddleware(
        max_retries=0, on_failure=quote_the_exception
    ),
    "tool error handler": lambda: ToolErrorMiddleware(on_error=quote_the_exception),
    "model retry": lambda: ModelRetryMiddleware(max_retries=1, initial_delay=0),
    "model retry, on_failure": lambda: ModelRetryMiddleware(
        max_retries=0, on_failure=quote_the_exception
    ),
}


@pytest.mark.parametrize("writer", list(WRITERS))
@pytest.mark.parametrize("pii_first", [True, False], ids=["pii first", "pii last"])
def test_messages_quoting_an_exception_are_rewritten_whatever_the_order(
    how: str, writer: str, pii_first: bool
) -> None:
    if writer.startswith("tool"):
        model, tools, pii = answered_tool_failure()
    else:
        model = ScriptedChatModel([fails_quoting_the_address], repeat_last=True)
        tools, pii = [], PIIMiddleware("email", apply_to_output=True)
    middleware = [pii, WRITERS[writer]()]
    if not pii_first:
        middleware.reverse()
    agent = create_agent(model, tools, middleware=middleware)
    modes = ["values", "updates", "messages"]

    if how in ("stream", "astream"):
        chunks = stream_chunks(agent, how, modes)
        assert EMAIL not in repr(chunks)
        state = [data for mode, data in chunks if mode == "values"][-1]
    else:
        state = run_agent(agent, how, {"messages": ["Find Jane"]})

    written = [m.content for m in state["messages"] if "[REDACTED_EMAIL]" in str(m.content)]
    assert written, "the failure's message was written, rewritten"
    assert EMAIL not in repr(state)
    assert EMAIL not in repr([call.messages for call in model.calls])


def stream_chunks(agent: Any, how: str, modes: list[str]) -> list[Any]:
    inputs = {"messages": ["Find Jane"]}
    if how == "stream":
        return list(agent.stream(inputs, stream_mode=modes))

    async def collect() -> list[Any]:
        return [chunk async for chunk in agent.astream(inputs, stream_mode=modes)]

    return asyncio.run(asyncio.wait_for(collect(), 60))


def test_a_structured_output_error_quoting_the_reply_is_rewritten(how_call: str) -> None:
    class Contact(BaseModel):
        email: str

        @field_validator("email")
        @classmethod
        def refuse(cls, value: str) -> str:
            raise ValueError(f"unknown address {value}")

    model = ScriptedChatModel([calls(("Contact", {"email": EMAIL})), "give up"])
    pii = PIIMiddleware("email", apply_to_output=True)
    agent = create_agent(model, response_format=ToolStrategy(Contact), middleware=[pii])

    run_agent(agent, how_call, {"messages": ["Who?"]})

    error = model.calls[1].messages[-1]
    assert isinstance(error, ToolMessage)
    assert "unknown address [REDACTED_EMAIL]" in error.text
    assert EMAIL not in error.text


@pytest.mark.parametrize("pii_first", [True, False], ids=["pii first", "pii last"])
def test_a_blocked_tool_result_stops_the_run_even_listed_inside_a_retry(
    how_call: str, pii_first: bool
) -> None:
    model, agent_tools = ScriptedChatModel([calls(("lookup", {"name": "Jane"})), "ok"]), [lookup]
    middleware: list[Any] = [
        PIIMiddleware("email", strategy="block", apply_to_tool_results=True),
        ToolRetryMiddleware(max_retries=2, initial_delay=0),
    ]
    if not pii_first:
        middleware.reverse()
    agent = create_agent(model, agent_tools, middleware=middleware)

    with pytest.raises(PIIDetectionError, match="the result of tool 'lookup'"):
        run_agent(agent, how_call, {"messages": ["Find Jane"]})
    assert model.call_count == 1


def test_pii_sits_inside_observers_and_outside_the_rest() -> None:
    from graphagent.explain import explain
    from graphagent.middleware.otel import OtelTracingMiddleware

    middleware = [
        ToolRetryMiddleware(),
        PIIMiddleware("email", apply_to_tool_results=True),
        OtelTracingMiddleware(),
    ]
    agent = create_agent(ScriptedChatModel(["ok"]), [lookup], middleware=middleware)
    (line,) = [x for x in str(explain(agent)).splitlines() if x.startswith("  wrap_tool_call")]
    assert line.split(None, 1)[1] == (
        "OtelTracingMiddleware ⊃ PIIMiddleware[email] ⊃ ToolRetryMiddleware"
    )
