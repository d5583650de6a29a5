"""Constructor arguments: refuse one a class does not take, and name the closest it does."""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Sequence
from typing import Any, TypeVar

from graphagent.errors import UnknownArgumentError

C = TypeVar("C", bound=type)

_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def refuse_unknown_arguments(cls: C) -> C:
    """Make ``cls(...)`` refuse a keyword argument its ``__init__`` does not take with an
    :class:`UnknownArgumentError` (a ``TypeError``) naming the class, the argument and the closest
    valid name. Works on plain classes and on dataclasses (decorate above ``@dataclass``)."""
    init: Any = cls.__init__  # type: ignore[misc]  # the class's own, or the one it inherits
    parameters = list(inspect.signature(init).parameters.values())[1:]  # without self
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return cls  # it takes any keyword
    valid = [p.name for p in parameters if p.kind in _NAMED]
    known = frozenset(valid)

    @functools.wraps(init)
    def checked_init(self: Any, *args: Any, **kwargs: Any) -> None:
        for name in kwargs:
            if name not in known:
                raise UnknownArgumentError(unknown_argument_message(cls.__name__, name, valid))
        init(self, *args, **kwargs)

    setattr(cls, "__init__", checked_init)  # noqa: B010 - mypy refuses assigning a method
    return cls


def unknown_argument_message(owner: str, name: str, valid: Sequence[str]) -> str:
    """Python's wording for the mistake, then the closest valid name and the full list."""
    closest = difflib.get_close_matches(name, valid, n=1, cutoff=0.0)
    hint = f"; did you mean {closest[0]!r}?" if closest else ""
    return (
        f"{owner}.__init__() got an unexpected keyword argument {name!r}{hint} "
        f"(it takes: {', '.join(valid) or 'no keyword arguments'})"
    )
