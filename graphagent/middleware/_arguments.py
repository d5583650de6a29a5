"""Constructor arguments checked by name, so a misspelt one is named with its likely fix.

Python's own error for an unknown keyword names neither the class (``__init__() got an unexpected
keyword argument 'root'``) nor the argument meant. :func:`checked_arguments` wraps an
``__init__`` so that a call it cannot take raises a ``TypeError`` naming the class, the argument
and the closest valid name, before the constructor runs.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")

_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def checked_arguments(init: Callable[P, None]) -> Callable[P, None]:
    """Wrap ``init`` (an ``__init__``) so that arguments it cannot take get a clear TypeError."""
    signature = inspect.signature(init)
    names = [p.name for p in signature.parameters.values() if p.kind in _NAMED][1:]  # no self

    @functools.wraps(init)
    def checked(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            signature.bind(*args, **kwargs)
        except TypeError as error:
            owner = type(args[0]).__name__
            raise TypeError(_explain(owner, names, kwargs, error)) from None
        init(*args, **kwargs)

    return checked


def _explain(owner: str, names: list[str], given: dict[str, object], error: TypeError) -> str:
    valid = f"its arguments are {', '.join(names)}" if names else "it takes no arguments"
    unknown = next((name for name in given if name not in names), None)
    if unknown is None:
        return f"{owner}(): {error}; {valid}."
    close = difflib.get_close_matches(unknown, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else "."
    return f"{owner}() got an unknown argument {unknown!r}{hint} {valid[0].upper()}{valid[1:]}."


C = TypeVar("C", bound=type)


def checked_class(cls: C) -> C:
    """:func:`checked_arguments` for a class whose ``__init__`` is generated (a dataclass)."""
    init = cls.__dict__["__init__"]
    setattr(cls, "__init__", checked_arguments(init))  # noqa: B010 - replaces the method
    return cls
