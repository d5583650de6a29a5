"""Error classes. Every message names the middleware, the hook, what was wrong and the fix."""

from __future__ import annotations

import warnings

from langgraph.errors import GraphRecursionError


class GraphAgentError(Exception):
    """Base class of the errors graphagent raises itself."""


class MiddlewareError(GraphAgentError, ValueError):
    """A middleware list, hook declaration or schema that cannot be built into an agent."""


class DuplicateMiddlewareError(MiddlewareError, AssertionError):
    """Two middleware share one name, so their graph nodes would collide; also the
    ``AssertionError`` LangChain raises there."""


class StateSchemaConflictError(MiddlewareError):
    """Two state schemas declare the same field with different types."""


class HookReturnError(GraphAgentError, ValueError):
    """A hook returned what the agent cannot apply: a wrong type, an undeclared jump, a bad key."""


class AsyncOnlyHookError(GraphAgentError, NotImplementedError):
    """An async-only hook was reached by a synchronous run (`invoke` / `stream`); the
    ``NotImplementedError`` (a ``RuntimeError``) LangChain raises there."""


class UnsupportedCommandError(HookReturnError, NotImplementedError):
    """A ``wrap_model_call`` hook returned an ``ExtendedModelResponse`` whose ``Command`` sets
    ``goto``, ``graph`` or ``resume``; the ``NotImplementedError`` LangChain raises there."""


class MisnamedHookWarning(UserWarning):
    """A middleware with hooks also defines a method named like a hook that is none
    (``before_tool``, ``on_model_end``), which therefore never runs."""


class LangChainImportedError(GraphAgentError, RuntimeError):
    """``install_as_langchain()`` was called after LangChain's own ``langchain.agents`` (or
    ``langchain.chat_models``) was imported, too late to stand in for it."""


class CompositionError(GraphAgentError, ValueError):
    """An agent composed into a parent graph in a way that cannot run correctly: branches of one
    fan-out that would share one saved state, or an interrupt that could not resume."""


class _HooklessMiddlewareWarning(UserWarning):
    """Deprecated, never emitted: a middleware that defines no hook, tool or state is noted on the
    ``graphagent`` logger instead, as LangChain takes one without a word. The name
    ``HooklessMiddlewareWarning`` still imports, with a ``DeprecationWarning``."""


_HooklessMiddlewareWarning.__name__ = _HooklessMiddlewareWarning.__qualname__ = (
    "HooklessMiddlewareWarning"
)
_DEPRECATED = {"HooklessMiddlewareWarning": _HooklessMiddlewareWarning}


def deprecated_name(module: str, name: str, stacklevel: int) -> type[Warning]:
    """A deprecated name of ``module``, with the ``DeprecationWarning`` saying so, or an
    ``AttributeError`` for a name that never was."""
    if name not in _DEPRECATED:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warnings.warn(
        f"{module}.{name} is deprecated and never emitted: a middleware without hooks is noted "
        "on the 'graphagent' logger instead; remove the name from your imports and filters.",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )
    return _DEPRECATED[name]


def __getattr__(name: str) -> type[Warning]:
    return deprecated_name(__name__, name, stacklevel=2)


def hook_label(middleware_name: str, hook: str) -> str:
    """How messages refer to one hook of one middleware: ``'Retry.wrap_model_call'``."""
    return f"'{middleware_name}.{hook}'"


class ResumeError(GraphAgentError, ValueError):
    """A ``Command`` that the thread cannot take as an answer: nothing is waiting for one, or it
    carries none. Nothing ran, and the thread is as it was."""


class UnregisteredToolError(GraphAgentError, LookupError, ValueError):
    """A ``wrap_model_call`` hook offered the model a tool the agent cannot execute, and the agent
    has no ``wrap_tool_call`` hook that could; the ``ValueError`` LangChain raises there."""


class MiddlewareTypeError(MiddlewareError, TypeError):
    """A middleware option of the wrong type: a ``MiddlewareError`` that is also the ``TypeError``
    Python and LangChain raise for it."""


class UnknownArgumentError(MiddlewareTypeError):
    """A constructor got a keyword argument it does not take; the message names the closest one
    it does take."""


class ShellToolError(GraphAgentError, RuntimeError):
    """The shell tool's session cannot start as configured: its runner is not installed, a startup
    command failed, or the execution policy asks for what this platform cannot give."""


_ORIGIN = "graphagent: raised in"


def note_origin(error: BaseException, where: str) -> None:
    """Say, once, where an exception came from (``graphagent: raised in 'Audit.before_model'``).

    The exception keeps its type, so callers' ``except`` clauses still match; the note shows in
    its traceback. The innermost place that sees it first wins.
    """
    if not any(note.startswith(_ORIGIN) for note in getattr(error, "__notes__", ())):
        error.add_note(f"{_ORIGIN} {where}")


class ToolSelectionError(GraphAgentError, ValueError):
    """The tool-selection model never named a tool and ``on_parsing_failure="error"``."""


class RunawayRunError(GraphAgentError, GraphRecursionError):
    """A run went on past its ceiling of model calls (``create_agent(max_model_calls=...)``),
    or past langgraph's recursion limit; the message says which loop repeated. A
    ``GraphRecursionError``, so ``except`` clauses written for langgraph's limit still catch it."""


class AgentInputError(GraphAgentError, ValueError):
    """A run was given input the agent cannot use: a misspelled key for ``messages``, or no
    messages at all where the model would get nothing; the message names what it got."""


class MalformedToolCallError(GraphAgentError, ValueError):
    """The model returned a tool call that no answer can be paired with (it has no id)."""


class RateLimitWaitError(GraphAgentError, TimeoutError):
    """A model call waited for its provider key's rate limits longer than it may
    (``RateLimits(max_wait=...)``); the last ``429`` answer, if any, is its ``__cause__``. A
    ``TimeoutError``, so ``except`` clauses for timeouts catch it."""
