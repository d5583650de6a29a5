"""The public surface: every name the four public modules export."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from graphagent import GraphAgentError

PUBLIC_MODULES = (
    "graphagent",
    "graphagent.middleware",
    "graphagent.structured_output",
    "graphagent.testing",
)
PUBLIC = sorted(
    {
        f"{module}.{name}": getattr(importlib.import_module(module), name)
        for module in PUBLIC_MODULES
        for name in importlib.import_module(module).__all__
    }.items()
)


def _is_error(value: Any) -> bool:
    return (
        isinstance(value, type)
        and issubclass(value, BaseException)
        and not issubclass(value, Warning)
    )


ERRORS = [(name, value) for name, value in PUBLIC if _is_error(value)]


@pytest.mark.parametrize(("name", "error"), ERRORS, ids=[name for name, _ in ERRORS])
def test_every_exported_error_is_a_graphagent_error(name: str, error: type) -> None:
    assert issubclass(error, GraphAgentError), f"{name} escapes `except GraphAgentError`"
