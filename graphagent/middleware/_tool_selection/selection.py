"""One selection: the tools offered, how the selection model is asked about them, and how its
answers are read back into tool names (``tool_selection.py`` decides what to do with them)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphBubbleUp

from graphagent._core.bridge import Mode
from graphagent._core.internal_calls import internal_call_config

_WRAPPING = "`'\"*.,;:!?()[]{}<> \t\r\n"


@dataclass(frozen=True, slots=True)
class Candidate:
    """A tool offered for selection."""

    name: str
    description: str


@dataclass(frozen=True, slots=True)
class Reply:
    """What a selection call returned, or the exception it raised."""

    value: Any = None
    error: Exception | None = None


Retry = Literal["structured", "text"]
"""How to ask again: the same structured request (its answer was malformed), or in plain text
(the structured call failed or gave nothing to read)."""


@dataclass(frozen=True, slots=True)
class Picks:
    """The names a reply resolved to (``None``: it named no tool), and why, for the log."""

    names: tuple[str, ...] | None
    note: str = ""
    capped: bool = True  # False for an on_parsing_failure choice, which max_tools does not cut
    invalid: tuple[str, ...] = ()  # what a structured answer named that is no tool offered
    retry: Retry | None = None  # how to ask again; None: asking again would not help
    response: Any = None  # what on_parsing_failure is given: the answer, or the error


@dataclass(frozen=True, slots=True)
class Selection:
    """One selection: the candidates and the two ways of asking the model about them."""

    candidates: tuple[Candidate, ...]
    query: HumanMessage
    """The user message the tools are chosen for (the last one), sent as it is."""
    prompt: str

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.candidates]

    def structured_messages(self) -> list[BaseMessage]:
        instruction = "Answer with the names of the relevant tools, most relevant first."
        return self._messages(instruction)

    def text_messages(self) -> list[BaseMessage]:
        instruction = (
            "Reply with the names of the relevant tools only, exactly as they are written in the "
            "list, separated by commas, most relevant first. Do not explain."
        )
        return self._messages(instruction)

    def schema(self) -> dict[str, Any]:
        """A names-only schema: the options carry no descriptions a model could echo."""
        return {
            "title": "ToolSelectionResponse",  # the tool the model calls, named as in LangChain
            "description": "Select the tools relevant to the user's request.",
            "type": "object",
            "properties": {
                "tools": {
                    "type": "array",
                    "items": {"type": "string", "enum": self.names},
                    "description": "Tool names from the list, most relevant first.",
                }
            },
            "required": ["tools"],
            "additionalProperties": False,
        }

    def _messages(self, instruction: str) -> list[BaseMessage]:
        return [SystemMessage(f"{self.prompt}\n\n{instruction}"), self.query]


# -- calling the selection model ------------------------------------------------------------


async def ask_structured(mode: Mode, model: BaseChatModel, selection: Selection) -> Any:
    runnable = model.with_structured_output(selection.schema(), include_raw=True)
    return await mode.invoke(runnable, selection.structured_messages(), config=_call_config())


async def ask_text(mode: Mode, model: BaseChatModel, selection: Selection) -> Any:
    return await mode.invoke(model, selection.text_messages(), config=_call_config())


def _call_config() -> RunnableConfig:
    # The selection is internal: it stays out of what the run streams.
    return internal_call_config("tool_selection", "tool_selection")


async def attempt(ask: Awaitable[Any]) -> Reply:
    """What ``ask`` (a question to the selection model, not yet awaited) returned or raised."""
    try:
        return Reply(value=await ask)
    except GraphBubbleUp:
        raise
    except Exception as error:
        return Reply(error=error)


# -- reading the answers ---------------------------------------------------------------------


def structured_picks(reply: Reply, selection: Selection) -> Picks:
    """Picks from the structured answer; ``names=None`` says how (and whether) to ask again."""
    if reply.error is not None:
        note = f"structured output failed: {show_error(reply.error)}"
        return Picks(None, note, retry="text", response=reply.error)
    value = reply.value
    raw = value.get("raw") if isinstance(value, dict) else None
    parsed = value.get("parsed") if isinstance(value, dict) and "raw" in value else value
    if parsed is not None:
        items = _items(parsed)
        if items is None:
            note = f"malformed structured answer {parsed!r} (expected a dict with a 'tools' list)"
            return Picks(None, note, retry="structured", response=parsed)
        if not items:
            return Picks(())  # an explicit empty choice: no tool is needed
        names = _resolve_all(items, selection.candidates)
        if names:
            return Picks(names)
        return Picks(None, f"structured answer {items!r} names no tool", invalid=tuple(items))
    text = message_text(raw)
    names = _resolve_all([text], selection.candidates) if text else ()
    if names:
        return Picks(names)
    note = (
        f"plain-text answer {text!r} names no tool" if text else "structured output gave no answer"
    )
    return Picks(None, note, retry="text", response=raw)


def text_picks(reply: Reply, selection: Selection, earlier: Picks) -> Picks:
    if reply.error is not None:
        note = f"plain-text selection failed: {show_error(reply.error)}"
        return Picks(None, f"{earlier.note}; {note}", retry="text", response=reply.error)
    text = message_text(reply.value)
    names = _resolve(text, selection.candidates)
    if names:
        return Picks(tuple(names))
    note = f"{earlier.note}; plain-text answer {text!r} names no tool"
    return Picks(None, note, retry="text", response=reply.value)


def _items(parsed: Any) -> list[str] | None:
    """The names of a well-formed answer, a dict with a ``tools`` list (or a single name)."""
    tools = parsed.get("tools") if isinstance(parsed, dict) else None
    if isinstance(tools, str):
        return [tools]
    if isinstance(tools, list | tuple):
        return [str(item) for item in tools]
    return None


def _resolve_all(items: Sequence[str], candidates: Sequence[Candidate]) -> tuple[str, ...]:
    found = [name for item in items for name in _resolve(item, candidates)]
    return tuple(dict.fromkeys(found))


def _resolve(text: str, candidates: Sequence[Candidate]) -> list[str]:
    """The tools ``text`` names: exactly, ignoring case and separators, by the tool's exact
    description, by mentioning names, or as a single word found in exactly one name."""
    cleaned = text.strip(_WRAPPING)
    if not cleaned:
        return []
    for candidate in candidates:
        if candidate.name == cleaned:
            return [candidate.name]
    key = _key(cleaned)
    by_name = [c.name for c in candidates if _key(c.name) == key]
    by_description = [c.name for c in candidates if _key(c.description) == key]
    if by_name or by_description:
        return (by_name or by_description)[:1]
    mentioned = _mentioned(text, candidates)
    if mentioned:
        return mentioned
    owners = [c.name for c in candidates if re.fullmatch(r"[a-z0-9]+", key) and key in _words(c)]
    return owners if len(owners) == 1 else []


def _mentioned(text: str, candidates: Sequence[Candidate]) -> list[str]:
    found: list[tuple[int, str]] = []
    for candidate in candidates:
        pattern = rf"(?<![0-9A-Za-z_]){re.escape(candidate.name)}(?![0-9A-Za-z_])"
        match = re.search(pattern, text, re.IGNORECASE)
        if match:
            found.append((match.start(), candidate.name))
    return [name for _, name in sorted(found)]


def _key(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_")


def _words(candidate: Candidate) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", candidate.name)}


def message_text(message: Any) -> str:
    if isinstance(message, BaseMessage):
        return message.text
    return message if isinstance(message, str) else ""


def show_error(error: Exception) -> str:
    text = str(error)
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
