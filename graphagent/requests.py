"""The immutable records of ``wrap_model_call``: request, response, extended response."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeAlias

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage
from langgraph.types import Command
from langgraph.typing import ContextT

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool
    from langgraph.runtime import Runtime


@dataclass(frozen=True, slots=True)
class ModelRequest(Generic[ContextT]):
    """Everything one model call is made from. Change it with :meth:`override`, never in place."""

    model: BaseChatModel
    """The chat model to call."""
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
    state: Any = field(default_factory=dict)
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
        if "system_prompt" in changes:
            if "system_message" in changes:
                raise TypeError("override() takes system_prompt or system_message, not both")
            prompt = changes.pop("system_prompt")
            changes["system_message"] = None if prompt is None else SystemMessage(prompt)
        unknown = set(changes) - _REQUEST_FIELDS
        if unknown:
            raise TypeError(
                f"ModelRequest.override() got unknown field(s) {sorted(unknown)}; "
                f"the fields are {sorted(_REQUEST_FIELDS)} and system_prompt"
            )
        return dataclasses.replace(self, **changes)


_REQUEST_FIELDS = frozenset(f.name for f in dataclasses.fields(ModelRequest))


def _refuse_assignment(request: ModelRequest[Any], name: str, value: Any) -> None:
    """Assigning to a request raises ``FrozenInstanceError`` with a note pointing to ``override``.

    Set after the class is made: ``dataclass(frozen=True)`` refuses a ``__setattr__`` of the
    class's own, and its generated one raises a bare ``TypeError`` for non-fields (slots=True).
    """
    error = dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    change = name if name in _REQUEST_FIELDS or name == "system_prompt" else "field"
    error.add_note(
        f"graphagent: a ModelRequest cannot change; request.override({change}=...) returns a "
        "changed copy: pass that to the handler."
    )
    raise error


ModelRequest.__setattr__ = _refuse_assignment  # type: ignore[method-assign,assignment]


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """The result of a model call: its messages and, with a response format, the parsed value."""

    result: list[BaseMessage]
    """The messages the call produced: the model's reply (an ``AIMessage``), followed, with a
    tool strategy, by the ToolMessages answering its calls."""
    structured_response: Any = None
    """The parsed structured output, when the call produced one."""


@dataclass(frozen=True, slots=True)
class ExtendedModelResponse:
    """A model response plus a ``Command(update=...)`` applied to the state after the model node."""

    model_response: ModelResponse
    """The response, as the handler returned it or as the hook changed it."""
    command: Command[Any] | None = None
    """State updates to apply along with the response (``Command(update={...})``)."""


ModelCallResult: TypeAlias = ModelResponse | AIMessage | ExtendedModelResponse
"""What a ``wrap_model_call`` hook may return."""
