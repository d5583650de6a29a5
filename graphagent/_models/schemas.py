"""One structured-output schema: its name, description and JSON schema, as a tool, and parsing.

A strategy's schema is split into members (a ``Union``'s members, a JSON schema's ``oneOf``
variants); each member becomes one :class:`Schema`. What a schema offers the model follows
LangChain 1.5 exactly, so the requests an agent sends are the same as there:

- ``json_schema`` is the member's whole JSON schema, ``title`` and ``description`` included;
- ``description`` is the class's own docstring as Python keeps it (not pydantic's cleaned-up
  copy), or a JSON schema's ``"description"``;
- the tool is a langchain-core ``StructuredTool`` over that JSON schema, so each provider package
  converts it the way it converts any tool (references inlined, property titles dropped).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, TypeAdapter
from typing_extensions import is_typeddict

from graphagent.errors import MiddlewareTypeError

Kind = Literal["pydantic", "dataclass", "typeddict", "json_schema"]


@dataclass(frozen=True, slots=True)
class Schema:
    """One schema, ready to offer as a tool or a JSON schema and to parse arguments with."""

    name: str
    description: str
    json_schema: dict[str, Any]
    kind: Kind
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

    def as_tool(self) -> BaseTool:
        """The tool the model is offered for this schema (never run: its call is the answer)."""
        return StructuredTool(
            name=self.name, description=self.description, args_schema=self.json_schema
        )

    def parse(self, data: Any) -> Any:
        """The value for ``data``; a ``ValueError`` naming the schema when it does not fit."""
        if self.kind == "json_schema":
            return _check_json(self, data)
        try:
            return TypeAdapter(self.source).validate_python(data)
        except Exception as exc:
            raise ValueError(f"Failed to parse data to {self.name}: {exc}") from exc


def is_union(schema: Any) -> bool:
    return typing.get_origin(schema) in (typing.Union, types.UnionType)


def schemas_of(schema: Any, strategy: str, *, split: bool = True) -> list[Schema]:
    """The schemas ``schema`` stands for: one per member when ``split``, else just itself."""
    members = _members(schema) if split else iter((schema,))
    return [_schema(member, strategy) for member in members]


def _members(schema: Any) -> Iterator[Any]:
    """A Union's members and a JSON schema's ``oneOf`` variants, at any depth."""
    if is_union(schema):
        for member in typing.get_args(schema):
            yield from _members(member)
    elif isinstance(schema, dict) and "oneOf" in schema:
        for variant in schema["oneOf"]:
            yield from _members(variant)
    else:
        yield schema


def _schema(source: Any, strategy: str) -> Schema:
    if isinstance(source, dict):
        return _json_schema(source)
    if not isinstance(source, type):
        raise MiddlewareTypeError(_unsupported(source, strategy))
    kind: Kind
    if issubclass(source, BaseModel):
        kind, json_schema = "pydantic", source.model_json_schema()
    elif dataclasses.is_dataclass(source):
        kind, json_schema = "dataclass", TypeAdapter(source).json_schema()
    elif is_typeddict(source):
        kind, json_schema = "typeddict", TypeAdapter(source).json_schema()
    else:
        raise MiddlewareTypeError(_unsupported(source, strategy))
    return Schema(source.__name__, source.__doc__ or "", json_schema, kind, source)


def _json_schema(source: dict[str, Any]) -> Schema:
    """A JSON schema is taken as given, as LangChain takes it: its ``title`` (as a string) names
    it, and what it describes is for the provider to accept or refuse."""
    title = str(source.get("title", _untitled_name(source)))
    return Schema(title, source.get("description", ""), dict(source), "json_schema", source)


def _untitled_name(source: dict[str, Any]) -> str:
    """LangChain's ``response_format_`` name for a schema without a title; the suffix comes from
    the schema itself (LangChain's is random), so the same schema always gets the same name."""
    digest = hashlib.sha256(json.dumps(source, sort_keys=True, default=repr).encode())
    return f"response_format_{digest.hexdigest()[:4]}"


def _unsupported(source: Any, strategy: str) -> str:
    """LangChain's words for the mistake, then which strategy met it and what to use."""
    return (
        f"Unsupported schema type: {type(source)}. {strategy} cannot use {source!r} as a schema; "
        "use a pydantic model, a dataclass, a TypedDict, a JSON-schema dict, or a Union of those."
    )


def _check_json(schema: Schema, data: Any) -> Any:
    """An object schema's data must be an object with its required keys; data of any other
    schema is returned as it is."""
    if schema.json_schema.get("type", "object") != "object":
        return data
    if not isinstance(data, dict):
        raise ValueError(
            f"Failed to parse data to {schema.name}: expected a JSON object, "
            f"got {type(data).__name__}"
        )
    missing = [key for key in schema.json_schema.get("required", []) if key not in data]
    if missing:
        raise ValueError(
            f"Failed to parse data to {schema.name}: missing required field(s) {missing}"
        )
    return data
