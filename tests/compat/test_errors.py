"""LangChain 1.5's errors for the mistakes a user can make: one row per ``raise`` in
``langchain/agents/`` (``factory.py``, ``structured_output.py``, ``middleware/*.py``) that what a
user passes can reach (constructor arguments, ``create_agent`` arguments, hook return values,
tool calls, resume values), keyed by the LangChain module it is in.

Each row builds the bad input through graphagent's public API (tests/compat/bad_inputs.py) and
expects LangChain's exception type, so ``except`` clauses written for LangChain keep catching
graphagent's error, and a message that starts with LangChain's words for the check (graphagent
names the middleware, the argument and the fix after them). LangChain's message for a tool a
hook adds unregistered starts with a newline, so leading whitespace is allowed.

The table describes LangChain too: under a scratch ``graphagent`` package that answers
graphagent's import paths with LangChain's names, every row of ``ROWS`` passes against LangChain
1.5.0 itself; those of ``GRAPHAGENT_ONLY`` do not apply there.

Raises left out, and why:

- internal "cannot happen" checks (``tool_selection``'s empty tool list, the retry loops'
  fall-through) and platform checks no Linux run reaches (``_shell.execution``'s missing
  ``resource`` module, Codex's unknown platform, a failing ``prlimit``);
- ``file_search``'s path checks, which its tools catch and answer as text;
- a shell ``restart`` that fails (no input makes it fail on purpose);
- where graphagent deliberately behaves otherwise: a sync-only wrap hook under ``ainvoke``, a
  run without a user message in ``LLMToolSelectorMiddleware``, a command after ``exit`` in the
  shell, a per-call review answer (checked by ``response_schema`` in both, in pydantic's words
  in LangChain's), and a ``wrap_model_call`` hook that narrows the response format to a
  ``ToolStrategy`` of a schema not given to ``create_agent``, which graphagent runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import SystemMessage
from langgraph.types import Command

from graphagent.middleware import (
    CodexSandboxExecutionPolicy,
    DockerExecutionPolicy,
    HostExecutionPolicy,
    HumanInTheLoopMiddleware,
    LLMToolSelectorMiddleware,
    ModelCallLimitMiddleware,
    ModelRetryMiddleware,
    PIIDetectionError,
    PIIMiddleware,
    ShellToolMiddleware,
    ToolCallLimitMiddleware,
    ToolErrorMiddleware,
    ToolRetryMiddleware,
)
from graphagent.middleware.model_call_limit import ModelCallLimitExceededError
from graphagent.middleware.tool_call_limit import ToolCallLimitExceededError
from graphagent.structured_output import (
    MultipleStructuredOutputsError,
    StructuredOutputValidationError,
    ToolStrategy,
)
from tests.compat.bad_inputs import (
    ENTRY_POINTS,
    RUNS,
    NoPipesPolicy,
    Run,
    aon_error_only,
    async_only,
    call_without_id,
    chose,
    default_emulator,
    deferred_to_scripted_model,
    duplicate_middleware,
    invalid_native_json,
    invalid_structured_call,
    invoke,
    model_calls_over_limit,
    override,
    pii_run,
    request,
    review,
    route_without_user_message,
    select,
    shell_run,
    spawn_missing,
    summarize,
    summarizer_returning,
    tool_calls_over_limit,
    two_structured_calls,
    unknown_searchable_tool,
    unregistered_tool,
    wrap_model_call_command,
)


@dataclass(frozen=True)
class Row:
    """One LangChain ``raise``: where it is, the input that reaches it, what it raises."""

    module: str
    build: Callable[[Run], object]
    error: type[BaseException]
    prefix: str
    runs: tuple[str, ...] = ()
    """The entry points to reach it through: none for a check made when something is built."""


SHELL = "middleware.shell_tool"
SUMMARY = "middleware.summarization"
HITL = "middleware.human_in_the_loop"
SELECTION = "middleware.tool_selection"
EXECUTION = "middleware._shell.execution"
BUILTIN_PII = "['email', 'credit_card', 'ip', 'mac_address', 'url']"
NEEDS_FRACTION_PROFILE = (
    "Model profile information is required to use fractional token limits, and is unavailable "
    "for the specified model."
)

ROWS: dict[str, Row] = {
    # factory.py
    "duplicate-middleware": Row(
        "factory", duplicate_middleware, AssertionError, "Please remove duplicate middleware"
    ),
    "command-goto": Row(
        "factory",
        wrap_model_call_command(goto="model"),
        NotImplementedError,
        "Command goto is not yet supported in wrap_model_call middleware",
        RUNS,
    ),
    "command-resume": Row(
        "factory",
        wrap_model_call_command(resume="yes"),
        NotImplementedError,
        "Command resume is not yet supported in wrap_model_call middleware",
        RUNS,
    ),
    "command-graph": Row(
        "factory",
        wrap_model_call_command(graph=Command.PARENT),
        NotImplementedError,
        "Command graph is not yet supported in wrap_model_call middleware",
        RUNS,
    ),
    "unregistered-tool": Row(
        "factory",
        unregistered_tool,
        ValueError,
        "Middleware added tools that the agent doesn't know how to execute",
        RUNS,
    ),
    "structured-validation": Row(
        "factory",
        invalid_structured_call,
        StructuredOutputValidationError,
        "Failed to parse structured output for tool 'Answer': Failed to parse data to Answer: ",
        RUNS,
    ),
    "structured-multiple": Row(
        "factory",
        two_structured_calls,
        MultipleStructuredOutputsError,
        "Model incorrectly returned multiple structured responses (Answer, Other) when only one "
        "is expected.",
        RUNS,
    ),
    "native-json": Row(
        "structured_output",
        invalid_native_json,
        StructuredOutputValidationError,
        "Failed to parse structured output for tool 'Answer': Native structured output expected "
        "valid JSON for Answer, but parsing failed: ",
        RUNS,
    ),
    "unsupported-schema": Row(
        "structured_output",
        lambda run: ToolStrategy(42),
        ValueError,
        "Unsupported schema type: <class 'int'>.",
    ),
    # middleware/_shell/execution.py
    "max-output-lines": Row(
        EXECUTION,
        lambda run: HostExecutionPolicy(max_output_lines=0),
        ValueError,
        "max_output_lines must be positive",
    ),
    "host-cpu-time": Row(
        EXECUTION,
        lambda run: HostExecutionPolicy(cpu_time_seconds=0),
        ValueError,
        "cpu_time_seconds must be positive if provided",
    ),
    "host-memory": Row(
        EXECUTION,
        lambda run: HostExecutionPolicy(memory_bytes=-1),
        ValueError,
        "memory_bytes must be positive if provided",
    ),
    "docker-memory": Row(
        EXECUTION,
        lambda run: DockerExecutionPolicy(memory_bytes=0),
        ValueError,
        "memory_bytes must be positive if provided",
    ),
    "docker-cpu-time": Row(
        EXECUTION,
        lambda run: DockerExecutionPolicy(cpu_time_seconds=10),
        RuntimeError,
        "DockerExecutionPolicy does not support cpu_time_seconds",
    ),
    "docker-cpus": Row(
        EXECUTION,
        lambda run: DockerExecutionPolicy(cpus=" "),
        ValueError,
        "cpus must be a non-empty string when provided",
    ),
    "docker-user": Row(
        EXECUTION,
        lambda run: DockerExecutionPolicy(user=""),
        ValueError,
        "user must be a non-empty string when provided",
    ),
    "codex-missing": Row(
        EXECUTION,
        spawn_missing(lambda: CodexSandboxExecutionPolicy(binary="no-such-codex-cli")),
        RuntimeError,
        "Codex sandbox policy requires the 'no-such-codex-cli' CLI to be installed and available "
        "on PATH",
    ),
    "docker-missing": Row(
        EXECUTION,
        spawn_missing(lambda: DockerExecutionPolicy(binary="no-such-docker-cli")),
        RuntimeError,
        "Docker execution policy requires the 'no-such-docker-cli' CLI to be installed and "
        "available on PATH",
    ),
    # middleware/_redaction.py
    "pii-unknown-type": Row(
        "middleware._redaction",
        lambda run: PIIMiddleware("passport"),
        ValueError,
        f"Unknown PII type: passport. Must be one of {BUILTIN_PII} or provide a custom detector.",
    ),
    "pii-unknown-strategy": Row(
        "middleware._redaction",
        pii_run(strategy="shout"),
        ValueError,
        "Unknown redaction strategy: shout",
        RUNS,
    ),
    "pii-block": Row(
        "middleware._redaction",
        pii_run(strategy="block"),
        PIIDetectionError,
        "Detected 1 instance(s) of email in text content",
        RUNS,
    ),
    # middleware/human_in_the_loop.py
    "hitl-interrupt-mode": Row(
        HITL,
        lambda run: HumanInTheLoopMiddleware({"search": True}, interrupt_mode="sometimes"),  # type: ignore[arg-type]
        ValueError,
        "`interrupt_mode` must be 'batched' or 'per_call', got 'sometimes'.",
    ),
    "hitl-no-decisions": Row(
        HITL,
        lambda run: HumanInTheLoopMiddleware({"search": {"allowed_decisions": []}}),
        ValueError,
        "Invalid `interrupt_on` config for tool 'search': `allowed_decisions` must be a "
        "non-empty list of decision types (e.g. ['approve', 'reject']).",
    ),
    "hitl-misspelt-decisions": Row(
        HITL,
        lambda run: HumanInTheLoopMiddleware({"search": {"allowed_decision": ["approve"]}}),  # type: ignore[dict-item]
        ValueError,
        "Invalid `interrupt_on` config for tool 'search': `allowed_decisions` must be a "
        "non-empty list of decision types (e.g. ['approve', 'reject']).",
    ),
    "hitl-decision-not-allowed": Row(
        HITL,
        review([{"type": "respond", "message": "Sunny."}]),
        ValueError,
        "Unexpected human decision: {'type': 'respond', 'message': 'Sunny.'}. Decision type "
        "'respond' is not allowed for tool 'search'. Expected one of ['approve', 'reject'] based "
        "on the tool's configuration.",
        RUNS,
    ),
    "hitl-decision-count": Row(
        HITL,
        review([{"type": "approve"}, {"type": "approve"}]),
        ValueError,
        "Number of human decisions (2) does not match number of hanging tool calls (1).",
        RUNS,
    ),
    "hitl-edit-unknown-tool": Row(
        HITL,
        review(
            [{"type": "edit", "edited_action": {"name": "nope", "args": {}}}],
            allowed=["approve", "edit"],
        ),
        ValueError,
        "Reviewer edited tool call 'call-1' to 'nope', which is not an available tool. "
        "Available tools: search.",
        RUNS,
    ),
    "hitl-call-without-id": Row(
        HITL,
        call_without_id,
        ValueError,
        "Tool call `search` has no ID, so its result can't be matched to it.",
        RUNS,
    ),
    # middleware/model_call_limit.py, tool_call_limit.py
    "model-limit-none": Row(
        "middleware.model_call_limit",
        lambda run: ModelCallLimitMiddleware(),
        ValueError,
        "At least one limit must be specified (thread_limit or run_limit)",
    ),
    "model-limit-exit": Row(
        "middleware.model_call_limit",
        lambda run: ModelCallLimitMiddleware(run_limit=1, exit_behavior="stop"),  # type: ignore[arg-type]
        ValueError,
        "Invalid exit_behavior: stop. Must be 'end' or 'error'",
    ),
    "model-limit-exceeded": Row(
        "middleware.model_call_limit",
        model_calls_over_limit,
        ModelCallLimitExceededError,
        "Model call limits exceeded: run limit (1/1)",
        RUNS,
    ),
    "tool-limit-none": Row(
        "middleware.tool_call_limit",
        lambda run: ToolCallLimitMiddleware(),
        ValueError,
        "At least one limit must be specified (thread_limit or run_limit)",
    ),
    "tool-limit-exit": Row(
        "middleware.tool_call_limit",
        lambda run: ToolCallLimitMiddleware(run_limit=1, exit_behavior="stop"),  # type: ignore[arg-type]
        ValueError,
        "Invalid exit_behavior: 'stop'. Must be one of ('continue', 'error', 'end')",
    ),
    "tool-limit-run-over-thread": Row(
        "middleware.tool_call_limit",
        lambda run: ToolCallLimitMiddleware(thread_limit=3, run_limit=5),
        ValueError,
        "run_limit (5) cannot exceed thread_limit (3)",
    ),
    "tool-limit-exceeded": Row(
        "middleware.tool_call_limit",
        tool_calls_over_limit,
        ToolCallLimitExceededError,
        "Tool call limit reached: run limit exceeded (2/1 calls).",
        RUNS,
    ),
    # middleware/model_router.py, provider_tool_search.py
    "router-no-user-message": Row(
        "middleware.model_router",
        route_without_user_message,
        ValueError,
        "ModelRouterMiddleware requires a HumanMessage in the agent state to route on",
        RUNS,
    ),
    "tool-search-unknown-tool": Row(
        "middleware.provider_tool_search",
        unknown_searchable_tool,
        ValueError,
        "ProviderToolSearchMiddleware: searchable_tools references tool(s) not bound to the "
        "model: nope",
        RUNS,
    ),
    "tool-search-provider": Row(
        "middleware.provider_tool_search",
        deferred_to_scripted_model,
        ValueError,
        "ProviderToolSearchMiddleware requires a provider with server-side tool search, but got "
        "'scriptedchatmodel'; supported providers: anthropic, openai",
        RUNS,
    ),
    # middleware/shell_tool.py
    "shell-empty-command": Row(
        SHELL,
        lambda run: ShellToolMiddleware(shell_command=[]),
        ValueError,
        "Shell command must contain at least one argument",
    ),
    "shell-env-name": Row(
        SHELL,
        lambda run: ShellToolMiddleware(env={1: "one"}),  # type: ignore[dict-item]
        TypeError,
        "Environment variable names must be strings",
    ),
    "shell-startup-fails": Row(
        SHELL,
        shell_run(startup_commands=["false"]),
        RuntimeError,
        "Startup command 'false' failed with exit code 1",
        RUNS,
    ),
    # middleware/summarization.py
    "trigger-type": Row(
        SUMMARY, summarize(trigger=5), TypeError, "Unsupported trigger type: <class 'int'>"
    ),
    "trigger-item-type": Row(
        SUMMARY, summarize(trigger=[5]), TypeError, "Unsupported trigger item type: <class 'int'>"
    ),
    "trigger-empty-clause": Row(
        SUMMARY,
        summarize(trigger={}),
        ValueError,
        "trigger clause must specify at least one of 'tokens', 'messages', 'fraction'",
    ),
    "trigger-metric": Row(
        SUMMARY,
        summarize(trigger={"turns": 3}),
        ValueError,
        "Unsupported trigger metric: 'turns'",
    ),
    "trigger-bool": Row(
        SUMMARY,
        summarize(trigger={"messages": True}),
        ValueError,
        "messages trigger value must be numeric, got True",
    ),
    "trigger-fraction-type": Row(
        SUMMARY,
        summarize(trigger={"fraction": "half"}),
        ValueError,
        "Fraction trigger values must be numeric, got 'half'",
    ),
    "trigger-integer": Row(
        SUMMARY,
        summarize(trigger={"tokens": 1.5}),
        ValueError,
        "tokens trigger values must be integers, got 1.5",
    ),
    "trigger-fraction-range": Row(
        SUMMARY,
        summarize(trigger=("fraction", 1.5)),
        ValueError,
        "Fractional trigger values must be between 0 and 1, got 1.5.",
    ),
    "trigger-threshold": Row(
        SUMMARY,
        summarize(trigger=("tokens", 0)),
        ValueError,
        "trigger thresholds must be greater than 0, got 0.",
    ),
    "trigger-dict-threshold": Row(
        SUMMARY,
        summarize(trigger={"messages": -1}),
        ValueError,
        "trigger thresholds must be greater than 0, got -1.",
    ),
    "trigger-kind": Row(
        SUMMARY,
        summarize(trigger=("turns", 5)),
        ValueError,
        "Unsupported context size type turns for trigger.",
    ),
    "keep-threshold": Row(
        SUMMARY,
        summarize(keep=("messages", 0)),
        ValueError,
        "keep thresholds must be greater than 0, got 0.",
    ),
    "keep-fraction-range": Row(
        SUMMARY,
        summarize(keep=("fraction", 0)),
        ValueError,
        "Fractional keep values must be between 0 and 1, got 0.",
    ),
    "keep-kind": Row(
        SUMMARY,
        summarize(keep=("turns", 2)),
        ValueError,
        "Unsupported context size type turns for keep.",
    ),
    "fraction-without-profile": Row(
        SUMMARY, summarize(trigger=("fraction", 0.5)), ValueError, NEEDS_FRACTION_PROFILE
    ),
    "summarizer-returns": Row(
        SUMMARY,
        summarizer_returning(42),
        TypeError,
        "`summarizer` must return a str, got int.",
        RUNS,
    ),
    # middleware/tool_emulator.py
    "emulator-default-model": Row(
        "middleware.tool_emulator",
        default_emulator,
        ImportError,
        "LLMToolEmulator's default model requires `langchain-anthropic` to be installed.",
    ),
    # middleware/tool_selection.py
    "selector-max-retries": Row(
        SELECTION,
        lambda run: LLMToolSelectorMiddleware(max_retries=-1),
        ValueError,
        "max_retries must be >= 0",
    ),
    "selector-always-include": Row(
        SELECTION,
        select(chose("search"), always_include=["nope"]),
        ValueError,
        "Tools in always_include not found in request: ['nope'].",
        RUNS,
    ),
    "selector-malformed": Row(
        SELECTION,
        select("No idea.", max_retries=0, on_parsing_failure="error"),
        ValueError,
        "LLMToolSelectorMiddleware: selection model returned a malformed response after 0 "
        "retries (expected a dict with a 'tools' list)",
        RUNS,
    ),
    "selector-invalid-tools": Row(
        SELECTION,
        select(chose("nope"), on_parsing_failure="error"),
        ValueError,
        "Model selected invalid tools: ['nope']",
        RUNS,
    ),
    "selector-invalid-fallback": Row(
        SELECTION,
        select("No idea.", max_retries=0, on_parsing_failure=["nope"]),
        ValueError,
        "Model selected invalid tools: ['nope']",
        RUNS,
    ),
    # middleware/types.py
    "request-both-prompts": Row(
        "middleware.types",
        request(system_prompt="Be brief.", system_message=SystemMessage("Be kind.")),
        ValueError,
        "Cannot specify both system_prompt and system_message",
    ),
    "override-both-prompts": Row(
        "middleware.types",
        override(system_prompt="Be brief.", system_message=SystemMessage("Be kind.")),
        ValueError,
        "Cannot specify both system_prompt and system_message",
    ),
    "async-only-wrap-model-call": Row(
        "middleware.types",
        async_only("wrap_model_call"),
        NotImplementedError,
        "Synchronous implementation of wrap_model_call is not available",
        ("invoke",),
    ),
    "async-only-wrap-tool-call": Row(
        "middleware.types",
        async_only("wrap_tool_call"),
        NotImplementedError,
        "Synchronous implementation of wrap_tool_call is not available",
        ("invoke",),
    ),
    # middleware/_retry.py
    "model-retry-max-retries": Row(
        "middleware._retry",
        lambda run: ModelRetryMiddleware(max_retries=-1),
        ValueError,
        "max_retries must be >= 0",
    ),
    "tool-retry-initial-delay": Row(
        "middleware._retry",
        lambda run: ToolRetryMiddleware(initial_delay=-1),
        ValueError,
        "initial_delay must be >= 0",
    ),
    "model-retry-max-delay": Row(
        "middleware._retry",
        lambda run: ModelRetryMiddleware(max_delay=-1),
        ValueError,
        "max_delay must be >= 0",
    ),
    "tool-retry-backoff-factor": Row(
        "middleware._retry",
        lambda run: ToolRetryMiddleware(backoff_factor=-1),
        ValueError,
        "backoff_factor must be >= 0",
    ),
    # middleware/tool_error.py
    "tool-error-requires-a-handler": Row(
        "middleware.tool_error",
        lambda run: ToolErrorMiddleware(),
        ValueError,
        "ToolErrorMiddleware requires",
    ),
    "tool-error-async-only": Row(
        "middleware.tool_error",
        aon_error_only,
        RuntimeError,
        "ToolErrorMiddleware has no sync `on_error`",
        ("invoke",),
    ),
}

# LangChain's own check, which LangChain itself never lets through: its clean-up after the
# failed start raises an AttributeError over it.
GRAPHAGENT_ONLY = {
    "shell-no-pipes": Row(
        SHELL,
        shell_run(execution_policy=NoPipesPolicy()),
        RuntimeError,
        "Failed to initialize shell session pipes",
        RUNS,
    ),
}


def _params() -> list[Any]:
    params = []
    for name, row in {**ROWS, **GRAPHAGENT_ONLY}.items():
        for how in row.runs or ("build",):
            params.append(pytest.param(row, how, id=f"{row.module}:{name}-{how}"))
    return params


@pytest.mark.parametrize(("row", "how"), _params())
def test_langchain_error_type_and_words(row: Row, how: str) -> None:
    run = ENTRY_POINTS.get(how, invoke)
    # LangChain's dynamic-tool message starts with a newline; the words are what matter.
    with pytest.raises(row.error, match=r"^\s*" + re.escape(row.prefix)):
        row.build(run)
