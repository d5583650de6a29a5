"""ContextEditingMiddleware / ClearToolUsesEdit: what the model sees; the state keeps everything."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.tools import tool
from pydantic import Field

from graphagent import create_agent
from graphagent.errors import MiddlewareError
from graphagent.middleware.context_editing import (
    DEFAULT_TOOL_PLACEHOLDER,
    ClearToolUsesEdit,
    ContextEdit,
    ContextEditingMiddleware,
)
from graphagent.testing import ScriptedChatModel, calls, tool_call
from tests.conftest import Run, run_agent


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


@tool
def fetch(url: str) -> str:
    """Fetch a page."""
    return f"page {url}"


def tool_rounds(*names: str) -> list[AnyMessage]:
    """A question, then one AI call and its result per tool name (results ``r1``, ``r2``...)."""
    history: list[AnyMessage] = [HumanMessage("Research this.")]
    for n, name in enumerate(names, start=1):
        history += [
            AIMessage("", tool_calls=[tool_call(name, {"arg": f"a{n}"}, id=f"c{n}")]),
            ToolMessage(f"r{n}", tool_call_id=f"c{n}", name=name),
        ]
    return history


def per_message(tokens: int) -> Any:
    return lambda messages: tokens * len(messages)


def results(messages: Sequence[BaseMessage]) -> list[str]:
    return [m.text for m in messages if isinstance(m, ToolMessage)]


def arguments(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    return [c["args"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]


def seen_by_model(edit: ClearToolUsesEdit, history: list[AnyMessage], how: str, **kw: Any) -> Any:
    """Run an agent over ``history``; the messages its model saw, and the final state."""
    model = ScriptedChatModel(["done"])
    kw.setdefault("token_counter", per_message(10))
    middleware = ContextEditingMiddleware(edits=[edit], **kw)
    agent = create_agent(model, [search, fetch], middleware=[middleware])
    result = run_agent(agent, how, {"messages": history})
    return model.calls[0].messages, result


def test_clears_older_results_and_keeps_the_recent_ones(run: Run) -> None:
    model = ScriptedChatModel(["done"])
    edit = ClearToolUsesEdit(trigger=50, keep=2)
    middleware = ContextEditingMiddleware(edits=[edit], token_counter=per_message(10))
    agent = create_agent(model, [search, fetch], middleware=[middleware])
    history = tool_rounds("search", "fetch", "search", "fetch", "search")  # 11 messages

    result = run(agent, {"messages": history})

    assert results(model.calls[0].messages) == ["[cleared]"] * 3 + ["r4", "r5"]
    cleared = next(m for m in model.calls[0].messages if isinstance(m, ToolMessage))
    assert cleared.response_metadata["context_editing"]["cleared"] is True
    assert cleared.tool_call_id == "c1"
    # The state keeps every result; only the request changed.
    assert results(result["messages"]) == ["r1", "r2", "r3", "r4", "r5"]
    assert result["messages"][-1].text == "done"


@pytest.mark.parametrize(("trigger", "cleared"), [(109, True), (110, False), (500, False)])
def test_clears_only_above_the_trigger(trigger: int, cleared: bool, how_call: str) -> None:
    history = tool_rounds("search", "search", "search", "search", "search")  # 11 x 10 = 110
    edit = ClearToolUsesEdit(trigger=trigger, keep=1)

    seen, _ = seen_by_model(edit, history, how_call)

    expected = ["[cleared]"] * 4 if cleared else ["r1", "r2", "r3", "r4"]
    assert results(seen) == [*expected, "r5"]


@pytest.mark.parametrize(
    ("keep", "expected"),
    [
        (0, ["[cleared]"] * 3),
        (1, ["[cleared]", "[cleared]", "r3"]),
        (3, ["r1", "r2", "r3"]),
        (10, ["r1", "r2", "r3"]),
    ],
)
def test_keep_counts_the_most_recent_results(keep: int, expected: list[str], how_call: str) -> None:
    seen, _ = seen_by_model(
        ClearToolUsesEdit(trigger=0, keep=keep), tool_rounds("search", "search", "search"), how_call
    )
    assert results(seen) == expected


def test_excluded_tools_are_never_cleared(how_call: str) -> None:
    history = tool_rounds("fetch", "search", "fetch", "search", "search")
    edit = ClearToolUsesEdit(trigger=0, keep=1, exclude_tools=["fetch"])

    seen, _ = seen_by_model(edit, history, how_call)

    assert results(seen) == ["r1", "[cleared]", "r3", "[cleared]", "r5"]


def test_the_placeholder_and_tool_inputs(how_call: str) -> None:
    edit = ClearToolUsesEdit(
        trigger=0, keep=1, placeholder="(result removed)", clear_tool_inputs=True
    )

    seen, result = seen_by_model(edit, tool_rounds("search", "fetch", "search"), how_call)

    assert results(seen) == ["(result removed)", "(result removed)", "r3"]
    assert arguments(seen) == [{}, {}, {"arg": "a3"}]
    stripped = next(m for m in seen if isinstance(m, AIMessage))
    assert stripped.response_metadata["context_editing"] == {"cleared_tool_inputs": ["c1"]}
    assert arguments(result["messages"]) == [{"arg": "a1"}, {"arg": "a2"}, {"arg": "a3"}]


def test_tool_inputs_stay_by_default(how_call: str) -> None:
    seen, _ = seen_by_model(ClearToolUsesEdit(trigger=0, keep=0), tool_rounds("search"), how_call)
    assert results(seen) == [DEFAULT_TOOL_PLACEHOLDER]
    assert arguments(seen) == [{"arg": "a1"}]


def test_parallel_calls_clear_only_the_cleared_calls_inputs(how_call: str) -> None:
    history: list[AnyMessage] = [
        HumanMessage("go"),
        AIMessage(
            "",
            tool_calls=[
                tool_call("search", {"q": 1}, id="x"),
                tool_call("fetch", {"u": 2}, id="y"),
            ],
        ),
        ToolMessage("first", tool_call_id="x", name="search"),
        ToolMessage("second", tool_call_id="y", name="fetch"),
    ]
    edit = ClearToolUsesEdit(trigger=0, keep=1, clear_tool_inputs=True)

    seen, _ = seen_by_model(edit, history, how_call)

    assert results(seen) == ["[cleared]", "second"]
    assert arguments(seen) == [{}, {"u": 2}]


def test_clear_at_least_stops_once_enough_is_freed(how_call: str) -> None:
    history = tool_rounds("search", "search", "search", "search")
    history = [
        m.model_copy(update={"content": "x" * 100}) if isinstance(m, ToolMessage) else m
        for m in history
    ]
    characters = lambda messages: sum(len(m.text) for m in messages)  # noqa: E731
    edit = ClearToolUsesEdit(trigger=0, keep=0, clear_at_least=150)

    seen, _ = seen_by_model(edit, history, how_call, token_counter=characters)

    # Each clearing frees 100 - 9 characters: two are needed to free 150.
    assert results(seen) == ["[cleared]", "[cleared]", "x" * 100, "x" * 100]


def test_results_answering_no_call_stay() -> None:
    # The agent drops such results before its model call; the edit, used alone, leaves them.
    messages: list[AnyMessage] = [
        HumanMessage("go"),
        ToolMessage("orphan", tool_call_id="nowhere"),
        *tool_rounds("search", "search")[1:],
    ]
    ClearToolUsesEdit(trigger=0, keep=0).apply(messages, count_tokens=per_message(1))
    assert results(messages) == ["orphan", "[cleared]", "[cleared]"]


def test_nothing_changes_with_the_defaults(how_call: str) -> None:
    model = ScriptedChatModel(["done"])
    agent = create_agent(model, [search], middleware=[ContextEditingMiddleware()])
    history = tool_rounds("search", "search", "search", "search", "search")

    run_agent(agent, how_call, {"messages": history})

    assert results(model.calls[0].messages) == ["r1", "r2", "r3", "r4", "r5"]
    (edit,) = ContextEditingMiddleware().edits
    assert edit == ClearToolUsesEdit(
        trigger=100_000,
        clear_at_least=0,
        keep=3,
        clear_tool_inputs=False,
        exclude_tools=(),
        placeholder="[cleared]",
    )


def test_the_approximate_count_includes_the_system_prompt(how_call: str) -> None:
    history = tool_rounds("search", "search")
    small = count_tokens_approximately(history)
    model = ScriptedChatModel(["done", "done"])
    middleware = ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=small + 50, keep=0)])

    for prompt, expected in ((None, ["r1", "r2"]), ("x" * 400, ["[cleared]", "[cleared]"])):
        agent = create_agent(model, [], system_prompt=prompt, middleware=[middleware])
        run_agent(agent, how_call, {"messages": history})
        assert results(model.calls[-1].messages) == expected


def test_a_token_counter_gets_the_system_message_first(how_call: str) -> None:
    counted: list[list[str]] = []

    def counter(messages: Sequence[BaseMessage]) -> int:
        counted.append([type(m).__name__ for m in messages])
        return 0

    middleware = ContextEditingMiddleware(token_counter=counter)
    agent = create_agent(
        ScriptedChatModel(["done"]), [], system_prompt="Hi.", middleware=[middleware]
    )

    run_agent(agent, how_call, {"messages": [HumanMessage("hello")]})

    assert counted == [["SystemMessage", "HumanMessage"]]


class CountingModel(ScriptedChatModel):
    """Counts tokens as 10 per message, recording what it was asked to count."""

    counted: list[tuple[list[str], int]] = Field(default_factory=list)

    def get_num_tokens_from_messages(
        self, messages: list[BaseMessage], tools: Sequence[Any] | None = None
    ) -> int:
        self.counted.append(([type(m).__name__ for m in messages], len(tools or ())))
        return 10 * len(messages)


def test_the_model_token_count_method_asks_the_model(how_call: str) -> None:
    model = CountingModel(["done"])
    middleware = ContextEditingMiddleware(
        edits=[ClearToolUsesEdit(trigger=50, keep=1)], token_count_method="model"
    )
    agent = create_agent(model, [search], system_prompt="Be brief.", middleware=[middleware])

    run_agent(agent, how_call, {"messages": tool_rounds("search", "search")})  # 5 + system

    assert results(model.calls[0].messages) == ["[cleared]", "r2"]
    kinds, tools = model.counted[0]
    assert kinds[0] == "SystemMessage"
    assert len(kinds) == 6
    assert tools == 1


class Shout:
    """A custom edit that changes messages in place."""

    def apply(self, messages: list[AnyMessage], *, count_tokens: Any) -> None:
        for message in messages:
            message.content = message.text.upper()


def test_a_custom_edit_changes_copies_not_the_state(how_call: str) -> None:
    model = ScriptedChatModel(["done"])
    edit: ContextEdit = Shout()
    agent = create_agent(model, [], middleware=[ContextEditingMiddleware(edits=[edit])])

    result = run_agent(agent, how_call, {"messages": [HumanMessage("quiet please")]})

    assert model.calls[0].messages[0].text == "QUIET PLEASE"
    assert result["messages"][0].text == "quiet please"


def test_edits_run_in_order(how_call: str) -> None:
    model = ScriptedChatModel(["done"])
    edits = [ClearToolUsesEdit(trigger=0, keep=1, placeholder="gone"), Shout()]
    middleware = ContextEditingMiddleware(edits=edits, token_counter=per_message(1))
    agent = create_agent(model, [search], middleware=[middleware])

    run_agent(agent, how_call, {"messages": tool_rounds("search", "search")})

    assert results(model.calls[0].messages) == ["GONE", "R2"]


def test_later_model_calls_in_a_run_are_edited_too(how: str) -> None:
    model = ScriptedChatModel(
        [calls(("search", {"query": "a"})), calls(("search", {"query": "b"})), "done"]
    )
    edit = ClearToolUsesEdit(trigger=0, keep=1)
    agent = create_agent(model, [search], middleware=[ContextEditingMiddleware(edits=[edit])])

    result = run_agent(agent, how, {"messages": [HumanMessage("find")]})

    assert results(model.calls[1].messages) == ["results for a"]
    assert results(model.calls[2].messages) == ["[cleared]", "results for b"]
    assert results(result["messages"]) == ["results for a", "results for b"]


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        ({"trigger": -1}, "trigger must be a whole number, 0 or more, got -1"),
        ({"keep": 1.5}, "keep must be a whole number"),
        ({"clear_at_least": True}, "clear_at_least must be a whole number"),
        ({"exclude_tools": "search"}, "exclude_tools must be a list of tool names"),
        ({"exclude_tools": [search]}, "exclude_tools must be a list of tool names"),
        ({"placeholder": None}, "placeholder must be a str"),
        ({"clear_tool_inputs": "yes"}, "clear_tool_inputs must be a bool"),
    ],
)
def test_bad_edit_options_fail_when_built(options: dict[str, Any], complaint: str) -> None:
    with pytest.raises(MiddlewareError, match=f"ClearToolUsesEdit: {complaint}"):
        ClearToolUsesEdit(**options)


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        ({"token_count_method": "exact"}, "token_count_method must be 'approximate' or 'model'"),
        ({"edits": [object()]}, r"edits\[0\] is object, which has no apply"),
        ({"token_counter": 3}, "token_counter must be a function"),
    ],
)
def test_bad_middleware_options_fail_when_built(options: dict[str, Any], complaint: str) -> None:
    with pytest.raises(MiddlewareError, match=f"ContextEditingMiddleware: {complaint}"):
        ContextEditingMiddleware(**options)


def test_an_edit_is_immutable_and_exclusions_are_a_tuple() -> None:
    edit = ClearToolUsesEdit(exclude_tools=["fetch"])
    assert edit.exclude_tools == ("fetch",)
    with pytest.raises(AttributeError):
        edit.keep = 5  # type: ignore[misc]


def test_a_token_counter_that_is_not_callable_is_also_a_type_error() -> None:
    # LangChain raises TypeError when it calls it; `except TypeError` keeps working.
    with pytest.raises(TypeError, match="token_counter must be a function"):
        ContextEditingMiddleware(token_counter=3)  # type: ignore[arg-type]
