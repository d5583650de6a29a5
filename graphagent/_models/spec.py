"""``ModelSpec``: a parsed model id, and the error naming the package a provider needs."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel

from graphagent._models.providers import (
    PROVIDERS,
    Integration,
    infer_provider,
    known,
    normalise,
    uninferable,
    unknown_prefix,
)
from graphagent.errors import GraphAgentError


class MissingIntegrationError(GraphAgentError, ImportError):
    """The integration package a model id needs is not installed (or cannot be imported).

    Args:
        message: What is missing and the ``pip install`` line that brings it.
        provider: The model id's provider, such as ``"openai"``.
        package: The package that provides it, such as ``"langchain-openai"``.
    """

    def __init__(self, message: str, *, provider: str, package: str) -> None:
        super().__init__(message)
        self.provider = provider
        self.package = package


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A parsed model id: the provider key and the model name handed to its integration.

    Parsing checks the provider is known; :meth:`load` imports the integration and builds the
    model, so a spec can be made early and loaded only when the model is first needed.
    """

    provider: str
    model: str
    inferred: bool = field(default=False, compare=False)
    """Whether the provider was guessed from the model name rather than written out."""

    def __post_init__(self) -> None:
        known(self.provider, self.model)

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"

    @classmethod
    def parse(cls, model: str, model_provider: str | None = None) -> ModelSpec:
        """Split ``"provider:model"`` or infer the provider; ``ValueError`` if neither works."""
        if not isinstance(model, str):
            raise TypeError(f"a model id must be a str, got {type(model).__name__}.")
        if not model.strip():
            raise ValueError("The model id is empty; write 'provider:model', e.g. 'openai:gpt-4o'.")
        prefix, colon, rest = model.partition(":")
        if model_provider:
            provider = known(normalise(model_provider), model)
            name = rest if colon and normalise(prefix) == provider else model
            return cls(provider, _named(name, model))
        if colon and normalise(prefix) in PROVIDERS:
            return cls(normalise(prefix), _named(rest, model))
        inferred = infer_provider(model)
        if inferred is not None:
            return cls(inferred, model, inferred=True)
        raise ValueError(unknown_prefix(prefix, model) if colon else uninferable(model))

    def is_installed(self) -> bool:
        """Whether the integration package can be found, without importing it."""
        top_level = PROVIDERS[self.provider].module.partition(".")[0]
        if top_level in sys.modules:  # find_spec() rejects modules without a __spec__
            return sys.modules[top_level] is not None
        return importlib.util.find_spec(top_level) is not None

    def missing_error(self, detail: str = "") -> MissingIntegrationError:
        """The error telling the user which package to install for this spec."""
        integration = PROVIDERS[self.provider]
        guess = (
            f" The provider was inferred from the model name; write '<provider>:{self.model}' "
            "to choose another one."
            if self.inferred
            else ""
        )
        return MissingIntegrationError(
            f"Initializing {integration.class_name} requires the {integration.package} package "
            f"(for the model '{self}'){detail}. Please install it with "
            f"`pip install {integration.package}`.{guess}",
            provider=self.provider,
            package=integration.package,
        )

    def load(self, **kwargs: Any) -> BaseChatModel:
        """Import the integration and build the model, passing ``kwargs`` to its class."""
        integration = PROVIDERS[self.provider]
        chat_class = self._import_class(integration)
        constructor = integration.constructor
        build = chat_class if constructor is None else getattr(chat_class, constructor)
        built = build(**{integration.model_param: self.model}, **kwargs)
        if not isinstance(built, BaseChatModel):
            raise TypeError(
                f"{integration.module}.{integration.class_name} built a "
                f"{type(built).__name__} for '{self}', not a langchain_core BaseChatModel."
            )
        return built

    def _import_class(self, integration: Integration) -> Any:
        try:
            module = importlib.import_module(integration.module)
        except ImportError as error:
            top_level = integration.module.partition(".")[0]
            missing_itself = error.name is not None and error.name.partition(".")[0] == top_level
            detail = "" if missing_itself else f", which failed to import: {error}"
            raise self.missing_error(detail) from error
        chat_class = getattr(module, integration.class_name, None)
        if chat_class is None:
            raise self.missing_error(
                f", but the installed {integration.module} has no {integration.class_name}; "
                "it may be too old"
            )
        return chat_class


def _named(name: str, model_id: str) -> str:
    if not name.strip():
        raise ValueError(f"The model id {model_id!r} has no model name after the provider.")
    return name
