"""``ShellToolMiddleware``: a ``shell`` tool backed by one persistent bash session per run.

The session starts when a run starts (after its startup commands) and ends when the run ends,
on every path: a finished run, an interrupt, an exception, a cancelled task or a stream closed
early. Within the run, commands share the shell: ``cd`` and ``export`` carry over from one call
to the next. How the shell is launched is the execution policy's (``HostExecutionPolicy`` runs
it on this host, with this user's rights).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Literal

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool, ToolException
from langgraph.runtime import Runtime
from langgraph.typing import ContextT
from pydantic import BaseModel, Field

from graphagent._core.bridge import ASYNC, SYNC, Mode, run_sync
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import MiddlewareError, MiddlewareTypeError, ShellToolError
from graphagent.middleware._shell.execution import (
    BaseExecutionPolicy,
    CodexSandboxExecutionPolicy,
    DockerExecutionPolicy,
    HostExecutionPolicy,
)
from graphagent.middleware._shell.session import CommandResult, SessionConfig, ShellSession
from graphagent.middleware.base import AgentMiddleware
from graphagent.middleware.pii import (
    PIIDetectionError,
    PIIMatch,
    RedactionRule,
    ResolvedRedactionRule,
)
from graphagent.state import AgentState, ResponseT

__all__ = [
    "DEFAULT_TOOL_DESCRIPTION",
    "SHELL_TOOL_NAME",
    "BaseExecutionPolicy",
    "CodexSandboxExecutionPolicy",
    "DockerExecutionPolicy",
    "HostExecutionPolicy",
    "ShellToolMiddleware",
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

# The session of each ShellToolMiddleware (by id) in the current run, set by its wrap_agent hook.
_RUN_SESSIONS: ContextVar[Mapping[int, ShellSession]] = ContextVar(
    "graphagent_shell_sessions", default=MappingProxyType({})
)


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
class ShellToolMiddleware(AgentMiddleware[AgentState[ResponseT], ContextT, ResponseT]):
    """Give the agent a ``shell`` tool: a persistent bash session, one per run.

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
            workspace_root=_workspace(workspace_root),
            shell_command=_shell_command(shell_command),
            env=_environment(env),
            startup_commands=_commands("startup_commands", startup_commands),
            shutdown_commands=_commands("shutdown_commands", shutdown_commands),
            inherit_env=_inherited(inherit_env),
        )
        self._redactions = tuple(_redaction(rule) for rule in redaction_rules or ())
        self.tools = [self._make_tool(tool_description or DEFAULT_TOOL_DESCRIPTION)]

    # -- the run: one session from start to end -----------------------------------------------

    def wrap_agent(self, state: Any, runtime: Runtime[ContextT]) -> Generator[None, Any, None]:
        """Start the run's session, and end it whatever ends the run."""
        session = ShellSession.open(self._config)
        token = _RUN_SESSIONS.set({**_RUN_SESSIONS.get(), id(self): session})
        try:
            yield
        finally:
            _RUN_SESSIONS.reset(token)
            session.close()

    async def awrap_agent(
        self, state: Any, runtime: Runtime[ContextT]
    ) -> AsyncGenerator[None, Any]:
        """Async twin of :meth:`wrap_agent`: the session starts and ends in a thread."""
        session = await ASYNC.offload(ShellSession.open, self._config)
        token = _RUN_SESSIONS.set({**_RUN_SESSIONS.get(), id(self): session})
        try:
            yield
        finally:
            _RUN_SESSIONS.reset(token)
            # If this task is cancelled again meanwhile, the thread still ends the session.
            await ASYNC.offload(session.close)

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
        session = _RUN_SESSIONS.get().get(id(self))
        if session is None:
            raise ShellToolError(
                f"The tool '{self.tool_name}' runs only inside a run of an agent built with its "
                "ShellToolMiddleware; pass the middleware to create_agent(middleware=[...]) "
                "rather than its tool to tools=[...]."
            )
        problem = _input_problem(command, restart)
        if problem is not None:
            return self._message(problem, call_id, "error", {})
        if command is None:  # a restart
            try:
                await mode.offload(session.restart)
            except Exception as error:
                raise ToolException(f"Failed to restart shell session: {error}") from error
            return self._message("Shell session restarted.", call_id, "success", {})
        return self._reply(await mode.offload(session.run, command), call_id)

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


# -- options --------------------------------------------------------------------------------------


def _workspace(value: str | Path | None) -> Path | None:
    if value is None or isinstance(value, Path):
        return value
    if isinstance(value, str) and value:
        return Path(value)
    raise MiddlewareTypeError(
        f"ShellToolMiddleware: workspace_root={value!r} must be a path (str or pathlib.Path), "
        "or None for a temporary directory per run."
    )


def _shell_command(value: Sequence[str] | str | None) -> tuple[str, ...]:
    if value is None:
        return ("/bin/bash",)
    command = (value,) if isinstance(value, str) else tuple(value)
    if not command or not all(isinstance(part, str) and part for part in command):
        raise MiddlewareError(
            "Shell command must contain at least one argument; ShellToolMiddleware got "
            f"shell_command={value!r}. Pass a shell path ('/bin/bash') or a list of non-empty "
            "strings."
        )
    return command


def _environment(env: Mapping[str, Any] | None) -> dict[str, str] | None:
    if env is None:
        return None
    for key in env:
        if not isinstance(key, str):
            raise MiddlewareTypeError(
                f"Environment variable names must be strings; ShellToolMiddleware got {key!r} "
                "in env. Use names like 'HOME'."
            )
    return {key: str(value) for key, value in env.items()}


def _inherited(names: Sequence[str] | str) -> tuple[str, ...]:
    names = (names,) if isinstance(names, str) else tuple(names)
    for name in names:
        if not isinstance(name, str) or not name or "=" in name:
            raise MiddlewareTypeError(
                f"ShellToolMiddleware: inherit_env holds {name!r}; pass the names of environment "
                "variables to pass on, e.g. inherit_env=['AWS_PROFILE']."
            )
    return names


def _commands(parameter: str, value: Sequence[str] | str | None) -> tuple[str, ...]:
    if value is None:
        return ()
    commands = (value,) if isinstance(value, str) else tuple(value)
    if not all(isinstance(command, str) for command in commands):
        raise MiddlewareTypeError(
            f"ShellToolMiddleware: {parameter}={value!r} must be a command string or a list of "
            "command strings."
        )
    return commands


def _redaction(rule: Any) -> ResolvedRedactionRule:
    """A rule ready to apply: a ``RedactionRule``, or any object with its fields (LangChain's)."""
    if isinstance(rule, RedactionRule):
        return rule.resolve()
    pii_type: Any = getattr(rule, "pii_type", None)
    strategy: Any = getattr(rule, "strategy", "redact")
    try:
        return RedactionRule(pii_type, strategy, getattr(rule, "detector", None)).resolve()
    except MiddlewareError as error:
        raise MiddlewareError(
            f"ShellToolMiddleware: the redaction rule {rule!r} cannot be used ({error}); pass "
            "RedactionRule(pii_type=..., strategy=..., detector=...) objects."
        ) from None
