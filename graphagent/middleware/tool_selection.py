"""``LLMToolSelectorMiddleware``: before each model call, let a model pick the relevant tools.

Selection asks for tool *names* only: the structured-output schema (``ToolSelectionResponse``,
as LangChain names it) is a list drawn from an enum of the names, and the descriptions are in the
prompt text (a schema that attaches each tool's description to its option leads some models to
answer with the description). A malformed answer (not a dict with a ``tools`` list) is asked for
again the same way, as in LangChain; when the model cannot give structured output at all (the
provider rejects the request, the parser fails) or answers in words, the middleware asks in plain
text and matches the answer against the names. ``max_retries`` bounds the asks after the first.
If no answer names a tool, ``on_parsing_failure`` decides: ``"error"`` (the default) raises
:class:`ToolSelectionError`, a ``ValueError``; or every tool, none, a fixed list, or the names a
function picks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from typing import Any, Literal, TypeAlias

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import BaseTool
from langgraph.typing import ContextT

from graphagent._core.bridge import Mode
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import MiddlewareError, MiddlewareTypeError, ToolSelectionError
from graphagent.middleware._kit.cores import ModelCallCore
from graphagent.middleware._tool_selection.selection import (
    Candidate,
    Picks,
    Selection,
    ask_structured,
    ask_text,
    attempt,
    structured_picks,
    text_picks,
)
from graphagent.middleware.base import AgentFacts
from graphagent.models import HelperModel
from graphagent.requests import ModelRequest, ModelResponse
from graphagent.state import AgentState, ResponseT

__all__ = ["DEFAULT_SYSTEM_PROMPT", "LLMToolSelectorMiddleware", "OnParsingFailure"]

OnParsingFailure: TypeAlias = (
    Literal["error", "none", "all"] | Sequence[str] | Callable[[Any], Sequence[str]]
)
"""What to select when no answer names a tool: raise, nothing, everything, these names, or the
names a function returns (given the last reply, or the exception the last call raised)."""

logger = logging.getLogger(__name__)

DEFAULT_SYSTEM_PROMPT = (
    "Choose the tools that are needed to handle the user's latest request. Leave out tools "
    "that are not relevant to it."
)

_OWNER = "LLMToolSelectorMiddleware"


@refuse_unknown_arguments
class LLMToolSelectorMiddleware(ModelCallCore[AgentState[ResponseT], ContextT, ResponseT]):
    """Narrow the tools of each model call to those a selection model finds relevant.

    Provider tools (dicts) are always kept, as are the tools ``always_include`` names; the call
    gets the selected tools, then those, then the provider tools. Selection is skipped when no
    tool is left to choose from, or without a user message.

    Args:
        model: The model that makes the selection: a chat model or a model id; ``None`` uses
            the request's own model.
        system_prompt: The instructions for the selection model.
        max_tools: How many picks are kept at most, in the order the model gave them;
            ``None``: no limit.
        always_include: Names of tools that are always kept and never offered for selection.
            A name the agent does not have fails when the agent is built.
        max_retries: How many times to ask again when an answer is malformed or names no tool.
        on_parsing_failure: What is selected when no answer named a tool (see
            :data:`OnParsingFailure`): ``"error"`` (the default) raises ``ToolSelectionError``;
            ``"all"``, ``"none"``, a list of names, or a function of the last answer choose.

    Raises:
        MiddlewareError: A ``max_tools`` that is not a positive int, ``always_include`` that is
            not a list of names, or a model that is neither a chat model nor a valid id.
        MissingIntegrationError: A model id whose provider package is not installed.
    """

    cache_volatile = ("tools",)
    """What of a prompt's cached prefix this middleware may change (docs/prompt-caching.md)."""

    def __init__(
        self,
        *,
        model: str | BaseChatModel | None = None,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        max_tools: int | None = None,
        always_include: Collection[str] | None = (),
        max_retries: int = 1,
        on_parsing_failure: OnParsingFailure = "error",
    ) -> None:
        """Configure the selection; every parameter is optional."""
        super().__init__()
        self._selector = None if model is None else HelperModel(_OWNER, "model", model)
        if not isinstance(system_prompt, str):
            raise _option_error("system_prompt", system_prompt, "pass a string")
        self.system_prompt = system_prompt
        self.max_tools = _checked_max_tools(max_tools)
        self.always_include: list[str] = _checked_names(always_include)
        self.max_retries = _checked_max_retries(max_retries)
        self.on_parsing_failure = _checked_on_parsing_failure(on_parsing_failure)

    @property
    def model(self) -> BaseChatModel | None:
        """The selection model (built on first use from a model id); ``None``: the request's."""
        return None if self._selector is None else self._selector.model

    def validate_agent(self, agent: AgentFacts) -> None:
        """Reject ``always_include`` (and an ``on_parsing_failure`` list) naming tools the agent
        does not have."""
        options: dict[str, Sequence[str]] = {"always_include": self.always_include}
        if isinstance(self.on_parsing_failure, tuple):  # a list, as checked when made
            options["on_parsing_failure"] = self.on_parsing_failure
        tools = sorted(agent.tool_names)
        for option, names in options.items():
            unknown = [name for name in names if name not in agent.tool_names]
            if unknown:
                # LangChain checks both on a model call, in these words.
                if option == "always_include":
                    lead = f"Tools in always_include not found in request: {unknown}."
                else:
                    lead = f"Model selected invalid tools: {unknown}."
                raise MiddlewareError(
                    f"{lead} Available tools: {tools}. {self.name}: {option} names tools the "
                    "agent does not have; fix the name(s) or add the tool(s)."
                )

    async def _wrap_model_call(
        self, mode: Mode, request: ModelRequest[ContextT], handler: Callable[..., Any]
    ) -> ModelResponse:
        """Select the tools with one or two (nostream) calls, then call the model with them."""
        response: ModelResponse = await mode.call(handler, await self._narrow(mode, request))
        return response

    async def _narrow(self, mode: Mode, request: ModelRequest[ContextT]) -> ModelRequest[ContextT]:
        """``request`` with only the tools the selection model picks; as it is when there is
        nothing to select."""
        selection = self._selection(request)
        if selection is None:
            return request
        selector = self._selector
        model = request.model if selector is None else await selector.get(mode)
        picks = structured_picks(await attempt(ask_structured(mode, model, selection)), selection)
        for _ in range(self.max_retries):
            if picks.retry is None:
                break
            if picks.retry == "structured":
                reply = await attempt(ask_structured(mode, model, selection))
                picks = structured_picks(reply, selection)
            else:
                picks = text_picks(
                    await attempt(ask_text(mode, model, selection)), selection, picks
                )
        if picks.names is None:
            picks = self._on_parsing_failure(selection, picks)
        return self._narrowed(request, selection, picks)

    def _on_parsing_failure(self, selection: Selection, failed: Picks) -> Picks:
        """The picks ``on_parsing_failure`` makes once no answer named a tool."""
        choice = self.on_parsing_failure
        if choice == "error":
            raise self._no_selection(failed)
        if choice == "all":
            names: Sequence[str] = selection.names
        elif choice == "none":
            names = ()
        elif callable(choice):
            names = choice(failed.response)
        else:
            names = choice
        unknown = [name for name in names if name not in selection.names]
        if unknown:
            raise ToolSelectionError(
                f"Model selected invalid tools: {unknown}. {self.name}: on_parsing_failure chose "
                f"{unknown}, which are not tools offered for selection; they are "
                f"{selection.names}."
            )
        logger.warning("%s: %s; on_parsing_failure selects %s", self.name, failed.note, names)
        return Picks(tuple(names), failed.note, capped=False)

    def _no_selection(self, failed: Picks) -> ToolSelectionError:
        """LangChain's error for ``on_parsing_failure="error"``, in its words, then the fix."""
        last = failed.response
        if failed.invalid:
            lead = f"Model selected invalid tools: {list(failed.invalid)}."
        elif isinstance(last, Exception):
            lead = f"{self.name}: the selection call failed after {self.max_retries} retries."
        else:
            lead = (
                f"{self.name}: selection model returned a malformed response after "
                f"{self.max_retries} retries (expected a dict with a 'tools' list): {last!r}."
            )
        error = ToolSelectionError(
            f"{lead} {self.name}: the selection model named no tool ({failed.note}). Pass "
            "on_parsing_failure='all', 'none', a list of tool names or a function to choose the "
            "tools instead of failing."
        )
        error.__cause__ = last if isinstance(last, Exception) else None
        return error

    def _selection(self, request: ModelRequest[Any]) -> Selection | None:
        kept = set(self.always_include)
        candidates: dict[str, Candidate] = {}
        for tool in request.tools:
            if isinstance(tool, BaseTool) and tool.name not in kept:
                candidates.setdefault(tool.name, Candidate(tool.name, tool.description or ""))
        if not candidates:
            return None
        query = _last_user_message(request.messages)
        if query is None:
            logger.debug("%s: no user message to select tools for; keeping all", self.name)
            return None
        return Selection(tuple(candidates.values()), query, self._prompt(candidates.values()))

    def _prompt(self, candidates: Collection[Candidate]) -> str:
        listing = "\n".join(
            f"- {c.name}: {c.description}" if c.description else f"- {c.name}" for c in candidates
        )
        limit = (
            f"\n\nChoose at most {self.max_tools} tool(s)." if self.max_tools is not None else ""
        )
        return f"{self.system_prompt}\n\nThe tools:\n{listing}{limit}"

    def _narrowed(
        self, request: ModelRequest[ContextT], selection: Selection, picks: Picks
    ) -> ModelRequest[ContextT]:
        assert picks.names is not None  # on_parsing_failure has chosen when the model did not
        capped = picks.capped and self.max_tools is not None
        chosen = picks.names[: self.max_tools] if capped else picks.names
        picked, offered = set(chosen), set(selection.names)
        selected = [t for t in request.tools if isinstance(t, BaseTool) and t.name in picked]
        kept = [t for t in request.tools if isinstance(t, BaseTool) and t.name not in offered]
        provider = [t for t in request.tools if not isinstance(t, BaseTool)]
        logger.debug("%s: selected %s from %s", self.name, list(chosen), selection.names)
        return request.override(tools=[*selected, *kept, *provider])


# -- the request's tools ---------------------------------------------------------------------


def _last_user_message(messages: Sequence[BaseMessage]) -> HumanMessage | None:
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message
    return None


# -- constructor checks ----------------------------------------------------------------------


def _option_error(parameter: str, value: object, fix: str) -> MiddlewareError:
    return MiddlewareError(f"{_OWNER}: {parameter}={value!r} is not valid; {fix}.")


def _checked_max_retries(max_retries: object) -> int:
    if isinstance(max_retries, bool) or not isinstance(max_retries, int):
        raise MiddlewareTypeError(
            f"{_OWNER}: max_retries={max_retries!r} is not valid; pass an int >= 0."
        )
    if max_retries < 0:
        raise MiddlewareError(
            f"max_retries must be >= 0. {_OWNER} got max_retries={max_retries}; pass 0 to give "
            "up after the first answer."
        )
    return max_retries


def _checked_max_tools(max_tools: object) -> int | None:
    if max_tools is None:
        return None
    if isinstance(max_tools, bool) or not isinstance(max_tools, int) or max_tools < 1:
        raise _option_error("max_tools", max_tools, "pass a positive int, or None for no limit")
    return max_tools


def _checked_names(names: object) -> list[str]:
    if names is None:
        return []
    if isinstance(names, str):
        raise _option_error("always_include", names, f"pass a list of names, e.g. [{names!r}]")
    if not isinstance(names, Collection) or not all(isinstance(n, str) for n in names):
        raise _option_error("always_include", names, "pass a list of tool names")
    return list(dict.fromkeys(names))


def _checked_on_parsing_failure(choice: object) -> OnParsingFailure:
    if choice in ("error", "none", "all") or callable(choice):
        return choice
    if isinstance(choice, Sequence) and not isinstance(choice, str):
        names = tuple(choice)
        if all(isinstance(name, str) for name in names):
            return names
    raise _option_error(
        "on_parsing_failure",
        choice,
        "pass 'error', 'none', 'all', a list of tool names, or a function returning tool names",
    )
