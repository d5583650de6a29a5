"""What the summary model reads: the old messages trimmed, as text, and cut in the middle when
the prompt overflowed the model's window; and the message the summary becomes."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage, RemoveMessage
from langchain_core.messages.utils import get_buffer_string, trim_messages
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from graphagent._core.log import log
from graphagent.middleware._kit.context_size import TokenCounter

SUMMARY_HEADER = "Here is a summary of the conversation to date:"  # LangChain 1.5.2's words
"""The first line of the summary message that replaces the older messages."""

NOTHING_TO_SUMMARIZE = "No previous conversation history."
"""The summary of no messages at all (no model is asked); LangChain's words."""

_CHARS_PER_TOKEN = 4  # only to cut a single message too long to trim by whole lines
_XML_BUFFER = "format" in inspect.signature(get_buffer_string).parameters
_LEFT_OUT = "\n\n[... part of the conversation is left out here ...]\n\n"
_OVERFLOW_SHARE = 0.4  # of the window, below half to leave room for a scaled count


def trimmed(
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


def as_text(messages: Sequence[BaseMessage]) -> str:
    """The messages as the summary prompt shows them."""
    if _XML_BUFFER:  # tags show tool names and call ids; older langchain-core has prefixes only
        return get_buffer_string(messages, format="xml")
    return get_buffer_string(messages)


def shortened(text: str, count: TokenCounter, window: int | None) -> str | None:
    """``text`` with its middle left out, to retry a summary prompt that overflowed: at most
    half its tokens, and at most 40% of the summary model's ``window`` when that is known. The
    start (where the task is usually stated) keeps a quarter, the most recent part the rest.
    ``None`` when nothing would be left."""
    tokens = count([HumanMessage(content=text)])
    budget = tokens // 2
    if window is not None:
        budget = min(budget, int(window * _OVERFLOW_SHARE))
    chars = len(text) * budget // max(tokens, 1)
    if chars <= 0:
        return None
    head = chars // 4
    log.debug(
        "summary prompt overflowed the model's window; retrying with about %d of %d tokens "
        "of the conversation",
        budget,
        tokens,
    )
    return f"{text[:head]}{_LEFT_OUT}{text[-(chars - head) :]}"


def summarized(text: str, kept: Sequence[AnyMessage]) -> dict[str, Any]:
    """The state update replacing the messages with the summary, followed by ``kept``."""
    summary = HumanMessage(
        content=f"{SUMMARY_HEADER}\n\n{text}",
        additional_kwargs={"lc_source": "summarization"},
    )
    return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), summary, *kept]}
