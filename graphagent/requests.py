"""The records of ``wrap_model_call``: request, response, extended response."""

from __future__ import annotations

import dataclasses
import functools
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeAlias

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage
from langgraph.types import Command
from langgraph.typing import ContextT

from graphagent._core.options import refuse_unknown_arguments, unknown_argument_message
from graphagent.errors import MiddlewareTypeError, UnknownArgumentError
from graphagent.state import ResponseT

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool
    from langgraph.runtime import Runtime


@dataclass(frozen=True)
class ModelRequest(Generic[ContextT]):
    """Everything one model call is made from. Change it with :meth:`override`.

    Assigning an attribute still works, as in LangChain, with a :class:`RequestAssignmentWarning`
    (a ``DeprecationWarning``); turn that warning into an error to keep requests unchanged.
    """

    model: BaseChatModel
    """The chat model to call. When it is a ``ConfigurableChatModel`` (the agent's model from
    ``init_chat_model(configurable_fields=...)``, as in LangChain), the call builds the model the
    run's config selects, and its attributes are read from that model."""
    messages: list[AnyMessage]
    """The conversation the model receives, without the system message."""
    system_message: SystemMessage | None = None
    """The system message put first (``system_prompt`` reads it as text)."""
    tool_choice: Any | None = None
    """Whether and which tool the model must call (``"auto"``, ``"any"``, a tool name), as
    the provider takes it; ``None`` leaves it to the model."""
    tools: list[BaseTool | dict[str, Any]] = field(default_factory=list)
    """The tools offered to the model for this call."""
    response_format: Any | None = None
    """The structured-output strategy of this call, if any."""
    state: Any = field(default_factory=lambda: {"messages": []})
    """The agent state when the call was made (read it; hooks change state by returning
    updates)."""
    runtime: Runtime[ContextT] | None = None
    """The run's LangGraph ``Runtime``: ``context``, ``store``, ``stream_writer``."""
    model_settings: dict[str, Any] = field(default_factory=dict)
    """Extra keyword arguments the model is bound with for this call (``temperature``, ...)."""

    @property
    def system_prompt(self) -> str | None:
        """The system message as plain text (``None`` without one)."""
        if self.system_message is None:
            return None
        return self.system_message.text

    def override(self, **changes: Any) -> ModelRequest[ContextT]:
        """A copy with the given fields replaced; ``system_prompt=`` sets the system message."""
        _system_prompt_to_message("override()", changes)
        _refuse_unknown_fields("ModelRequest.override()", changes)
        return dataclasses.replace(self, **changes)


_FIELD_ORDER = tuple(f.name for f in dataclasses.fields(ModelRequest))
_REQUEST_FIELDS = frozenset(_FIELD_ORDER)


class RequestAssignmentWarning(DeprecationWarning):
    """Assigning an attribute of a ``ModelRequest``, which LangChain deprecates.

    A request is shared by every attempt of a retry or fallback layer: a change made in place is
    seen by all of them. Make this warning an error to refuse such changes::

        warnings.filterwarnings("error", category=RequestAssignmentWarning)
    """


def _refuse_both(where: str) -> None:
    # A TypeError, as before, and the ValueError LangChain raises, in its words.
    raise MiddlewareTypeError(
        "Cannot specify both system_prompt and system_message: "
        f"{where} takes system_prompt or system_message, not both"
    )


def _system_prompt_to_message(where: str, changes: dict[str, Any]) -> None:
    """Turn a ``system_prompt`` in ``changes`` into the ``system_message`` it stands for."""
    if "system_prompt" in changes:
        if "system_message" in changes:
            _refuse_both(where)
        prompt = changes.pop("system_prompt")
        changes["system_message"] = None if prompt is None else SystemMessage(prompt)


_build_request = ModelRequest.__init__


@functools.wraps(_build_request)
def _init_request(request: ModelRequest[Any], *args: Any, **fields: Any) -> None:
    """The dataclass ``__init__``, also taking LangChain's ``system_prompt=``.

    As in LangChain, ``None`` for either of ``system_prompt`` and ``system_message`` is the same
    as leaving it out, and only both given is an error.
    """
    _refuse_unknown_fields("ModelRequest", fields)
    prompt = fields.pop("system_prompt", None)
    if prompt is not None:
        if fields.get("system_message") is not None:
            _refuse_both("ModelRequest()")
        fields["system_message"] = SystemMessage(prompt)
    _build_request(request, *args, **fields)


def _refuse_unknown_fields(where: str, fields: dict[str, Any]) -> None:
    for name in fields:
        if name not in _REQUEST_FIELDS and name != "system_prompt":
            valid = [*_FIELD_ORDER, "system_prompt"]
            raise UnknownArgumentError(unknown_argument_message(where, name, valid))


def _assign(request: ModelRequest[Any], name: str, value: Any) -> None:
    """Assigning to a request works, with LangChain's ``DeprecationWarning`` pointing to
    ``override``; ``request.system_prompt = text`` replaces the system message.

    Set after the class is made: ``dataclass(frozen=True)``, whose ``__init__`` and ``replace``
    set fields without this method, refuses a ``__setattr__`` of the class's own.
    """
    if name.startswith("__") and name.endswith("__"):
        # Python's own bookkeeping, such as the __orig_class__ of ModelRequest[Context](...).
        object.__setattr__(request, name, value)
        return
    change = "system_message=SystemMessage(...)" if name == "system_prompt" else f"{name}=..."
    warnings.warn(
        f"Direct attribute assignment to ModelRequest.{name} is deprecated: "
        f"request.override({change}) returns a changed copy; pass that to the handler.",
        RequestAssignmentWarning,
        stacklevel=2,
    )
    if name == "system_prompt":
        name, value = "system_message", None if value is None else SystemMessage(value)
    object.__setattr__(request, name, value)


ModelRequest.__init__ = _init_request  # type: ignore[method-assign,assignment]
ModelRequest.__setattr__ = _assign  # type: ignore[method-assign,assignment]


@refuse_unknown_arguments
@dataclass(slots=True)
class ModelResponse(Generic[ResponseT]):
    """The result of a model call: its messages and, with a response format, the parsed value.

    Generic in the type of the parsed value, as LangChain's is: ``ModelResponse[MySchema]``. Its
    fields may be set, as LangChain's may: a ``wrap_model_call`` hook can change the response
    its handler returned and return it.
    """

    result: list[BaseMessage]
    """The messages the call produced: the model's reply (an ``AIMessage``), followed, with a
    tool strategy, by the ToolMessages answering its calls."""
    structured_response: ResponseT | None = None
    """The parsed structured output, when the call produced one."""


@refuse_unknown_arguments
@dataclass(slots=True)
class ExtendedModelResponse(Generic[ResponseT]):
    """A model response plus a ``Command(update=...)`` applied to the state after the model node.

    Generic in the type of the parsed value, as :class:`ModelResponse` is.
    """

    model_response: ModelResponse[ResponseT]
    """The response, as the handler returned it or as the hook changed it."""
    command: Command[Any] | None = None
    """State updates to apply along with the response (``Command(update={...})``)."""


ModelCallResult: TypeAlias = ModelResponse[ResponseT] | AIMessage | ExtendedModelResponse[ResponseT]
"""What a ``wrap_model_call`` hook may return; ``ModelCallResult[MySchema]`` names the type of
the parsed value."""
