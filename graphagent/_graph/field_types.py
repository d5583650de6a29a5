"""The declared types a hook's update must fit, for plain fields whose type says it plainly.

A field declared as ``int``, ``str``, ``float``, ``bool``, ``list``, ``dict`` (or ``list[...]``,
``dict[...]``, checked as the container only) or a ``Literal`` is checked against what a node
hook returns for it; any other type is left alone, and so is a field with a reducer (an update is
the reducer's input, not the field's value). ``None`` always passes: hooks clear fields with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin

from langgraph.channels import LastValue

from graphagent._core.annotations import bare
from graphagent.errors import HookReturnError
from graphagent.state import StateField, show_type

_PLAIN = (int, str, float, bool, list, dict)


@dataclass(frozen=True, slots=True)
class FieldType:
    """What one field's values must be: instances of ``classes``, or one of ``values``."""

    shown: str
    owner: str
    classes: tuple[type, ...] = ()
    values: tuple[Any, ...] = ()

    def fits(self, value: Any) -> bool:
        if value is None:
            return True
        if self.values:
            return any(value == allowed and type(value) is type(allowed) for allowed in self.values)
        return isinstance(value, self.classes)


def field_types(
    fields: Mapping[str, StateField], channels: Mapping[str, Any]
) -> Mapping[str, FieldType]:
    """The checkable plain fields of a state, by name."""
    found: dict[str, FieldType] = {}
    for name, field in fields.items():
        if type(channels.get(name)) is not LastValue:
            continue
        checked = _field_type(field)
        if checked is not None:
            found[name] = checked
    return found


def refuse_misfits(label: str, update: Mapping[str, Any], types: Mapping[str, FieldType]) -> None:
    """Raise :class:`HookReturnError` for the first value of ``update`` its field cannot take."""
    for key, value in update.items():
        expected = types.get(key)
        if expected is not None and not expected.fits(value):
            raise HookReturnError(
                f"{label} returned {key}={value!r} ({type(value).__name__}), but the state field "
                f"'{key}' is declared as {expected.shown} by '{expected.owner}'; return a value "
                "of that type, or declare the field with the type the hook writes."
            )


def _field_type(field: StateField) -> FieldType | None:
    base = bare(field.annotation)
    shown = show_type(field.annotation)
    if get_origin(base) is Literal:
        return FieldType(shown, field.owner, values=get_args(base))
    container = get_origin(base) if get_origin(base) in (list, dict) else base
    if container not in _PLAIN:
        return None
    classes: tuple[type, ...] = (int, float) if container is float else (container,)
    return FieldType(shown, field.owner, classes=classes)
