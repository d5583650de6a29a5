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

import inspect
import string
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, TypeAlias

import langchain_core.exceptions
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import Runnable, RunnableLambda
from langgraph.typing import ContextT

from graphagent._core.bridge import ASYNC, SYNC, Mode, run_sync
from graphagent._core.deprecated import warn_deprecated
from graphagent._core.internal_calls import internal_call_config
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import MiddlewareError, MiddlewareTypeError, hook_label
from graphagent.middleware._kit.context_size import (
    ContextFraction,
    ContextMessages,
    ContextSize,
    ContextTokens,
    CutRule,
    TokenCounter,
    Trigger,
    TriggerClause,
    copied,
    max_input_tokens,
    reported_tokens,
)
from graphagent.middleware._kit.retry import retry_by_default
from graphagent.middleware._summary.internals import SummaryInternals
from graphagent.middleware._summary.text import (
    SUMMARY_HEADER,
    as_text,
    shortened,
    summarized,
    trimmed,
)
from graphagent.middleware.base import AgentMiddleware
from graphagent.models import ConfigurableChatModel, HelperModel, init_chat_model
from graphagent.state import AgentState, ResponseT

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

__all__ = [
    "DEFAULT_SUMMARY_PROMPT",
    "SUMMARY_HEADER",
    "ContextFraction",
    "ContextMessages",
    "ContextSize",
    "ContextTokens",
    "SummarizationMiddleware",
    "Summarizer",
    "TokenCounter",
    "TriggerClause",
]

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

Summarizer: TypeAlias = (
    str
    | BaseChatModel
    | Runnable[list[AnyMessage], str]
    | Callable[[list[AnyMessage]], str]
    | Callable[[list[AnyMessage]], Awaitable[str]]
)
"""What writes the summaries instead of ``model``: a chat model or model id, prompted with
``summary_prompt``; or a Runnable or function (sync or async) given the messages to summarize
and returning the summary text."""

# LangChain's private names for the defaults, which code built on it imports (deepagents does).
_DEFAULT_MESSAGES_TO_KEEP = 20
_DEFAULT_TRIM_TOKEN_LIMIT = 4000
_DEFAULT_KEEP: ContextMessages = ("messages", _DEFAULT_MESSAGES_TO_KEEP)
_SUMMARY_CONFIG = internal_call_config("summarize_conversation", "summarization")
_SCALED_COUNT = (
    "use_usage_metadata_scaling" in inspect.signature(count_tokens_approximately).parameters
)
_ANTHROPIC_CHARS_PER_TOKEN = 3.3  # Claude's tokens are shorter than the default estimate's 4
# Raised by langchain-core >= 1.3 when a prompt does not fit the model's window.
_OVERFLOW: tuple[type[Exception], ...] = tuple(
    error
    for error in [getattr(langchain_core.exceptions, "ContextOverflowError", None)]
    if isinstance(error, type)
)


@refuse_unknown_arguments
class SummarizationMiddleware(
    SummaryInternals, AgentMiddleware[AgentState[ResponseT], ContextT, ResponseT]
):
    """Summarize the older messages once the conversation reaches ``trigger``.

    A summary call is tried up to three times, except for provider errors marked not worth
    retrying; a prompt the summary model refuses as too long for its window is sent once more
    with the middle of the history left out. An error that persists ends the run and leaves the
    history as it was.

    Args:
        model: The model that writes the summaries: a chat model, or a model id such as
            ``"openai:gpt-4o-mini"``, built with ``init_chat_model`` at once.
        trigger: When to summarize: one size (``("tokens", 4000)``, ``("messages", 50)``,
            ``("fraction", 0.8)`` of the model's input window), a dict of sizes that must all
            be reached (``{"tokens": 4000, "messages": 10}``), or a list of either where any
            one suffices. ``None`` never summarizes.
        keep: How much recent history stays as it is, as one size; the default keeps the last
            20 messages.
        token_counter: Counts the tokens of a list of messages, for ``"tokens"`` and
            ``"fraction"`` sizes; the default estimates them from the text, scaled by the usage
            the provider reported. Either way, a ``"tokens"`` or ``"fraction"`` threshold is
            also reached by the usage reported on the last AI message of ``model``'s provider.
        summary_prompt: The instructions for the summary model, with a ``{messages}``
            placeholder where the old history goes (literal braces doubled).
        trim_tokens_to_summarize: How many tokens of the old history the summary model reads
            at most (its most recent part); ``None`` sends all of it.
        max_tokens_before_summary: Deprecated, as in LangChain: ``n`` stands for
            ``trigger=("tokens", n)`` when no ``trigger`` is given; it warns.
        messages_to_keep: Deprecated, as in LangChain: ``n`` stands for
            ``keep=("messages", n)`` when ``keep`` is left at its default; it warns.
        summarizer: Writes the summaries instead of ``model``, which then only sizes the
            window (see :data:`Summarizer`); an async function needs ``ainvoke``/``astream``.

    Raises:
        MiddlewareError: A bad size, counter or prompt, or a ``"fraction"`` size with a model
            whose profile has no input window.
        ValueError: A model id naming no known provider (from ``init_chat_model``).
        MissingIntegrationError: A model id whose provider package is not installed.
    """

    cache_volatile = ("earlier messages",)
    """What of a prompt's cached prefix this middleware may change (docs/prompt-caching.md)."""

    def __init__(
        self,
        model: str | BaseChatModel,
        *,
        trigger: Trigger | None = None,
        keep: ContextSize = _DEFAULT_KEEP,
        token_counter: TokenCounter = count_tokens_approximately,
        summary_prompt: str = DEFAULT_SUMMARY_PROMPT,
        trim_tokens_to_summarize: int | None = _DEFAULT_TRIM_TOKEN_LIMIT,
        summarizer: Summarizer | None = None,
        max_tokens_before_summary: int | None = None,
        messages_to_keep: int | None = None,
    ) -> None:
        super().__init__()
        owner = type(self).__name__
        if max_tokens_before_summary is not None:
            warn_deprecated(owner, "max_tokens_before_summary", "trigger=('tokens', n)")
            trigger = ("tokens", max_tokens_before_summary) if trigger is None else trigger
        if messages_to_keep is not None:
            warn_deprecated(owner, "messages_to_keep", "keep=('messages', n)")
            keep = ("messages", messages_to_keep) if keep == _DEFAULT_KEEP else keep
        self._rule = CutRule.parse(owner, trigger, keep)
        self._needs_window = self._rule.needs_window
        self.trigger = copied(trigger)
        self.keep = keep
        self.summary_prompt = _checked_prompt(owner, summary_prompt)
        self.trim_tokens_to_summarize = _checked_trim(owner, trim_tokens_to_summarize)
        built = init_chat_model(model) if isinstance(model, str) else model
        self._summarizer = HelperModel(owner, "model", built, check=self._check_profile)
        if isinstance(built, BaseChatModel):
            self._check_profile(built)
        # Looked up here, not bound as the default, so a replaced module attribute is honoured.
        if token_counter is count_tokens_approximately:
            self.token_counter, self._partial_token_counter = _approximate_counters(built)
        else:
            self.token_counter = _checked_callable(owner, "token_counter", token_counter)
            self._partial_token_counter = token_counter
        self._writer, self.summarizer = _checked_summarizer(owner, summarizer, self._summarizer)
        self._summary_chat_model: BaseChatModel = self._writer.model
        # Three attempts, as LangChain's summary calls make; errors marked final are not retried.
        self._summary_model: Runnable[Any, Any] = _retrying(self._summary_chat_model)

    @property
    def model(self) -> BaseChatModel:
        """The model whose window the trigger and ``keep`` measure (and that writes the
        summaries unless ``summarizer`` does)."""
        return self._summarizer.model

    def before_model(
        self, state: AgentState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Replace the older messages with a summary once the trigger is reached."""
        return run_sync(self._summarize(SYNC, state), hook_label(self.name, "before_model"))

    async def abefore_model(
        self, state: AgentState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`before_model`; the summary is written with ``ainvoke``."""
        return await self._summarize(ASYNC, state)

    async def _summarize(self, mode: Mode, state: AgentState[ResponseT]) -> dict[str, Any] | None:
        messages = state["messages"]
        rule = self._rule
        needs_model = rule.counts_tokens or self._needs_window
        model = await self._summarizer.get(mode) if needs_model else None
        window = max_input_tokens(model) if model is not None and self._needs_window else None
        tokens = None
        if rule.counts_tokens:
            tokens = max(self.token_counter(messages), reported_tokens(messages, model))
        if not rule.triggered(messages, window, self.token_counter, tokens):
            return None
        cut = rule.keep_from(messages, window, self.token_counter, self._partial_token_counter)
        if cut <= 0:
            return None
        return summarized(await self._write(mode, messages[:cut]), messages[cut:])

    # -- writing the summary ----------------------------------------------------------------

    async def _write(self, mode: Mode, old: Sequence[AnyMessage]) -> str:
        """The summary of ``old`` (its newest part within ``trim_tokens_to_summarize``)."""
        shown = trimmed(old, self.trim_tokens_to_summarize, self.token_counter)
        if self.summarizer is not None:
            summary = await mode.invoke(self.summarizer, list(shown), config=_SUMMARY_CONFIG)
            if not isinstance(summary, str):
                raise MiddlewareTypeError(
                    f"`summarizer` must return a str, got {type(summary).__name__}. "
                    f"{self.name}: return the summary text from the summarizer."
                )
            return summary.strip()
        await self._writer.get(mode)  # a configurable model's run model, built off the loop
        text = as_text(shown)
        try:
            return await self._ask(mode, text)
        except _OVERFLOW:
            window = max_input_tokens(self._summary_chat_model)
            shorter = shortened(text, self._partial_token_counter, window)
            if shorter is None:
                raise
            return await self._ask(mode, shorter)

    async def _ask(self, mode: Mode, conversation: str) -> str:
        prompt = self.summary_prompt.format(messages=conversation).rstrip()
        reply = await mode.invoke(self._summary_model, prompt, config=_SUMMARY_CONFIG)
        return str(reply.text).strip()

    # -- the model --------------------------------------------------------------------------

    def _check_profile(self, model: BaseChatModel) -> None:
        if self._needs_window and max_input_tokens(model) is None:
            raise MiddlewareError(
                "Model profile information is required to use fractional token limits, and is "
                f"unavailable for the specified model. {type(self).__name__}: a 'fraction' "
                "trigger or keep needs the model's input "
                f"window, but {type(model).__name__}.profile has no 'max_input_tokens'; use "
                "('tokens', N) instead, or give the model a profile: "
                "ChatModel(..., profile={'max_input_tokens': N})."
            )


def _approximate_counters(model: object) -> tuple[TokenCounter, TokenCounter]:
    """The default counts, as LangChain makes them: the conversation's estimate scaled by the
    usage its provider reported, and unscaled estimates for parts of it; Anthropic models get
    shorter tokens."""
    count = count_tokens_approximately
    if not _SCALED_COUNT:  # older langchain-core: no scaling to turn on
        return count, count
    llm_type = model._llm_type if isinstance(model, BaseChatModel) else ""
    options: dict[str, Any] = {}
    if llm_type.startswith("anthropic-chat"):
        options["chars_per_token"] = _ANTHROPIC_CHARS_PER_TOKEN
    return (
        partial(count, use_usage_metadata_scaling=True, **options),
        partial(count, use_usage_metadata_scaling=False, **options),
    )


def _retrying(model: BaseChatModel) -> Runnable[Any, Any]:
    with_retry = getattr(model, "with_retry", None)  # a stand-in called like a model may lack it
    if with_retry is None:
        return model
    retried: Runnable[Any, Any] = with_retry(
        retry_if_exception_type=lambda error: (
            isinstance(error, Exception) and retry_by_default(error)
        )
    )
    return retried


# -- checking the options --------------------------------------------------------------------


def _checked_callable(owner: str, parameter: str, value: TokenCounter) -> TokenCounter:
    if not callable(value):
        raise MiddlewareTypeError(
            f"{owner}: {parameter} must be a function of a list of messages returning an int, "
            f"got {type(value).__name__}."
        )
    return value


def _checked_summarizer(
    owner: str, summarizer: object, model: HelperModel
) -> tuple[HelperModel, Runnable[Any, Any] | None]:
    """What writes the summaries: a chat model prompted like ``model`` (``model`` itself when
    ``summarizer`` is ``None``), or a runnable given the messages."""
    if summarizer is None:
        return model, None
    if isinstance(summarizer, str):
        summarizer = init_chat_model(summarizer)
    if isinstance(summarizer, BaseChatModel | ConfigurableChatModel):
        return HelperModel(owner, "summarizer", summarizer), None
    if isinstance(summarizer, Runnable):
        return model, summarizer
    if callable(summarizer):
        return model, RunnableLambda(summarizer)
    raise MiddlewareTypeError(
        f"{owner}: summarizer must be a chat model, a model id, a Runnable or a function of the "
        f"messages returning the summary text; got {type(summarizer).__name__}."
    )


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
