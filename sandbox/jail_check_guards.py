"""Run-time guards for check functions, where the static purity rule (envscaler_core/scenarios/determinism.py)
cannot see what a name will hold.

`dataclasses` writes each annotated field name into source code it executes with the builtins (`__init__`,
`__repr__`, `__eq__`). A class statement can only annotate identifiers, but a check can build a class whose
`__annotations__` holds any string (`type(name, bases, {...})`, a metaclass, Enum's functional API), and a
name that is no identifier is then code: a name with a tab already compiles, and one with line breaks came
close to running statements in review of outside check rt14 (A-F1's family). `make_dataclass` refuses such
names; the decorator did not. And it takes `getattr(cls, name)` as a field's default, so a field named like
an attribute the class inherits hands over that attribute (a clock, `type.__subclasses__`): refused too."""

from __future__ import annotations

import dataclasses
import keyword
from typing import Any


def _is_field_name(name: object) -> bool:
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


def _inherited_attribute(cls: type, name: str) -> str | None:
    """Where `getattr(cls, name)` would find something the class body did not give: `dataclasses` takes that
    as the field's default, so a field named like an attribute of a base or of the metaclass hands the check
    that attribute (outside check rt16-R F1: `utcnow: int` on a `datetime` subclass gave
    `fields(C)[0].default()`, the clock; a field `__subclasses__` on a `type` subclass gave every class
    loaded, `FileIO` among them). A base dataclass's own field is the honest case, and stays allowed."""
    if name.startswith("__"):
        return "a dunder name"
    if name in vars(cls):
        return None
    for base in cls.__mro__[1:]:
        if name in vars(base):
            fields = vars(base).get("__dataclass_fields__", {})
            return None if name in fields else f"an attribute of its base {base.__name__}"
    return f"an attribute of its metaclass {type(cls).__name__}" if hasattr(type(cls), name) else None


def guard_dataclass_field_names() -> None:
    """From here on, `@dataclass` refuses a class annotating a name that is no identifier (TypeError). The
    annotations are copied into a plain dict first and that copy is what `dataclasses` reads, so a mapping
    that answers differently the second time cannot pass the check and then hand over other names."""
    original = dataclasses._process_class  # type: ignore[attr-defined]
    if getattr(original, "guarded", False):
        return

    def process_class(cls: type, *args: Any, **kwargs: Any) -> type:
        annotations = dict(cls.__dict__.get("__annotations__", {}))
        bad = next((n for n in annotations if not _is_field_name(n)), None)
        if bad is not None:
            raise TypeError(f"dataclass field names must be identifiers, not {bad!r:.60}")
        for name in annotations:
            if (where := _inherited_attribute(cls, name)) is not None:
                raise TypeError(f"dataclass field {name!r} is {where}: its default would be that attribute")
        cls.__annotations__ = annotations
        return original(cls, *args, **kwargs)

    process_class.guarded = True  # type: ignore[attr-defined]
    dataclasses._process_class = process_class  # type: ignore[attr-defined]
