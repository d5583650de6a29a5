"""``ProviderToolSearchMiddleware``: send chosen tools' schemas only when the model asks for them.

Providers with server-side tool search (Anthropic, OpenAI) take a tool marked
``defer_loading``: the model is told the tool exists, and the provider loads its full schema only
when the model searches for it. This middleware marks the chosen tools so (``extras``) on every
model call and adds the provider's search tool to the request. The provider is read from the
request's model (see :func:`_provider`); a request that defers a tool to a model whose provider
has no tool search is an error, since the deferred tools would be unusable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias, TypeGuard

from langchain_core.tools import BaseTool
from langgraph.typing import ContextT

from graphagent._core.options import refuse_unknown_arguments
from graphagent.middleware._kit.tool_option import check_known, tool_names
from graphagent.middleware.base import AgentFacts, AgentMiddleware
from graphagent.models import ModelSpec
from graphagent.requests import ModelCallResult, ModelRequest, ModelResponse
from graphagent.state import AgentState, ResponseT

__all__ = ["ProviderToolSearchMiddleware", "ToolIdentifier"]

ToolIdentifier: TypeAlias = str | BaseTool
"""A tool to defer, by name or as the tool itself."""

_DEFER = "defer_loading"

# Each provider's server-side search tool, as its API takes it. The type names carry dates the
# providers may retire: check them against the providers' documentation when updating.
_SEARCH_TOOLS: Mapping[str, Mapping[str, str]] = {
    "anthropic": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "openai": {"type": "tool_search"},
}

# Chat model classes known by name alone, for models that report nothing else.
_CLASS_PROVIDERS: Mapping[str, str] = {
    "ChatAnthropic": "anthropic",
    "AnthropicChat": "anthropic",
    "ChatOpenAI": "openai",
    "OpenAIChat": "openai",
}


def _unbound(unknown: list[str]) -> str:
    return (
        "ProviderToolSearchMiddleware: searchable_tools references tool(s) not bound to the "
        f"model: {', '.join(unknown)}"
    )


@refuse_unknown_arguments
class ProviderToolSearchMiddleware(AgentMiddleware[AgentState[ResponseT], ContextT, ResponseT]):
    """Defer tools behind the provider's own tool search, so their schemas are not sent each turn.

    A tool is deferred when ``searchable_tools`` names it or when it already carries
    ``extras={"defer_loading": True}``. When a model call defers any tool, the provider's search
    tool is added to its tools; a model call that defers none passes through unchanged, whatever
    the provider. Deferring to a model whose provider has no server-side tool search (anything
    but Anthropic and OpenAI), or whose provider cannot be told, raises ``ValueError`` on that
    model call.

    Args:
        searchable_tools: The tools to defer, by name or tool object. ``None`` (the default) or
            ``[]``: only the tools already marked ``defer_loading``. A name the agent does not
            have is an error when the agent is built; used outside an agent (its
            ``wrap_model_call`` called by hand), a name the request's tools lack is a
            ``ValueError`` on the call.

    Raises:
        MiddlewareError: ``searchable_tools`` is not a list of tool names or tools.
    """

    def __init__(self, *, searchable_tools: list[ToolIdentifier] | None = None) -> None:
        super().__init__()
        owner = type(self).__name__
        names = tool_names(owner, searchable_tools, parameter="searchable_tools")
        self.searchable_tool_names: set[str] = set(names or ())
        self._checked_by_agent = False

    def validate_agent(self, agent: AgentFacts) -> None:
        """Reject ``searchable_tools`` names the agent does not have."""
        check_known(
            self.name,
            "searchable_tools",
            frozenset(self.searchable_tool_names),
            agent,
            langchain_words=_unbound,
        )
        self._checked_by_agent = True

    def wrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], ModelResponse],
    ) -> ModelCallResult:
        """Call the model with the chosen tools deferred and the provider's search tool added."""
        return handler(self._deferring(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], Awaitable[ModelResponse]],
    ) -> ModelCallResult:
        """Async twin of :meth:`wrap_model_call`."""
        return await handler(self._deferring(request))

    def _deferring(self, request: ModelRequest[ContextT]) -> ModelRequest[ContextT]:
        if not self._checked_by_agent:
            # In an agent the names were checked against its tools when it was built, and a
            # listed tool an outer layer left out of this call is simply not deferred.
            bound = {tool.name for tool in request.tools if isinstance(tool, BaseTool)}
            unknown = sorted(self.searchable_tool_names - bound)
            if unknown:
                raise ValueError(f"{_unbound(unknown)}. Fix the name(s) or bind the tool(s).")
        if not any(self._defers(tool) for tool in request.tools):
            return request
        search = self._search_tool(request.model, request.runtime)
        tools = [_deferred(tool) if self._defers(tool) else tool for tool in request.tools]
        if not any(isinstance(t, dict) and t.get("type") == search["type"] for t in tools):
            tools.append(search)
        return request.override(tools=tools)

    def _defers(self, tool: BaseTool | dict[str, Any]) -> TypeGuard[BaseTool]:
        # Only tool objects carry the extras the flag travels in; provider tool dicts never do.
        if not isinstance(tool, BaseTool):
            return False
        extras = tool.extras if isinstance(tool.extras, dict) else {}
        return tool.name in self.searchable_tool_names or extras.get(_DEFER) is True

    def _search_tool(self, model: object, runtime: object) -> dict[str, Any]:
        supported = ", ".join(sorted(_SEARCH_TOOLS))
        provider = _provider(model, runtime)
        if provider is None:
            raise ValueError(
                f"{self.name} could not determine the provider for model "
                f"{type(model).__name__!r}; server-side tool search supports: {supported}. Use "
                "one of their chat models, or defer no tool for this model."
            )
        if provider not in _SEARCH_TOOLS:
            raise ValueError(
                f"{self.name} requires a provider with server-side tool search, but got "
                f"{provider!r}; supported providers: {supported}. Use one of their chat models, "
                "or defer no tool for this model."
            )
        return dict(_SEARCH_TOOLS[provider])


def _deferred(tool: BaseTool) -> BaseTool:
    extras = tool.extras if isinstance(tool.extras, dict) else {}
    if extras.get(_DEFER) is True:
        return tool
    return tool.model_copy(update={"extras": {**extras, _DEFER: True}})


# -- which provider a model is ------------------------------------------------------------------


def _provider(model: object, runtime: object) -> str | None:
    """The provider of a request's model, normalised (``None`` when nothing tells it).

    Asked in turn: the parameters LangChain's configurable model builds its model with for this
    call (it keeps its defaults as ``_default_config`` and gives a call's values from
    ``_model_params(config)``), then the provider the model reports for tracing
    (``ls_provider``; graphagent's configurable model reports its chosen model's), then the
    class name of Anthropic's and OpenAI's chat models.
    """
    for params in _configured_params(model, runtime):
        provider = _from_params(params)
        if provider is not None:
            return provider
    reported = getattr(model, "_get_ls_params", None)
    traced = reported() if callable(reported) else None
    if isinstance(traced, Mapping) and isinstance(traced.get("ls_provider"), str):
        return _normalised(traced["ls_provider"])
    return _CLASS_PROVIDERS.get(type(model).__name__)


def _configured_params(model: object, runtime: object) -> list[Mapping[str, Any]]:
    """The parameter sets a configurable model offers, the most specific first."""
    defaults = getattr(model, "_default_config", None)
    defaults = defaults if isinstance(defaults, Mapping) else None
    found: list[Mapping[str, Any]] = []
    per_call = getattr(model, "_model_params", None)
    if callable(per_call):
        config = getattr(runtime, "config", None)
        params = per_call(config if isinstance(config, Mapping) else None)
        if isinstance(params, Mapping):
            found.append({**(defaults or {}), **params})
    if defaults is not None:
        found.append(defaults)
    return found


def _from_params(params: Mapping[str, Any]) -> str | None:
    provider = params.get("model_provider")
    if isinstance(provider, str):
        return _normalised(provider)
    name = params.get("model")
    if not isinstance(name, str):
        return None
    prefix, colon, rest = name.partition(":")
    if colon and rest:
        return _normalised(prefix)
    try:
        return ModelSpec.parse(name).provider
    except ValueError:  # a name no provider is known by
        return None


def _normalised(provider: str) -> str:
    return provider.replace("-", "_").lower()
