"""A model option given as a chat model or a model id: the id is checked when the middleware is
built (known provider, integration installed) and the model built the first time it is needed,
off the event loop in an async run."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from graphagent._bridge import Mode
from graphagent.errors import MiddlewareError, MiddlewareTypeError
from graphagent.models import MissingIntegrationError, ModelSpec


class LazyModel:
    """One model option; ``owner`` and ``label`` name it in errors."""

    __slots__ = ("_built", "_source")

    def __init__(self, owner: str, label: str, value: object) -> None:
        self._source = (
            value if isinstance(value, BaseChatModel) else _checked_id(owner, label, value)
        )
        self._built = value if isinstance(value, BaseChatModel) else None

    def get(self) -> BaseChatModel:
        """The model, built now if it was given as an id and not built yet (it may block)."""
        if self._built is None:
            source = self._source
            # Racing threads may both build it; either result serves.
            self._built = source if isinstance(source, BaseChatModel) else source.load()
        return self._built

    async def resolve(self, mode: Mode) -> BaseChatModel:
        """The model; built through ``mode`` (in a worker thread in an async run) if needed."""
        return self._built if self._built is not None else await mode.offload(self.get)


def _checked_id(owner: str, label: str, value: object) -> ModelSpec:
    if not isinstance(value, str):
        raise MiddlewareTypeError(
            f"{owner}: {label} is {type(value).__name__}; pass a chat model or a model id such "
            "as 'openai:gpt-4o'."
        )
    try:
        spec = ModelSpec.parse(value)
    except ValueError as error:
        raise MiddlewareError(f"{owner}: {label}={value!r}: {error}") from None
    if not spec.is_installed():
        missing = spec.missing_error()
        raise MissingIntegrationError(
            f"{owner}: {label}={value!r}: {missing}",
            provider=missing.provider,
            package=missing.package,
        )
    return spec
