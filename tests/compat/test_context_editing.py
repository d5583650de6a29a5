"""LangChain 1.5's ``context_editing``: ``ContextEditingMiddleware`` and ``ClearToolUsesEdit``.

The defaults and public attributes; the placeholder and the metadata a cleared result (and, with
``clear_tool_inputs``, its AI message) carries; which results are cleared and which kept
(``trigger`` exceeded strictly, ``keep`` counting every result, ``exclude_tools``, results
already cleared, ``clear_at_least``); the three ways of counting tokens; custom edits; and that
only the model's request changes, never the agent state."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.tools import tool
from pydantic import Field

from graphagent import create_agent
from graphagent.middleware import ClearToolUsesEdit, ContextEditingMiddleware
from graphagent.middleware.context_editing import DEFAULT_TOOL_PLACEHOLDER
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent

CLEARED = {"cleared": True, "strategy": "clear_tool_uses"}


@tool
def lookup(term: str) -> str:
    """Look a term up."""
    return f"definition of {term}"


@tool
def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


def exchange(*names: str) -> list[AnyMessage]:
    """A question, then per tool name a call ``id{n}`` (args ``{"n": n}``), result ``out{n}``."""
    messages: list[AnyMessage] = [HumanMessage("Go.")]
    for n, name in enumerate(names, start=1):
        call = {"name": name, "args": {"n": n}, "id": f"id{n}", "type": "tool_call"}
        messages += [
            AIMessage("", tool_calls=[call]),
            ToolMessage(f"out{n}", tool_call_id=f"id{n}", name=name),
        ]
    return messages


def tool_texts(messages: Sequence[BaseMessage]) -> list[str]:
    return [m.text for m in messages if isinstance(m, ToolMessage)]


def call_args(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    return [c["args"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]


def one_per_message(messages: Sequence[BaseMessage]) -> int:
    return len(messages)


def characters(messages: Sequence[BaseMessage]) -> int:
    return sum(len(m.text) for m in messages)


def model_view(
    history: list[AnyMessage], how: str, *edits: Any, **options: Any
) -> tuple[tuple[BaseMessage, ...], dict[str, Any]]:
    """Run one model call over ``history``: what the model received, and the final state."""
    model = ScriptedChatModel(["ok"])
    middleware = ContextEditingMiddleware(edits=list(edits), **options)
    agent = create_agent(model, [lookup, weather], middleware=[middleware])
    result = run_agent(agent, how, {"messages": history})
    return model.calls[0].messages, result


# -- defaults and attributes -----------------------------------------------------------------


def test_the_defaults_and_public_attributes() -> None:
    middleware = ContextEditingMiddleware()

    assert middleware.name == "ContextEditingMiddleware"
    assert middleware.token_count_method == "approximate"
    assert middleware.token_counter is None
    assert isinstance(middleware.edits, list)
    (edit,) = middleware.edits
    assert (edit.trigger, edit.clear_at_least, edit.keep) == (100_000, 0, 3)
    assert edit.clear_tool_inputs is False
    assert list(edit.exclude_tools) == []
    assert edit.placeholder == DEFAULT_TOOL_PLACEHOLDER == "[cleared]"
    assert edit == ClearToolUsesEdit()


def test_an_empty_edit_list_means_the_default_edit() -> None:
    assert ContextEditingMiddleware(edits=[]).edits == [ClearToolUsesEdit()]


def test_the_options_are_kept_as_given() -> None:
    def counter(messages: Sequence[BaseMessage]) -> int:
        return 0

    edits = [ClearToolUsesEdit(trigger=10), ClearToolUsesEdit(keep=0)]
    middleware = ContextEditingMiddleware(
        edits=iter(edits), token_count_method="model", token_counter=counter
    )

    assert middleware.edits == edits
    assert middleware.token_count_method == "model"
    assert middleware.token_counter is counter


def test_an_edit_takes_its_fields_by_position_too() -> None:
    edit = ClearToolUsesEdit(500, 40, 1, True, ["lookup"], "(gone)")

    assert (edit.trigger, edit.clear_at_least, edit.keep) == (500, 40, 1)
    assert edit.clear_tool_inputs is True
    assert list(edit.exclude_tools) == ["lookup"]
    assert edit.placeholder == "(gone)"


def test_the_middleware_takes_keywords_only() -> None:
    with pytest.raises(TypeError):
        ContextEditingMiddleware([ClearToolUsesEdit()])  # type: ignore[misc]


@pytest.mark.parametrize(
    "build",
    [
        lambda: ClearToolUsesEdit(triger=5),
        lambda: ContextEditingMiddleware(edit=[ClearToolUsesEdit()]),
    ],
    ids=["edit", "middleware"],
)
def test_an_unknown_keyword_is_a_type_error(build: Any) -> None:
    with pytest.raises(TypeError):
        build()


# -- what is cleared, what is kept -----------------------------------------------------------


def test_nothing_is_cleared_under_the_default_trigger(how_call: str) -> None:
    history = exchange("lookup", "lookup", "lookup", "lookup", "lookup")

    seen, _ = model_view(history, how_call)

    assert tool_texts(seen) == ["out1", "out2", "out3", "out4", "out5"]


@pytest.mark.parametrize(
    ("trigger", "expected"), [(5, ["out1", "out2"]), (4, ["[cleared]", "out2"])]
)
def test_the_trigger_must_be_exceeded(trigger: int, expected: list[str], how_call: str) -> None:
    # Five messages counted as one token each: a trigger of 5 is reached, not exceeded.
    seen, _ = model_view(
        exchange("lookup", "weather"),
        how_call,
        ClearToolUsesEdit(trigger=trigger, keep=1),
        token_counter=one_per_message,
    )

    assert tool_texts(seen) == expected


def test_the_cleared_result_and_what_it_keeps(how_call: str) -> None:
    history: list[AnyMessage] = [
        HumanMessage("Go."),
        AIMessage("", tool_calls=[{"name": "lookup", "args": {"term": "x"}, "id": "a"}]),
        ToolMessage(
            "a long page",
            tool_call_id="a",
            name="lookup",
            id="tool-1",
            status="error",
            artifact={"rows": [1, 2, 3]},
            response_metadata={"source": "db"},
        ),
    ]

    seen, _ = model_view(history, how_call, ClearToolUsesEdit(trigger=0, keep=0))

    cleared = seen[2]
    assert isinstance(cleared, ToolMessage)
    assert cleared.content == "[cleared]"
    assert cleared.artifact is None
    assert cleared.response_metadata == {"source": "db", "context_editing": CLEARED}
    assert (cleared.id, cleared.tool_call_id, cleared.name, cleared.status) == (
        "tool-1",
        "a",
        "lookup",
        "error",
    )
    # The calling AI message is left as it was.
    assert seen[1].response_metadata == {}
    assert call_args(seen) == [{"term": "x"}]


@pytest.mark.parametrize(
    ("keep", "expected"),
    [
        (0, ["(x)", "(x)", "(x)", "(x)"]),
        (2, ["(x)", "(x)", "out3", "out4"]),
        (4, ["out1", "out2", "out3", "out4"]),
        (9, ["out1", "out2", "out3", "out4"]),
    ],
)
def test_keep_spares_the_most_recent_results(keep: int, expected: list[str], how_call: str) -> None:
    edit = ClearToolUsesEdit(trigger=0, keep=keep, placeholder="(x)")

    seen, _ = model_view(exchange("lookup", "weather", "lookup", "weather"), how_call, edit)

    assert tool_texts(seen) == expected


def test_excluded_tools_keep_their_results_and_still_count_towards_keep(how_call: str) -> None:
    history = exchange("weather", "lookup", "lookup", "weather")
    edit = ClearToolUsesEdit(trigger=0, keep=2, exclude_tools=["weather"])

    seen, _ = model_view(history, how_call, edit)

    # keep=2 spares out3 and out4 (one of them excluded anyway); out1 is excluded.
    assert tool_texts(seen) == ["out1", "[cleared]", "out3", "out4"]


@pytest.mark.parametrize(
    ("result_name", "excluded", "expected"),
    [
        (None, "weather", "out1"),
        ("weather", "weather", "out1"),
        ("lookup", "weather", "[cleared]"),
        ("lookup", "lookup", "out1"),
    ],
)
def test_a_results_own_name_decides_its_exclusion_then_its_calls(
    result_name: str | None, excluded: str, expected: str, how_call: str
) -> None:
    # The call is to 'weather'; the result may carry another name, or none.
    history = exchange("weather")
    history[2] = history[2].model_copy(update={"name": result_name})
    edit = ClearToolUsesEdit(trigger=0, keep=0, exclude_tools=[excluded])

    seen, _ = model_view(history, how_call, edit)

    assert tool_texts(seen) == [expected]


def test_a_result_whose_call_is_not_in_the_nearest_ai_message_stays(how_call: str) -> None:
    history = exchange("lookup", "lookup")
    history.insert(2, AIMessage("Still thinking."))  # between the first call and its result

    seen, _ = model_view(history, how_call, ClearToolUsesEdit(trigger=0, keep=0))

    assert tool_texts(seen) == ["out1", "[cleared]"]


def test_a_result_cleared_before_is_left_as_it_is(how_call: str) -> None:
    history = exchange("lookup", "lookup", "lookup")
    history[2] = history[2].model_copy(
        update={"content": "(old)", "response_metadata": {"context_editing": CLEARED}}
    )
    # Clearing "out2" frees 4 tokens, enough for clear_at_least; re-clearing "(old)" would have
    # freed 5 and stopped there.
    edit = ClearToolUsesEdit(trigger=0, keep=0, clear_at_least=3, placeholder="")

    seen, _ = model_view(history, how_call, edit, token_counter=characters)

    assert tool_texts(seen) == ["(old)", "", "out3"]


@pytest.mark.parametrize(("at_least", "cleared"), [(96, 1), (97, 2), (1000, 3)])
def test_clear_at_least_stops_once_enough_tokens_are_freed(
    at_least: int, cleared: int, how_call: str
) -> None:
    history = [
        m.model_copy(update={"content": "y" * 100}) if isinstance(m, ToolMessage) else m
        for m in exchange("lookup", "lookup", "lookup")
    ]
    # Counting characters, each clearing frees 100 - len("(cu)") = 96 tokens.
    edit = ClearToolUsesEdit(trigger=0, keep=0, clear_at_least=at_least, placeholder="(cu)")

    seen, _ = model_view(history, how_call, edit, token_counter=characters)

    assert tool_texts(seen) == ["(cu)"] * cleared + ["y" * 100] * (3 - cleared)


def test_clear_at_least_recounts_the_whole_conversation(how_call: str) -> None:
    counted: list[int] = []

    def counter(messages: Sequence[BaseMessage]) -> int:
        counted.append(len(messages))
        return characters(messages)

    edit = ClearToolUsesEdit(trigger=0, keep=0, clear_at_least=5)

    seen, _ = model_view(
        exchange("lookup", "lookup", "lookup"), how_call, edit, token_counter=counter
    )

    # Once for the trigger, then after each clearing. "[cleared]" is longer than "outN", so
    # nothing is ever freed and every result is cleared.
    assert tool_texts(seen) == ["[cleared]"] * 3
    assert counted == [7, 7, 7, 7]


def test_clear_tool_inputs_empties_the_cleared_calls_arguments(how_call: str) -> None:
    history: list[AnyMessage] = [
        HumanMessage("Go."),
        AIMessage(
            "",
            tool_calls=[
                {"name": "lookup", "args": {"term": "z"}, "id": "zeta"},
                {"name": "weather", "args": {"city": "Oslo"}, "id": "alpha"},
                {"name": "lookup", "args": {"term": "k"}, "id": "kept"},
            ],
            response_metadata={"model_name": "m"},
        ),
        ToolMessage("first", tool_call_id="zeta", name="lookup"),
        ToolMessage("second", tool_call_id="alpha", name="weather"),
        ToolMessage("third", tool_call_id="kept", name="lookup"),
    ]
    edit = ClearToolUsesEdit(trigger=0, keep=1, clear_tool_inputs=True)

    seen, result = model_view(history, how_call, edit)

    assert tool_texts(seen) == ["[cleared]", "[cleared]", "third"]
    assert call_args(seen) == [{}, {}, {"term": "k"}]
    assert [c["name"] for c in seen[1].tool_calls] == ["lookup", "weather", "lookup"]
    assert seen[1].response_metadata == {
        "model_name": "m",
        "context_editing": {"cleared_tool_inputs": ["alpha", "zeta"]},
    }
    # The state keeps the calls and results as they were, without any marker.
    assert call_args(result["messages"]) == [{"term": "z"}, {"city": "Oslo"}, {"term": "k"}]
    assert tool_texts(result["messages"]) == ["first", "second", "third"]
    assert result["messages"][1].response_metadata == {"model_name": "m"}


def test_edits_run_in_order_each_on_the_result_of_the_last(how_call: str) -> None:
    first = ClearToolUsesEdit(trigger=0, keep=2, placeholder="A")
    second = ClearToolUsesEdit(trigger=0, keep=1, placeholder="B")

    seen, _ = model_view(exchange("lookup", "lookup", "lookup", "lookup"), how_call, first, second)

    assert tool_texts(seen) == ["A", "A", "B", "out4"]


def test_every_model_call_is_edited_and_the_state_keeps_everything(how_call: str) -> None:
    model = ScriptedChatModel(
        [calls(("lookup", {"term": "a"})), calls(("weather", {"city": "b"})), "done"]
    )
    edit = ClearToolUsesEdit(trigger=0, keep=1, clear_tool_inputs=True)
    agent = create_agent(
        model, [lookup, weather], middleware=[ContextEditingMiddleware(edits=[edit])]
    )

    result = run_agent(agent, how_call, {"messages": [HumanMessage("Go.")]})

    assert tool_texts(model.calls[1].messages) == ["definition of a"]
    assert tool_texts(model.calls[2].messages) == ["[cleared]", "sunny in b"]
    assert call_args(model.calls[2].messages) == [{}, {"city": "b"}]
    assert tool_texts(result["messages"]) == ["definition of a", "sunny in b"]
    assert call_args(result["messages"]) == [{"term": "a"}, {"city": "b"}]
    assert not any("context_editing" in m.response_metadata for m in result["messages"])
    assert result["messages"][-1].text == "done"


# -- counting tokens -------------------------------------------------------------------------


@pytest.mark.parametrize(("margin", "cleared"), [(0, False), (-1, True)])
def test_the_approximate_count_by_default(margin: int, cleared: bool, how_call: str) -> None:
    history = exchange("lookup", "weather")
    # No system prompt and no tools: the count is the messages' approximate count.
    model = ScriptedChatModel(["ok"])
    edit = ClearToolUsesEdit(trigger=count_tokens_approximately(history) + margin, keep=1)
    agent = create_agent(model, [], middleware=[ContextEditingMiddleware(edits=[edit])])

    run_agent(agent, how_call, {"messages": history})

    assert tool_texts(model.calls[0].messages) == ["[cleared]" if cleared else "out1", "out2"]


def test_the_approximate_count_covers_the_system_prompt(how_call: str) -> None:
    # Difference ("Context editing counts the whole input", docs/context.md): graphagent's
    # approximate count includes the system message and the tools; LangChain's counts the
    # messages only, so this long system prompt would not reach the trigger there.
    history = exchange("lookup", "weather")
    model = ScriptedChatModel(["ok"])
    edit = ClearToolUsesEdit(trigger=count_tokens_approximately(history), keep=1)
    agent = create_agent(
        model,
        [],
        system_prompt="Be thorough. " * 40,
        middleware=[ContextEditingMiddleware(edits=[edit])],
    )

    run_agent(agent, how_call, {"messages": history})

    assert tool_texts(model.calls[0].messages) == ["[cleared]", "out2"]


def test_a_token_counter_gets_the_system_message_first(how_call: str) -> None:
    # Difference ("Context editing counts the whole input", docs/context.md): LangChain's
    # token_counter gets the messages without the system message.
    counted: list[list[str]] = []

    def counter(messages: Sequence[BaseMessage]) -> int:
        counted.append([m.type for m in messages])
        return 0

    agent = create_agent(
        ScriptedChatModel(["ok"]),
        [],
        system_prompt="Be brief.",
        middleware=[ContextEditingMiddleware(token_counter=counter)],
    )

    run_agent(agent, how_call, {"messages": [HumanMessage("Hi.")]})

    assert counted == [["system", "human"]]


class TokenizingModel(ScriptedChatModel):
    """Counts 10 tokens a message, recording the message types and the tools it was given."""

    asked: list[tuple[list[str], int]] = Field(default_factory=list)

    def get_num_tokens_from_messages(
        self, messages: list[BaseMessage], tools: Sequence[Any] | None = None
    ) -> int:
        self.asked.append(([m.type for m in messages], len(tools or ())))
        return 10 * len(messages)


def test_the_model_method_asks_the_model_with_the_system_message_and_tools(how_call: str) -> None:
    model = TokenizingModel(["ok"])
    # System message + 5 messages = 60 tokens, above the trigger.
    edit = ClearToolUsesEdit(trigger=59, keep=1)
    middleware = ContextEditingMiddleware(edits=[edit], token_count_method="model")
    agent = create_agent(
        model, [lookup, weather], system_prompt="Be brief.", middleware=[middleware]
    )

    run_agent(agent, how_call, {"messages": exchange("lookup", "weather")})

    assert tool_texts(model.calls[0].messages) == ["[cleared]", "out2"]
    assert model.asked[0] == (["system", "human", "ai", "tool", "ai", "tool"], 2)


def test_a_token_counter_takes_precedence_over_the_model_method(how_call: str) -> None:
    model = TokenizingModel(["ok"])
    edit = ClearToolUsesEdit(trigger=4, keep=1)
    middleware = ContextEditingMiddleware(
        edits=[edit], token_count_method="model", token_counter=one_per_message
    )
    agent = create_agent(model, [lookup, weather], middleware=[middleware])

    run_agent(agent, how_call, {"messages": exchange("lookup", "weather")})

    assert model.asked == []
    assert tool_texts(model.calls[0].messages) == ["[cleared]", "out2"]


# -- edits of your own -----------------------------------------------------------------------


class UpperAndTrim:
    """An edit of one's own: drops the first message and shouts the rest, in place, reporting
    what ``count_tokens`` said of the messages it got."""

    def __init__(self) -> None:
        self.counts: list[int] = []

    def apply(self, messages: list[AnyMessage], *, count_tokens: Any) -> None:
        self.counts.append(count_tokens(messages))
        del messages[0]
        for message in messages:
            message.content = message.text.upper()


def test_an_edit_of_your_own_edits_copies_with_the_middlewares_counter(how_call: str) -> None:
    model = ScriptedChatModel(["ok"])
    edit = UpperAndTrim()
    middleware = ContextEditingMiddleware(edits=[edit], token_counter=one_per_message)
    agent = create_agent(model, [], middleware=[middleware])
    history = [HumanMessage("first"), AIMessage("second"), HumanMessage("third")]

    result = run_agent(agent, how_call, {"messages": history})

    assert edit.counts == [3]
    assert [m.text for m in model.calls[0].messages] == ["SECOND", "THIRD"]
    assert [m.text for m in result["messages"]] == ["first", "second", "third", "ok"]


def test_an_edit_of_your_own_never_sees_the_system_message(how_call: str) -> None:
    model = ScriptedChatModel(["ok"])
    agent = create_agent(
        model,
        [],
        system_prompt="Rules.",
        middleware=[ContextEditingMiddleware(edits=[UpperAndTrim()])],
    )

    run_agent(agent, how_call, {"messages": [HumanMessage("a"), HumanMessage("b")]})

    sent = model.calls[0].messages
    assert isinstance(sent[0], SystemMessage)
    assert [m.text for m in sent] == ["Rules.", "B"]


# -- graphagent's documented differences -----------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda: ClearToolUsesEdit(keep=-1),
        lambda: ClearToolUsesEdit(exclude_tools="lookup"),
        lambda: ContextEditingMiddleware(token_count_method="exact"),  # type: ignore[arg-type]
    ],
    ids=["negative-keep", "string-exclusions", "unknown-method"],
)
def test_bad_options_fail_when_built(build: Any) -> None:
    # Difference ("Option errors", docs/context.md): graphagent raises a ValueError
    # (MiddlewareError) when the edit or middleware is built; LangChain accepts any values.
    with pytest.raises(ValueError):  # noqa: PT011 - the type is the contract here
        build()


def test_an_edit_cannot_be_changed_once_built() -> None:
    # Difference (docs/context.md: "an edit is immutable", so its checked options hold):
    # LangChain's ClearToolUsesEdit is a mutable dataclass.
    edit = ClearToolUsesEdit()
    with pytest.raises(AttributeError):
        edit.keep = 5  # type: ignore[misc]
