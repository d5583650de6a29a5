"""The private methods of LangChain's ``SummarizationMiddleware`` that libraries built on it call.

deepagents' own summarization keeps a LangChain ``SummarizationMiddleware`` as a helper and
asks it when to summarize, where to cut and for the summary text, through these names. Each one
answers with graphagent's rules (the same ones ``before_model`` follows), so such a library
summarizes as graphagent's middleware would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage

from graphagent._core.bridge import ASYNC, SYNC, run_sync
from graphagent.errors import hook_label
from graphagent.middleware._kit.context_size import (
    ContextSize,
    CutRule,
    TriggerClause,
    max_input_tokens,
    reported_tokens,
)
from graphagent.middleware._summary.text import NOTHING_TO_SUMMARIZE

if TYPE_CHECKING:
    from graphagent._core.bridge import Mode
    from graphagent.middleware._kit.context_size import TokenCounter


class _Summarizing(Protocol):
    """What the methods read of the middleware they are mixed into."""

    _rule: CutRule
    token_counter: TokenCounter
    _partial_token_counter: TokenCounter

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> BaseChatModel: ...

    async def _write(self, mode: Mode, old: Sequence[AnyMessage]) -> str: ...


class SummaryInternals:
    """LangChain's private helper methods, mixed into graphagent's summarization middleware."""

    @property
    def _trigger_clauses(self: _Summarizing) -> list[TriggerClause]:
        """The trigger as clauses, any one of which suffices (``[]`` never summarizes)."""
        return self._rule.trigger_clauses()

    @property
    def _trigger_conditions(self: _Summarizing) -> list[ContextSize]:
        """The clauses of one threshold each, as ``(kind, amount)`` pairs: LangChain's older
        view of the trigger, which leaves out clauses of several thresholds."""
        return self._rule.single_sizes()

    def _get_profile_limits(self: _Summarizing, model: BaseChatModel | None = None) -> int | None:
        """The input window of ``model`` (default: the summary model) from its profile."""
        return max_input_tokens(model if model is not None else self.model)

    def _should_summarize(
        self: _Summarizing, messages: list[AnyMessage], total_tokens: int
    ) -> bool:
        """Whether the trigger is reached by ``messages``, which count ``total_tokens`` (or the
        usage the model's provider reported for the latest AI message, when that is higher)."""
        tokens = max(total_tokens, reported_tokens(messages, self.model))
        return self._rule.triggered(messages, _window(self), self.token_counter, tokens)

    def _should_summarize_based_on_reported_tokens(
        self: _Summarizing, messages: list[AnyMessage], threshold: float
    ) -> bool:
        """Whether the provider reported at least ``threshold`` tokens for the last AI message,
        and that message comes from the provider of the model."""
        reported = reported_tokens(messages, self.model)
        return bool(reported) and reported >= threshold

    def _determine_cutoff_index(self: _Summarizing, messages: list[AnyMessage]) -> int:
        """Where the messages ``keep`` keeps start (0: keep them all), whatever the trigger."""
        window = _window(self)
        return self._rule.keep_from(
            messages, window, self.token_counter, self._partial_token_counter
        )

    @staticmethod
    def _partition_messages(
        conversation_messages: list[AnyMessage], cutoff_index: int
    ) -> tuple[list[AnyMessage], list[AnyMessage]]:
        """The messages to summarize and the messages kept."""
        return conversation_messages[:cutoff_index], conversation_messages[cutoff_index:]

    def _create_summary(self: _Summarizing, messages_to_summarize: list[AnyMessage]) -> str:
        """The summary text of ``messages_to_summarize``, written as ``before_model`` writes it."""
        where = hook_label(self.name, "before_model")
        return run_sync(_summary(self, SYNC, messages_to_summarize), where)

    async def _acreate_summary(self: _Summarizing, messages_to_summarize: list[AnyMessage]) -> str:
        """Async twin of :meth:`_create_summary`."""
        return await _summary(self, ASYNC, messages_to_summarize)


async def _summary(middleware: _Summarizing, mode: Mode, messages: Sequence[AnyMessage]) -> str:
    return await middleware._write(mode, messages) if messages else NOTHING_TO_SUMMARIZE


def _window(middleware: _Summarizing) -> int | None:
    return max_input_tokens(middleware.model) if middleware._rule.needs_window else None
