"""Chat models from ids such as ``"openai:gpt-4o"``: ``init_chat_model`` and ``resolve_model``.

An id names a provider and a model. The provider selects a LangChain integration package
(``langchain-openai``, ``langchain-anthropic``, ...) that the user installs; graphagent imports
it only when a model of that provider is built. Without a ``provider:`` prefix the provider is
guessed from the model name (``gpt-...`` is OpenAI, ``claude...`` is Anthropic, ...).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Literal, cast, overload

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable

from graphagent._core.log import log
from graphagent._models.configurable import (
    ConfigurableChatModel,
    checked_fields,
    refuse_declarations,
)
from graphagent._models.spec import MissingIntegrationError, ModelSpec
from graphagent.errors import MiddlewareError, MiddlewareTypeError

if TYPE_CHECKING:
    from graphagent._core.bridge import Mode


__all__ = [
    "BaseChatModel",
    "ConfigurableChatModel",
    "MissingIntegrationError",
    "ModelSpec",
    "init_chat_model",
    "resolve_model",
]


@overload
def init_chat_model(
    model: str,
    *,
    model_provider: str | None = None,
    configurable_fields: None = None,
    config_prefix: str | None = None,
    **kwargs: Any,
) -> BaseChatModel: ...


@overload
def init_chat_model(
    model: None = None,
    *,
    model_provider: str | None = None,
    configurable_fields: None = None,
    config_prefix: str | None = None,
    **kwargs: Any,
) -> ConfigurableChatModel: ...


@overload
def init_chat_model(
    model: str | None = None,
    *,
    model_provider: str | None = None,
    configurable_fields: Literal["any"] | list[str] | tuple[str, ...],
    config_prefix: str | None = None,
    **kwargs: Any,
) -> ConfigurableChatModel: ...


def init_chat_model(
    model: str | None = None,
    *,
    model_provider: str | None = None,
    configurable_fields: Literal["any"] | list[str] | tuple[str, ...] | None = None,
    config_prefix: str | None = None,
    **kwargs: Any,
) -> BaseChatModel | ConfigurableChatModel:
    """Build a chat model from an id such as ``"openai:gpt-4o"`` or ``"claude-sonnet-4-5"``, or
    a :class:`ConfigurableChatModel` that picks its model from each run's config.

    Args:
        model: The model id: ``"provider:model"``, or a bare model name whose provider is
            inferred from its prefix (``gpt-``, ``claude``, ``gemini``, ...). ``None`` (or
            ``""``): a configurable model whose ``model`` and ``model_provider`` come from
            ``config["configurable"]``.
        model_provider: The provider, for an id without the ``provider:`` prefix; needed when
            it cannot be inferred from the name, and it wins over the inference.
        configurable_fields: Make the model configurable: the names of the parameters a run's
            ``config["configurable"]`` may set (``("model", "temperature")``), or ``"any"`` for
            all of them (then also ``api_key`` and ``base_url``: list the names when the config
            comes from untrusted callers). ``model``, ``model_provider`` and ``kwargs`` are the
            defaults. Without a model it defaults to ``("model", "model_provider")``.
        config_prefix: Read the configurable values under ``"<prefix>_<name>"`` keys, to tell
            several configurable models of one run apart. Without ``configurable_fields`` on a
            fixed model it does nothing, and warns.
        **kwargs: Passed to the model class: ``temperature=0``, ``max_tokens=...``,
            ``base_url=...``, ``api_key=...``.

    Returns:
        An instance of the provider's LangChain chat model class (``ChatOpenAI``, ...), or a
        ``ConfigurableChatModel`` when there is no model or there are ``configurable_fields``.

    Raises:
        ValueError: An unknown provider, or a bare name whose provider cannot be inferred.
        MissingIntegrationError: The provider's package is not installed (an ``ImportError``).
        TypeError: ``model`` is not a str (a chat model object needs no ``init_chat_model``);
            ``configurable_fields`` is not ``"any"`` or a list or tuple of names;
            ``config_prefix`` is not a str.
    """
    if model is not None and not isinstance(model, str):
        raise TypeError(
            f"`model` must be a string (a model id such as 'openai:gpt-4o'), got "
            f"{type(model).__name__}; a chat model object can be used directly, without "
            "init_chat_model()."
        )
    if config_prefix is not None and not isinstance(config_prefix, str):
        raise TypeError(f"config_prefix must be a str, got {type(config_prefix).__name__}.")
    fields = None if configurable_fields is None else checked_fields(configurable_fields)
    if model and not fields:
        if config_prefix:
            warnings.warn(
                f"config_prefix={config_prefix!r} has been set but no fields are configurable. "
                f"init_chat_model() builds the fixed model {model!r} and ignores the prefix; "
                "pass configurable_fields=(...) to name the parameters a run's config may set.",
                stacklevel=2,
            )
        return ModelSpec.parse(model, model_provider).load(**kwargs)
    defaults = {**kwargs}
    if model:
        defaults["model"] = model
    if model_provider:
        defaults["model_provider"] = model_provider
    return ConfigurableChatModel(
        defaults,
        configurable_fields=fields or ("model", "model_provider"),
        config_prefix=config_prefix or "",
    )


def resolve_model(model: str | BaseChatModel | ConfigurableChatModel) -> BaseChatModel:
    """``model`` itself if it is a chat model; a model built from it if it is an id.

    A ``ConfigurableChatModel`` passes through too, typed as the chat model it stands for
    (as LangChain's does): an agent builds the chat model per call.
    """
    if isinstance(model, BaseChatModel):
        return model
    if isinstance(model, ConfigurableChatModel):
        refuse_declarations(model, "create_agent(model=...)")
        return stand_in(model)
    if isinstance(model, str):
        return init_chat_model(model)
    raise _not_a_model(model)


def _not_a_model(model: object) -> TypeError:
    wrapped = (
        " (a model wrapped by bind_tools(), with_retry(), ...); pass the model itself: an agent "
        "binds its tools itself, and ModelRetryMiddleware retries"
        if isinstance(model, Runnable)
        else ""
    )
    return TypeError(
        f"model must be a langchain_core BaseChatModel or a model id such as 'openai:gpt-4o', "
        f"got {type(model).__name__}{wrapped}."
    )


def stand_in(model: ConfigurableChatModel) -> BaseChatModel:
    """A configurable model where a chat model is expected. It is not a ``BaseChatModel``, but
    answers like one: calls build the model the run's config selects, and attributes are read
    from it; the agent's model call builds it itself."""
    return cast("BaseChatModel", model)


class HelperModel:
    """A model a middleware calls itself (a summarizer, a tool selector, a fallback), given as
    a chat model, a model id or a configurable model.

    An id is checked when the middleware is built (a known provider, its package installed),
    and the model is built from it the first time it is needed. ``check`` vets a model built
    from an id before it is kept, and a configurable model each time a run gets it (the model
    it stands for depends on the run's config).
    """

    __slots__ = ("_check", "_loaded", "choice")

    def __init__(
        self,
        owner: str,
        option: str,
        value: object,
        *,
        check: Callable[[BaseChatModel], None] | None = None,
    ) -> None:
        """Check ``value``, the ``option`` of the middleware ``owner``; errors name both."""
        self.choice: BaseChatModel | ModelSpec = _helper_choice(owner, option, value)
        self._check = check
        self._loaded: list[BaseChatModel] = []

    @property
    def built(self) -> BaseChatModel | None:
        """The model if it exists: given as such, or built from its id already."""
        choice = self.choice
        if not isinstance(choice, ModelSpec):
            return choice
        return self._loaded[0] if self._loaded else None

    @property
    def model(self) -> BaseChatModel:
        """The model, built from its id now if need be (imports modules, so it may block)."""
        choice = self.choice
        if not isinstance(choice, ModelSpec):
            return choice
        if not self._loaded:
            model = choice.load()
            if self._check is not None:
                self._check(model)
            self._loaded.append(model)  # two threads may race to build it: the first one wins
        return self._loaded[0]

    async def get(self, mode: Mode) -> BaseChatModel:
        """:attr:`model`; building it (or the run's model of a configurable one, which then
        keeps it for the attributes the middleware reads) runs off the event loop in an async
        run."""
        choice, check = self.choice, self._check
        if isinstance(choice, ConfigurableChatModel):
            if check is not None:
                await mode.offload(check, self.model)
            elif mode.asynchronous:
                with suppress(Exception):  # the call itself reports it, naming the middleware
                    await mode.offload(choice.model_for)
            return self.model
        built = self.built
        return built if built is not None else await mode.offload(lambda: self.model)


def _helper_choice(owner: str, option: str, value: object) -> BaseChatModel | ModelSpec:
    if isinstance(value, BaseChatModel):
        return value
    if isinstance(value, ConfigurableChatModel):
        return stand_in(value)
    if not isinstance(value, str):
        return _duck_model(owner, option, value)
    try:
        spec = ModelSpec.parse(value)
    except ValueError as error:
        raise MiddlewareError(f"{owner}: {option}={value!r}: {error}") from None
    if not spec.is_installed():
        missing = spec.missing_error()
        raise MissingIntegrationError(
            f"{owner}: {option}={value!r}: {missing}",
            provider=missing.provider,
            package=missing.package,
        )
    return spec


def _duck_model(owner: str, option: str, value: object) -> BaseChatModel:
    """An object that is no ``BaseChatModel`` but can be called like one (a test double, a
    wrapper): taken as it is, as LangChain takes it."""
    if not callable(getattr(value, "invoke", None)):
        raise MiddlewareTypeError(
            f"{owner}: {option} is {type(value).__name__}; pass a chat model or a model id such "
            "as 'openai:gpt-4o-mini' (or a configurable model from init_chat_model())."
        )
    log.debug(
        "%s: %s is a %s, not a BaseChatModel; it is called as a chat model",
        owner,
        option,
        type(value).__name__,
    )
    return cast(BaseChatModel, value)
