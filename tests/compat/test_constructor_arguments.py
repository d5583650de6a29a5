"""Constructor arguments, for every class ``graphagent.middleware`` exports and for
``create_agent``: a keyword none of them takes is an ``UnknownArgumentError`` (a ``TypeError``)
naming the class, the argument and the closest valid name, and every keyword LangChain 1.5's
constructor of the same class takes is taken.

The classes are discovered from ``graphagent.middleware.__all__``: one exported without an entry
in ``ARGS`` (or a reason in ``NOT_BUILT_BY_USERS``) fails ``test_every_exported_class_is_covered``.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from typing_extensions import is_typeddict

import graphagent.middleware as built_ins
from graphagent import create_agent
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import UnknownArgumentError
from graphagent.middleware import (
    ModelCallLimitMiddleware,
    ModelChoice,
    ModelResponse,
    ModelRetryMiddleware,
    Spend,
    SummarizationMiddleware,
    ToolErrorMiddleware,
)
from graphagent.middleware.tool_error import error_type_message
from graphagent.testing import ScriptedChatModel
from tests.compat.classifiers import answering
from tests.conftest import run_agent


def _model() -> ScriptedChatModel:
    return ScriptedChatModel(["Done."])


# The least each class needs to be built, as a function so each test gets fresh objects.
ARGS: dict[str, Callable[[], dict[str, Any]]] = {
    "AgentFacts": lambda: {"tools": (), "checkpointer": False},
    "ModelPrice": lambda: {"input": 1.0, "output": 2.0},
    "OmitFromSchema": lambda: {},
    "AutoModeMiddleware": lambda: {"tools": ["delete_file"], "classifier": answering(0.0)},
    "BudgetAccount": lambda: {"run": Spend(), "thread": Spend(), "lines": ()},
    "BudgetLine": lambda: {"scope": "run", "measure": "tokens", "spent": 0, "cap": 10},
    "BudgetMiddleware": lambda: {"run_max_tokens": 1000},
    "ClearToolUsesEdit": dict,
    "CodexSandboxExecutionPolicy": dict,
    "ContextEditingMiddleware": dict,
    "DockerExecutionPolicy": dict,
    "ExtendedModelResponse": lambda: {"model_response": ModelResponse(result=[])},
    "FilesystemFileSearchMiddleware": lambda: {"root_path": str(Path(__file__).parent)},
    "FinalAnswerFilterMiddleware": dict,
    "HostExecutionPolicy": dict,
    "HumanInTheLoopMiddleware": lambda: {"interrupt_on": {"delete_file": True}},
    "LLMToolEmulator": lambda: {"model": _model()},
    "LLMToolSelectorMiddleware": dict,
    "ModelCallLimitMiddleware": lambda: {"run_limit": 3},
    "ModelChoice": lambda: {"model": _model(), "criteria": "Anything."},
    "ModelFallbackMiddleware": lambda: {"first_model": _model()},
    "ModelRefusalMiddleware": dict,
    "ModelRequest": lambda: {"model": _model(), "messages": []},
    "ModelResponse": lambda: {"result": [AIMessage("Done.")]},
    "ModelRetryMiddleware": dict,
    "ModelRouterMiddleware": lambda: {
        "choices": {"fast": ModelChoice(model=_model(), criteria="Anything.")},
        "instructions": "Pick the model for the request.",
        "classifier": answering("fast"),
    },
    "OtelTracingMiddleware": dict,
    "PIIDetectionError": lambda: {"pii_type": "email", "matches": []},
    "PIIMiddleware": lambda: {"pii_type": "email"},
    "ProviderToolSearchMiddleware": dict,
    "RedactionRule": lambda: {"pii_type": "email"},
    "ShellToolMiddleware": dict,
    "Spend": dict,
    "SummarizationMiddleware": lambda: {"model": _model()},
    "TodoListMiddleware": dict,
    "ToolCallDeduplicationMiddleware": dict,
    "ToolCallLimitMiddleware": lambda: {"run_limit": 3},
    "ToolErrorMiddleware": lambda: {"on_error": error_type_message},
    "ToolRetryMiddleware": dict,
    "ToolTimeoutMiddleware": lambda: {"timeout": 5},
    "TracePolicy": dict,
}

# Exported classes whose constructors users do not call; the rule does not apply to them.
NOT_BUILT_BY_USERS = {
    "AgentMiddleware": "the base class users subclass; it takes no arguments",
    "BudgetExceededError": "raised by BudgetMiddleware",
    "InvalidDecisionError": "raised by HumanInTheLoopMiddleware",
    "ModelCallLimitExceededError": "raised by ModelCallLimitMiddleware",
    "PIIDetectionError": "raised by PIIMiddleware",
    "ToolCallLimitExceededError": "raised by ToolCallLimitMiddleware",
    "ToolTimeoutError": "raised by ToolTimeoutMiddleware(on_timeout='error')",
}

# Classes defined outside graphagent/middleware/ (or owned elsewhere) that do not refuse with
# UnknownArgumentError yet: Python's own TypeError names the class and the argument only.
NOT_YET: dict[str, str] = {}

# LangChain 1.5.0's constructor keywords, from its source (langchain/agents/middleware/).
_POLICY = (
    "command_timeout",
    "startup_timeout",
    "termination_timeout",
    "max_output_lines",
    "max_output_bytes",
)
_RETRY = ("retry_on", "on_failure", "backoff_factor", "initial_delay", "max_delay", "jitter")
LANGCHAIN_KEYWORDS: dict[str, tuple[str, ...]] = {
    "AutoModeMiddleware": ("tools", "instructions", "criteria", "classifier"),
    "ClearToolUsesEdit": (
        "trigger",
        "clear_at_least",
        "keep",
        "clear_tool_inputs",
        "exclude_tools",
        "placeholder",
    ),
    "CodexSandboxExecutionPolicy": (*_POLICY, "binary", "platform", "config_overrides"),
    "ContextEditingMiddleware": ("edits", "token_count_method", "token_counter"),
    "DockerExecutionPolicy": (
        *_POLICY,
        "binary",
        "image",
        "remove_container_on_exit",
        "network_enabled",
        "extra_run_args",
        "memory_bytes",
        "cpu_time_seconds",
        "cpus",
        "read_only_rootfs",
        "user",
    ),
    "ExtendedModelResponse": ("model_response", "command"),
    "FilesystemFileSearchMiddleware": ("root_path", "use_ripgrep", "max_file_size_mb"),
    "HostExecutionPolicy": (*_POLICY, "cpu_time_seconds", "memory_bytes", "create_process_group"),
    "HumanInTheLoopMiddleware": (
        "interrupt_on",
        "description_prefix",
        "edit_notice",
        "interrupt_mode",
    ),
    "LLMToolEmulator": ("tools", "model"),
    "LLMToolSelectorMiddleware": (
        "model",
        "system_prompt",
        "max_tools",
        "always_include",
        "max_retries",
        "on_parsing_failure",
    ),
    "ModelCallLimitMiddleware": ("thread_limit", "run_limit", "exit_behavior"),
    "ModelChoice": ("model", "criteria"),
    "ModelFallbackMiddleware": ("first_model",),
    "ModelRefusalMiddleware": (),
    "ModelRequest": (
        "model",
        "messages",
        "system_message",
        "system_prompt",
        "tool_choice",
        "tools",
        "response_format",
        "state",
        "runtime",
        "model_settings",
    ),
    "ModelResponse": ("result", "structured_response"),
    "ModelRetryMiddleware": ("max_retries", *_RETRY),
    "ModelRouterMiddleware": ("choices", "instructions", "classifier"),
    "PIIDetectionError": ("pii_type", "matches"),
    "PIIMiddleware": (
        "pii_type",
        "strategy",
        "detector",
        "apply_to_input",
        "apply_to_output",
        "apply_to_tool_results",
    ),
    "ProviderToolSearchMiddleware": ("searchable_tools",),
    "RedactionRule": ("pii_type", "strategy", "detector"),
    "ShellToolMiddleware": (
        "workspace_root",
        "startup_commands",
        "shutdown_commands",
        "execution_policy",
        "redaction_rules",
        "tool_description",
        "tool_name",
        "shell_command",
        "env",
    ),
    "SummarizationMiddleware": (
        "model",
        "trigger",
        "keep",
        "token_counter",
        "summary_prompt",
        "trim_tokens_to_summarize",
        "summarizer",
        # taken through **deprecated_kwargs
        "max_tokens_before_summary",
        "messages_to_keep",
    ),
    "TodoListMiddleware": ("system_prompt", "tool_description"),
    "ToolCallLimitMiddleware": ("tool_name", "thread_limit", "run_limit", "exit_behavior"),
    "ToolErrorMiddleware": ("on_error", "aon_error", "tools"),
    "ToolRetryMiddleware": ("max_retries", "tools", *_RETRY),
    "TracePolicy": ("process_inputs", "process_outputs"),  # langgraph's, which LangChain exports
}
LANGCHAIN_CREATE_AGENT = (
    "model",
    "tools",
    "system_prompt",
    "middleware",
    "response_format",
    "state_schema",
    "context_schema",
    "checkpointer",
    "store",
    "interrupt_before",
    "interrupt_after",
    "debug",
    "name",
    "cache",
    "transformers",
)


# A value for a LangChain keyword whose graphagent default cannot be passed back as it is.
async def _async_error_type_message(exc: Exception, request: Any) -> str:
    return error_type_message(exc, request)


VALUES: dict[tuple[str, str], Any] = {
    ("CodexSandboxExecutionPolicy", "config_overrides"): {},
    ("HumanInTheLoopMiddleware", "edit_notice"): None,
    ("HumanInTheLoopMiddleware", "interrupt_mode"): "batched",
    ("ModelRequest", "tools"): [],
    ("ModelRequest", "state"): {},
    ("ModelRequest", "model_settings"): {},
    ("ModelRequest", "system_prompt"): "Be brief.",
    ("SummarizationMiddleware", "max_tokens_before_summary"): 1000,
    ("SummarizationMiddleware", "messages_to_keep"): 5,
    ("ToolErrorMiddleware", "on_error"): error_type_message,
    ("ToolErrorMiddleware", "aon_error"): _async_error_type_message,
}
# LangChain's deprecated keywords: taken with a DeprecationWarning naming the replacement.
DEPRECATED = {
    ("SummarizationMiddleware", "max_tokens_before_summary"): "trigger=",
    ("SummarizationMiddleware", "messages_to_keep"): "keep=",
}
MISSING: dict[tuple[str, str], str] = {}


def _exported_classes() -> dict[str, type]:
    """Classes graphagent defines and exports from graphagent.middleware; not TypedDicts (plain
    dicts at run time) nor langgraph's classes it re-exports."""
    found = {}
    for name in built_ins.__all__:
        value = getattr(built_ins, name)
        is_ours = isinstance(value, type) and value.__module__.startswith("graphagent.")
        if is_ours and not is_typeddict(value):
            found[name] = value
    return found


EXPORTED = _exported_classes()
CHECKED = sorted(set(EXPORTED) - set(NOT_BUILT_BY_USERS))


def _marks(name: str) -> list[pytest.MarkDecorator]:
    reason = NOT_YET.get(name)
    return [pytest.mark.xfail(reason=reason, strict=True)] if reason else []


def _keywords(cls: type) -> list[str]:
    parameters = inspect.signature(cls).parameters.values()
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [p.name for p in parameters if p.kind in named]


def _misspellings() -> list[Any]:
    """Each keyword of each checked class with its last letter doubled, or ``nme`` for a class
    that takes none."""
    cases = []
    for name in CHECKED:
        keywords = _keywords(EXPORTED[name]) or [None]
        for keyword in keywords:
            typo = "nme" if keyword is None else keyword + keyword[-1]
            cases.append(pytest.param(name, typo, keyword, id=f"{name}-{typo}", marks=_marks(name)))
    return cases


def test_every_exported_class_is_covered() -> None:
    untested = set(EXPORTED) - set(ARGS) - set(NOT_BUILT_BY_USERS)
    stale = (set(ARGS) | set(NOT_BUILT_BY_USERS)) - set(EXPORTED)

    assert not untested, f"add these to ARGS (or NOT_BUILT_BY_USERS, with the reason): {untested}"
    assert not stale, f"no longer exported: {stale}"


@pytest.mark.parametrize(("name", "typo", "meant"), _misspellings())
def test_a_misspelt_keyword_names_the_class_the_argument_and_the_closest_name(
    name: str, typo: str, meant: str | None
) -> None:
    with pytest.raises(TypeError) as caught:
        EXPORTED[name](**ARGS[name](), **{typo: 1})

    assert isinstance(caught.value, UnknownArgumentError)
    message = str(caught.value)
    assert message.startswith(f"{name}.__init__() got an unexpected keyword argument {typo!r}")
    if meant is None:
        assert "(it takes: no keyword arguments)" in message
    else:
        assert f"did you mean {meant!r}?" in message


def _langchain_cases() -> list[Any]:
    return [
        pytest.param(
            name,
            keyword,
            id=f"{name}-{keyword}",
            marks=[pytest.mark.xfail(reason=MISSING[name, keyword], strict=True)]
            if (name, keyword) in MISSING
            else [],
        )
        for name, keywords in LANGCHAIN_KEYWORDS.items()
        for keyword in keywords
    ]


def _value(name: str, keyword: str, args: dict[str, Any]) -> Any:
    if (name, keyword) in VALUES:
        return VALUES[name, keyword]
    if keyword in args:
        return args[keyword]
    parameter = inspect.signature(EXPORTED[name]).parameters.get(keyword)
    if parameter is None or parameter.default is inspect.Parameter.empty:
        pytest.fail(f"{name} does not take LangChain's keyword {keyword!r}")
    return parameter.default


@pytest.mark.parametrize(("name", "keyword"), _langchain_cases())
def test_every_keyword_langchain_takes_is_taken(name: str, keyword: str) -> None:
    args = ARGS[name]()
    args[keyword] = _value(name, keyword, args)
    replacement = DEPRECATED.get((name, keyword))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = EXPORTED[name](**args)

    assert isinstance(built, EXPORTED[name])
    deprecations = [str(w.message) for w in caught if w.category is DeprecationWarning]
    if replacement is None:
        assert deprecations == []
    else:
        assert len(deprecations) == 1
        assert keyword in deprecations[0]
        assert replacement in deprecations[0]


def test_a_deprecated_keyword_warns_at_the_line_that_passed_it() -> None:
    class Summary(SummarizationMiddleware):
        def __init__(self) -> None:
            super().__init__(_model(), messages_to_keep=5)

    with pytest.warns(DeprecationWarning, match="max_tokens_before_summary") as direct:
        SummarizationMiddleware(_model(), max_tokens_before_summary=1000)
    with pytest.warns(DeprecationWarning, match="messages_to_keep") as inherited:
        Summary()

    assert [w.filename for w in [*direct, *inherited]] == [__file__, __file__]


# -- subclasses -----------------------------------------------------------------------------------


MIDDLEWARE = [name for name in CHECKED if issubclass(EXPORTED[name], built_ins.AgentMiddleware)]


@pytest.mark.parametrize("name", MIDDLEWARE)
def test_a_subclass_with_keywords_of_its_own_keeps_working(name: str) -> None:
    base = EXPORTED[name]

    class Labelled(base):  # type: ignore[valid-type,misc]
        def __init__(self, *args: Any, label: str, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.label = label

    built = Labelled(label="mine", **ARGS[name]())

    assert built.label == "mine"
    assert isinstance(built, base)


@pytest.mark.parametrize(
    "name",
    [pytest.param(name, marks=_marks(name)) for name in MIDDLEWARE if _keywords(EXPORTED[name])],
)
def test_a_subclass_passing_a_misspelt_keyword_on_is_refused_by_its_base(name: str) -> None:
    base = EXPORTED[name]
    typo = _keywords(base)[-1] + "_"

    class Labelled(base):  # type: ignore[valid-type,misc]
        def __init__(self, *, label: str, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.label = label

    with pytest.raises(UnknownArgumentError, match=rf"^{name}\.__init__\(\) .* {typo!r}"):
        Labelled(label="mine", **ARGS[name](), **{typo: 1})


@pytest.mark.parametrize("name", [pytest.param(name, marks=_marks(name)) for name in MIDDLEWARE])
def test_a_subclass_without_an_init_of_its_own_is_checked_once(name: str) -> None:
    base = EXPORTED[name]
    sub = refuse_unknown_arguments(type("Sub", (base,), {}))

    assert sub.__init__ is base.__init__, "decorating again would wrap the check in a second one"
    with pytest.raises(UnknownArgumentError):
        sub(**ARGS[name](), nme=1)


@pytest.mark.parametrize("name", [name for name in MIDDLEWARE if not _keywords(EXPORTED[name])])
def test_a_built_in_taking_no_arguments_still_runs_a_mixins_init(name: str) -> None:
    class Mixin:
        def __init__(self) -> None:
            super().__init__()
            self.mixed = True

    both = type("Both", (EXPORTED[name], Mixin), {})

    assert both().mixed is True


def test_a_subclass_of_a_built_in_runs_in_an_agent(how_call: str) -> None:
    class Capped(ModelCallLimitMiddleware):
        def __init__(self, *, note: str, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.note = note

    @tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    calls = AIMessage("", tool_calls=[{"name": "ping", "args": {}, "id": "c1"}])
    model = ScriptedChatModel([calls], repeat_last=True)
    agent = create_agent(model, [ping], middleware=[Capped(note="two", run_limit=2)])

    result = run_agent(agent, how_call, {"messages": ["go"]})

    assert model.call_count == 2
    assert "limit" in result["messages"][-1].content.lower()


def test_retry_subclass_keeps_its_options(how_call: str) -> None:
    class Patient(ModelRetryMiddleware):
        def __init__(self, *, patience: int, **kwargs: Any) -> None:
            super().__init__(max_retries=patience, initial_delay=0, jitter=False, **kwargs)

    failures = iter([ConnectionError("down")])

    def flaky(messages: Any) -> str:
        error = next(failures, None)
        if error is not None:
            raise error
        return "Done."

    agent = create_agent(ScriptedChatModel([flaky, flaky]), middleware=[Patient(patience=1)])

    result = run_agent(agent, how_call, {"messages": ["go"]})

    assert result["messages"][-1].content == "Done."


# -- create_agent and ScriptedChatModel -----------------------------------------------------------


def test_create_agent_refuses_a_misspelt_keyword() -> None:
    with pytest.raises(TypeError) as caught:
        create_agent(_model(), tool=[])  # type: ignore[call-arg]

    assert isinstance(caught.value, UnknownArgumentError)
    assert str(caught.value).startswith(
        "create_agent() got an unexpected keyword argument 'tool'; did you mean 'tools'?"
    )


@pytest.mark.parametrize("keyword", LANGCHAIN_CREATE_AGENT)
def test_create_agent_takes_every_keyword_langchain_takes(keyword: str) -> None:
    parameter = inspect.signature(create_agent).parameters.get(keyword)
    assert parameter is not None, f"create_agent does not take LangChain's {keyword!r}"
    value = _model() if keyword == "model" else parameter.default

    agent = create_agent(**{"model": _model(), keyword: value})

    assert agent.invoke({"messages": ["hi"]})["messages"][-1].content == "Done."


def test_a_patched_create_agent_default_reaches_the_function() -> None:
    defaults = create_agent.__kwdefaults__
    assert defaults is not None

    defaults["name"] = "patched"
    try:
        assert create_agent(_model()).name == "patched"
    finally:
        defaults["name"] = None


def test_scripted_chat_model_refuses_a_field_it_does_not_have() -> None:
    with pytest.raises(TypeError) as caught:
        ScriptedChatModel(responses=["Done."])  # type: ignore[call-arg]

    assert isinstance(caught.value, UnknownArgumentError)
    assert str(caught.value).startswith(
        "ScriptedChatModel.__init__() got an unexpected keyword argument 'responses'; "
        "did you mean 'replies'?"
    )


def test_scripted_chat_model_takes_chat_model_fields() -> None:
    model = ScriptedChatModel(["Done."], name="scripted", tags=["t"], disable_streaming=True)

    assert (model.name, model.tags, model.disable_streaming) == ("scripted", ["t"], True)


def test_a_subclass_passing_a_positional_argument_on_keeps_working(how_call: str) -> None:
    class Prefixed(ToolErrorMiddleware):
        def __init__(self, prefix: str) -> None:
            super().__init__(lambda error, request: f"{prefix}: {error}")

    @tool
    def broken() -> str:
        """Always fails."""
        raise RuntimeError("disk full")

    calls = AIMessage("", tool_calls=[{"name": "broken", "args": {}, "id": "c1"}])
    agent = create_agent(
        ScriptedChatModel([calls, "Done."]), [broken], middleware=[Prefixed("failed")]
    )

    result = run_agent(agent, how_call, {"messages": ["go"]})

    assert result["messages"][2].content == "failed: disk full"
