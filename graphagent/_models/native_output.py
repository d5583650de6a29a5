"""Native (provider) structured output: which models have it, and binding a model to ask for it.

``supports_native`` decides ``AutoStrategy`` the way LangChain 1.5 does: the model's profile
first, then a list of model names known to support it. ``bind_native`` binds a model for
``ProviderStrategy`` through the model's own ``bind_tools`` (so its provider package shapes the
``response_format`` exactly as it does for LangChain), but never sends an empty tool list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import Runnable, RunnableBinding

# Model names assumed to support native structured output when the model has no profile that
# says so. Each family is a stem followed by what may come after it in the name; a stem starts
# the name or follows "/", ":" or ".", so "my-gpt-4o" does not match but "openai/gpt-4o" does.
_THEN_ANY_SUFFIX = r"(?:$|[-/:])"  # the name ends, or goes on after "-", "/" or ":"
_THEN_A_DATE = r"(?:-\d{4}-\d{2}-\d{2})?(?:$|[/:])"  # only an optional -YYYY-MM-DD
_THEN_A_CLAUDE_VERSION = r"(?:-\d{8})?(?:-v\d(?::\d)?)?(?:$|[/:])"  # -YYYYMMDD, -v1, -v1:0
_THEN_ANY_SUFFIX_OR_DOT = r"(?:$|[-.:/])"
_FAMILIES: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        (
            r"gpt-4\.1",
            r"gpt-4o",
            r"gpt-5",
            r"gpt-5\.1",
            r"gpt-5\.2-(?:chat|codex)",
            r"gpt-5\.3",
            r"gpt-5\.4-(?:mini|nano)",
            r"gpt-5\.5",
            r"gpt-6-(?:astra|luna|sol)",
            r"grok-build",
        ),
        _THEN_ANY_SUFFIX,
    ),
    ((r"gpt-5\.2", r"gpt-5\.4"), _THEN_A_DATE),
    (
        (
            r"claude-(?:fable|mythos)-5",
            r"claude-haiku-4-5",
            r"claude-opus-4-[5-8]",
            r"claude-sonnet-4-[56]",
        ),
        _THEN_A_CLAUDE_VERSION,
    ),
    ((r"grok-4",), _THEN_ANY_SUFFIX_OR_DOT),
)
_KNOWN_NAMES = re.compile(
    "|".join(rf"(?:^|[/:.])(?:{'|'.join(stems)}){then}" for stems, then in _FAMILIES)
)


def supports_native(model: Any, tools: Sequence[Any] = ()) -> bool:
    """Whether ``model`` (offered ``tools``) gets ``ProviderStrategy`` from ``AutoStrategy``."""
    name = _model_name(model)
    profile = getattr(model, "profile", None) or {}
    if profile.get("structured_output") and not (tools and _is_gemini_before_3(name)):
        return True
    return bool(_KNOWN_NAMES.search(name.lower()))


def is_openai_compatible(model: Any) -> bool:
    """A langchain-openai chat model (``ChatOpenAI`` and the packages built on it) that uses
    the Chat Completions API; found by class, without importing langchain-openai."""
    return not getattr(model, "use_responses_api", False) and any(
        cls.__name__ == "BaseChatOpenAI" and cls.__module__.startswith("langchain_openai")
        for cls in type(model).__mro__
    )


def bind_native(model: Any, tools: list[Any], settings: dict[str, Any]) -> Runnable[Any, Any]:
    """``model`` bound with ``tools`` and ``settings`` (which hold the ``response_format``).

    As in LangChain, tools are declared strict on Chat Completions models (OpenAI requires it
    alongside a JSON schema format). With no tools the empty list ``bind_tools`` adds is taken
    out again: OpenAI-compatible servers reject ``"tools": []``.
    """
    settings = {**settings, "strict": True} if is_openai_compatible(model) else dict(settings)
    try:
        bound = model.bind_tools(tools, **settings)
    except NotImplementedError:
        if tools:
            raise
        settings.pop("strict", None)
        return model.bind(**settings)  # type: ignore[no-any-return]
    if not tools and isinstance(bound, RunnableBinding) and bound.kwargs.get("tools") == []:
        kwargs = {key: value for key, value in bound.kwargs.items() if key != "tools"}
        return bound.model_copy(update={"kwargs": kwargs})
    return bound  # type: ignore[no-any-return]


def _model_name(model: Any) -> str:
    for attribute in ("model_name", "model", "model_id"):
        name = getattr(model, attribute, None)
        if name:
            return name if isinstance(name, str) else ""
    return ""


def _is_gemini_before_3(name: str) -> bool:
    lowered = name.lower()
    return "gemini" in lowered and "gemini-3" not in lowered
