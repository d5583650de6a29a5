"""Hooks of the wrong shape, misspelled hooks and middleware that do nothing are caught when the
agent is built (or when a decorator is applied), naming the middleware, the hook and the fix;
hooks of every valid shape still build and run."""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, NotRequired

import pytest
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from graphagent import MiddlewareError, create_agent
from graphagent.middleware import (
    AgentFacts,
    AgentMiddleware,
    AgentState,
    ToolCallLimitMiddleware,
    ToolRetryMiddleware,
    after_agent,
    after_model,
    before_model,
    hook_config,
    wrap_agent,
    wrap_model_call,
    wrap_tool_call,
)
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent
from tests.tools import add

QUESTION = {"messages": [("user", "What is 1 + 2?")]}
ASYNC_RUNS = ("ainvoke", "astream")


def scripted() -> ScriptedChatModel:
    return ScriptedChatModel([calls(("add", {"a": 1, "b": 2})), "3"])


def middleware(**methods: Any) -> AgentMiddleware:
    """An instance of a one-off subclass named 'M' with ``methods``."""
    return type("M", (AgentMiddleware,), methods)()  # type: ignore[no-any-return]


def build(*items: AgentMiddleware) -> Any:
    return create_agent(scripted(), [add], middleware=list(items))


# Valid hooks of every shape


class EveryShape(AgentMiddleware):
    """Every hook and its twin, each written in another valid shape."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def before_agent(self, state: Any, runtime: Any) -> None:
        self.log.append("before_agent")

    async def abefore_agent(self, state: Any, rt: Any = None) -> None:
        self.log.append("abefore_agent")

    def before_model(self, *args: Any) -> None:
        self.log.append("before_model")

    async def abefore_model(self, state: Any, runtime: Any, extra: int = 1) -> None:
        self.log.append("abefore_model")

    def after_model(self, state: Any) -> None:  # LangChain passes runtime only when declared
        self.log.append("after_model")

    async def aafter_model(self, state: Any) -> None:
        self.log.append("aafter_model")

    def after_agent(self, state: Any, runtime: Any, *, flag: bool = False) -> None:
        self.log.append("after_agent")

    async def aafter_agent(self, state: Any, runtime: Any) -> None:
        self.log.append("aafter_agent")

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.log.append("wrap_model_call")
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: Any, *rest: Any) -> Any:
        self.log.append("awrap_model_call")
        return await handler(request)

    @staticmethod
    def wrap_tool_call(request: Any, handler: Any) -> Any:
        return handler(request)

    async def awrap_tool_call(self, req: Any, call: Any) -> Any:
        self.log.append("awrap_tool_call")
        return await call(req)

    def wrap_agent(self, state: Any, runtime: Any) -> Iterator[None]:
        self.log.append("wrap_agent")
        yield

    async def awrap_agent(self, state: Any, runtime: Any) -> AsyncIterator[None]:
        self.log.append("awrap_agent")
        yield


def test_valid_hooks_of_every_shape_build_and_run(how: str, run: Any) -> None:
    shapes = EveryShape()
    result = run(build(shapes), QUESTION)
    assert result["messages"][-1].text == "3"
    if how in ASYNC_RUNS:
        assert set(shapes.log) == {
            "abefore_agent",
            "abefore_model",
            "aafter_model",
            "aafter_agent",
            "awrap_model_call",
            "awrap_tool_call",
            "awrap_agent",
        }
    else:
        assert set(shapes.log) == {
            "before_agent",
            "before_model",
            "after_model",
            "after_agent",
            "wrap_model_call",
            "wrap_agent",
        }


class Counted(AgentState):
    seen: NotRequired[int]


def test_a_node_hook_taking_only_state_gets_the_state_and_its_update_applies(run: Any) -> None:
    class Retrieve(AgentMiddleware):
        state_schema = Counted

        def before_model(self, state: Any) -> dict[str, Any]:
            return {"seen": len(state["messages"])}

    assert run(build(Retrieve()), QUESTION)["seen"] == 3


class NamesExtras(AgentMiddleware):
    """Node hooks that name ``config``, ``writer`` or ``store``, as langgraph lets a node (and
    so LangChain lets a hook): each gets them by keyword, the runtime only where it is taken."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def before_agent(self, state: Any, runtime: Any, config: RunnableConfig) -> None:
        self.seen.append(("before_agent", config["configurable"]["thread_id"]))

    async def abefore_agent(self, state: Any, runtime: Any, config: RunnableConfig) -> None:
        self.seen.append(("before_agent", config["configurable"]["thread_id"]))

    def before_model(self, state: Any, *, writer: Any) -> None:
        writer({"hook": "before_model"})

    async def abefore_model(self, state: Any, *, writer: Any) -> None:
        writer({"hook": "before_model"})

    def after_model(self, state: Any, store: Any, config: Any = None) -> None:
        self.seen.append(("after_model", store.get(("notes",), "n1").value))

    def after_agent(
        self, state: Any, runtime: Any, *, config: Any, writer: Any, store: Any
    ) -> None:
        writer({"hook": "after_agent", "thread": config["configurable"]["thread_id"]})
        self.seen.append(("after_agent", runtime.store is store))


def test_node_hooks_naming_config_writer_or_store_get_them(how: str, hook_mode: str) -> None:
    store = InMemoryStore()
    store.put(("notes",), "n1", {"text": "kept"})
    extras = NamesExtras()
    agent = create_agent(
        scripted(), [add], middleware=[extras], checkpointer=InMemorySaver(), store=store
    )
    config: RunnableConfig = {"configurable": {"thread_id": "t1"}}

    if how in ("stream", "astream"):
        chunks = stream_all(agent, how, QUESTION, config, stream_mode="custom")
        assert chunks == [
            {"hook": "before_model"},
            {"hook": "before_model"},
            {"hook": "after_agent", "thread": "t1"},
        ]
    else:
        run_agent(agent, how, QUESTION, config=config)
    assert extras.seen == [
        ("before_agent", "t1"),
        ("after_model", {"text": "kept"}),
        ("after_model", {"text": "kept"}),
        ("after_agent", True),
    ]


def stream_all(agent: Any, how: str, inputs: Any, config: Any, **kwargs: Any) -> list[Any]:
    if how == "stream":
        return list(agent.stream(inputs, config, **kwargs))

    async def collect() -> list[Any]:
        return [chunk async for chunk in agent.astream(inputs, config, **kwargs)]

    return asyncio.run(collect())


def test_decorated_hooks_of_every_shape_build_and_run(how: str, run: Any) -> None:
    log: list[str] = []

    @before_model
    def first(state: Any, runtime: Any) -> None:
        log.append("before_model")

    @after_model
    async def second(state: Any, runtime: Any) -> None:
        log.append("aafter_model")

    @after_agent
    def third(state: Any) -> None:
        log.append("after_agent")

    @wrap_tool_call
    def fourth(request: Any, handler: Any, *rest: Any) -> Any:
        log.append("wrap_tool_call")
        return handler(request)

    @wrap_agent
    def fifth(state: Any, runtime: Any) -> Iterator[None]:
        log.append("wrap_agent")
        yield

    @wrap_agent(name="sixth")
    async def sixth(state: Any, runtime: Any) -> AsyncIterator[None]:
        log.append("awrap_agent")
        yield

    hooks = (first, second, third, fourth, fifth, sixth)
    if how in ASYNC_RUNS:
        assert run(build(*hooks), QUESTION)["messages"][-1].text == "3"
        assert set(log) == {"before_model", "aafter_model", "after_agent", "wrap_tool_call"} | {
            "wrap_agent",
            "awrap_agent",
        }
    else:  # an async-only after_model can't run synchronously; the others all build
        assert run(build(first, third, fourth, fifth), QUESTION)["messages"][-1].text == "3"
        assert set(log) == {"before_model", "after_agent", "wrap_tool_call", "wrap_agent"}


def test_a_decorated_hook_shows_its_function_s_parameters() -> None:
    @before_model
    def check(state: Any, runtime: Any) -> None:
        return None

    assert list(inspect.signature(check.before_model).parameters) == ["state", "runtime"]


def test_an_async_hook_under_a_sync_wrapper_is_still_async() -> None:
    def logged(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any) -> Any:
            return func(*args)

        return wrapper

    class Logged(AgentMiddleware):
        ran = False

        @logged
        async def abefore_model(self, state: Any, runtime: Any) -> None:
            type(self).ran = True

    asyncio.run(build(Logged()).ainvoke(QUESTION))
    assert Logged.ran


# Hooks of the wrong shape


async def _coroutine(self: Any, a: Any, b: Any) -> None:
    return None


def _plain(self: Any, a: Any, b: Any) -> None:
    return None


def _generator(self: Any, a: Any, b: Any) -> Iterator[None]:
    yield


async def _async_generator(self: Any, a: Any, b: Any) -> AsyncIterator[None]:
    yield


TWINNED = ("before_agent", "before_model", "after_model", "after_agent")
TWINNED += ("wrap_model_call", "wrap_tool_call")


@pytest.mark.parametrize("hook", TWINNED)
def test_an_async_def_under_a_sync_hook_name_is_refused(hook: str) -> None:
    with pytest.raises(MiddlewareError) as caught:
        build(middleware(**{hook: _coroutine}))
    assert str(caught.value) == (
        f"'M.{hook}' is an async def, but {hook} must be a plain def; rename it to a{hook}, or "
        "make it a plain def."
    )


@pytest.mark.parametrize("hook", TWINNED)
def test_a_plain_def_under_an_async_hook_name_is_refused(hook: str) -> None:
    with pytest.raises(MiddlewareError) as caught:
        build(middleware(**{"a" + hook: _plain}))
    assert str(caught.value) == (
        f"'M.a{hook}' is a plain def, but a{hook} must be an async def; make it an async def, or "
        f"rename it to {hook}."
    )


@pytest.mark.parametrize(
    ("methods", "message"),
    [
        (
            {"wrap_agent": _async_generator},
            "'M.wrap_agent' is an async generator, but wrap_agent must be a generator that "
            "yields once; rename it to awrap_agent, or make it a generator.",
        ),
        (
            {"awrap_agent": _generator},
            "'M.awrap_agent' is a generator, but awrap_agent must be an async generator that "
            "yields once; make it an async generator, or rename it to wrap_agent.",
        ),
        (
            {"awrap_agent": _coroutine},
            "'M.awrap_agent' is an async def, but awrap_agent must be an async generator that "
            "yields once; make it an async generator.",
        ),
        (
            {"before_model": _generator},
            "'M.before_model' is a generator, but before_model must be a plain def; make it a "
            "plain def.",
        ),
        (
            {"wrap_tool_call": lambda self, request: None},
            "'M.wrap_tool_call' takes (request), but wrap_tool_call is called with (request, "
            "handler); define it as `def wrap_tool_call(self, request, handler)`.",
        ),
        (
            {"wrap_model_call": lambda self, request, *, handler: None},
            "'M.wrap_model_call' takes (request, *, handler), but wrap_model_call is called with "
            "(request, handler); define it as `def wrap_model_call(self, request, handler)`.",
        ),
        (
            {"before_model": lambda self: None},
            "'M.before_model' takes (), but before_model is called with (state, runtime); define "
            "it as `def before_model(self, state, runtime)` (it may also take config, writer and "
            "store by name).",
        ),
        (
            {"after_agent": lambda self, state, runtime, extra: None},
            "'M.after_agent' takes (state, runtime, extra), but after_agent is called with "
            "(state, runtime); define it as `def after_agent(self, state, runtime)` (it may also "
            "take config, writer and store by name).",
        ),
    ],
)
def test_hooks_of_the_wrong_kind_or_arity_are_refused(
    methods: dict[str, Any], message: str
) -> None:
    with pytest.raises(MiddlewareError) as caught:
        build(middleware(**methods))
    assert str(caught.value) == message


def test_the_fix_for_an_async_hook_is_an_async_def() -> None:
    async def abefore_agent(self: Any) -> None:
        return None

    with pytest.raises(MiddlewareError, match=r"define it as `async def abefore_agent\(self, "):
        build(middleware(abefore_agent=abefore_agent))


def test_a_decorated_function_is_checked_when_the_decorator_is_applied() -> None:
    def guard(request: Any) -> Any:
        return None

    with pytest.raises(MiddlewareError) as caught:
        wrap_tool_call(guard)
    assert str(caught.value) == (
        "'guard.wrap_tool_call' takes (request), but wrap_tool_call is called with (request, "
        "handler); define it as `def guard(request, handler)`."
    )
    with pytest.raises(MiddlewareError, match=r"^'retry.awrap_model_call' takes \(\)"):

        @wrap_model_call(name="retry")
        async def anything() -> None:
            return None


# Misspelled hooks


@pytest.mark.parametrize(
    ("typo", "hook"),
    [
        ("before_modle", "before_model"),  # two letters swapped
        ("befor_model", "before_model"),  # a letter dropped
        ("after_models", "after_model"),  # a letter added
        ("wrap_tool_cal", "wrap_tool_call"),
        ("awrap_model_cell", "awrap_model_call"),  # a letter changed
        ("beforeagent", "before_agent"),
    ],
)
def test_a_method_one_typo_away_from_a_hook_is_refused(typo: str, hook: str) -> None:
    with pytest.raises(MiddlewareError) as caught:
        build(middleware(**{typo: _plain}))
    assert str(caught.value) == (
        f"'M' defines {typo}(), which is not a hook and so never runs; rename it to {hook} (or, "
        "for a helper of your own, to a name starting with an underscore)."
    )


def test_a_typo_in_a_mixin_is_refused_too() -> None:
    class Mixin:
        def after_agnet(self, state: Any, runtime: Any) -> None:
            return None

    class Audit(Mixin, AgentMiddleware):
        def before_model(self, state: Any, runtime: Any) -> None:
            return None

    with pytest.raises(MiddlewareError, match="defines after_agnet"):
        build(Audit())


def test_helpers_and_attributes_with_hook_like_names_are_left_alone() -> None:
    class Helpers(AgentMiddleware):
        before_models = 3  # not a method

        def before_model(self, state: Any, runtime: Any) -> None:
            return self._before_model(state)

        def _before_model(self, state: Any) -> None:
            return None

        def before_model_sync(self, state: Any) -> None:
            return None

    build(Helpers())


# Middleware that do nothing


def test_a_middleware_without_hooks_tools_or_state_is_noted_on_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Nothing(AgentMiddleware):
        def helper(self) -> None:
            return None

    # LangChain takes such a middleware (tests use them as stubs), so it builds without a
    # warning that a `filterwarnings = error` suite would trip over.
    with caplog.at_level("INFO", logger="graphagent"):
        agent = build(Nothing())

    [record] = caplog.records
    assert record.getMessage() == (
        "'Nothing' defines no hook, no tools and no state_schema, so it does nothing; implement "
        "one of before_agent, before_model, after_model, after_agent, wrap_agent, wrap_model_call, "
        "wrap_tool_call (or its async twin) or transform_input, or leave it out of the "
        "middleware list"
    )
    assert agent.invoke(QUESTION)["messages"][-1].content == "3"


@tool
def ping() -> str:
    """Ping."""
    return "pong"


class OnlyTools(AgentMiddleware):
    tools = (ping,)


class OnlyState(AgentMiddleware):
    state_schema = Counted


class OnlyChecks(AgentMiddleware):
    def validate_agent(self, agent: AgentFacts) -> None:
        return None


@pytest.mark.parametrize("item", [OnlyTools(), OnlyState(), OnlyChecks()], ids=type)
def test_a_middleware_with_tools_state_or_checks_only_is_not_noted(
    item: AgentMiddleware, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("INFO", logger="graphagent"):
        build(item)
    assert "does nothing" not in caplog.text


# Arguments of the wrong shape


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


class Audit(AgentMiddleware):
    def before_model(self, state: Any, runtime: Any) -> None:
        return None


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"tools": multiply},
            "create_agent(tools=multiply) got a single tool; pass a list, even of one: "
            "tools=[multiply].",
        ),
        (
            {"tools": add},
            "create_agent(tools=add) got a single tool; pass a list, even of one: tools=[add].",
        ),
        (
            {"tools": "multiply"},
            "create_agent(tools='multiply') got a str; pass a list of the tools themselves, not "
            "their names: tools=[multiply].",
        ),
        ({"tools": 42}, "create_agent(tools=42) got int; pass a list of tools."),
        (
            {"middleware": None},
            "create_agent(middleware=None) got None; pass a list of middleware, or leave it out.",
        ),
        (
            {"middleware": Audit()},
            "create_agent(middleware=<Audit name='Audit'>) got a single middleware; pass a list, "
            "even of one: middleware=[...].",
        ),
        (
            {"middleware": Audit},
            "create_agent(middleware=Audit) got a class; pass a list of instances: "
            "middleware=[Audit()].",
        ),
        (
            {"middleware": "Audit"},
            "create_agent(middleware='Audit') got a str; pass a list of middleware, or leave it "
            "out.",
        ),
    ],
)
def test_arguments_of_the_wrong_shape_get_one_sentence(
    arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(TypeError) as caught:
        create_agent(scripted(), **arguments)
    assert str(caught.value) == message


def test_lists_and_other_iterables_of_tools_and_middleware_build() -> None:
    agent = create_agent(scripted(), (t for t in [add]), middleware=(Audit(),))
    assert agent.invoke(QUESTION)["messages"][-1].text == "3"
    create_agent(scripted(), None)  # LangChain's default for tools


def test_can_jump_to_as_a_bare_string_is_refused() -> None:
    with pytest.raises(TypeError) as caught:
        hook_config(can_jump_to="end")  # type: ignore[arg-type]
    assert str(caught.value) == (
        "hook_config(can_jump_to='end') got a str; pass a list of targets, e.g. "
        "can_jump_to=['end']."
    )
    with pytest.raises(TypeError, match=r"^@after_model\(can_jump_to='model'\) got a str; "):
        after_model(can_jump_to="model")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^@before_model\(can_jump_to=1\) got int; "):
        before_model(can_jump_to=1)  # type: ignore[arg-type]


# Tool-scoped built-ins naming a tool the agent does not have


@tool
def search(query: str) -> str:
    """Search."""
    return query


def searching() -> ScriptedChatModel:
    return ScriptedChatModel([calls(("search", {"query": "q"})), "done"])


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (
            ToolCallLimitMiddleware(tool_name="serach", run_limit=1),
            "ToolCallLimitMiddleware[serach]: tool_name names ['serach'], which the agent does "
            "not have; its tools are ['add', 'search']. Fix the name(s) or add the tool(s) to "
            "the agent.",
        ),
        (
            ToolRetryMiddleware(tools=[search, "serach", "web_search"]),
            "ToolRetryMiddleware: tools names ['serach', 'web_search'], which the agent does not "
            "have; its tools are ['add', 'search']. Fix the name(s) or add the tool(s) to the "
            "agent.",
        ),
    ],
    ids=type,
)
def test_a_tool_scoped_built_in_naming_an_unknown_tool_fails_the_build(
    item: AgentMiddleware, message: str
) -> None:
    web_search = {"type": "web_search", "name": "web_search"}  # its calls never reach a hook
    with pytest.raises(MiddlewareError) as caught:
        create_agent(searching(), [add, search, web_search], middleware=[item])
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "item",
    [
        ToolCallLimitMiddleware(tool_name="search", run_limit=1),
        ToolRetryMiddleware(tools=["search"]),
    ],
    ids=type,
)
def test_one_instance_builds_into_an_agent_with_the_tool_and_not_into_one_without(
    item: AgentMiddleware, how_call: str
) -> None:
    with_search = create_agent(searching(), [search], middleware=[item])
    assert run_agent(with_search, how_call, QUESTION)["messages"][-1].text == "done"
    with pytest.raises(MiddlewareError, match="names \\['search'\\]"):
        create_agent(searching(), [add], middleware=[item])
