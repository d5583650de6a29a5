"""Mistakes that can be known when the agent is built fail there, naming the culprit and the fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NotRequired

import pytest
from langchain_core.tools import tool

from graphagent import (
    DuplicateMiddlewareError,
    MiddlewareError,
    StateSchemaConflictError,
    create_agent,
)
from graphagent.middleware import (
    AgentMiddleware,
    AgentState,
    ToolCallLimitMiddleware,
    before_model,
)
from graphagent.testing import ScriptedChatModel

MODEL = ScriptedChatModel(["x"])


class Retry(AgentMiddleware):
    def before_model(self, state: Any, runtime: Any) -> None:
        return None


class Other(AgentMiddleware):
    pass


def test_duplicate_names_name_the_duplicate_its_positions_and_the_fix() -> None:
    with pytest.raises(DuplicateMiddlewareError) as caught:
        create_agent(MODEL, middleware=[Retry(), Other(), Retry()])
    assert str(caught.value) == (
        "Please remove duplicate middleware instances: the name 'Retry' is used at positions "
        "0 and 2; give one a distinct name "
        "(name=... on a decorator, or a `name` attribute) or use a subclass."
    )
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, AssertionError)  # what LangChain raises


def test_three_duplicates_list_every_position_and_ask_for_two_new_names() -> None:
    with pytest.raises(DuplicateMiddlewareError) as caught:
        create_agent(MODEL, middleware=[Retry(), Retry(), Retry()])
    assert str(caught.value) == (
        "Please remove duplicate middleware instances: the name 'Retry' is used at positions "
        "0, 1 and 2; give all but one distinct names (name=... on a decorator, or a `name` "
        "attribute) or use subclasses."
    )


def test_a_distinct_name_resolves_the_duplicate() -> None:
    second = Retry()
    second.name = "Retry2"
    agent = create_agent(MODEL, middleware=[Retry(), second])
    assert {"Retry.before_model", "Retry2.before_model"} <= set(agent.get_graph().nodes)


def test_decorated_hooks_with_the_same_function_name_collide() -> None:
    def hook(state: Any, runtime: Any) -> None:
        return None

    with pytest.raises(DuplicateMiddlewareError, match="'hook' is used at positions 0 and 1"):
        create_agent(MODEL, middleware=[before_model(hook), before_model(hook)])
    create_agent(MODEL, middleware=[before_model(hook), before_model(name="again")(hook)])


def test_a_class_instead_of_an_instance() -> None:
    with pytest.raises(
        MiddlewareError, match=r"middleware\[0\] is the class Retry.*pass Retry\(...\)"
    ):
        create_agent(MODEL, middleware=[Retry])  # type: ignore[list-item]


def test_something_that_is_not_middleware() -> None:
    with pytest.raises(MiddlewareError, match=r"middleware\[1\] is 'oops' \(str\)"):
        create_agent(MODEL, middleware=[Retry(), "oops"])  # type: ignore[list-item]


def test_a_name_langgraph_cannot_use() -> None:
    odd = Retry()
    odd.name = "a:b"
    with pytest.raises(MiddlewareError, match=r"has the name 'a:b'"):
        create_agent(MODEL, middleware=[odd])


class CountAsInt(AgentState):
    count: NotRequired[int]


class CountAsStr(AgentState):
    count: NotRequired[str]


def test_conflicting_state_fields_name_both_middleware() -> None:
    @before_model(state_schema=CountAsInt)
    def counter(state: Any, runtime: Any) -> None:
        return None

    @before_model(state_schema=CountAsStr)
    def labeller(state: Any, runtime: Any) -> None:
        return None

    with pytest.raises(StateSchemaConflictError) as caught:
        create_agent(MODEL, middleware=[counter, labeller])
    assert str(caught.value) == (
        "State field 'count' is declared as int by 'counter' and as str by "
        "'labeller'; declare it with the same type and reducer in both schemas (subclassing "
        "the other schema does that), or rename one of the fields."
    )


def test_two_middleware_that_declare_one_field_differently_still_conflict() -> None:
    @before_model(state_schema=CountAsStr)
    def labeller(state: Any, runtime: Any) -> None:
        return None

    with pytest.raises(StateSchemaConflictError, match=r"by 'ToolCallLimitMiddleware' and"):
        create_agent(
            MODEL,
            middleware=[
                ToolCallLimitMiddleware(thread_limit=3),
                before_model(state_schema=_ToolCountsAsText, name="reader")(_noop_hook),
            ],
        )
    create_agent(MODEL, middleware=[labeller])  # one declarer alone is fine


class _ToolCountsAsText(AgentState):
    thread_tool_call_count: NotRequired[str]


def _noop_hook(state: Any, runtime: Any) -> None:
    return None


def test_a_state_schema_that_is_not_a_typed_dict() -> None:
    @dataclass
    class NotTyped:
        count: int = 0

    with pytest.raises(
        MiddlewareError, match=r"'state_schema' gives a state_schema of .* TypedDict"
    ):
        create_agent(MODEL, state_schema=NotTyped)


@tool
def search(query: str) -> str:
    """Search."""
    return query


def test_duplicate_tool_names() -> None:
    class Searching(AgentMiddleware):
        tools = (search,)

    with pytest.raises(
        MiddlewareError,
        match="'search' comes from both the agent's tool list and middleware 'Searching'",
    ):
        create_agent(MODEL, [search], middleware=[Searching()])


def test_bad_tools_and_prompts() -> None:
    with pytest.raises(TypeError, match=r"tools\[0\] is 42"):
        create_agent(MODEL, [42])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="system_prompt must be a str or a SystemMessage"):
        create_agent(MODEL, system_prompt=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="model must be a langchain_core BaseChatModel"):
        create_agent(object())  # type: ignore[arg-type]


def test_nothing_is_built_when_validation_fails() -> None:
    built: list[str] = []

    class Tracking(AgentMiddleware):
        @property
        def state_schema(self) -> type[Any]:  # type: ignore[override]
            built.append("schema read")
            return AgentState

    with pytest.raises(DuplicateMiddlewareError):
        create_agent(MODEL, middleware=[Tracking(), Tracking()])
    assert built == []


def test_validate_agent_sees_the_tools_and_checkpointer_before_anything_is_built() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from graphagent.middleware import AgentFacts

    seen: list[tuple[frozenset[str], bool]] = []

    class NeedsSearch(AgentMiddleware):
        def validate_agent(self, agent: AgentFacts) -> None:
            seen.append((agent.tool_names, agent.checkpointer))
            if "search" not in agent.tool_names:
                raise MiddlewareError(
                    f"{self.name} needs a 'search' tool; the agent has {sorted(agent.tool_names)}."
                )

    with pytest.raises(
        MiddlewareError, match=r"NeedsSearch needs a 'search' tool; the agent has \[\]"
    ):
        create_agent(MODEL, middleware=[NeedsSearch()])
    create_agent(MODEL, [search], middleware=[NeedsSearch()], checkpointer=InMemorySaver())
    assert seen == [(frozenset(), False), (frozenset({"search"}), True)]


def test_validate_agent_sees_named_provider_tools() -> None:
    from graphagent.middleware import AgentFacts

    seen: list[frozenset[str]] = []

    class Look(AgentMiddleware):
        def validate_agent(self, agent: AgentFacts) -> None:
            seen.append(agent.tool_names)

    web = {"type": "web_search_20250305", "name": "web_search"}
    create_agent(MODEL, [search, web, {"type": "code_interpreter"}], middleware=[Look()])
    assert seen == [frozenset({"search", "web_search"})]
