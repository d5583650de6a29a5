"""A state field's declared type, out of what does not change its values."""

from __future__ import annotations

from typing import Annotated, Any, NotRequired, Required, get_args, get_origin

from typing_extensions import ReadOnly

_WRAPPERS = (Annotated, Required, NotRequired, ReadOnly)


def bare(annotation: Any) -> Any:
    """``annotation`` without the wrappers that do not change its values: ``Annotated``,
    ``Required``, ``NotRequired``, ``ReadOnly``, however deep they nest."""
    while get_origin(annotation) in _WRAPPERS:
        annotation = get_args(annotation)[0]
    return annotation
