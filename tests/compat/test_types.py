"""LangChain 1.5.2's ``langchain.agents.middleware.types``: ``ModelRequest`` takes
``system_prompt=`` without a warning, treats ``None`` for either prompt argument as left out, and
assigning any attribute works with a ``DeprecationWarning`` in LangChain's words (a
``RequestAssignmentWarning``, which a caller may turn into an error); building a request hides no
other thread's warnings, and ``override()`` emits none. A hook defined only as ``async def`` and
reached by ``invoke`` raises ``NotImplementedError``, so ``except NotImplementedError`` clauses
written for LangChain keep catching ``AsyncOnlyHookError``. Two ``ExtendedModelResponse``
commands giving one plain field values follow seed 003, not LangChain's ``InvalidUpdateError``:
inner first, the outer layer wins (a listed deliberate difference); reducer fields take every
layer's."""

from __future__ import annotations

import asyncio
import threading
import warnings
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NotRequired

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.types import Command

from graphagent import AgentState, AsyncOnlyHookError, create_agent
from graphagent.middleware import (
    AgentMiddleware,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    wrap_model_call,
)
from graphagent.requests import RequestAssignmentWarning
from graphagent.testing import ScriptedChatModel
from tests.conftest import run_agent

Handler = Callable[[ModelRequest], ModelResponse]


@pytest.mark.parametrize("message", ["left out", None])
def test_system_prompt_builds_the_system_message_without_a_warning(message: str | None) -> None:
    model = ScriptedChatModel(["x"])
    given = {} if message == "left out" else {"system_message": None}

    request = ModelRequest(model=model, messages=[], system_prompt="Be brief.", **given)  # type: ignore[call-arg]

    assert request.system_message == SystemMessage("Be brief.")
    assert request.system_prompt == "Be brief."


def test_a_request_built_from_the_required_fields_has_langchains_defaults() -> None:
    request = ModelRequest(model=ScriptedChatModel(["x"]), messages=[])

    assert request.system_message is None
    assert (request.tools, request.model_settings) == ([], {})
    assert request.state == {"messages": []}
    assert (request.tool_choice, request.response_format, request.runtime) == (None, None, None)


def test_system_prompt_and_system_message_together_are_refused() -> None:
    # LangChain's ValueError in its words (and a TypeError, as before), ahead of the warning.
    with pytest.raises(
        ValueError, match=r"^Cannot specify both system_prompt and system_message"
    ) as caught:
        ModelRequest(  # type: ignore[call-arg]
            model=ScriptedChatModel(["x"]),
            messages=[],
            system_prompt="a",
            system_message=SystemMessage("b"),
        )

    assert isinstance(caught.value, TypeError)
    assert "not both" in str(caught.value)


@pytest.mark.parametrize("prompt", ["Answer in French.", None])
def test_assigning_system_prompt_changes_what_the_model_sees(
    how_call: str, prompt: str | None
) -> None:
    @wrap_model_call
    def french(request: ModelRequest, handler: Handler) -> Any:
        request.system_prompt = prompt  # type: ignore[misc]
        return handler(request)

    model = ScriptedChatModel(["oui"])
    agent = create_agent(model, system_prompt="Answer in English.", middleware=[french])

    with pytest.warns(
        DeprecationWarning,
        match=r"^Direct attribute assignment to ModelRequest.system_prompt is deprecated",
    ):
        run_agent(agent, how_call, {"messages": ["hello"]})

    first = model.calls[0].messages[0]
    if prompt is None:
        assert first.type == "human"
    else:
        assert (first.type, first.text) == ("system", prompt)


@pytest.mark.parametrize("field", ["model", "messages", "tools"])
def test_assigning_a_field_works_with_a_deprecation_warning(how_call: str, field: str) -> None:
    replacement: dict[str, Any] = {
        "model": ScriptedChatModel(["from the new model"]),
        "messages": [HumanMessage("replaced")],
        "tools": [],
    }

    @wrap_model_call
    def assign(request: ModelRequest, handler: Handler) -> Any:
        setattr(request, field, replacement[field])
        assert getattr(request, field) is replacement[field]
        return handler(request)

    model = ScriptedChatModel(["from the agent's model"])
    agent = create_agent(model, middleware=[assign])

    with pytest.warns(RequestAssignmentWarning) as caught:
        result = run_agent(agent, how_call, {"messages": ["hello"]})

    assert issubclass(caught[0].category, DeprecationWarning)
    assert str(caught[0].message).startswith(
        f"Direct attribute assignment to ModelRequest.{field} is deprecated"
    )
    assert f"request.override({field}=...)" in str(caught[0].message)
    assert caught[0].filename == __file__, "the warning points at the assignment"
    if field == "model":
        assert result["messages"][-1].content == "from the new model"
    if field == "messages":
        assert [m.content for m in model.calls[0].messages] == ["replaced"]


def test_a_hook_may_change_the_response_it_got_and_return_it(how_call: str) -> None:
    @wrap_model_call
    def rewrite(request: ModelRequest, handler: Handler) -> Any:
        response = handler(request)
        response.result = [AIMessage(f"checked: {response.result[0].text}")]
        return response

    agent = create_agent(ScriptedChatModel(["draft"]), middleware=[rewrite])

    result = run_agent(agent, how_call, {"messages": ["hello"]})

    assert result["messages"][-1].content == "checked: draft"


def test_the_warning_made_an_error_keeps_the_request_unchanged() -> None:
    request = ModelRequest(model=ScriptedChatModel(["x"]), messages=[])

    with warnings.catch_warnings():
        warnings.simplefilter("error", RequestAssignmentWarning)
        with pytest.raises(RequestAssignmentWarning):
            request.messages = [HumanMessage("changed")]  # type: ignore[misc]

    assert request.messages == []


def test_override_emits_no_warning() -> None:
    request = ModelRequest(model=ScriptedChatModel(["x"]), messages=[])

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        changed = request.override(system_prompt="Be brief.", tools=[])

    assert changed.system_prompt == "Be brief."
    assert request.system_message is None


def test_building_a_request_hides_no_other_threads_warnings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The request is held half-built (inside its __init__) while this thread warns.
    building, resume = threading.Event(), threading.Event()

    def hold(request: ModelRequest, value: Any) -> None:
        building.set()
        assert resume.wait(timeout=10)
        request.__dict__["model"] = value

    monkeypatch.setattr(ModelRequest, "model", property(fset=hold), raising=False)
    with ThreadPoolExecutor(max_workers=1) as pool:
        built = pool.submit(ModelRequest, model=ScriptedChatModel(["x"]), messages=[])
        try:
            assert building.wait(timeout=10)
            with pytest.warns(DeprecationWarning, match="from another thread"):
                warnings.warn("from another thread", DeprecationWarning, stacklevel=1)
        finally:
            resume.set()
        built.result(timeout=10)


# --- async-only hooks under invoke --------------------------------------------------------


class AsyncOnly(AgentMiddleware):
    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        return await handler(request)


def test_an_async_only_hook_under_invoke_raises_not_implemented_error() -> None:
    agent = create_agent(ScriptedChatModel(["hi"]), middleware=[AsyncOnly()])

    with pytest.raises(NotImplementedError) as caught:
        agent.invoke({"messages": ["q"]})

    assert isinstance(caught.value, AsyncOnlyHookError)
    assert isinstance(caught.value, RuntimeError), "graphagent's earlier base is kept"
    assert str(caught.value).startswith(
        "Synchronous implementation of wrap_model_call is not available: "
        "'AsyncOnly.wrap_model_call' has only an async implementation"
    )


def test_the_same_agent_runs_under_ainvoke() -> None:
    agent = create_agent(ScriptedChatModel(["hi"]), middleware=[AsyncOnly()])

    result = asyncio.run(agent.ainvoke({"messages": ["q"]}))

    assert result["messages"][-1].content == "hi"


def test_system_prompt_none_is_the_same_as_leaving_it_out() -> None:
    message = SystemMessage("Be brief.")

    request = ModelRequest(  # type: ignore[call-arg]
        model=ScriptedChatModel(["x"]), messages=[], system_prompt=None, system_message=message
    )

    assert request.system_message == message


def test_system_message_none_is_the_same_as_leaving_it_out() -> None:
    request = ModelRequest(  # type: ignore[call-arg]
        model=ScriptedChatModel(["x"]), messages=[], system_prompt="Be kind.", system_message=None
    )

    assert request.system_message == SystemMessage("Be kind.")


def test_a_request_built_through_a_subscripted_class_warns_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        request = ModelRequest[None](model=ScriptedChatModel(["x"]), messages=[])

    assert request.messages == []


# --- ExtendedModelResponse commands: the seed's rule, not InvalidUpdateError --------------
# A deliberate difference (docs/migrating-from-langchain.md): LangChain 1.5.2 raises langgraph's
# InvalidUpdateError when two commands give a plain field values; seed 003 says the inner layer
# writes first and the outer one later, so the outer layer wins.


class Noted(AgentState):
    note: NotRequired[str]


def noting(label: str, note: str) -> AgentMiddleware:
    def wrap(request: ModelRequest, handler: Handler) -> Any:
        extra = HumanMessage(f"from {label}", id=label)
        return ExtendedModelResponse(
            handler(request), Command(update={"note": note, "messages": [extra]})
        )

    return wrap_model_call(name=label, state_schema=Noted)(wrap)


@pytest.mark.usefixtures("hook_mode")
def test_two_layers_writing_one_plain_field_the_outer_wins(how_call: str) -> None:
    agent = create_agent(
        ScriptedChatModel(["hi"]), middleware=[noting("Outer", "outer"), noting("Inner", "inner")]
    )

    result = run_agent(agent, how_call, {"messages": ["q"]})

    assert result["note"] == "outer"
    assert [m.text for m in result["messages"]] == ["q", "hi", "from Inner", "from Outer"]


@pytest.mark.usefixtures("hook_mode")
def test_a_command_setting_the_structured_response_wins_over_the_response(how_call: str) -> None:
    @wrap_model_call
    def override(request: ModelRequest, handler: Handler) -> Any:
        response = handler(request)
        structured = ModelResponse(result=response.result, structured_response={"from": "model"})
        command = Command(update={"structured_response": {"from": "command"}})
        return ExtendedModelResponse(structured, command)

    agent = create_agent(ScriptedChatModel(["hi"]), middleware=[override])

    result = run_agent(agent, how_call, {"messages": ["q"]})

    assert result["structured_response"] == {"from": "command"}
