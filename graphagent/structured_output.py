"""Structured output: strategies for ``create_agent(response_format=...)`` and their errors.

- :class:`ToolStrategy` turns each schema into a tool; the run ends when the model calls it.
- :class:`ProviderStrategy` asks the provider for JSON that follows the schema natively.
- :class:`AutoStrategy` (and a plain schema) picks the provider strategy when the model's profile
  says it supports native structured output, else the tool strategy.

A schema is a pydantic model, a dataclass, a TypedDict, a JSON-schema dict, or a ``Union`` of
those (one tool per member with ToolStrategy, as for the variants of a JSON schema's ``oneOf``).
What the model is sent, and the texts it gets back, are the ones LangChain 1.5 sends.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeAlias

from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool
from typing_extensions import TypeVar

from graphagent._models.native_output import supports_native
from graphagent._models.schemas import Kind, Schema, is_union, schemas_of
from graphagent.errors import GraphAgentError, MiddlewareError, MiddlewareTypeError

SchemaT = TypeVar("SchemaT", default=Any)

SchemaKind: TypeAlias = Kind
"""What a schema is made from: ``"pydantic"``, ``"dataclass"``, ``"typeddict"`` or
``"json_schema"`` (LangChain's name)."""

ErrorHandler: TypeAlias = (
    bool | str | type[Exception] | tuple[type[Exception], ...] | Callable[[Exception], str]
)

__all__ = [
    "AutoStrategy",
    "MissingStructuredOutputError",
    "MultipleStructuredOutputsError",
    "OutputToolBinding",
    "ProviderStrategy",
    "ProviderStrategyBinding",
    "ResponseFormat",
    "SchemaKind",
    "StructuredOutputError",
    "StructuredOutputValidationError",
    "ToolStrategy",
]


class StructuredOutputError(GraphAgentError):
    """The model's structured output could not be turned into the requested schema."""

    ai_message: AIMessage | None = None
    """The model's reply that failed, when known."""


class MultipleStructuredOutputsError(StructuredOutputError):
    """The model called more than one structured-output tool in one reply. Each argument is
    kept as an attribute of the same name.

    Args:
        tool_names: The structured-output tools it called.
        ai_message: The reply.
    """

    def __init__(self, tool_names: list[str], ai_message: AIMessage | None = None) -> None:
        self.tool_names = tool_names
        self.ai_message = ai_message
        super().__init__(
            "Model incorrectly returned multiple structured responses "
            f"({', '.join(tool_names)}) when only one is expected."
        )


class StructuredOutputValidationError(StructuredOutputError):
    """The model's output did not validate against the schema. Each argument is kept as an
    attribute of the same name.

    Args:
        tool_name: The schema's name: the structured-output tool, or the provider's schema.
        source: The error parsing or validation raised.
        ai_message: The reply that failed.
    """

    def __init__(
        self, tool_name: str, source: Exception, ai_message: AIMessage | None = None
    ) -> None:
        self.tool_name = tool_name
        self.source = source
        self.ai_message = ai_message
        super().__init__(f"Failed to parse structured output for tool '{tool_name}': {source}.")


class MissingStructuredOutputError(StructuredOutputError):
    """The model answered in plain text, without calling a structured-output tool, under a
    ``ToolStrategy(on_plain_text="retry")`` or ``"error"``. Each argument is kept as an
    attribute of the same name.

    Args:
        tool_names: The structured-output tools it could have called.
        ai_message: The plain-text reply.
    """

    def __init__(self, tool_names: list[str], ai_message: AIMessage | None = None) -> None:
        self.tool_names = tool_names
        self.ai_message = ai_message
        super().__init__(
            f"The model answered in plain text instead of calling {_tools(tool_names)}, so the "
            "run has no structured response. Tell it in the system prompt to answer with that "
            "tool, or use ToolStrategy(on_plain_text='end') to take such a reply as the answer."
        )


def _tools(names: list[str]) -> str:
    return f"the tool {names[0]!r}" if len(names) == 1 else f"one of the tools {names}"


PlainTextAnswer: TypeAlias = Literal["end", "retry", "error"]
_PLAIN_TEXT_ANSWERS = ("end", "retry", "error")


@dataclass(frozen=True)
class ToolStrategy(Generic[SchemaT]):
    """Offer the schema as a tool; the run ends when the model calls it with valid arguments."""

    schema: Any
    """A pydantic model, dataclass, TypedDict or JSON schema dict; a union of them (or a JSON
    schema's ``oneOf``) offers one tool per member, and the model picks one."""
    tool_message_content: str | None = None
    """The text of the ToolMessage answering the model's structured-output call; ``None``
    writes ``"Returning structured response: "`` and the value as ``str()`` shows it."""
    handle_errors: ErrorHandler = True
    """What happens to invalid output: ``True`` sends the error back to the model as a
    ToolMessage so it retries; a string is sent instead of the error; exception types retry
    only those; a callable builds the message from the exception; ``False`` raises."""
    on_plain_text: PlainTextAnswer = "end"
    """What happens when the model answers in plain text, calling no tool: ``"end"`` (as in
    LangChain) ends the run on that reply, with no ``structured_response``; ``"retry"`` asks the
    model once more, in the same model call, to answer with the schema's tool, and raises
    :class:`MissingStructuredOutputError` if it answers in plain text again; ``"error"`` raises
    it at once. graphagent only."""
    schemas: tuple[Schema, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.on_plain_text not in _PLAIN_TEXT_ANSWERS:
            raise MiddlewareError(
                f"ToolStrategy(on_plain_text={self.on_plain_text!r}): on_plain_text must be "
                "'end' (the run ends on the reply), 'retry' (the model is asked once more) or "
                "'error' (MissingStructuredOutputError is raised)."
            )
        object.__setattr__(self, "schemas", tuple(schemas_of(self.schema, "ToolStrategy")))

    @property
    def schema_specs(self) -> list[Schema]:
        """LangChain's name for :attr:`schemas`: one per member of a Union (or ``oneOf``)."""
        return list(self.schemas)

    def error_message(self, error: Exception) -> str | None:
        """The message sent back to the model for ``error``, or None to raise it."""
        handler = self.handle_errors
        if handler is False:
            return None
        if isinstance(handler, str):
            return handler
        if handler is True or (isinstance(handler, type | tuple) and isinstance(error, handler)):
            return f"Error: {error}\n Please fix your mistakes."
        if isinstance(handler, type | tuple):
            return None
        return handler(error)


@dataclass(frozen=True)
class ProviderStrategy(Generic[SchemaT]):
    """Ask the provider for output that follows the schema natively (its JSON-schema mode)."""

    schema: Any
    """One pydantic model, dataclass, TypedDict or JSON schema dict (not a union)."""
    strict: bool | None = None
    """Ask the provider to enforce the schema strictly (OpenAI's ``strict``); ``None`` leaves
    the provider's default."""
    schemas: tuple[Schema, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if is_union(self.schema):
            raise MiddlewareTypeError(
                f"Unsupported schema type: {type(self.schema)}. ProviderStrategy takes one "
                "schema, not a Union; use ToolStrategy for a choice between several schemas."
            )
        [schema] = schemas_of(self.schema, "ProviderStrategy", split=False)
        object.__setattr__(self, "schemas", (dataclasses.replace(schema, strict=self.strict),))

    @property
    def schema_spec(self) -> Schema:
        """LangChain's name for the one schema (with ``strict``)."""
        return self.schemas[0]

    def to_model_kwargs(self) -> dict[str, Any]:
        """The keyword arguments that ask a chat model for this output, as LangChain 1.5 gives
        them: ``{"response_format": {"type": "json_schema", "json_schema": {...}}}`` with the
        schema's name, its whole JSON schema, and ``"strict": True`` only when strict."""
        schema = self.schemas[0]
        spec: dict[str, Any] = {"name": schema.name, "schema": schema.json_schema}
        if self.strict:
            spec["strict"] = True
        return {"response_format": {"type": "json_schema", "json_schema": spec}}

    def model_settings(self) -> dict[str, Any]:
        """What the chat model is bound with: :meth:`to_model_kwargs`, with the schema's name
        also given as the JSON schema's ``title`` when it has none (provider packages name the
        format after the title)."""
        settings = self.to_model_kwargs()
        spec = settings["response_format"]["json_schema"]
        if "title" not in spec["schema"]:
            spec["schema"] = {"title": spec["name"], **spec["schema"]}
        return settings

    def parse(self, message: AIMessage) -> Any:
        schema = self.schemas[0]
        try:
            return ProviderStrategyBinding.from_schema_spec(schema).parse(message)
        except Exception as exc:
            raise StructuredOutputValidationError(schema.name, exc, message) from exc


@dataclass(frozen=True)
class AutoStrategy(Generic[SchemaT]):
    """Use the provider's native structured output when the model supports it, else a tool.

    Native when the model's ``profile`` says it supports structured output (except Gemini models
    before 3 when the agent has tools), or when the model's name is one LangChain 1.5 knows to
    support it; a union always goes through tools. A bare schema given to
    ``create_agent(response_format=...)`` means this strategy.
    """

    schema: Any
    """A pydantic model, dataclass, TypedDict or JSON schema dict, or a union of them."""

    def __post_init__(self) -> None:
        schemas_of(self.schema, "AutoStrategy")

    def resolve(
        self, model: Any, tools: Sequence[Any] = ()
    ) -> ToolStrategy[Any] | ProviderStrategy[Any]:
        """The strategy for ``model`` offered ``tools`` (the agent's own, not the schemas)."""
        native = not is_union(self.schema) and supports_native(model, tools)
        return ProviderStrategy(self.schema) if native else ToolStrategy(self.schema)


ResponseFormat: TypeAlias = (
    ToolStrategy[SchemaT] | ProviderStrategy[SchemaT] | AutoStrategy[SchemaT]
)
"""The strategies ``create_agent(response_format=...)`` takes (besides a bare schema); generic
in the schema's type, as LangChain's is: ``ResponseFormat[MySchema]``."""


def as_strategy(response_format: Any) -> ResponseFormat | None:
    """Normalise ``create_agent(response_format=...)``; a plain schema means AutoStrategy."""
    if response_format is None or isinstance(
        response_format, ToolStrategy | ProviderStrategy | AutoStrategy
    ):
        return response_format
    return AutoStrategy(response_format)


@dataclass(frozen=True)
class OutputToolBinding(Generic[SchemaT]):
    """A schema of :class:`ToolStrategy` as the tool the model is offered, and the parser of
    that tool's arguments (LangChain's name and fields).

    Args:
        schema: What the schema was made from: a pydantic model, dataclass, TypedDict or
            JSON-schema dict.
        schema_kind: ``"pydantic"``, ``"dataclass"``, ``"typeddict"`` or ``"json_schema"``.
        tool: The tool offered to the model; calling it is the answer, so it never runs.
    """

    schema: Any
    schema_kind: Kind
    tool: BaseTool

    @classmethod
    def from_schema_spec(cls, schema_spec: Schema) -> OutputToolBinding[Any]:
        """The binding of one of :attr:`ToolStrategy.schema_specs`."""
        return cls(schema_spec.source, schema_spec.kind, schema_spec.as_tool())

    def parse(self, tool_args: dict[str, Any]) -> Any:
        """The value of the tool call's arguments; a ``ValueError`` when they do not fit."""
        return _spec(self.schema, "OutputToolBinding").parse(tool_args)


@dataclass(frozen=True)
class ProviderStrategyBinding(Generic[SchemaT]):
    """The schema of a :class:`ProviderStrategy` and the parser of the JSON a model answers
    with (LangChain's name and fields).

    Args:
        schema: What the schema was made from: a pydantic model, dataclass, TypedDict or
            JSON-schema dict.
        schema_kind: ``"pydantic"``, ``"dataclass"``, ``"typeddict"`` or ``"json_schema"``.
    """

    schema: Any
    schema_kind: Kind

    @classmethod
    def from_schema_spec(cls, schema_spec: Schema) -> ProviderStrategyBinding[Any]:
        """The binding of :attr:`ProviderStrategy.schema_spec`."""
        return cls(schema_spec.source, schema_spec.kind)

    def parse(self, response: AIMessage) -> Any:
        """The value of the reply's text, read as JSON; a ``ValueError`` when it is not JSON or
        does not fit the schema."""
        spec = _spec(self.schema, "ProviderStrategyBinding")
        try:
            data = json.loads(response.text)
        except ValueError as exc:
            raise ValueError(
                f"Native structured output expected valid JSON for {spec.name}, but parsing "
                f"failed: {exc}."
            ) from exc
        return spec.parse(data)


def _spec(schema: Any, owner: str) -> Schema:
    return schemas_of(schema, owner, split=False)[0]
