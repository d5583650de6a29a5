"""What a caller hands a run, checked before anything runs: the keyword arguments of
``invoke``/``stream`` (langgraph silently ignores one it does not know) and input that names
``messages`` wrongly (langgraph ignores the key, and the model gets nothing)."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Mapping
from typing import Any

from langgraph.pregel import Pregel

from graphagent._core.options import unknown_argument_message
from graphagent.errors import AgentInputError, UnknownArgumentError

_RUN_OPTIONS = (
    *(
        name
        for name, parameter in inspect.signature(Pregel.stream).parameters.items()
        if name not in ("self", "input") and parameter.kind is not inspect.Parameter.VAR_KEYWORD
    ),
    "checkpoint_during",  # deprecated in langgraph, still taken
)
_KNOWN = frozenset(_RUN_OPTIONS)
MESSAGES = "messages"


def refuse_unknown_run_options(kwargs: Mapping[str, Any]) -> None:
    """Refuse a keyword argument that ``invoke``/``stream`` do not take (``contxt=...``)."""
    for name in kwargs:
        if name not in _KNOWN:
            message = unknown_argument_message("invoke()/stream()", name, _RUN_OPTIONS)
            raise UnknownArgumentError(message)


def refuse_misnamed_messages(input: Any, agent: str) -> None:
    """Refuse input that has no ``messages`` but a key one typo away from it (``msgs``)."""
    if not isinstance(input, Mapping) or MESSAGES in input:
        return
    keys = [key for key in input if isinstance(key, str)]
    near = difflib.get_close_matches(MESSAGES, keys, n=1, cutoff=0.6)
    if near:
        raise AgentInputError(
            f"The agent '{agent}' got the input keys {keys} and no 'messages', which it reads "
            f"the conversation from; did you mean 'messages' for {near[0]!r}? Pass "
            "{'messages': [...]}."
        )
