"""The messages of a run's input get their ids before langgraph writes them: random version-4
UUIDs, as langgraph itself would give, in place, for every entry point and hook mode."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graphagent import create_agent
from graphagent._core.message_ids import give_input_ids, identified_input, new_ids
from graphagent.middleware import AgentMiddleware
from graphagent.state import FullHistoryState
from graphagent.testing import ScriptedChatModel
from tests.conftest import Run

pytestmark = pytest.mark.usefixtures("hook_mode")


class Noting(AgentMiddleware):
    """Adds a plain-string note before the first model call of each turn."""

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        if state["messages"][-1].type != "human":
            return None
        return {"messages": ["a note"]}


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


def test_message_dicts_and_strings_become_messages_with_random_ids(run: Run) -> None:
    agent = create_agent(ScriptedChatModel(["done"]))
    given = {"messages": [{"role": "user", "content": "hi"}, "again"]}

    result = run(agent, given)

    assert [m.content for m in result["messages"]] == ["hi", "again", "done"]
    assert all(_is_uuid4(str(m.id)) for m in result["messages"][:2])
    assert given == {"messages": [{"role": "user", "content": "hi"}, "again"]}, "left as given"


def test_identified_input_turns_every_message_like_into_a_message_with_an_id() -> None:
    pair, text, kept = ("ai", "b"), "c", HumanMessage("d", id="mine")
    given = {"messages": [pair, text, kept], "other": 1}

    out = identified_input(given)

    assert [(m.type, m.content) for m in out["messages"]] == [
        ("ai", "b"),
        ("human", "c"),
        ("human", "d"),
    ]
    assert all(_is_uuid4(str(m.id)) for m in out["messages"][:2])
    assert out["messages"][2] is kept
    assert kept.id == "mine"
    assert out["other"] == 1
    assert given["messages"] == [pair, text, kept]
    alone = identified_input({"messages": "hello"})["messages"]
    assert (alone.type, alone.content, _is_uuid4(str(alone.id))) == ("human", "hello", True)
    update = identified_input(Command(update={"messages": ["x"]})).update["messages"]
    assert _is_uuid4(str(update[0].id))
    unchanged = {"messages": [kept], "n": 2}
    assert identified_input(unchanged) is unchanged
    assert identified_input(None) is None


def test_a_resume_command_or_other_input_is_left_as_it_is() -> None:
    command: Command[None] = Command(resume="yes")
    give_input_ids(command)
    give_input_ids(None)
    give_input_ids({"messages": "not a list"})
    give_input_ids({"messages": [("user", "hi")]})

    assert command == Command(resume="yes")
    assert identified_input(command) is command


def test_a_thread_run_again_keeps_one_message_per_id(run: Run) -> None:
    agent = create_agent(ScriptedChatModel(["first", "second"]), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "ids"}}

    run(agent, {"messages": [HumanMessage("a")]}, config=config)
    result = run(agent, {"messages": [HumanMessage("b")]}, config=config)

    ids = [m.id for m in result["messages"]]
    assert [m.content for m in result["messages"]] == ["a", "first", "b", "second"]
    assert len(set(ids)) == 4


LAYOUTS = {"deltas": None, "full": FullHistoryState}


def _ids(agent: Any, config: Any) -> list[str]:
    return [str(m.id) for m in agent.get_state(config).values["messages"]]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_message_given_without_an_id_has_a_random_one_in_every_thread(
    run: Run, layout: str
) -> None:
    agent = create_agent(
        ScriptedChatModel(["done"], repeat_last=True),
        middleware=[Noting()],
        checkpointer=InMemorySaver(),
        state_schema=LAYOUTS[layout],
    )
    threads = [{"configurable": {"thread_id": name}} for name in ("one", "two")]

    for config in threads:
        run(agent, {"messages": "hello"}, config=config)
        run(agent, {"messages": [("user", "again")]}, config=config)
    one, two = (_ids(agent, config) for config in threads)

    assert len(one) == len(two) == 6  # hello, note, done; again, note, done
    assert not set(one) & set(two), "no id is shared by the two threads"
    assert len(set(one)) == 6
    given = [one[0], one[3], two[0], two[3]]  # the input's; the hook's notes keep their own
    assert all(_is_uuid4(i) for i in given)
    assert _ids(agent, threads[0]) == one, "every read gives the same ids"


@pytest.mark.parametrize("layout", LAYOUTS)
def test_forks_of_one_checkpoint_give_their_new_messages_ids_of_their_own(
    run: Run, layout: str
) -> None:
    agent = create_agent(
        ScriptedChatModel(["done"], repeat_last=True),
        checkpointer=InMemorySaver(),
        state_schema=LAYOUTS[layout],
    )
    config = {"configurable": {"thread_id": "forks"}}
    run(agent, {"messages": "hello"}, config=config)
    base = agent.get_state(config).config

    by_update = [agent.update_state(base, {"messages": ["a note"]}) for _ in range(2)]
    by_run = []
    for _ in range(2):
        run(agent, {"messages": "again"}, config=base)
        by_run.append(agent.get_state(config).config)
    forks = [_ids(agent, fork) for fork in by_update + by_run]

    added = [ids[2] for ids in forks]
    assert len(set(added)) == 4, "each fork's new message has an id of its own"
    assert all(_is_uuid4(i) for i in added)
    assert all(ids[:2] == forks[0][:2] for ids in forks), "the shared part keeps its ids"
    assert [_ids(agent, fork) for fork in by_update + by_run] == forks
