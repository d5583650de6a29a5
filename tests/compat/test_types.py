"""LangChain 1.5's ``langchain.agents.middleware.types``: the deprecated ``system_prompt=``
argument and ``request.system_prompt = ...`` assignment of ``ModelRequest`` still work, with a
warning, while assigning any other field stays an error (graphagent's requests are frozen); and a
hook defined only as ``async def`` and reached by ``invoke`` raises ``NotImplementedError``, so
``except NotImplementedError`` clauses written for LangChain keep catching
``AsyncOnlyHookError``."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from langchain_core.messages import SystemMessage

from graphagent import AsyncOnlyHookError, create_agent
from graphagent.middleware import AgentMiddleware, ModelRequest, ModelResponse, wrap_model_call
from graphagent.testing import ScriptedChatModel
from tests.conftest import run_agent

Handler = Callable[[ModelRequest], ModelResponse]


def test_system_prompt_builds_the_system_message() -> None:
    model = ScriptedChatModel(["x"])

    with pytest.warns(DeprecationWarning, match=r"system_prompt= is deprecated.*system_message="):
        request = ModelRequest(model=model, messages=[], system_prompt="Be brief.")  # type: ignore[call-arg]

    assert request.system_message == SystemMessage("Be brief.")
    assert request.system_prompt == "Be brief."


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

    with pytest.warns(DeprecationWarning, match=r"assigning request.system_prompt is deprecated"):
        run_agent(agent, how_call, {"messages": ["hello"]})

    first = model.calls[0].messages[0]
    if prompt is None:
        assert first.type == "human"
    else:
        assert (first.type, first.text) == ("system", prompt)


def test_assigning_another_field_is_still_an_error() -> None:
    request = ModelRequest(model=ScriptedChatModel(["x"]), messages=[])

    with pytest.raises(dataclasses.FrozenInstanceError, match="'tools'"):
        request.tools = []  # type: ignore[misc]


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
