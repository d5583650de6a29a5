"""``LLMToolEmulator``: a model makes up the results of chosen tools instead of running them.

For testing an agent without the tools' side effects (emails sent, orders placed) or their
dependencies (API keys, services). An emulated call never reaches the tool, nor any
``wrap_tool_call`` layer inside this one: the emulator model is shown the tool's name,
description and parameter schema with the call's arguments, and its reply becomes the
``ToolMessage``. Calls of tools that are not emulated run normally.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.typing import ContextT

from graphagent._core.bridge import Mode
from graphagent._core.deprecated import warn_deprecated
from graphagent._core.internal_calls import internal_call_config
from graphagent._core.options import refuse_unknown_arguments
from graphagent.middleware._kit.cores import ToolCallCore
from graphagent.middleware._kit.tool_option import note_unknown, tool_names
from graphagent.middleware.base import AgentFacts, ToolResult
from graphagent.models import HelperModel, MissingIntegrationError, init_chat_model
from graphagent.state import AgentState

__all__ = ["LLMToolEmulator"]

DEFAULT_MODEL = "anthropic:claude-sonnet-4-5-20250929"
"""LangChain's emulator model when ``model`` is left out (deprecated; needs langchain-anthropic)."""

_INSTRUCTIONS = (
    "You stand in for a software tool so that an AI agent can be tested without running it. "
    "You are given the tool's name, its description, its parameters and the arguments of one "
    "call. Reply with what the tool would plausibly return for exactly these arguments: the "
    "tool's output and nothing else, with no explanation, preamble or code fences. Invent "
    "realistic details, and vary them from call to call as real data would."
)


@refuse_unknown_arguments
class LLMToolEmulator(ToolCallCore[AgentState[Any], ContextT, Any]):
    """Answer calls of the chosen tools with a model's made-up result instead of running them.

    Args:
        tools: The tools to emulate, by name or by tool object: ``None`` emulates every tool of
            the agent, ``[]`` none. A name the agent does not have never applies (noted on the
            ``graphagent`` logger at ``INFO`` when the agent is built).
        model: The model that writes the results: a chat model, or a model id such as
            ``"openai:gpt-4o-mini"`` built at once with ``init_chat_model(model,
            temperature=1)``, as LangChain builds it. Leaving it out is deprecated, as in
            LangChain: it warns and uses :data:`DEFAULT_MODEL`.

    Raises:
        MiddlewareError: A ``model`` that is neither a chat model nor an id.
        ValueError: A model id naming no known provider (from ``init_chat_model``).
        MissingIntegrationError: A model id whose provider package is not installed (an
            ``ImportError``; for the default model, naming ``langchain-anthropic``).
    """

    def __init__(
        self,
        *,
        tools: Sequence[str | BaseTool] | None = None,
        model: str | BaseChatModel | None = None,
    ) -> None:
        """Choose the tools to emulate (``None``: all) and the model that emulates them."""
        super().__init__()
        self.emulate_all: bool = tools is None
        self.tools_to_emulate: frozenset[str] = tool_names("LLMToolEmulator", tools) or frozenset()
        if model is None:
            # LangChain's deprecated default; a wrap_tool_call cannot reach the agent's model.
            warn_deprecated(
                "LLMToolEmulator", f"leaving out model (default {DEFAULT_MODEL!r})", "model=..."
            )
            model = _default_model()
        elif isinstance(model, str):
            model = init_chat_model(model, temperature=1)
        self._emulator = HelperModel("LLMToolEmulator", "model", model)

    @property
    def model(self) -> BaseChatModel:
        """The emulator model."""
        return self._emulator.model

    def validate_agent(self, agent: AgentFacts) -> None:
        """Note names in ``tools`` that are not tools the agent executes: they never apply."""
        note_unknown(self.name, "tools", self.tools_to_emulate, agent)

    async def _wrap_tool_call(
        self, mode: Mode, request: ToolCallRequest, handler: Callable[..., Any]
    ) -> ToolResult:
        """Ask the emulator model for an emulated tool's result; run any other tool."""
        if not self._emulates(request):
            result: ToolResult = await mode.call(handler, request)
            return result
        model = await self._emulator.get(mode)
        reply = await mode.invoke(model, emulation_prompt(request), config=_call_config())
        return emulated_answer(request, reply)

    def _emulates(self, request: ToolCallRequest) -> bool:
        # A call naming no tool of the agent keeps its "not a valid tool" error: emulating it
        # would hide the model's mistake from the test.
        if request.tool is None:
            return False
        return self.emulate_all or request.tool_call["name"] in self.tools_to_emulate


def emulation_prompt(request: ToolCallRequest) -> list[BaseMessage]:
    """The messages asking the emulator model for the result of ``request``'s call."""
    call, tool = request.tool_call, request.tool
    description = (tool.description if tool is not None else "") or "(none)"
    parameters = _parameters(tool) if tool is not None else {}
    details = (
        f"Tool: {call['name']}\n"
        f"Description: {description}\n"
        f"Parameters (JSON Schema): {_json(parameters)}\n"
        f"Arguments: {_json(call['args'])}"
    )
    return [SystemMessage(_INSTRUCTIONS), HumanMessage(details)]


def emulated_answer(request: ToolCallRequest, reply: Any) -> ToolMessage:
    """The ``ToolMessage`` answering ``request``'s call with the emulator model's text."""
    text = reply.text if isinstance(reply, AIMessage) else str(reply)
    call = request.tool_call
    return ToolMessage(content=text, tool_call_id=call["id"], name=call["name"])


def _call_config() -> RunnableConfig:
    # Internal call: the made-up result stays out of what the run streams.
    return internal_call_config("tool_emulation", "tool_emulation")


def _parameters(tool: BaseTool) -> dict[str, Any]:
    function: dict[str, Any] = convert_to_openai_tool(tool)["function"]
    parameters = function.get("parameters")
    return parameters if isinstance(parameters, dict) else {}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _default_model() -> BaseChatModel:
    """The deprecated default model; without its package, LangChain's words lead the error."""
    try:
        return init_chat_model(DEFAULT_MODEL, temperature=1)
    except MissingIntegrationError as error:
        raise MissingIntegrationError(
            "LLMToolEmulator's default model requires `langchain-anthropic` to be installed. "
            f"{error} Or pass model=... (a chat model or a model id) to use another provider.",
            provider=error.provider,
            package=error.package,
        ) from None
