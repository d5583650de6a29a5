"""Input that cannot be right is refused before the model is called: a misnamed ``messages``,
a run that would send the model nothing, misspelled keywords of the entry points, hook updates
of the wrong plain type, and typos in decorator options. What LangChain runs correctly still
runs."""

from __future__ import annotations

import warnings
from typing import Annotated, Any, Literal, NotRequired

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from typing_extensions import ReadOnly, TypedDict

from graphagent import HookReturnError, create_agent
from graphagent.errors import AgentInputError, MisnamedHookWarning, UnknownArgumentError
from graphagent.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRetryMiddleware,
    before_model,
    hook_config,
    wrap_tool_call,
)
from graphagent.testing import ScriptedChatModel
from tests.conftest import Run, run_agent

pytestmark = pytest.mark.usefixtures("hook_mode")


def test_a_key_one_typo_from_messages_is_refused_before_anything_runs(run: Run) -> None:
    model = ScriptedChatModel(["hi"])
    agent = create_agent(model)

    with pytest.raises(AgentInputError) as caught:
        run(agent, {"msgs": ["hello"]})

    assert str(caught.value) == (
        "The agent 'LangGraph' got the input keys ['msgs'] and no 'messages', which it reads the "
        "conversation from; did you mean 'messages' for 'msgs'? Pass {'messages': [...]}."
    )
    assert model.calls == []


@pytest.mark.parametrize("inputs", [{}, {"topic": "x"}], ids=["empty", "other keys"])
def test_a_run_that_would_send_the_model_nothing_is_refused(run: Run, inputs: Any) -> None:
    model = ScriptedChatModel(["hi"])
    agent = create_agent(model, name="helper")

    with pytest.raises(AgentInputError, match="The agent 'helper' would call its model with no"):
        run(agent, inputs)
    assert model.calls == []


def test_the_refusal_is_not_retried(run: Run) -> None:
    model = ScriptedChatModel(["hi"])
    retry = ModelRetryMiddleware(max_retries=3, initial_delay=0, jitter=False)
    agent = create_agent(model, middleware=[retry])

    with pytest.raises(AgentInputError):
        run(agent, {})
    assert model.calls == []


def test_a_system_prompt_alone_or_an_explicit_empty_list_runs(run: Run) -> None:
    prompted = ScriptedChatModel(["from the prompt"])
    agent = create_agent(prompted, system_prompt="Say something.")
    assert run(agent, {})["messages"][-1].content == "from the prompt"

    bare = ScriptedChatModel(["from nothing"])
    result = run(create_agent(bare), {"messages": []})
    assert result["messages"][-1].content == "from nothing", "the caller's choice, as in LangChain"


def test_a_thread_with_history_runs_on_without_new_messages(run: Run) -> None:
    model = ScriptedChatModel(["one", "two"])
    agent = create_agent(model, checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "t"}}
    run(agent, {"messages": ["hi"]}, config=thread)

    result = run(agent, {}, config=thread)

    assert [m.content for m in result["messages"]] == ["hi", "one", "two"]


class Topic(TypedDict):
    topic: str


def test_a_parent_without_messages_is_named(how_call: str) -> None:
    model = ScriptedChatModel(["hi"])
    parent = StateGraph(Topic)
    parent.add_node("agent", create_agent(model))
    parent.add_edge(START, "agent")

    with pytest.raises(AgentInputError) as caught:
        run_agent(parent.compile(), how_call, {"topic": "weather"})

    assert "It runs as a node of a parent graph whose state has no 'messages' field" in str(
        caught.value
    )
    assert "docs/composition.md" in str(caught.value)
    assert model.calls == []


class Ticketed(MessagesState):
    ticket: str


def test_a_parents_extra_keys_are_fine(how_call: str) -> None:
    parent = StateGraph(Ticketed)
    parent.add_node("agent", create_agent(ScriptedChatModel(["answered"])))
    parent.add_edge(START, "agent")

    result = run_agent(parent.compile(), how_call, {"messages": ["hi"], "ticket": "T-1"})

    assert result["messages"][-1].content == "answered"
    assert result["ticket"] == "T-1"


@pytest.mark.parametrize(
    ("keyword", "meant"),
    [("contxt", "context"), ("strem_mode", "stream_mode"), ("interupt_before", "interrupt_before")],
)
def test_a_misspelled_keyword_of_the_entry_points_is_refused(
    how: str, keyword: str, meant: str
) -> None:
    model = ScriptedChatModel(["hi"])
    agent = create_agent(model)

    with pytest.raises(UnknownArgumentError) as caught:
        run_agent(agent, how, {"messages": ["hi"]}, **{keyword: None})

    assert str(caught.value).startswith(
        f"invoke()/stream() got an unexpected keyword argument {keyword!r}; did you mean {meant!r}?"
    )
    assert model.calls == []


def test_every_keyword_langgraph_takes_is_still_taken(how: str) -> None:
    agent = create_agent(ScriptedChatModel(["hi"]), checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "t"}}
    result = run_agent(
        agent, how, {"messages": ["hi"]}, config=thread, context=None, durability="exit"
    )
    assert result["messages"][-1].content == "hi"


class Ledger(AgentState):
    credits: NotRequired[int]
    ratio: NotRequired[float]
    mood: NotRequired[Literal["calm", "angry"]]
    tags: NotRequired[list[str]]
    log: NotRequired[Annotated[list[str], lambda old, new: [*old, *new]]]
    anything: NotRequired[Any]
    rank: NotRequired[ReadOnly[int]]


@pytest.mark.parametrize(
    ("update", "words"),
    [
        ({"credits": "many"}, "returned credits='many' (str), but the state field 'credits' is "),
        ({"mood": "sad"}, "'mood' is declared as Literal['calm', 'angry'] by 'Bank'"),
        ({"tags": "a, b"}, "'tags' is declared as list[str] by 'Bank'"),
        ({"ratio": "half"}, "'ratio' is declared as float"),
        ({"rank": "first"}, "returned rank='first' (str), but the state field 'rank' is "),
    ],
)
def test_a_hook_update_of_the_wrong_plain_type_is_refused(
    run: Run, update: dict[str, Any], words: str
) -> None:
    @before_model(state_schema=Ledger, name="Bank")
    def bank(state: Any, runtime: Any) -> dict[str, Any]:
        return update

    model = ScriptedChatModel(["hi"])
    with pytest.raises(HookReturnError) as caught:
        run(create_agent(model, middleware=[bank]), {"messages": ["hi"]})

    assert str(caught.value).startswith("'Bank.before_model' returned ")
    assert words in str(caught.value)
    assert model.calls == []


def test_updates_that_fit_none_reducers_and_unchecked_types_pass(run: Run) -> None:
    @before_model(state_schema=Ledger, name="Bank")
    def bank(state: Any, runtime: Any) -> dict[str, Any]:
        return {
            "credits": 3,
            "ratio": 1,  # an int is a float, as type checkers say
            "mood": "calm",
            "tags": ["a"],
            "log": ["entry"],
            "anything": object(),
        }

    @before_model(state_schema=Ledger, name="Clear")
    def clear(state: Any, runtime: Any) -> dict[str, Any]:
        return {"credits": None}

    result = run(
        create_agent(ScriptedChatModel(["hi"]), middleware=[bank, clear]), {"messages": ["hi"]}
    )

    assert result["tags"] == ["a"]
    assert result["log"] == ["entry"]
    assert result.get("credits") is None


def test_decorator_and_option_typos_name_the_closest_option() -> None:
    with pytest.raises(UnknownArgumentError, match=r"@before_model\(\) got an unexpected keyword"):
        before_model(can_jump=["end"])
    with pytest.raises(UnknownArgumentError, match="did you mean 'name'"):
        wrap_tool_call(nam="x")
    with pytest.raises(UnknownArgumentError, match=r"hook_config.*did you mean 'can_jump_to'"):
        hook_config(can_jumpto=["end"])  # type: ignore[call-arg]


class ToolWatcher(AgentMiddleware):
    def after_model(self, state: Any, runtime: Any) -> None:
        return None

    def before_tool(self, request: Any) -> None:
        return None


class ModelWatcher(AgentMiddleware):
    def before_model(self, state: Any, runtime: Any) -> None:
        return None

    def on_model_end(self, state: Any) -> None:
        return None


def test_a_method_named_like_a_hook_warns_with_the_closest_hook() -> None:
    model = ScriptedChatModel(["hi"])
    with pytest.warns(
        MisnamedHookWarning, match=r"before_tool\(\).*closest hook is wrap_tool_call"
    ):
        create_agent(model, middleware=[ToolWatcher()])
    with pytest.warns(MisnamedHookWarning, match=r"on_model_end\(\).*closest hook is after_model"):
        create_agent(model, middleware=[ModelWatcher()])


class Helpers(AgentMiddleware):
    def after_agent(self, state: Any, runtime: Any) -> None:
        self.after_agent_cleanup()

    def after_agent_cleanup(self) -> None:
        return None

    def summarize(self) -> str:
        return ""

    def on_error(self) -> None:
        return None


class OnlyState(AgentMiddleware):
    state_schema = Ledger

    def before_tool(self) -> None:
        return None


def test_helpers_and_middleware_without_hooks_never_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        create_agent(ScriptedChatModel(["hi"]), middleware=[Helpers()])
    from graphagent._plan.discover import discover_all

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert discover_all(OnlyState()) == []
