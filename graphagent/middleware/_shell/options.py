"""The options of ``ShellToolMiddleware``, checked and put in the form its session takes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from graphagent.errors import MiddlewareError, MiddlewareTypeError
from graphagent.middleware.pii import RedactionRule, ResolvedRedactionRule

__all__ = ["commands", "environment", "inherited", "redaction", "shell_command", "workspace"]


def workspace(value: str | Path | None) -> Path | None:
    if value is None or isinstance(value, Path):
        return value
    if isinstance(value, str) and value:
        return Path(value)
    raise MiddlewareTypeError(
        f"ShellToolMiddleware: workspace_root={value!r} must be a path (str or pathlib.Path), "
        "or None for a temporary directory per run."
    )


def shell_command(value: Sequence[str] | str | None) -> tuple[str, ...]:
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


def environment(env: Mapping[str, Any] | None) -> dict[str, str] | None:
    if env is None:
        return None
    for key in env:
        if not isinstance(key, str):
            raise MiddlewareTypeError(
                f"Environment variable names must be strings; ShellToolMiddleware got {key!r} "
                "in env. Use names like 'HOME'."
            )
    return {key: str(value) for key, value in env.items()}


def inherited(names: Sequence[str] | str) -> tuple[str, ...]:
    names = (names,) if isinstance(names, str) else tuple(names)
    for name in names:
        if not isinstance(name, str) or not name or "=" in name:
            raise MiddlewareTypeError(
                f"ShellToolMiddleware: inherit_env holds {name!r}; pass the names of environment "
                "variables to pass on, e.g. inherit_env=['AWS_PROFILE']."
            )
    return names


def commands(parameter: str, value: Sequence[str] | str | None) -> tuple[str, ...]:
    if value is None:
        return ()
    commands = (value,) if isinstance(value, str) else tuple(value)
    if not all(isinstance(command, str) for command in commands):
        raise MiddlewareTypeError(
            f"ShellToolMiddleware: {parameter}={value!r} must be a command string or a list of "
            "command strings."
        )
    return commands


def redaction(rule: Any) -> ResolvedRedactionRule:
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
