"""``ShellToolMiddleware``: a ``shell`` tool backed by one persistent bash session per run.

As in LangChain, ``before_agent`` starts the session (and runs its startup commands) and
``after_agent`` runs the shutdown commands and ends it. A ``wrap_agent`` hook holds the run's
session, so it ends on every other path too: an interrupt, an exception, a cancelled task or a
stream closed early. Within the run, commands share the shell: ``cd`` and ``export`` carry over
from one call to the next. How the shell is launched is the execution policy's
(``HostExecutionPolicy`` runs it on this host, with this user's rights).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Literal, NotRequired

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool, ToolException
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.runtime import Runtime
from langgraph.typing import ContextT
from pydantic import BaseModel, Field

from graphagent._core.bridge import ASYNC, SYNC, Mode, run_sync
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import MiddlewareError, MiddlewareTypeError, ShellToolError
from graphagent.middleware._shell import options
from graphagent.middleware._shell.execution import (
    BaseExecutionPolicy,
    CodexSandboxExecutionPolicy,
    DockerExecutionPolicy,
    HostExecutionPolicy,
)
from graphagent.middleware._shell.session import (
    CommandResult,
    RunSlot,
    SessionConfig,
    ShellSession,
)
from graphagent.middleware.base import AgentMiddleware
from graphagent.middleware.pii import (
    PIIDetectionError,
    PIIMatch,
    RedactionRule,
)
from graphagent.state import AgentState, PrivateStateAttr, ResponseT

__all__ = [
    "DEFAULT_TOOL_DESCRIPTION",
    "SHELL_TOOL_NAME",
    "BaseExecutionPolicy",
    "CodexSandboxExecutionPolicy",
    "DockerExecutionPolicy",
    "HostExecutionPolicy",
    "ShellSession",
    "ShellToolMiddleware",
    "ShellToolState",
]

SHELL_TOOL_NAME = "shell"

DEFAULT_TOOL_DESCRIPTION = (
    "Run a command in a persistent bash session: the working directory and the variables you "
    "set carry over from one call to the next. Check where you are (`pwd`, `ls`) before acting, "
    "prefer absolute paths, and quote paths that contain spaces. Join several commands with "
    "`&&` or `;` rather than newlines, and `cd` only when you must. Long output is cut short, "
    "and a command that runs past its time limit is stopped and the session restarted. Pass "
    "`restart: true` instead of a command to start a fresh session."
)

# The session slot of each ShellToolMiddleware (by id) in the current run, set by its wrap_agent.
_RUN_SESSIONS: ContextVar[Mapping[int, RunSlot]] = ContextVar(
    "graphagent_shell_sessions", default=MappingProxyType({})
)


class ShellToolState(AgentState[ResponseT]):
    """The state of an agent with ``ShellToolMiddleware``.

    ``shell_session_resources`` carries the session from ``before_agent`` to ``after_agent`` when
    those hooks are called by hand, outside a run (as LangChain's tests drive them). In a run the
    session stays with the run and this field is not written. It is never checkpointed, nor part
    of the agent's input or output.
    """

    shell_session_resources: NotRequired[
        Annotated[ShellSession | None, UntrackedValue, PrivateStateAttr]
    ]


class _ShellInput(BaseModel):
    """Run one command, or restart the session."""

    command: str | None = Field(default=None, description="The shell command to run.")
    restart: bool | None = Field(
        default=None, description="Restart the shell session instead of running a command."
    )
    tool_call_id: Annotated[str, InjectedToolCallId]


def _input_problem(command: str | None, restart: bool | None) -> str | None:
    """What is wrong with a call's arguments, for the model to read (checked here rather than by
    the schema: langgraph drops a schema-wide check's message on its way to the model)."""
    if restart and command is not None:
        return (
            "Specify only one of 'command' or 'restart': restart the session in one call, then "
            "run the command in the next."
        )
    if not restart and not (command and command.strip()):
        return (
            "Shell tool requires either 'command' or 'restart': pass the command to run, or "
            "restart=true for a fresh session."
        )
    return None


@refuse_unknown_arguments
class ShellToolMiddleware(AgentMiddleware[ShellToolState[ResponseT], ContextT, ResponseT]):
    """Give the agent a ``shell`` tool: a persistent bash session, one per run.

    ``before_agent`` starts the session and ``after_agent`` ends it; a run that ends any other
    way (an error, an interrupt, a cancelled task) ends its session too.

    Args:
        workspace_root: The session's working directory, created if missing. ``None`` (the
            default): a new temporary directory per run, removed when the run ends.
        startup_commands: Commands (one string, or a list) run when a session starts (at the
            start of each run, and again whenever the shell is restarted). One failing fails
            the start.
        shutdown_commands: Commands (one string, or a list) run when the run ends, before the
            shell exits (failures are logged, not raised). Skipped when the run is cancelled
            mid-command.
        execution_policy: How the shell is launched and limited (timeouts, output caps).
            Default: ``HostExecutionPolicy()``, which runs commands on this host.
        redaction_rules: ``RedactionRule`` objects (or LangChain's) applied to each command's
            output before the model sees it. They hide data from the model; they do not stop a
            command from sending it elsewhere.
        tool_description: The tool's description for the model.
        tool_name: The tool's name (default ``"shell"``).
        shell_command: The shell to launch (a path, or a command with arguments); default
            ``/bin/bash``.
        env: The shell's environment variables (values are turned into strings). ``None``: a
            minimal environment with the host and Codex policies (``PATH``, ``HOME`` and
            ``LANG`` from this process, and ``PWD``); none with Docker. This process's other
            variables (API keys, cloud credentials) never reach the shell unless named here or
            in ``inherit_env``.
        inherit_env: Names of this process's environment variables the shell also gets, when
            they are set (an allow-list: ``["AWS_PROFILE", "GIT_AUTHOR_NAME"]``); ``env`` wins
            for a name both give.

    Raises:
        MiddlewareError: An option of the wrong type (an ``execution_policy`` that is not a
            policy, a command, variable name, ``inherit_env`` name or ``tool_description`` that
            is not a str), an
            empty ``workspace_root``, ``tool_name`` or ``shell_command``, or a redaction rule
            that cannot be used.
    """

    state_schema = ShellToolState

    def __init__(
        self,
        workspace_root: str | Path | None = None,
        *,
        startup_commands: Sequence[str] | str | None = None,
        shutdown_commands: Sequence[str] | str | None = None,
        execution_policy: BaseExecutionPolicy | None = None,
        redaction_rules: Sequence[RedactionRule | Any] | None = None,
        tool_description: str | None = None,
        tool_name: str = SHELL_TOOL_NAME,
        shell_command: Sequence[str] | str | None = None,
        env: Mapping[str, Any] | None = None,
        inherit_env: Sequence[str] | str = (),
    ) -> None:
        super().__init__()
        policy = HostExecutionPolicy() if execution_policy is None else execution_policy
        if not isinstance(policy, BaseExecutionPolicy):
            raise MiddlewareTypeError(
                f"ShellToolMiddleware: execution_policy={policy!r} is not an execution policy; "
                "pass HostExecutionPolicy(), DockerExecutionPolicy() or "
                "CodexSandboxExecutionPolicy() (or a BaseExecutionPolicy subclass)."
            )
        if not isinstance(tool_name, str) or not tool_name:
            raise MiddlewareError(
                f"ShellToolMiddleware: tool_name={tool_name!r} must be a non-empty string."
            )
        self.execution_policy = policy
        self.tool_name = tool_name
        self._config = SessionConfig(
            policy=policy,
            workspace_root=options.workspace(workspace_root),
            shell_command=options.shell_command(shell_command),
            env=options.environment(env),
            startup_commands=options.commands("startup_commands", startup_commands),
            shutdown_commands=options.commands("shutdown_commands", shutdown_commands),
            inherit_env=options.inherited(inherit_env),
        )
        self._redactions = tuple(options.redaction(rule) for rule in redaction_rules or ())
        self.tools = [self._make_tool(tool_description or DEFAULT_TOOL_DESCRIPTION)]

    # -- the run: one session from start to end -----------------------------------------------

    def wrap_agent(self, state: Any, runtime: Runtime[ContextT]) -> Generator[None, Any, None]:
        """Hold the run's session, and end it whatever ends the run."""
        slot = RunSlot(self._config)
        token = _RUN_SESSIONS.set({**_RUN_SESSIONS.get(), id(self): slot})
        try:
            yield
        finally:
            _RUN_SESSIONS.reset(token)
            slot.close()

    async def awrap_agent(
        self, state: Any, runtime: Runtime[ContextT]
    ) -> AsyncGenerator[None, Any]:
        """Async twin of :meth:`wrap_agent`: the session ends in a thread."""
        slot = RunSlot(self._config)
        token = _RUN_SESSIONS.set({**_RUN_SESSIONS.get(), id(self): slot})
        try:
            yield
        finally:
            _RUN_SESSIONS.reset(token)
            # If this task is cancelled again meanwhile, the thread still ends the session.
            await ASYNC.offload(slot.close)

    def before_agent(
        self, state: ShellToolState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Start the session and run the startup commands (``ShellToolError``, a
        ``RuntimeError``, when one fails)."""
        return run_sync(self._start(SYNC, state), f"{self.name}.before_agent")

    async def abefore_agent(
        self, state: ShellToolState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`before_agent`: the session starts in a thread."""
        return await self._start(ASYNC, state)

    def after_agent(self, state: ShellToolState[ResponseT], runtime: Runtime[ContextT]) -> None:
        """Run the shutdown commands (a failure is logged) and end the session."""
        run_sync(self._end(SYNC, state), f"{self.name}.after_agent")

    async def aafter_agent(
        self, state: ShellToolState[ResponseT], runtime: Runtime[ContextT]
    ) -> None:
        """Async twin of :meth:`after_agent`: the session ends in a thread."""
        await self._end(ASYNC, state)

    async def _start(self, mode: Mode, state: ShellToolState[ResponseT]) -> dict[str, Any] | None:
        slot = _RUN_SESSIONS.get().get(id(self))
        if slot is not None:  # in a run: the session stays with it
            await mode.offload(slot.session)
            return None
        existing = state.get("shell_session_resources")
        if isinstance(existing, ShellSession) and not existing.closed:
            return {"shell_session_resources": existing}
        return {"shell_session_resources": await mode.offload(self._config.open)}

    async def _end(self, mode: Mode, state: ShellToolState[ResponseT]) -> None:
        slot = _RUN_SESSIONS.get().get(id(self))
        if slot is not None:
            await mode.offload(slot.release)
            return
        session = state.get("shell_session_resources")
        if isinstance(session, ShellSession):
            await mode.offload(session.close)

    # -- the tool -------------------------------------------------------------------------------

    def _make_tool(self, description: str) -> BaseTool:
        if not isinstance(description, str):
            raise MiddlewareTypeError(
                f"ShellToolMiddleware: tool_description must be a string, got {description!r}."
            )
        return StructuredTool.from_function(
            func=self._shell,
            coroutine=self._ashell,
            name=self.tool_name,
            description=description,
            args_schema=_ShellInput,
        )

    def _shell(
        self, tool_call_id: str, command: str | None = None, restart: bool | None = None
    ) -> ToolMessage:
        where = f"the tool '{self.tool_name}'"
        return run_sync(self._answer(SYNC, tool_call_id, command, restart), where)

    async def _ashell(
        self, tool_call_id: str, command: str | None = None, restart: bool | None = None
    ) -> ToolMessage:
        return await self._answer(ASYNC, tool_call_id, command, restart)

    async def _answer(
        self, mode: Mode, call_id: str, command: str | None, restart: bool | None
    ) -> ToolMessage:
        slot = _RUN_SESSIONS.get().get(id(self))
        if slot is None:
            raise ShellToolError(
                f"The tool '{self.tool_name}' runs only inside a run of an agent built with its "
                "ShellToolMiddleware; pass the middleware to create_agent(middleware=[...]) "
                "rather than its tool to tools=[...]."
            )
        problem = _input_problem(command, restart)
        if problem is not None:
            return self._message(problem, call_id, "error", {})
        session = await mode.offload(slot.session)  # a run resumed after an interrupt opens one
        if command is None:  # a restart
            try:
                await mode.offload(session.restart)
            except Exception as error:
                raise ToolException(f"Failed to restart shell session: {error}") from error
            return self._message("Shell session restarted.", call_id, "success", {})
        return self._reply(await mode.offload(session.execute, command), call_id)

    def _reply(self, result: CommandResult, call_id: str) -> ToolMessage:
        policy = self.execution_policy
        if result.timed_out:
            text = f"Error: Command timed out after {policy.command_timeout:.1f} seconds."
            return self._message(text, call_id, "error", {"timed_out": True, "exit_code": None})
        output, matches, blocked = self._redacted(result.output)
        if blocked is not None:
            found = {"timed_out": False, "exit_code": result.exit_code, "matches": matches}
            return self._message(f"Output blocked: detected {blocked}.", call_id, "error", found)
        text = output or "<no output>"
        if result.truncated_by_lines:
            text = (
                f"{text.rstrip()}\n\n... Output truncated at {policy.max_output_lines} lines "
                f"(observed {result.total_lines})."
            )
        if result.truncated_by_bytes:
            text = (
                f"{text.rstrip()}\n\n... Output truncated at {policy.max_output_bytes} bytes "
                f"(observed {result.total_bytes})."
            )
        if result.dropped_bytes:
            text = (
                f"{text.rstrip()}\n\n... Dropped {result.dropped_bytes} bytes that background "
                "jobs of earlier commands printed (redirect a job's output to a file to read it)."
            )
        failed = result.exit_code not in (0, None)
        if failed:
            text = f"{text.rstrip()}\n\nExit code: {result.exit_code}"
        artifact = {
            "timed_out": False,
            "exit_code": result.exit_code,
            "truncated_by_lines": result.truncated_by_lines,
            "truncated_by_bytes": result.truncated_by_bytes,
            "total_lines": result.total_lines,
            "total_bytes": result.total_bytes,
            "dropped_background_bytes": result.dropped_bytes,
            "redaction_matches": matches,
        }
        return self._message(text, call_id, "error" if failed else "success", artifact)

    def _redacted(self, text: str) -> tuple[str, dict[str, list[PIIMatch]], str | None]:
        """``text`` with every rule applied, the matches by type, and the type that blocks it."""
        found: dict[str, list[PIIMatch]] = {}
        for rule in self._redactions:
            try:
                text, matches = rule.apply(text)
            except PIIDetectionError as blocked:
                return text, {rule.pii_type: blocked.matches}, rule.pii_type
            if matches:
                found.setdefault(rule.pii_type, []).extend(matches)
        return text, found, None

    def _message(
        self,
        text: str,
        call_id: str,
        status: Literal["success", "error"],
        artifact: dict[str, Any],
    ) -> ToolMessage:
        return ToolMessage(
            text, tool_call_id=call_id, name=self.tool_name, status=status, artifact=artifact
        )
