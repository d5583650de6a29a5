"""A node hook's update is checked where the hook returns it: a malformed one is a
``HookReturnError`` naming the hook, not an error from deep inside langgraph or langchain-core."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.types import Overwrite

from graphagent import HookReturnError, create_agent
from graphagent.middleware import AgentMiddleware, hook_config
from graphagent.testing import ScriptedChatModel

pytestmark = pytest.mark.usefixtures("hook_mode")

QUESTION = {"messages": [HumanMessage("hi", id="question")]}


def returning(update: dict[str, Any]) -> AgentMiddleware:
    """A middleware 'Check' whose before_model (sync and async) returns ``update``."""

    class Check(AgentMiddleware):
        @hook_config(can_jump_to=["end"])
        def before_model(self, state: Any, runtime: Any) -> dict[str, Any]:
            return update

        @hook_config(can_jump_to=["end"])
        async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any]:
            return update

    return Check()


@pytest.mark.parametrize(
    ("update", "message"),
    [
        (
            {"messages": 42},
            "'Check.before_model' returned messages=42, which is not a message (Unsupported "
            "message type: <class 'int'>); return messages, (role, text) pairs or dicts with "
            "'role' and 'content'.",
        ),
        (
            {"messages": [AIMessage("fine"), {"text": "no role"}]},
            "'Check.before_model' returned messages[1]={'text': 'no role'}, which is not a "
            "message (Message dict must contain 'role' and 'content' keys, got {'text': 'no "
            "role'}); return messages, (role, text) pairs or dicts with 'role' and 'content'.",
        ),
        (
            {"messages": Overwrite([AIMessage("fine"), 42])},
            "'Check.before_model' returned messages[1]=42, which is not a message (Unsupported "
            "message type: <class 'int'>); return messages, (role, text) pairs or dicts with "
            "'role' and 'content'.",
        ),
        (
            {"jump_to": ["end"]},
            "'Check.before_model' returned jump_to=['end'], which is not a jump target; return "
            "one of 'end', 'tools' or 'model' (a str), or None.",
        ),
        (
            {"jump_to": "stop"},
            "'Check.before_model' returned jump_to='stop', which is not a jump target; return "
            "one of 'end', 'tools' or 'model' (a str), or None.",
        ),
    ],
    ids=["not-a-list", "a-dict-without-role", "inside-an-overwrite", "a-list-jump", "unknown"],
)
def test_a_malformed_update_names_the_hook(update: dict[str, Any], message: str, run: Any) -> None:
    model = ScriptedChatModel(["never"])
    middleware = [Witness([]), returning(update)]  # not first: fused, it runs mid-node
    with pytest.raises(HookReturnError) as caught:
        run(create_agent(model, middleware=middleware), QUESTION)
    assert str(caught.value) == message
    assert model.call_count == 0


@pytest.mark.parametrize(
    ("messages", "texts"),
    [
        (AIMessage("one message"), ["hi", "one message", "done"]),
        ("a str is a user message", ["hi", "a str is a user message", "done"]),
        (("ai", "a pair"), ["hi", "a pair", "done"]),
        ({"role": "assistant", "content": "a dict"}, ["hi", "a dict", "done"]),
        ([RemoveMessage(id="question"), ("user", "instead")], ["instead", "done"]),
        (Overwrite([HumanMessage("overwritten")]), ["overwritten", "done"]),
        ({"__overwrite__": [HumanMessage("overwritten")]}, ["overwritten", "done"]),
    ],
    ids=["message", "str", "pair", "dict", "remove", "overwrite", "overwrite-dict"],
)
def test_every_form_the_messages_reducer_reads_still_applies(
    messages: Any, texts: list[str], run: Any
) -> None:
    class Once(AgentMiddleware):
        def before_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
            return {"messages": messages}

    seen: list[list[tuple[str, str]]] = []
    agent = create_agent(ScriptedChatModel(["done"]), middleware=[Once(), Witness(seen)])
    result = run(agent, {"messages": [HumanMessage("hi", id="question")]})
    assert [m.text for m in result["messages"]] == texts
    kept = [(m.id, m.text) for m in result["messages"][:-1]]
    # Later hooks see the ids the state keeps; an Overwrite skips the reducer, which gives ids,
    # so the messages it writes get theirs at the next reducer call.
    unset = [(m.id and None, m.text) for m in result["messages"][:-1]]
    assert seen in ([kept, kept], [unset, unset])


class Witness(AgentMiddleware):
    """Records the messages (id, text) each of its hooks sees."""

    def __init__(self, seen: list[list[tuple[str, str]]]) -> None:
        self.seen = seen

    def before_agent(self, state: Any, runtime: Any) -> None:
        self.seen.append([(m.id, m.text) for m in state["messages"]])

    def before_model(self, state: Any, runtime: Any) -> None:
        self.seen.append([(m.id, m.text) for m in state["messages"]])
