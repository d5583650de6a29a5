"""Prompt caching on every model call: the request shaped so the provider caches its prefix.

Applied by the innermost model handler, after every ``wrap_model_call`` layer has changed the
request and to the model actually called (a fallback's, a configurable model's choice), so each
provider gets only what it accepts:

- OpenAI, Azure OpenAI, Fireworks: a ``prompt_cache_key`` naming the agent and the thread (the
  run, without a thread), so every call of a thread is routed to the same cache;
- Anthropic (direct, Bedrock, Vertex): ``cache_control`` breakpoints at the end of the stable
  prefix (the system prompt, or the last tool without one), on the last message of the previous
  model call, and on the last message (the client's ``cache_control`` setting): three of the
  provider's four;
- Bedrock Converse (Claude and Nova models): the client's ``cache_control`` setting, which
  langchain-aws turns into ``cachePoint`` blocks;
- any other provider: nothing (Gemini caches repeated prefixes by itself).

A caller's own key or breakpoints win: a request that already carries any is left as it is.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage
from langchain_core.runnables import ensure_config
from langchain_core.tools import BaseTool

from graphagent._core.ceiling import running_ledger
from graphagent.requests import ModelRequest

__all__ = [
    "ANTHROPIC_TYPES",
    "BEDROCK_CONVERSE_TYPE",
    "CACHE_CONTROL",
    "OPENAI_TYPES",
    "cache_key",
    "thread_key",
    "with_prompt_caching",
]

OPENAI_TYPES = frozenset({"openai-chat", "azure-openai-chat", "fireworks-chat"})
ANTHROPIC_TYPES = frozenset({"anthropic-chat", "anthropic-bedrock-chat", "anthropic-chat-vertexai"})
BEDROCK_CONVERSE_TYPE = "amazon_bedrock_converse_chat"
CACHE_CONTROL = "cache_control"
PROMPT_CACHE_KEY = "prompt_cache_key"
_EPHEMERAL = {"type": "ephemeral"}
_BEDROCK_CACHING_MODELS = ("anthropic", "amazon.nova")


def with_prompt_caching(request: ModelRequest, agent: str) -> ModelRequest:
    """``request`` shaped for its model's provider to cache its prefix (itself when the
    provider gets nothing, or the caller already placed its own key or breakpoints)."""
    llm_type = getattr(request.model, "_llm_type", None)
    if llm_type in OPENAI_TYPES:
        return _with_key(request, agent)
    if llm_type in ANTHROPIC_TYPES:
        return _with_breakpoints(request)
    if llm_type == BEDROCK_CONVERSE_TYPE and _bedrock_caches(request.model):
        if CACHE_CONTROL in request.model_settings or _marked(request):
            return request
        return request.override(
            model_settings={**request.model_settings, CACHE_CONTROL: _EPHEMERAL}
        )
    return request


def cache_key(agent: str, thread: str) -> str:
    """The ``prompt_cache_key`` of an agent's calls in a thread: stable, short, and revealing
    neither the agent's name nor the thread id to the provider."""
    digest = hashlib.sha256(f"{agent}\0{thread}".encode()).hexdigest()
    return f"graphagent-{digest[:32]}"


# -- OpenAI ----------------------------------------------------------------------------------


def _with_key(request: ModelRequest, agent: str) -> ModelRequest:
    if PROMPT_CACHE_KEY in request.model_settings or _model_sets_key(request.model):
        return request
    thread = thread_key()
    if thread is None:
        return request
    key = cache_key(agent, thread)
    return request.override(model_settings={**request.model_settings, PROMPT_CACHE_KEY: key})


def _model_sets_key(model: Any) -> bool:
    for settings in (getattr(model, "model_kwargs", None), getattr(model, "extra_body", None)):
        if isinstance(settings, dict) and PROMPT_CACHE_KEY in settings:
            return True
    return False


def thread_key() -> str | None:
    """The run's thread id, or the run's own id when it has no thread."""
    config = ensure_config()
    thread = (config.get("configurable") or {}).get("thread_id")
    if thread is not None:
        return str(thread)
    ledger = running_ledger()
    return None if ledger is None else f"run:{ledger.run}"


# -- Anthropic -------------------------------------------------------------------------------


def _with_breakpoints(request: ModelRequest) -> ModelRequest:
    if CACHE_CONTROL in request.model_settings or _marked(request):
        return request
    changes: dict[str, Any] = {
        "model_settings": {**request.model_settings, CACHE_CONTROL: _EPHEMERAL}
    }
    if request.system_message is not None and request.system_message.content:
        changes["system_message"] = _marked_message(request.system_message)
    elif request.tools and isinstance(request.tools[-1], BaseTool):
        changes["tools"] = [*request.tools[:-1], _marked_tool(request.tools[-1])]
    previous = _previous_call_end(request.messages)
    if previous is not None:
        messages = list(request.messages)
        messages[previous] = _marked_message(messages[previous])
        changes["messages"] = messages
    return request.override(**changes)


def _previous_call_end(messages: Sequence[AnyMessage]) -> int | None:
    """Where the previous model call's messages ended: the one before the last AI reply."""
    for index in range(len(messages) - 1, 0, -1):
        if isinstance(messages[index], AIMessage):
            before = messages[index - 1]
            return index - 1 if before.content and not isinstance(before, AIMessage) else None
    return None


def _marked_message(message: Any) -> Any:
    content = message.content
    if isinstance(content, str):
        blocks: list[Any] = [{"type": "text", "text": content, CACHE_CONTROL: _EPHEMERAL}]
    else:
        last = content[-1]
        block = {"type": "text", "text": last} if isinstance(last, str) else dict(last)
        blocks = [*content[:-1], {**block, CACHE_CONTROL: _EPHEMERAL}]
    return message.model_copy(update={"content": blocks})


def _marked_tool(tool: BaseTool) -> BaseTool:
    return tool.model_copy(update={"extras": {**(tool.extras or {}), CACHE_CONTROL: _EPHEMERAL}})


def _marked(request: ModelRequest) -> bool:
    """Whether the caller placed a breakpoint of its own anywhere in the request."""
    messages: list[BaseMessage] = list(request.messages)
    if request.system_message is not None:
        messages.append(request.system_message)
    if any(
        _block_marked(block) for m in messages if isinstance(m.content, list) for block in m.content
    ):
        return True
    return any(_tool_marked(tool) for tool in request.tools)


def _block_marked(block: Any) -> bool:
    if not isinstance(block, dict):
        return False
    return CACHE_CONTROL in block or "cachePoint" in block


def _tool_marked(tool: Any) -> bool:
    if isinstance(tool, BaseTool):
        return bool(tool.extras) and CACHE_CONTROL in (tool.extras or {})
    return isinstance(tool, dict) and (CACHE_CONTROL in tool or "cachePoint" in tool)


def _bedrock_caches(model: Any) -> bool:
    """Whether a Bedrock Converse model is one that caches prompts (Claude, Nova)."""
    names = (getattr(model, "model_id", None), getattr(model, "base_model_id", None))
    return any(
        isinstance(name, str) and any(kind in name.lower() for kind in _BEDROCK_CACHING_MODELS)
        for name in names
    )
