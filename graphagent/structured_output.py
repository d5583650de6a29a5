"""Structured output: strategies for ``create_agent(response_format=...)`` and their errors.

- :class:`ToolStrategy` turns each schema into a tool; the run ends when the model calls it.
- :class:`ProviderStrategy` asks the provider for JSON that follows the schema natively.
- :class:`AutoStrategy` (and a plain schema) picks the provider strategy when the model's profile
  says it supports native structured output, else the tool strategy.

A schema is a pydantic model, a dataclass, a TypedDict, a JSON-schema dict with a ``title``, or a
``Union`` of those (one tool per member with ToolStrategy).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeAlias

from langchain_core.messages import AIMessage
from pydantic import BaseModel, TypeAdapter
from typing_extensions import TypeVar, is_typeddict

from graphagent.errors import GraphAgentError

SchemaT = TypeVar("SchemaT", default=Any)

ErrorHandler: TypeAlias = (
    bool | str | type[Exception] | tuple[type[Exception], ...] | Callable[[Exception], str]
)

__all__ = [
    "AutoStrategy",
    "MultipleStructuredOutputsError",
    "ProviderStrategy",
    "ResponseFormat",
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
            f"The model returned {len(tool_names)} structured responses ({', '.join(tool_names)}) "
            "where one was expected."
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
        super().__init__(f"The output for '{tool_name}' does not match its schema: {source}")


@dataclass(frozen=True, slots=True)
class Schema:
    """One schema, ready to offer as a tool or a JSON schema and to parse arguments with."""

    name: str
    description: str
    json_schema: dict[str, Any]
    kind: Literal["pydantic", "dataclass", "typeddict", "json_schema"]
    source: Any
    strict: bool | None = None

    @property
    def schema(self) -> Any:
        """What the schema was made from (LangChain's ``SchemaSpec.schema``)."""
        return self.source

    @property
    def schema_kind(self) -> str:
        """LangChain's name for :attr:`kind`."""
        return self.kind

    def as_tool(self) -> dict[str, Any]:
        function = {"name": self.name, "description": self.description}
        return {"type": "function", "function": {**function, "parameters": self.json_schema}}

    def parse(self, data: Any) -> Any:
        if self.kind == "pydantic":
            return self.source.model_validate(data)
        if self.kind == "json_schema":
            return _check_json(self, data)
        return TypeAdapter(self.source).validate_python(data)


@dataclass(frozen=True)
class ToolStrategy(Generic[SchemaT]):
    """Offer the schema as a tool; the run ends when the model calls it with valid arguments."""

    schema: Any
    """A pydantic model, dataclass, TypedDict or JSON schema dict; a union of them offers one
    tool per member, and the model picks one."""
    tool_message_content: str | None = None
    """The text of the ToolMessage answering the model's structured-output call; ``None``
    writes ``"Returning structured response: ..."``."""
    handle_errors: ErrorHandler = True
    """What happens to invalid output: ``True`` sends the error back to the model as a
    ToolMessage so it retries; a string is sent instead of the error; exception types retry
    only those; a callable builds the message from the exception; ``False`` raises."""
    schemas: tuple[Schema, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "schemas", tuple(_schemas(self.schema, "ToolStrategy")))

    @property
    def schema_specs(self) -> list[Schema]:
        """LangChain's name for :attr:`schemas`: one per member of a Union."""
        return list(self.schemas)

    def error_message(self, error: Exception) -> str | None:
        """The message sent back to the model for ``error``, or None to raise it."""
        handler = self.handle_errors
        if handler is True:
            return f"Error: {error}\nPlease call the tool again with corrected arguments."
        if handler is False:
            return None
        if isinstance(handler, str):
            return handler
        if isinstance(handler, type | tuple):
            caught = isinstance(error, handler)
            return f"Error: {error}\nPlease fix your mistakes." if caught else None
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
        schemas = _schemas(self.schema, "ProviderStrategy")
        if len(schemas) != 1:
            raise TypeError(
                "ProviderStrategy takes one schema, not a Union; use ToolStrategy for a choice "
                "between several schemas."
            )
        strict = dataclasses.replace(schemas[0], strict=self.strict)
        object.__setattr__(self, "schemas", (strict,))

    @property
    def schema_spec(self) -> Schema:
        """LangChain's name for the one schema (with ``strict``)."""
        return self.schemas[0]

    def to_model_kwargs(self) -> dict[str, Any]:
        """LangChain's name for :meth:`model_settings`."""
        return self.model_settings()

    def model_settings(self) -> dict[str, Any]:
        """The ``response_format`` the chat model is bound with."""
        schema = self.schemas[0]
        titled = {"title": schema.name, **schema.json_schema}
        spec: dict[str, Any] = {"name": schema.name, "schema": titled}
        if schema.description:
            spec["description"] = schema.description
        if self.strict is not None:
            spec["strict"] = self.strict
        return {"response_format": {"type": "json_schema", "json_schema": spec}}

    def parse(self, message: AIMessage) -> Any:
        schema = self.schemas[0]
        try:
            return schema.parse(json.loads(message.text))
        except Exception as exc:
            raise StructuredOutputValidationError(schema.name, exc, message) from exc


@dataclass(frozen=True)
class AutoStrategy(Generic[SchemaT]):
    """Use the provider's native structured output when the model supports it, else a tool.

    The model's ``profile`` decides; a union always goes through tools. A bare schema given to
    ``create_agent(response_format=...)`` means this strategy.
    """

    schema: Any
    """A pydantic model, dataclass, TypedDict or JSON schema dict, or a union of them."""

    def __post_init__(self) -> None:
        _schemas(self.schema, "AutoStrategy")

    def resolve(self, model: Any) -> ToolStrategy[Any] | ProviderStrategy[Any]:
        profile = getattr(model, "profile", None) or {}
        native = profile.get("structured_output", False) and not _is_union(self.schema)
        return ProviderStrategy(self.schema) if native else ToolStrategy(self.schema)


ResponseFormat: TypeAlias = ToolStrategy[Any] | ProviderStrategy[Any] | AutoStrategy[Any]
"""The strategies ``create_agent(response_format=...)`` takes (besides a bare schema)."""


def as_strategy(response_format: Any) -> ResponseFormat | None:
    """Normalise ``create_agent(response_format=...)``; a plain schema means AutoStrategy."""
    if response_format is None or isinstance(
        response_format, ToolStrategy | ProviderStrategy | AutoStrategy
    ):
        return response_format
    return AutoStrategy(response_format)


def _is_union(schema: Any) -> bool:
    return typing.get_origin(schema) in (typing.Union, types.UnionType)


def _schemas(schema: Any, strategy: str) -> list[Schema]:
    members = typing.get_args(schema) if _is_union(schema) else (schema,)
    return [_schema(member, strategy) for member in members]


def _schema(source: Any, strategy: str) -> Schema:
    if isinstance(source, dict):
        return _json_schema(source, strategy)
    if not isinstance(source, type):
        raise TypeError(_unsupported(source, strategy))
    kind: Literal["pydantic", "dataclass", "typeddict"]
    if issubclass(source, BaseModel):
        kind, json_schema = "pydantic", source.model_json_schema()
    elif dataclasses.is_dataclass(source):
        kind, json_schema = "dataclass", TypeAdapter(source).json_schema()
    elif is_typeddict(source):
        kind, json_schema = "typeddict", TypeAdapter(source).json_schema()
    else:
        raise TypeError(_unsupported(source, strategy))
    description = json_schema.pop("description", None) or (source.__doc__ or "").strip()
    json_schema.pop("title", None)
    return Schema(source.__name__, description, json_schema, kind, source)


def _json_schema(source: dict[str, Any], strategy: str) -> Schema:
    title = source.get("title", _untitled_name(source))
    if not isinstance(title, str) or source.get("type", "object") != "object":
        raise TypeError(
            f"{strategy} got a JSON schema whose 'title' is not a string or of a type other "
            "than 'object'; give it a string title (it names the tool) and type 'object'."
        )
    body = {k: v for k, v in source.items() if k not in ("title", "description")}
    return Schema(title, source.get("description", ""), body, "json_schema", source)


def _untitled_name(source: dict[str, Any]) -> str:
    """LangChain's ``response_format_`` name for a schema without a title; the suffix comes from
    the schema itself (LangChain's is random), so the same schema always gets the same name."""
    digest = hashlib.sha256(json.dumps(source, sort_keys=True, default=repr).encode())
    return f"response_format_{digest.hexdigest()[:4]}"


def _unsupported(source: Any, strategy: str) -> str:
    return (
        f"{strategy} cannot use {source!r} as a schema; use a pydantic model, a dataclass, a "
        "TypedDict, a JSON-schema dict, or a Union of those."
    )


def _check_json(schema: Schema, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    missing = [key for key in schema.json_schema.get("required", []) if key not in data]
    if missing:
        raise ValueError(f"missing required field(s) {missing}")
    return data
