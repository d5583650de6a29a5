"""The messages of a run's input get their ids before langgraph writes them: random version-4
UUIDs, as langgraph itself would give, in place, for every entry point and hook mode."""

from __future__ import annotations

import uuid

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graphagent import create_agent
from graphagent._core.message_ids import give_input_ids, new_ids
from graphagent.testing import ScriptedChatModel
from tests.conftest import Run

pytestmark = pytest.mark.usefixtures("hook_mode")


def _is_uuid4(value: str) -> bool:
    parsed = uuid.UUID(value)
    return parsed.version == 4 and parsed.variant == uuid.RFC_4122 and str(parsed) == value


def test_new_ids_are_distinct_version_4_uuids() -> None:
    ids = list(new_ids(2_000))

    assert len(set(ids)) == 2_000
    assert all(_is_uuid4(i) for i in ids)
    assert list(new_ids(0)) == []


def test_only_message_objects_without_an_id_are_given_one() -> None:
    messages = [HumanMessage("a"), HumanMessage("b", id="keep"), AIMessage("c", id="")]
    as_dict = {"role": "user", "content": "d"}

    give_input_ids({"messages": [*messages, as_dict]})

    assert _is_uuid4(str(messages[0].id))
    assert _is_uuid4(str(messages[2].id))
    assert messages[1].id == "keep"
    assert as_dict == {"role": "user", "content": "d"}


def test_input_messages_without_ids_get_them_in_place_and_keep_given_ones(run: Run) -> None:
    earlier = [HumanMessage("one"), AIMessage("two", id=""), HumanMessage("three", id="mine")]
    question = HumanMessage("four")
    agent = create_agent(ScriptedChatModel(["done"]))

    result = run(agent, {"messages": [*earlier, question]})

    given = [m.id for m in [*earlier, question]]
    assert given[2] == "mine"
    assert all(_is_uuid4(str(i)) for i in given[:2] + given[3:])
    assert [m.id for m in result["messages"][:4]] == given
    assert len(set(given)) == 4


def test_message_dicts_and_strings_are_left_to_langgraph(run: Run) -> None:
    agent = create_agent(ScriptedChatModel(["done"]))

    result = run(agent, {"messages": [{"role": "user", "content": "hi"}, "again"]})

    assert [m.content for m in result["messages"]] == ["hi", "again", "done"]
    assert all(m.id for m in result["messages"])


def test_a_resume_command_or_other_input_is_left_as_it_is() -> None:
    command: Command[None] = Command(resume="yes")
    give_input_ids(command)
    give_input_ids(None)
    give_input_ids({"messages": "not a list"})
    give_input_ids({"messages": [("user", "hi")]})

    assert command == Command(resume="yes")


def test_a_thread_run_again_keeps_one_message_per_id(run: Run) -> None:
    agent = create_agent(ScriptedChatModel(["first", "second"]), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "ids"}}

    run(agent, {"messages": [HumanMessage("a")]}, config=config)
    result = run(agent, {"messages": [HumanMessage("b")]}, config=config)

    ids = [m.id for m in result["messages"]]
    assert [m.content for m in result["messages"]] == ["a", "first", "b", "second"]
    assert len(set(ids)) == 4
