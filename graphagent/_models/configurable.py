"""``ConfigurableChatModel``: a chat model built for each call from the run's ``configurable``.

``init_chat_model()`` returns one when it is given no model or some ``configurable_fields``. Each
call reads the model id and the other parameters it may take from
``config["configurable"]``, builds that chat model, replays the calls recorded on it
(``bind_tools``, ``with_structured_output``, ``with_config``) and hands the call over.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AnyMessage
from langchain_core.prompt_values import ChatPromptValueConcrete, StringPromptValue
from langchain_core.runnables import Runnable, RunnableConfig, ensure_config

from graphagent._models.spec import ModelSpec

if TYPE_CHECKING:
    from langchain_core.runnables.schema import StreamEvent

__all__ = ["ConfigurableChatModel", "Operation"]

Operation: TypeAlias = tuple[str, tuple[Any, ...], dict[str, Any]]
"""A call recorded on a :class:`ConfigurableChatModel` and replayed on each model it builds:
the method's name, its positional and its keyword arguments."""

Fields: TypeAlias = Literal["any"] | tuple[str, ...]

_DECLARATIONS = ("bind_tools", "with_structured_output")
_OWN = frozenset({"_defaults", "_fields", "_prefix", "_operations", "_built"})
# What LangGraph (and its server) put in ``configurable`` for themselves; never model parameters.
_GRAPH_KEYS = frozenset(
    {"thread_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map", "assistant_id", "graph_id"}
    | {"run_id", "cron_id", "user_id"}
)
_GRAPH_PREFIXES = ("__", "langgraph_")


_KEPT = 8
"""How many models, for distinct parameters, each configurable model keeps built."""
_BUILDING = threading.Lock()


class ConfigurableChatModel(Runnable[LanguageModelInput, Any]):
    """A chat model chosen per call: its model id and other parameters come from the call's
    ``config["configurable"]``, falling back to defaults.

    Made by ``init_chat_model()`` without a model, or with ``configurable_fields``. Every call
    (``invoke``, ``ainvoke``, ``stream``, ``astream``, ``batch``, ...) builds the chat model its
    config selects and hands the call to it; ``bind_tools``, ``with_structured_output`` and
    ``with_config`` are recorded and replayed on each model built. Other attributes are read from
    the model the current config selects (the defaults outside a run). It can be an agent's model
    and the model of the built-ins that take one.

    Args:
        defaults: The parameters used where the config sets none: ``model`` (a model id such as
            ``"openai:gpt-4o-mini"``), ``model_provider``, and keyword arguments of the
            provider's chat model class (``temperature``, ``base_url``, ...).
        configurable_fields: The parameters the config may set: ``"any"``, or a list or tuple
            of names such as ``("model", "temperature")``.
        config_prefix: The config keys are ``"<prefix>_<name>"`` (a ``"_"`` is added when the
            prefix does not end with one), so that several configurable models of one run can
            be set apart; ``""`` reads the bare names.
        operations: Calls replayed, in order, on each model built, as ``(method, args,
            kwargs)``: what ``bind_tools``, ``with_structured_output`` and ``with_config``
            record.

    Raises:
        TypeError: ``configurable_fields`` is neither ``"any"`` nor a list or tuple of names,
            ``config_prefix`` is not a str, or no call could ever choose a model (no default
            and ``"model"`` not configurable).
        ValueError: A default model id that no config can change names an unknown provider.
        MissingIntegrationError: That model's integration package is not installed.
    """

    def __init__(
        self,
        defaults: Mapping[str, Any] | None = None,
        *,
        configurable_fields: Literal["any"] | list[str] | tuple[str, ...] = "any",
        config_prefix: str = "",
        operations: Sequence[Operation] = (),
    ) -> None:
        if not isinstance(config_prefix, str):
            raise TypeError(
                f"config_prefix must be a str such as 'summarizer', got "
                f"{type(config_prefix).__name__}."
            )
        self._defaults: dict[str, Any] = dict(defaults or {})
        self._fields: Fields = checked_fields(configurable_fields)
        ends = not config_prefix or config_prefix.endswith("_")
        self._prefix = config_prefix if ends else f"{config_prefix}_"
        self._operations: tuple[Operation, ...] = tuple(operations)
        self._built: OrderedDict[Any, BaseChatModel] = OrderedDict()
        self._check_defaults()

    # -- what it is --------------------------------------------------------------------------

    @property
    def defaults(self) -> dict[str, Any]:
        """The parameters used where the config sets none (a copy)."""
        return dict(self._defaults)

    @property
    def configurable_fields(self) -> Fields:
        """``"any"``, or the names of the parameters the config may set."""
        return self._fields

    @property
    def config_prefix(self) -> str:
        """What the config keys start with (``"summarizer_"``), or ``""``."""
        return self._prefix

    @property
    def operations(self) -> tuple[Operation, ...]:
        """The recorded calls replayed on each model built."""
        return self._operations

    @property
    def InputType(self) -> Any:
        """What a call takes: text, a prompt value, or a list of messages."""
        return str | StringPromptValue | ChatPromptValueConcrete | list[AnyMessage]

    def __repr__(self) -> str:
        others = sorted(set(self._defaults) - {"model", "model_provider"})  # values may be keys
        return (
            f"{type(self).__name__}(model={self._defaults.get('model')!r}, "
            f"configurable_fields={self._fields!r}, config_prefix={self._prefix!r}, "
            f"other_defaults={others}, operations={[op[0] for op in self._operations]})"
        )

    # -- choosing the model ------------------------------------------------------------------

    def model_for(self, config: RunnableConfig | None = None) -> Runnable[LanguageModelInput, Any]:
        """Build the model ``config`` selects, with the recorded calls applied to it.

        Args:
            config: The call's config; ``None`` reads the current run's (or only the defaults
                outside a run).

        Raises:
            TypeError: No model is chosen, naming the ``configurable`` key to set.
        """
        return self._replayed(self._chat_model(self.params(config)))

    def params(self, config: RunnableConfig | None = None) -> dict[str, Any]:
        """The parameters a call with ``config`` builds its model with: the defaults, updated
        with the configurable values ``config`` sets (under the prefix; LangGraph's own keys are
        skipped under ``"any"``).

        Args:
            config: The call's config; ``None`` reads the current run's.
        """
        return {**self._defaults, **self._configured(config)}

    def _configured(self, config: RunnableConfig | None) -> dict[str, Any]:
        values = ensure_config(config).get("configurable") or {}
        found: dict[str, Any] = {}
        for key, value in values.items():
            name = key[len(self._prefix) :] if key.startswith(self._prefix) else ""
            if name and self._settable(name) and not (self._fields == "any" and _graphs(key)):
                found[name] = value
        return found

    def _settable(self, name: str) -> bool:
        return self._fields == "any" or name in self._fields

    def _chat_model(self, params: Mapping[str, Any]) -> BaseChatModel:
        """The chat model for ``params``, built once for the last few distinct ones: reading an
        attribute (a tracer reads ``model_name``) then costs no new model, and an async run,
        which builds the run's model off the event loop first, never builds it on the loop."""
        try:
            key = frozenset(params.items())
        except TypeError:  # an unhashable parameter (a client object): build it every time
            return self._build(params)
        with _BUILDING:
            cached = self._built.get(key)
            if cached is not None:
                self._built.move_to_end(key)
                return cached
        model = self._build(params)
        with _BUILDING:
            self._built[key] = model
            while len(self._built) > _KEPT:
                self._built.popitem(last=False)
        return model

    def __getstate__(self) -> dict[str, Any]:
        """Copies and pickles leave the built models behind: they are rebuilt when needed."""
        return {k: v for k, v in self.__dict__.items() if k != "_built"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _built=OrderedDict())

    def _build(self, params: Mapping[str, Any]) -> BaseChatModel:

        kwargs = dict(params)
        model, provider = kwargs.pop("model", None), kwargs.pop("model_provider", None)
        if not model:
            raise TypeError(self._no_model())
        for name, value in (("model", model), ("model_provider", provider)):
            if value is not None and not isinstance(value, str):
                raise TypeError(
                    f"ConfigurableChatModel: {self._where(name)} must be a str such as "
                    f"'openai:gpt-4o-mini', got {type(value).__name__}."
                )
        return ModelSpec.parse(model, provider or None).load(**kwargs)

    def _replayed(self, model: Runnable[Any, Any]) -> Runnable[Any, Any]:
        for name, args, kwargs in self._operations:
            model = getattr(model, name)(*args, **kwargs)
        return model

    async def _amodel_for(self, config: RunnableConfig | None) -> Runnable[Any, Any]:
        # Building imports the integration and makes its clients: keep it off the event loop.
        return await asyncio.to_thread(self.model_for, config)

    def _no_model(self) -> str:
        if self._settable("model"):
            key = f"{self._prefix}model"
            return (
                f"ConfigurableChatModel has no model to call: set {self._where('model')}, e.g. "
                f"invoke(..., config={{'configurable': {{{key!r}: 'openai:gpt-4o-mini'}}}}), "
                "or give init_chat_model() a default model."
            )
        return (
            "ConfigurableChatModel has no model to call, and 'model' is not one of its "
            f"configurable_fields {list(self._fields)}: give init_chat_model() a model, or add "
            "'model' to configurable_fields."
        )

    def _where(self, name: str) -> str:
        if not self._settable(name):
            return f"the default {name!r}"
        return f"config['configurable'][{self._prefix + name!r}]"

    def _check_defaults(self) -> None:
        """What can be known now: a model to call, and the one fixed model id, if it is fixed."""

        model, provider = self._defaults.get("model"), self._defaults.get("model_provider")
        if model is not None and not isinstance(model, str):
            raise TypeError(
                f"The default model must be a model id str, got {type(model).__name__}."
            )
        if not model and not self._settable("model"):
            raise TypeError(self._no_model())
        if model and not (self._settable("model") or self._settable("model_provider")):
            spec = ModelSpec.parse(model, provider or None)
            if not spec.is_installed():
                raise spec.missing_error()

    # -- recorded calls ------------------------------------------------------------------------

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ConfigurableChatModel:
        """A copy that applies ``bind_tools(tools, **kwargs)`` to each model it builds.

        Args:
            tools: The tools, as the chat model's ``bind_tools`` takes them.
            **kwargs: Its other arguments (``tool_choice``, ...).
        """
        return self._then(("bind_tools", (tools,), kwargs))

    def with_structured_output(self, schema: Any, **kwargs: Any) -> ConfigurableChatModel:
        """A copy that applies ``with_structured_output(schema, **kwargs)`` to each model built.

        Args:
            schema: The schema, as the chat model's ``with_structured_output`` takes it.
            **kwargs: Its other arguments (``method``, ``include_raw``, ...).
        """
        return self._then(("with_structured_output", (schema,), kwargs))

    def with_config(
        self, config: RunnableConfig | None = None, **kwargs: Any
    ) -> ConfigurableChatModel:
        """A copy whose defaults take the configurable values ``config`` sets for this model;
        the rest of ``config`` (tags, metadata, other keys) applies to each call.

        Args:
            config: A ``RunnableConfig``.
            **kwargs: More config keys, as ``Runnable.with_config`` takes them.
        """
        merged: dict[str, Any] = {**(config or {}), **kwargs}
        taken = self._configured(cast("RunnableConfig", {"configurable": {}, **merged}))
        rest = {key: value for key, value in merged.items() if key != "configurable"}
        others = {
            key: value
            for key, value in (merged.get("configurable") or {}).items()
            if not (key.startswith(self._prefix) and key[len(self._prefix) :] in taken)
        }
        if others:
            rest["configurable"] = others
        recorded: tuple[Operation, ...] = (("with_config", (rest,), {}),) if rest else ()
        return self._copy({**self._defaults, **taken}, self._operations + recorded)

    def _then(self, operation: Operation) -> ConfigurableChatModel:
        return self._copy(self._defaults, (*self._operations, operation))

    def _copy(
        self, defaults: Mapping[str, Any], operations: Sequence[Operation]
    ) -> ConfigurableChatModel:
        return ConfigurableChatModel(
            defaults,
            configurable_fields=self._fields,
            config_prefix=self._prefix,
            operations=operations,
        )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in _OWN:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        params = self.params()
        if not params.get("model"):
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}, and no model is "
                f"chosen to read it from. {self._no_model()}"
            )
        return getattr(self._replayed(self._chat_model(params)), name)

    # -- calls ---------------------------------------------------------------------------------

    def invoke(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Any:
        """Call the model ``config`` selects.

        Args:
            input: What the chat model takes: text, a prompt value, or messages.
            config: The call's config; its ``configurable`` values choose the model.
            **kwargs: Passed to the model's ``invoke``.
        """
        return self.model_for(config).invoke(input, config, **kwargs)

    async def ainvoke(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Any:
        """Async twin of :meth:`invoke`; the model is built off the event loop."""
        model = await self._amodel_for(config)
        return await model.ainvoke(input, config, **kwargs)

    def stream(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """Stream from the model ``config`` selects (its chunks, as it streams them)."""
        yield from self.model_for(config).stream(input, config, **kwargs)

    async def astream(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """Async twin of :meth:`stream`."""
        model = await self._amodel_for(config)
        async for chunk in model.astream(input, config, **kwargs):
            yield chunk

    def batch(
        self,
        inputs: list[LanguageModelInput],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """One model for the whole batch when there is one config (or none); with a config per
        input, each input gets the model its config selects."""
        shared, one = _one_config(config)
        if not shared:
            return super().batch(inputs, config, return_exceptions=return_exceptions, **kwargs)
        model = self.model_for(one)
        return model.batch(inputs, one, return_exceptions=return_exceptions, **kwargs)

    async def abatch(
        self,
        inputs: list[LanguageModelInput],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Async twin of :meth:`batch`."""
        shared, one = _one_config(config)
        if not shared:
            return await super().abatch(
                inputs, config, return_exceptions=return_exceptions, **kwargs
            )
        model = await self._amodel_for(one)
        return await model.abatch(inputs, one, return_exceptions=return_exceptions, **kwargs)

    async def astream_events(  # type: ignore[override]
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[StreamEvent]:
        """The events of the model ``config`` selects, as its own ``astream_events`` gives."""
        model = await self._amodel_for(config)
        async for event in model.astream_events(input, config, **kwargs):
            yield event


def checked_fields(value: object) -> Fields:
    """``configurable_fields`` as a tuple of names, or ``"any"``; ``TypeError`` otherwise."""
    if isinstance(value, str):
        if value == "any":
            return "any"
        raise TypeError(
            f"configurable_fields={value!r} is a str; pass 'any' or a tuple of names, "
            f"e.g. configurable_fields=({value!r},)."
        )
    if not isinstance(value, list | tuple):
        raise TypeError(
            "configurable_fields must be 'any' or a list or tuple of parameter names such as "
            f"('model', 'temperature'), got {type(value).__name__}."
        )
    bad = [name for name in value if not isinstance(name, str) or not name]
    if bad:
        raise TypeError(f"configurable_fields holds {bad!r}; each name must be a non-empty str.")
    return tuple(value)


def chat_model_for_agent(
    model: ConfigurableChatModel, config: RunnableConfig
) -> tuple[BaseChatModel, tuple[RunnableConfig, ...]]:
    """The chat model an agent's call with ``config`` uses, and the configs recorded by
    ``with_config`` to run it with; the agent binds tools and structured output itself."""
    refuse_declarations(model, "the agent's model call")
    configs = tuple(args[0] for name, args, _ in model.operations if name == "with_config")
    return model._chat_model(model.params(config)), configs


def refuse_declarations(model: ConfigurableChatModel, where: str) -> None:
    """``TypeError`` when ``model`` recorded ``bind_tools`` or ``with_structured_output``."""
    recorded = [name for name, _, _ in model.operations if name in _DECLARATIONS]
    if recorded:
        raise TypeError(
            f"{where} got a ConfigurableChatModel with {recorded[0]}() applied; an agent binds "
            "its tools and structured output itself. Pass the model init_chat_model() returned, "
            "with the tools in tools=[...] and the schema in response_format=..."
        )


def _graphs(key: str) -> bool:
    return key in _GRAPH_KEYS or key.startswith(_GRAPH_PREFIXES)


def _one_config(
    config: RunnableConfig | Sequence[RunnableConfig] | None,
) -> tuple[bool, RunnableConfig | None]:
    """Whether one config (or none) serves every input of a batch, and that config."""
    if not config:
        return True, None
    if isinstance(config, Mapping):
        return True, config
    if len(config) == 1:
        return True, config[0]
    return False, None
