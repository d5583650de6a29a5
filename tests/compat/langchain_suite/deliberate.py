"""The LangChain 1.5.2 agent tests graphagent fails on purpose, each under its row of
docs/migrating-from-langchain.md, and those that fail for a reason outside graphagent."""

from __future__ import annotations

SYNC_HOOKS = "A sync-only hook under `ainvoke` / `astream`: sync hooks serve async runs too"
UNDECLARED_JUMP = "A hook returns a `jump_to` it did not declare: HookReturnError"
COMMANDS = (
    "Two `wrap_model_call` layers return `ExtendedModelResponse` updates of the same plain "
    "field: the seed's rule (inner first, the outer wins), not InvalidUpdateError"
)
FILE_SEARCH = "`FilesystemFileSearchMiddleware` searching: always Python, never ripgrep"
MALFORMED = (
    "A model reply whose tool calls are malformed: answered at once and the model asked again "
    "(LangChain's tests loop on a model replaying the same reply until the ceiling)"
)

DELIBERATE: dict[str, str] = {
    "test_sync_only_middleware_raises_on_async_path": SYNC_HOOKS,
    "test_mixed_middleware_composition_async_path_fails_with_sync_only": SYNC_HOOKS,
    "test_decorator_sync_only_raises_on_async_path": SYNC_HOOKS,
    "test_jump_to_is_ephemeral": UNDECLARED_JUMP,
    "test_non_reducer_key_conflict_raises": COMMANDS,
    "test_command_structured_response_conflicts_with_model_response": COMMANDS,
    "test_create_agent_does_not_patch_model_output": MALFORMED,
    "test_create_agent_answers_invalid_tool_calls_on_next_turn": MALFORMED,
    "test_create_agent_answers_invalid_tool_calls_async": MALFORMED,
    "test_ripgrep_command_uses_literal_pattern": FILE_SEARCH,
}
"""Test function name -> the migration guide's row."""

TOOLS_LABEL = (
    "langgraph >= 1.2.21 labels the tools node (tools<hr/>... = my_tool) in drawings; "
    "LangChain 1.5.2's own snapshots fail the same way on the langgraph graphagent needs"
)

ELSEWHERE: dict[str, str] = {
    "test_create_agent_jump": TOOLS_LABEL,
    "test_simple_agent_graph": TOOLS_LABEL,
    "test_agent_graph_with_jump_to_end_as_after_agent": TOOLS_LABEL,
    "test_agent_graph_without_return_direct_tools": TOOLS_LABEL,
    "test_agent_graph_with_return_direct_tool": TOOLS_LABEL,
    "test_agent_graph_with_mixed_tools": TOOLS_LABEL,
    "test_usage_metadata_trigger": (
        "builds an Anthropic model: needs langchain-anthropic, which the test venv does not install"
    ),
}
"""Test function name -> why it fails outside graphagent."""


def _function(nodeid: str) -> str:
    return nodeid.rpartition("::")[2].partition("[")[0]


def row_of(nodeid: str) -> str | None:
    """The deliberate difference a failing test stands for, if any."""
    return DELIBERATE.get(_function(nodeid))


def elsewhere(nodeid: str) -> str | None:
    """Why a failing test fails outside graphagent, if it does."""
    return ELSEWHERE.get(_function(nodeid))
