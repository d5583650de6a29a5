"""Sizes of a conversation: parsing ``trigger``/``keep`` and choosing where to cut the history.

A cut never separates an AI message's tool calls from the ToolMessages answering them, since
providers reject a tool answer without its call (and a call without its answer).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias, TypedDict, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage

from graphagent._core.log import log
from graphagent.errors import MiddlewareError, MiddlewareTypeError

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
    """Tokens in the conversation, as counted by ``token_counter``."""
    messages: int
    """Messages in the conversation."""
    fraction: float
    """A share of the model's input window (its profile's ``max_input_tokens``)."""


TokenCounter: TypeAlias = Callable[[Sequence[BaseMessage]], int]
"""Counts the tokens of a list of messages."""

Trigger: TypeAlias = ContextSize | TriggerClause | list[ContextSize | TriggerClause]

_KINDS = ("tokens", "messages", "fraction")


@dataclass(frozen=True, slots=True)
class _Size:
    """One checked amount: ``kind`` is "tokens", "messages" or "fraction"."""

    kind: str
    value: float

    @property
    def given(self) -> int | float:
        """The amount as it was given: a whole number of tokens or messages, or a fraction."""
        return self.value if self.kind == "fraction" else int(self.value)

    def in_tokens(self, max_input_tokens: int | None) -> int:
        """The amount as a token count (a fraction of the model's window; at least 1)."""
        if self.kind == "fraction":
            assert max_input_tokens is not None  # checked when the model became known
            return max(1, int(max_input_tokens * self.value))
        return int(self.value)


_Clause: TypeAlias = tuple[_Size, ...]
"""Sizes that must all be reached."""


@dataclass(frozen=True, slots=True)
class CutRule:
    """A checked ``trigger`` (clauses of which any one suffices) and ``keep``."""

    clauses: tuple[_Clause, ...]
    keep: _Size

    @classmethod
    def parse(cls, owner: str, trigger: object, keep: object) -> CutRule:
        """Check the options as given (MiddlewareError naming ``owner`` when one is wrong)."""
        return cls(_trigger_clauses(owner, trigger), _size(owner, "keep", keep))

    @property
    def needs_window(self) -> bool:
        """Whether some size is a fraction of the model's input window."""
        sizes = [size for clause in self.clauses for size in clause] + [self.keep]
        return any(size.kind == "fraction" for size in sizes)

    def keep_from(
        self,
        messages: Sequence[AnyMessage],
        window: int | None,
        count: TokenCounter,
        count_part: TokenCounter | None = None,
    ) -> int:
        """Where the messages ``keep`` keeps start, moved so no tool call is parted from its
        answer; 0 when all of them are kept. ``count`` sizes the whole conversation,
        ``count_part`` (default: ``count``) the recent parts it tries."""
        if self.keep.kind == "messages":
            cut = len(messages) - int(self.keep.value)
        else:
            budget = self.keep.in_tokens(window)
            if count(messages) <= budget:
                return 0
            cut = _token_cut(messages, budget, count_part or count)
        return _safe_cut(messages, cut) if cut > 0 else 0

    def triggered(
        self,
        messages: Sequence[AnyMessage],
        window: int | None,
        count: TokenCounter,
        tokens: int | None = None,
    ) -> bool:
        """Whether some clause is reached; ``tokens``: the messages' count, when known (a
        provider's reported usage, when it is higher, is passed here by the caller)."""
        if not self.clauses:
            return False
        if tokens is None:
            tokens = count(messages) if self.counts_tokens else 0

        def reached(size: _Size) -> bool:
            if size.kind == "messages":
                return len(messages) >= size.value
            if size.kind == "fraction" and window is None:
                return False  # a window nobody knows is never reached
            return tokens >= size.in_tokens(window)

        return any(all(reached(size) for size in clause) for clause in self.clauses)

    def trigger_clauses(self) -> list[TriggerClause]:
        """The trigger as a list of clauses (dicts), any one of which suffices."""
        return [cast(TriggerClause, {s.kind: s.given for s in clause}) for clause in self.clauses]

    def single_sizes(self) -> list[ContextSize]:
        """The clauses of one size each, as ``(kind, amount)`` pairs (LangChain's older view of
        a trigger, which has no place for a clause of several sizes)."""
        return [
            cast(ContextSize, (clause[0].kind, clause[0].given))
            for clause in self.clauses
            if len(clause) == 1
        ]

    @property
    def counts_tokens(self) -> bool:
        """Whether some clause has a token or fraction size, so reaching it needs a count."""
        return any(size.kind != "messages" for clause in self.clauses for size in clause)


def max_input_tokens(model: BaseChatModel) -> int | None:
    """The input window from the model's profile, or ``None`` when it does not say."""
    profile = getattr(model, "profile", None)
    if not isinstance(profile, Mapping):
        return None
    window = profile.get("max_input_tokens")
    if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
        return None
    return window


# Chat models whose messages name their provider (``response_metadata["model_provider"]``)
# otherwise than their LangSmith ``ls_provider`` does.
_PROVIDER_ALIASES: Mapping[str, frozenset[str]] = {
    "amazon_bedrock": frozenset({"bedrock", "bedrock_converse"}),
    "openai-mantle": frozenset({"openai"}),
    "anthropic-mantle": frozenset({"anthropic"}),
}


def reported_tokens(messages: Sequence[AnyMessage], model: object) -> int:
    """The total tokens the provider reported for the latest AI message, when that message
    comes from the provider of ``model``; 0 when it does not say."""
    last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    if last is None or last.usage_metadata is None:
        return 0
    total = last.usage_metadata.get("total_tokens", 0)
    provider = last.response_metadata.get("model_provider")
    if not isinstance(total, int) or not _same_provider(provider, model):
        return 0
    return total


def _same_provider(provider: object, model: object) -> bool:
    if not isinstance(provider, str) or not provider:
        return False
    try:
        own = model._get_ls_params().get("ls_provider")  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        return False
    return isinstance(own, str) and (provider == own or provider in _PROVIDER_ALIASES.get(own, ()))


def copied(trigger: Trigger | None) -> Trigger | None:
    """The trigger as given, with its dicts and list copied so later edits do not leak in."""
    if isinstance(trigger, list):
        return [_copied_item(item) for item in trigger]
    return None if trigger is None else _copied_item(trigger)


def _copied_item(item: ContextSize | TriggerClause) -> ContextSize | TriggerClause:
    return TriggerClause(**item) if isinstance(item, dict) else item


def tool_caller(messages: Sequence[AnyMessage], index: int, call_id: str) -> int | None:
    """The index of the nearest AI message before ``index`` that made the call ``call_id`` (the
    nearest, should a provider reuse call ids)."""
    return next(
        (
            i
            for i in range(index - 1, -1, -1)
            if isinstance(m := messages[i], AIMessage)
            and any(call["id"] == call_id for call in m.tool_calls)
        ),
        None,
    )


# -- checking the options --------------------------------------------------------------------


def _size(owner: str, parameter: str, given: object) -> _Size:
    """A ``(kind, amount)`` pair: ``keep``, or one threshold of ``trigger``."""
    if not (isinstance(given, tuple) and len(given) == 2):
        # A pair that is no tuple at all cannot even be unpacked: a TypeError in LangChain too.
        raise (MiddlewareError if isinstance(given, tuple) else MiddlewareTypeError)(
            f"{owner}: {parameter} must be a (kind, amount) pair such as ('messages', 20), "
            f"('tokens', 4000) or ('fraction', 0.5); got {given!r}."
        )
    kind, value = given
    if kind not in _KINDS:
        raise MiddlewareError(
            f"Unsupported context size type {kind} for {parameter}. {owner}: the kinds are "
            f"{', '.join(map(repr, _KINDS))}."
        )
    return _amount(owner, parameter, str(kind), value)


def _amount(owner: str, parameter: str, kind: str, value: object) -> _Size:
    """One amount of a known kind. Messages lead with LangChain's words for the same check (it
    makes the type checks for trigger dicts only; a pair's value of the wrong type fails its
    comparison with a TypeError, so ours is also one)."""
    example = f"e.g. ({kind!r}, {_EXAMPLES[kind]})"
    if kind == "fraction":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise MiddlewareTypeError(
                f"Fraction {parameter} values must be numeric, got {value!r}. {owner}: {example} "
                "for 80% of the model's input window."
            )
        if not 0 < value <= 1:
            raise MiddlewareError(
                f"Fractional {parameter} values must be between 0 and 1, got {value}. {owner}: "
                f"a fraction is above 0 and at most 1, {example}."
            )
    else:
        if isinstance(value, bool):
            raise MiddlewareTypeError(
                f"{kind} {parameter} value must be numeric, got {value!r}. {owner}: {example}."
            )
        if not isinstance(value, int):
            raise MiddlewareTypeError(
                f"{kind} {parameter} values must be integers, got {value!r}. {owner}: {example}."
            )
        if value <= 0:
            raise MiddlewareError(
                f"{parameter} thresholds must be greater than 0, got {value}. {owner}: give a "
                f"whole number above 0, {example}."
            )
    return _Size(kind, float(value))


_EXAMPLES = {"fraction": "0.8", "tokens": "4000", "messages": "20"}


def _trigger_clauses(owner: str, trigger: object) -> tuple[_Clause, ...]:
    if trigger is None:
        return ()
    if not isinstance(trigger, Mapping | tuple | list):
        raise MiddlewareTypeError(
            f"Unsupported trigger type: {type(trigger)}. {owner}: trigger must be a (kind, "
            f"amount) pair, a dict of them, or a list of either, e.g. ('tokens', 4000); got "
            f"{trigger!r}."
        )
    items = trigger if isinstance(trigger, list) else [trigger]
    if not items:
        log.info("%s: trigger is an empty list, so it never summarizes", owner)
    return tuple(_clause(owner, item) for item in items)


def _metric(owner: str, kind: object, value: object) -> _Size:
    """One entry of a trigger dict, checked in LangChain's order: its kind, then its value."""
    if kind not in _KINDS:
        raise MiddlewareError(
            f"Unsupported trigger metric: {kind!r}. {owner}: the kinds are "
            f"{', '.join(map(repr, _KINDS))}."
        )
    return _amount(owner, "trigger", str(kind), value)


def _clause(owner: str, item: object) -> _Clause:
    if isinstance(item, Mapping):
        if not item:
            raise MiddlewareError(
                "trigger clause must specify at least one of 'tokens', 'messages', 'fraction'. "
                f"{owner}: trigger has an empty dict; e.g. {{'tokens': 4000, 'messages': 10}}."
            )
        return tuple(_metric(owner, kind, value) for kind, value in item.items())
    if isinstance(item, tuple):
        return (_size(owner, "trigger", item),)
    raise MiddlewareTypeError(
        f"Unsupported trigger item type: {type(item)}. {owner}: each item of a trigger list is a "
        f"(kind, amount) pair or a dict of them; got {item!r}."
    )


# -- choosing the cut ------------------------------------------------------------------------


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
            if (caller := _answered_caller(messages, index)) is not None and caller < cut
        ]
        if not callers:
            break
        cut = min(callers)
    while cut < len(messages) and isinstance(messages[cut], ToolMessage):
        cut += 1
    return cut


def _answered_caller(messages: Sequence[AnyMessage], index: int) -> int | None:
    """The caller of ``messages[index]`` if it is a ToolMessage answering a call, else ``None``."""
    answer = messages[index]
    if not isinstance(answer, ToolMessage):
        return None
    return tool_caller(messages, index, answer.tool_call_id)
