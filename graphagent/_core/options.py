"""Constructor arguments: refuse one a class does not take, and name the closest it does."""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ParamSpec, TypeVar

from graphagent.errors import UnknownArgumentError

C = TypeVar("C", bound=type)
P = ParamSpec("P")
R = TypeVar("R")

_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_CHECKED = "__refuses_unknown_arguments__"  # set on every checked ``__init__``


def refuse_unknown_arguments(cls: C) -> C:
    """Make ``cls(...)`` refuse a keyword argument its ``__init__`` does not take with an
    :class:`UnknownArgumentError` (a ``TypeError``) naming the class, the argument and the closest
    valid name. Works on plain classes and on dataclasses (decorate above ``@dataclass``).

    A class that takes ``**kwargs`` is left as it is, and so is one that inherits a checked
    ``__init__`` without defining its own (its parent's check already covers it). A subclass with
    an ``__init__`` of its own keeps its keywords: the check runs only on what it passes to
    ``super().__init__``. A class with no ``__init__`` anywhere gets one taking no arguments that,
    like the built-ins' own, calls ``super().__init__()``, so a mixin's ``__init__`` still runs.
    """
    init: Any = cls.__init__  # type: ignore[misc]  # the class's own, or the one it inherits
    if getattr(init, _CHECKED, False):
        return cls  # inherited from a checked class: checking again would check twice
    if init is object.__init__:
        valid: list[str] | None = []  # object.__init__'s (*args, **kwargs) would take anything
    else:
        valid = keyword_names(list(inspect.signature(init).parameters.values())[1:])
    if valid is None:
        return cls
    setattr(cls, "__init__", _checked_init(cls, init, valid))  # noqa: B010 - mypy refuses
    return cls


def refuse_unknown_keywords(func: Callable[P, R]) -> Callable[P, R]:
    """The same check for a function: ``func(misspelt=...)`` raises :class:`UnknownArgumentError`
    naming the function, the argument and the closest keyword it takes."""
    valid = keyword_names(list(inspect.signature(func).parameters.values()))
    if valid is None:
        return func
    known = frozenset(valid)

    @functools.wraps(func)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        _refuse_unknown(f"{func.__name__}()", kwargs, known, valid)
        return func(*args, **kwargs)

    # The same dict, not a copy: changing a default through the wrapper changes the function's.
    checked.__kwdefaults__ = func.__kwdefaults__  # type: ignore[attr-defined]
    return checked


def keyword_names(parameters: Sequence[inspect.Parameter]) -> list[str] | None:
    """The names a call may pass as keywords, in order; ``None`` if it takes any (``**kwargs``)."""
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return [p.name for p in parameters if p.kind in _NAMED]


def unknown_argument_message(owner: str, name: str, valid: Sequence[str]) -> str:
    """Python's wording for the mistake, then the closest valid name and the full list.

    ``owner`` is a class name (the message says ``Owner.__init__()``) or a function's name
    followed by ``()``.
    """
    callee = owner if owner.endswith("()") else f"{owner}.__init__()"
    closest = difflib.get_close_matches(name, valid, n=1, cutoff=0.0)
    hint = f"; did you mean {closest[0]!r}?" if closest else ""
    return (
        f"{callee} got an unexpected keyword argument {name!r}{hint} "
        f"(it takes: {', '.join(valid) or 'no keyword arguments'})"
    )


def _checked_init(cls: type[Any], init: Any, valid: list[str]) -> Any:
    known = frozenset(valid)
    if init is object.__init__:

        def checked_init(self: Any, *args: Any, **kwargs: Any) -> None:
            _refuse_unknown(cls.__name__, kwargs, known, valid)
            if args:
                raise TypeError(f"{cls.__name__}() takes no arguments")
            super(cls, self).__init__()

        self_only = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        checked_init.__signature__ = inspect.Signature([self_only])  # type: ignore[attr-defined]

    else:

        @functools.wraps(init)
        def checked_init(self: Any, *args: Any, **kwargs: Any) -> None:
            _refuse_unknown(cls.__name__, kwargs, known, valid)
            init(self, *args, **kwargs)

    checked_init.__qualname__ = f"{cls.__qualname__}.__init__"
    setattr(checked_init, _CHECKED, True)
    return checked_init


def refuse_unknown_options(owner: str, options: Mapping[str, Any], valid: Sequence[str]) -> None:
    """Raise :class:`UnknownArgumentError` for the first of ``options`` not among ``valid``,
    naming ``owner`` (``"@before_model()"``) and the closest valid name."""
    _refuse_unknown(owner, options, frozenset(valid), valid)


def _refuse_unknown(
    owner: str, kwargs: Mapping[str, Any], known: frozenset[str], valid: Sequence[str]
) -> None:
    for name in kwargs:
        if name not in known:
            raise UnknownArgumentError(unknown_argument_message(owner, name, valid))
