"""``SummarizationMiddleware``: replace the older part of a long conversation with a summary.

Before each model call the middleware checks the conversation against its ``trigger``. When the
trigger is reached it splits the messages in two: the most recent ones (as many as ``keep``
allows) stay as they are, the older ones are sent to ``model`` with ``summary_prompt``, and the
state's messages become one summary ``HumanMessage`` followed by the kept messages.

The split never separates an AI message's tool calls from the ToolMessages answering them, since
providers reject a tool answer without its call (and a call without its answer).

The summary call is tagged ``nostream``: a run streamed with ``stream_mode="messages"`` shows the
agent's own model tokens, not the summary being written.
"""

from __future__ import annotations

import asyncio
import inspect
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langchain_core.messages.utils import (
    count_tokens_approximately,
    get_buffer_string,
    trim_messages,
)
from langchain_core.runnables import RunnableConfig
from langgraph.constants import TAG_NOSTREAM
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.typing import ContextT

from graphagent.errors import MiddlewareError
from graphagent.middleware.base import AgentMiddleware
from graphagent.models import MissingIntegrationError, ModelSpec, resolve_model
from graphagent.state import AgentState, ResponseT

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

__all__ = [
    "DEFAULT_SUMMARY_PROMPT",
    "ContextFraction",
    "ContextMessages",
    "ContextSize",
    "ContextTokens",
    "SummarizationMiddleware",
    "TokenCounter",
    "TriggerClause",
]

ContextFraction: TypeAlias = tuple[Literal["fraction"], float]
"""A share of the model's input window (its profile's max_input_tokens): ``("fraction", 0.8)``."""

ContextTokens: TypeAlias = tuple[Literal["tokens"], int]
"""A number of tokens, as counted by ``token_counter``: ``("tokens", 4000)``."""

ContextMessages: TypeAlias = tuple[Literal["messages"], int]
"""A number of messages: ``("messages", 20)``."""

ContextSize: TypeAlias = ContextFraction | ContextTokens | ContextMessages
"""An amount of conversation: when to summarize (``trigger``) or how much to keep (``keep``)."""


class TriggerClause(TypedDict, total=False):
    """Thresholds that must all be reached together: ``{"tokens": 4000, "messages": 10}``."""

    tokens: int
    messages: int
    fraction: float


TokenCounter: TypeAlias = Callable[[Sequence[BaseMessage]], int]
"""Counts the tokens of a list of messages."""

Trigger: TypeAlias = ContextSize | TriggerClause | list[ContextSize | TriggerClause]

DEFAULT_SUMMARY_PROMPT = """You are condensing the history of a conversation between a user and \
an AI assistant that can use tools. The history below is about to be deleted; your notes are \
all the assistant will keep of it, so they must let it carry on the work without asking again \
or repeating what is done.

Write the notes under these headings, writing "None" under a heading with nothing to report:

## Goal
What the user wants overall, in a few sentences.

## What happened
The facts learned, the decisions taken and why, approaches that failed or were turned down, \
and any result the user still needs. Keep names, numbers, identifiers and quotes exact.

## Artifacts
Files, records and other resources created, changed or read, with what was done to each.

## Next steps
What remains to be done, in order.

Reply with the notes only, without an introduction or a closing remark.

<conversation>
{messages}
</conversation>"""
"""The default ``summary_prompt``; ``{messages}`` is replaced by the messages to summarize."""

SUMMARY_HEADER = "Here is a summary of the conversation so far:"
"""The first line of the summary message that replaces the older messages."""

_DEFAULT_KEEP: ContextMessages = ("messages", 20)
_DEFAULT_TRIM_TOKENS = 4000
_CHARS_PER_TOKEN = 4  # only to cut a single message too long to trim by whole lines
_KINDS = ("tokens", "messages", "fraction")
_XML_BUFFER = "format" in inspect.signature(get_buffer_string).parameters
_SUMMARY_CONFIG: RunnableConfig = {
    "run_name": "summarize_conversation",
    "tags": [TAG_NOSTREAM],
    "metadata": {"lc_source": "summarization"},
}


@dataclass(frozen=True, slots=True)
class _Size:
    """One checked amount: ``kind`` is "tokens", "messages" or "fraction"."""

    kind: str
    value: float

    def in_tokens(self, max_input_tokens: int | None) -> int:
        """The amount as a token count (a fraction of the model's window; at least 1)."""
        if self.kind == "fraction":
            assert max_input_tokens is not None  # checked when the model became known
            return max(1, int(max_input_tokens * self.value))
        return int(self.value)


_Clause: TypeAlias = tuple[_Size, ...]
"""Sizes that must all be reached."""


class SummarizationMiddleware(AgentMiddleware[AgentState[ResponseT], ContextT, ResponseT]):
    """Summarize the older messages once the conversation reaches ``trigger``.

    ``model`` writes the summaries: a chat model, or a model id such as ``"openai:gpt-4o-mini"``
    that is built the first time it is needed. ``trigger`` is one size (``("tokens", 4000)``,
    ``("messages", 50)``, ``("fraction", 0.8)``), a dict of sizes that must all be reached
    (``{"tokens": 4000, "messages": 10}``), or a list of either where any one suffices; ``None``
    (the default) never summarizes. ``keep`` is how much recent history stays as it is.
    ``token_counter`` counts tokens for ``"tokens"`` and ``"fraction"`` sizes;
    ``trim_tokens_to_summarize`` caps how much of the old history the summary model reads (its
    most recent part; ``None`` sends all of it).
    """

    def __init__(
        self,
        model: str | BaseChatModel,
        *,
        trigger: Trigger | None = None,
        keep: ContextSize = _DEFAULT_KEEP,
        token_counter: TokenCounter = count_tokens_approximately,
        summary_prompt: str = DEFAULT_SUMMARY_PROMPT,
        trim_tokens_to_summarize: int | None = _DEFAULT_TRIM_TOKENS,
    ) -> None:
        super().__init__()
        owner = type(self).__name__
        self._choice = _checked_model(owner, model)
        self._built: BaseChatModel | None = None
        self._clauses = _trigger_clauses(owner, trigger)
        self._keep = _size(owner, "keep", keep)
        sizes = [size for clause in self._clauses for size in clause] + [self._keep]
        self._needs_window = any(size.kind == "fraction" for size in sizes)
        self.trigger = _copied(trigger)
        self.keep = keep
        self.token_counter = _checked_callable(owner, "token_counter", token_counter)
        self.summary_prompt = _checked_prompt(owner, summary_prompt)
        self.trim_tokens_to_summarize = _checked_trim(owner, trim_tokens_to_summarize)
        if isinstance(self._choice, BaseChatModel):
            self._check_profile(self._choice)

    @property
    def model(self) -> BaseChatModel:
        """The summary model; reading this builds it from its id if that has not happened yet."""
        if self._built is None:
            self._built = self._loaded()
        return self._built

    def before_model(
        self, state: AgentState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Replace the older messages with a summary once the trigger is reached."""
        messages = state["messages"]
        cut = self._cut(messages, self.model if self._needs_window else None)
        if cut is None:
            return None
        reply = self.model.invoke(self._prompt(messages[:cut]), config=_SUMMARY_CONFIG)
        return _summarized(reply, messages[cut:])

    async def abefore_model(
        self, state: AgentState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`before_model`; the summary is written with ``ainvoke``."""
        messages = state["messages"]
        cut = self._cut(messages, await self._amodel() if self._needs_window else None)
        if cut is None:
            return None
        model = await self._amodel()
        reply = await model.ainvoke(self._prompt(messages[:cut]), config=_SUMMARY_CONFIG)
        return _summarized(reply, messages[cut:])

    # -- deciding what to summarize ---------------------------------------------------------

    def _cut(self, messages: Sequence[AnyMessage], model: BaseChatModel | None) -> int | None:
        """Where the kept messages start, or ``None`` when nothing is to be summarized now."""
        window = _max_input_tokens(model) if model is not None else None
        if not self._triggered(messages, window):
            return None
        if self._keep.kind == "messages":
            cut = len(messages) - int(self._keep.value)
        else:
            cut = _token_cut(messages, self._keep.in_tokens(window), self.token_counter)
        if cut <= 0:
            return None
        return _safe_cut(messages, cut) or None

    def _triggered(self, messages: Sequence[AnyMessage], window: int | None) -> bool:
        if not self._clauses:
            return False
        counts_tokens = any(s.kind != "messages" for c in self._clauses for s in c)
        tokens = self.token_counter(messages) if counts_tokens else 0

        def reached(size: _Size) -> bool:
            if size.kind == "messages":
                return len(messages) >= size.value
            return tokens >= size.in_tokens(window)

        return any(all(reached(size) for size in clause) for clause in self._clauses)

    # -- writing the summary ----------------------------------------------------------------

    def _prompt(self, old: Sequence[AnyMessage]) -> str:
        shown = _trimmed(old, self.trim_tokens_to_summarize, self.token_counter)
        return self.summary_prompt.format(messages=_as_text(shown))

    # -- the model --------------------------------------------------------------------------

    async def _amodel(self) -> BaseChatModel:
        if self._built is None:
            # Building an integration's model imports modules and reads settings: off the loop.
            await asyncio.to_thread(lambda: self.model)
        return self.model

    def _loaded(self) -> BaseChatModel:
        choice = self._choice
        model = choice if isinstance(choice, BaseChatModel) else resolve_model(str(choice))
        self._check_profile(model)
        return model

    def _check_profile(self, model: BaseChatModel) -> None:
        if self._needs_window and _max_input_tokens(model) is None:
            raise MiddlewareError(
                f"{type(self).__name__}: a 'fraction' trigger or keep needs the model's input "
                f"window, but {type(model).__name__}.profile has no 'max_input_tokens'; use "
                "('tokens', N) instead, or give the model a profile: "
                "ChatModel(..., profile={'max_input_tokens': N})."
            )


# -- checking the options --------------------------------------------------------------------


def _checked_model(owner: str, model: object) -> BaseChatModel | ModelSpec:
    if isinstance(model, BaseChatModel):
        return model
    if not isinstance(model, str):
        raise MiddlewareError(
            f"{owner}: model is {type(model).__name__}; pass a chat model or a model id such as "
            "'openai:gpt-4o-mini'."
        )
    try:
        spec = ModelSpec.parse(model)
    except ValueError as error:
        raise MiddlewareError(f"{owner}: model={model!r}: {error}") from None
    if not spec.is_installed():
        missing = spec.missing_error()
        raise MissingIntegrationError(
            f"{owner}: model={model!r}: {missing}",
            provider=missing.provider,
            package=missing.package,
        )
    return spec


def _size(owner: str, parameter: str, given: object) -> _Size:
    if not (isinstance(given, tuple) and len(given) == 2):
        raise MiddlewareError(
            f"{owner}: {parameter} must be a (kind, amount) pair such as ('messages', 20), "
            f"('tokens', 4000) or ('fraction', 0.5); got {given!r}."
        )
    return _amount(owner, parameter, *given)


def _amount(owner: str, parameter: str, kind: object, value: object) -> _Size:
    if kind not in _KINDS:
        raise MiddlewareError(
            f"{owner}: {parameter} has the unknown kind {kind!r}; the kinds are "
            f"{', '.join(map(repr, _KINDS))}."
        )
    if kind == "fraction":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
            raise MiddlewareError(
                f"{owner}: {parameter} fraction must be a number above 0 and at most 1, got "
                f"{value!r}; e.g. ('fraction', 0.8) for 80% of the model's input window."
            )
    elif isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise MiddlewareError(
            f"{owner}: {parameter} {kind} must be a whole number above 0, got {value!r}; "
            f"e.g. ({kind!r}, {20 if kind == 'messages' else 4000})."
        )
    return _Size(str(kind), float(value))


def _trigger_clauses(owner: str, trigger: object) -> tuple[_Clause, ...]:
    if trigger is None:
        return ()
    items = trigger if isinstance(trigger, list) else [trigger]
    if not items:
        raise MiddlewareError(
            f"{owner}: trigger is an empty list; give at least one threshold, or None to "
            "never summarize."
        )
    return tuple(_clause(owner, item) for item in items)


def _clause(owner: str, item: object) -> _Clause:
    if isinstance(item, Mapping):
        if not item:
            raise MiddlewareError(
                f"{owner}: trigger has an empty dict; name at least one of "
                f"{', '.join(map(repr, _KINDS))}, e.g. {{'tokens': 4000, 'messages': 10}}."
            )
        return tuple(_amount(owner, "trigger", kind, value) for kind, value in item.items())
    if isinstance(item, tuple):
        return (_size(owner, "trigger", item),)
    raise MiddlewareError(
        f"{owner}: trigger must be a (kind, amount) pair, a dict of them, or a list of either; "
        f"got {type(item).__name__} {item!r}."
    )


def _copied(trigger: Trigger | None) -> Trigger | None:
    """The trigger as given, with its dicts and list copied so later edits do not leak in."""
    if isinstance(trigger, list):
        return [_copied_item(item) for item in trigger]
    return None if trigger is None else _copied_item(trigger)


def _copied_item(item: ContextSize | TriggerClause) -> ContextSize | TriggerClause:
    return TriggerClause(**item) if isinstance(item, dict) else item


def _checked_callable(owner: str, parameter: str, value: TokenCounter) -> TokenCounter:
    if not callable(value):
        raise MiddlewareError(
            f"{owner}: {parameter} must be a function of a list of messages returning an int, "
            f"got {type(value).__name__}."
        )
    return value


def _checked_prompt(owner: str, prompt: object) -> str:
    if not isinstance(prompt, str):
        raise MiddlewareError(
            f"{owner}: summary_prompt must be a str, got {type(prompt).__name__}."
        )
    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(prompt) if name is not None}
    except ValueError as error:
        raise MiddlewareError(
            f"{owner}: summary_prompt is not a valid format string ({error}); write literal "
            "braces as '{{' and '}}'."
        ) from None
    if fields != {"messages"}:
        raise MiddlewareError(
            f"{owner}: summary_prompt must contain the placeholder {{messages}} and no other "
            f"(found {sorted(fields) or 'none'}); write literal braces as '{{{{' and '}}}}'."
        )
    return prompt


def _checked_trim(owner: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise MiddlewareError(
            f"{owner}: trim_tokens_to_summarize must be a whole number of tokens above 0, or "
            f"None to send all the old messages; got {value!r}."
        )
    return value


# -- plain functions over message lists ------------------------------------------------------


def _max_input_tokens(model: BaseChatModel) -> int | None:
    profile = getattr(model, "profile", None)
    if not isinstance(profile, Mapping):
        return None
    window = profile.get("max_input_tokens")
    if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
        return None
    return window


def _token_cut(messages: Sequence[AnyMessage], budget: int, count: TokenCounter) -> int:
    """The earliest index from which the messages fit in ``budget`` tokens (keeping at least the
    last message); 0 when they all fit."""
    low, high = 0, len(messages)
    while low < high:  # the count of a suffix shrinks as the suffix does
        middle = (low + high) // 2
        if count(messages[middle:]) <= budget:
            high = middle
        else:
            low = middle + 1
    return min(low, len(messages) - 1)


def _safe_cut(messages: Sequence[AnyMessage], cut: int) -> int:
    """``cut`` moved so that no tool call and its answer end up on different sides.

    A kept ToolMessage whose call would be summarized pulls the cut back to the AI message that
    made the call (keeping more). ToolMessages left at the start of the kept part that answer no
    call at all are summarized with the old messages.
    """
    while cut > 0:
        callers = [
            caller
            for index in range(cut, len(messages))
            if (caller := _caller(messages, index)) is not None and caller < cut
        ]
        if not callers:
            break
        cut = min(callers)
    while cut < len(messages) and isinstance(messages[cut], ToolMessage):
        cut += 1
    return cut


def _caller(messages: Sequence[AnyMessage], index: int) -> int | None:
    """The index of the AI message whose call ``messages[index]`` answers (``None`` if it is not
    a ToolMessage or answers nothing); the nearest one, should a provider reuse call ids."""
    answer = messages[index]
    if not isinstance(answer, ToolMessage):
        return None
    return next(
        (
            i
            for i in range(index - 1, -1, -1)
            if isinstance(m := messages[i], AIMessage)
            and any(call["id"] == answer.tool_call_id for call in m.tool_calls)
        ),
        None,
    )


def _trimmed(
    messages: Sequence[AnyMessage], max_tokens: int | None, count: TokenCounter
) -> Sequence[BaseMessage]:
    """The most recent part of ``messages`` within ``max_tokens`` (all of them for ``None``)."""
    if max_tokens is None or count(messages) <= max_tokens:
        return messages
    kept = trim_messages(
        messages, max_tokens=max_tokens, token_counter=count, strategy="last", allow_partial=True
    )
    if kept:
        return kept
    # The last message alone is too long and has no line breaks to cut at: keep its end.
    last = messages[-1]
    return [last.model_copy(update={"content": last.text[-max_tokens * _CHARS_PER_TOKEN :]})]


def _as_text(messages: Sequence[BaseMessage]) -> str:
    if _XML_BUFFER:  # tags show tool names and call ids; older langchain-core has prefixes only
        return get_buffer_string(messages, format="xml")
    return get_buffer_string(messages)


def _summarized(reply: BaseMessage, kept: Sequence[AnyMessage]) -> dict[str, Any]:
    summary = HumanMessage(
        content=f"{SUMMARY_HEADER}\n\n{reply.text.strip()}",
        additional_kwargs={"lc_source": "summarization"},
    )
    return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), summary, *kept]}
