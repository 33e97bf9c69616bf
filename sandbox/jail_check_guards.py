"""Run-time guards for check functions, where the static purity rule (envscaler_core/scenarios/determinism.py)
cannot see what a name will hold.

`dataclasses` writes each annotated field name into source code it executes with the builtins (`__init__`,
`__repr__`, `__eq__`). A class statement can only annotate identifiers, but a check can build a class whose
`__annotations__` holds any string (`type(name, bases, {...})`, a metaclass, Enum's functional API), and a
name that is no identifier is then code: a name with a tab already compiles, and one with line breaks came
close to running statements in review of outside check rt14 (A-F1's family). `make_dataclass` refuses such
names; the decorator did not. And it takes `getattr(cls, name)` as a field's default, so a field named like
an attribute the class inherits hands over that attribute (a clock, `type.__subclasses__`): refused too.

A `match` class pattern reads `getattr(subject, name)` for each name in `__match_args__`, and `astuple`/
`asdict`/`replace` for each field, inherited or not: a name that resolves to a foreign base's attribute
(`now` on a `datetime` subclass) is the clock again, and a `Field` renamed after the class was made is any
name at all (outside checks rt17 A-F1, A-F2). So every class a check makes is judged when it is made, its
Field objects are frozen from then on, and a check makes no metaclass, no class from a namespace
(`make_dataclass(namespace=)`) and no Enum member with a `_` name (the functional API sets dunders).

`copy` writes by data: a `__reduce__` returns (callable, args, state, listitems, dictitems), and
`copy._reconstruct` does `__dict__.update(state)`, `setattr` for slot state and `y[key] = value` on whatever
the callable returned. Outside re-check rt20-R6 rewrote `dataclasses`' own globals (F2), set a class's
`__dataclass_fields__` (F1) and an instance's (F3), and got an unfrozen copy of a Field. So `copy` writes no
state into a module, a module's namespace, a class or a Field, and no attribute by a name that is no
identifier or a dunder (`guard_copy`); honest copies (dataclasses, containers, numbers, dates) never do."""

from __future__ import annotations

import abc
import builtins
import dataclasses
import enum
import keyword
import copy
import sys
import types
from typing import Any

from jail_check_audit import trusted_file

_FROZEN: dict[int, dataclasses.Field] = {}
"""The Field objects of every dataclass made so far, by id (held, so an id is never reused)."""
_OWN: dict[int, type] = {}
"""The classes the check's own class statements made (their attributes are check code, judged statically)."""


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


def _foreign_attribute(cls: type, name: str) -> str | None:
    """Where `getattr(instance, name)` finds an attribute no class of the check gave and no dataclass or
    namedtuple declared as its field: the first class along the MRO that holds the name decides."""
    for base in cls.__mro__:
        if name in vars(base):
            if id(base) in _OWN or name in vars(base).get("__dataclass_fields__", {}) or name in vars(base).get("_fields", ()):
                return None
            return f"an attribute of its base {base.__name__}"
    return None


def _judge_class(cls: type) -> None:
    """Refuse a class whose fields or `__match_args__` read a foreign base's attribute by name (TypeError)."""
    fields = getattr(cls, "__dataclass_fields__", {})
    for key, field in fields.items():
        if type(field) is dataclasses.Field and field.name != key:
            raise TypeError(f"dataclass field {key!r:.60} is named {field.name!r:.60}: a reader would read that name")
    names = list(fields) + list(getattr(cls, "__match_args__", ()))
    hook = next((base for base in cls.__mro__ if "__subclasshook__" in vars(base)), object)
    if hasattr(cls, "__match_args__") and id(hook) in _OWN:
        raise TypeError(f"class {cls.__name__:.40} has __match_args__ and a __subclasshook__ of its own: a match"
                        " would read those names from any subject the hook accepts")
    for name in names:
        if type(name) is not str or name.startswith("__"):
            raise TypeError(f"dataclass field or match name {name!r:.60} is no plain name")
        if (where := _foreign_attribute(cls, name)) is not None:
            raise TypeError(f"dataclass field {name!r} is {where}: a match or astuple would read that attribute")


def _refuse_frozen(field: dataclasses.Field, name: str, *value: Any) -> None:
    if id(field) in _FROZEN:
        raise TypeError(f"dataclass fields are frozen once the class is made (a check set {name!r:.40})")
    (object.__setattr__ if value else object.__delattr__)(field, name, *value)


def _freeze(cls: type) -> None:
    for field in getattr(cls, "__dataclass_fields__", {}).values():
        _FROZEN[id(field)] = field


def guard_check_classes() -> None:
    """From here on, in this check's unit: every class a check's class statement makes is judged (no subclass
    of `type`, no field or match name over a foreign attribute); `make_dataclass` takes no namespace; an
    Enum's functional API takes member names that are identifiers without a leading `_`; Field objects are
    frozen once `@dataclass` returned. `@dataclass` itself is guarded by `guard_dataclass_field_names`."""
    guard_dataclass_field_names()
    if getattr(builtins.__build_class__, "guarded", False):
        return
    build_class, make_dataclass, create = builtins.__build_class__, dataclasses.make_dataclass, enum.EnumType._create_

    def guarded_build_class(func: Any, name: str, *bases: Any, **kwargs: Any) -> Any:
        cls = build_class(func, name, *bases, **kwargs)
        if getattr(getattr(func, "__code__", None), "co_filename", None) == "<check>" and isinstance(cls, type):
            if issubclass(cls, type):
                raise TypeError(f"class {name:.40} is a metaclass: a check makes none (its hooks run in the interpreter)")
            _OWN[id(cls)] = cls
            _judge_class(cls)
        return cls

    def guarded_make_dataclass(*args: Any, namespace: Any = None, **kwargs: Any) -> type:
        if namespace is not None:
            raise TypeError("make_dataclass(namespace=...) in a check: a namespace sets names the interpreter reads")
        return make_dataclass(*args, **kwargs)

    def guarded_create(cls: Any, class_name: Any, names: Any, *args: Any, **kwargs: Any) -> Any:
        return create(cls, class_name, _member_names(names), *args, **kwargs)

    guard_metaclasses()
    guard_field_readers()
    guard_copy()
    guarded_build_class.guarded = True  # type: ignore[attr-defined]
    builtins.__build_class__ = guarded_build_class
    dataclasses.make_dataclass = guarded_make_dataclass
    enum.EnumType._create_ = guarded_create  # type: ignore[method-assign]
    dataclasses.Field.__setattr__ = _refuse_frozen  # type: ignore[method-assign,assignment]
    dataclasses.Field.__delattr__ = _refuse_frozen  # type: ignore[method-assign,assignment]


_FIELD_READERS = ("fields", "astuple", "asdict", "replace")
"""The `dataclasses` functions that read `__dataclass_fields__` and then each field's attribute by name."""


def guard_field_readers() -> None:
    """From here on, `dataclasses.fields`/`astuple`/`asdict`/`replace` judge the class they read first, as
    when a class is made (TypeError): a class built by `type(name, bases, dict)`, which a check reached at run
    time (`typing.get_origin(typing.Type)`, a field annotated `type`: outside re-check rt19-R3 F1), carries any
    `__dataclass_fields__`, and `astuple` of a `datetime` subclass with a field `now` read the clock. They read
    `getattr(obj, '__dataclass_fields__')`, which an instance's own `__dict__` answers first (rt20-R6 F3): an
    instance whose fields are not its class's is refused. The
    module-level names are replaced, so `from dataclasses import astuple` after this and `dataclasses`' own
    recursion (`astuple` calls `fields`) take the guarded ones."""
    for name in _FIELD_READERS:
        read = getattr(dataclasses, name)
        if getattr(read, "guarded", False):
            continue

        def guarded(obj: Any, *args: Any, _read: Any = read, **kwargs: Any) -> Any:
            cls = obj if isinstance(obj, type) else type(obj)
            if cls is not obj and getattr(obj, "__dataclass_fields__", None) is not getattr(cls, "__dataclass_fields__", None):
                raise TypeError(f"a {cls.__name__:.40} instance holds __dataclass_fields__ of its own: a dataclass helper"
                                " would read those names from it")
            if hasattr(cls, "__dataclass_fields__"):
                _judge_class(cls)
            return _read(obj, *args, **kwargs)

        guarded.guarded = True  # type: ignore[attr-defined]
        guarded.__name__ = guarded.__qualname__ = name
        guarded.__doc__ = read.__doc__
        setattr(dataclasses, name, guarded)


def _metaclasses() -> list[type]:
    """Every metaclass loaded in this process (a subclass of `type`, found by walking `type.__subclasses__`)
    whose attributes can be set: `abc.ABCMeta`, `enum.EnumType`, `typing.NamedTupleMeta`, ..., not by a list."""
    found, todo = [], list(type.__subclasses__(type))
    while todo:
        meta = todo.pop()
        if meta not in found:
            found.append(meta)
            todo.extend(type.__subclasses__(meta))
    return [meta for meta in found if meta.__flags__ & (1 << 9)]  # Py_TPFLAGS_HEAPTYPE: a class, not C's own


def guard_metaclasses() -> None:
    """From here on, a metaclass called by a check's own code (or by any code outside the standard library and
    the jail) makes no class (TypeError): `abc.ABCMeta('C', (datetime,), {computed '__match_args__': ('now',)})`
    built a class from a namespace that no class statement judged, and `case C(f)` read the clock; with
    `C.register(...)` any attribute of any object (outside re-check rt18-R1 F1). A class statement, an Enum's
    functional API and `NamedTuple` call the metaclass from the guard or the standard library, and go on.
    `type` itself is C's own and cannot be wrapped, and a check can reach it at run time (outside re-check
    rt19-R3 F1: `typing.get_origin(typing.Type)`, now refused statically; a field annotated `type`): what a
    class it builds from data could do is closed where names are read as data, statically for a `match`
    (envscaler_core/scenarios/check_shapes.py `positional_class_patterns`) and here for `dataclasses`
    (`guard_field_readers`)."""
    for meta in _metaclasses():
        made = meta.__new__
        if getattr(made, "guarded", False):
            continue

        def guarded_new(mcls: Any, *args: Any, _made: Any = made, **kwargs: Any) -> Any:
            if not trusted_file(sys._getframe(1).f_code.co_filename):
                raise TypeError(f"a check makes a class by a class statement only, not by calling {mcls.__name__:.40}")
            return _made(mcls, *args, **kwargs)

        guarded_new.guarded = True  # type: ignore[attr-defined]
        try:
            meta.__new__ = staticmethod(guarded_new)  # type: ignore[assignment]
        except (TypeError, AttributeError):
            continue
    register = abc.ABCMeta.register

    def guarded_register(cls: Any, subclass: Any) -> Any:
        if hasattr(cls, "__match_args__"):
            raise TypeError(f"{cls.__name__:.40} has __match_args__: a check registers no class to it")
        return register(cls, subclass)

    abc.ABCMeta.register = guarded_register  # type: ignore[method-assign]


def _member_names(names: Any) -> Any:
    """The functional API's names as a plain string or list of pairs, each an identifier without a leading `_`
    (TypeError otherwise): `Enum('E', [('__match_args__', ('now',))], type=datetime)` made `case E(f)` read
    the clock. Copied once, so a mapping cannot answer differently when enum reads it."""
    if isinstance(names, str):
        listed: list[Any] = names.replace(",", " ").split()
    else:
        listed = list(names.items()) if hasattr(names, "items") else list(names)
    for item in listed:
        name = item if type(item) is str else tuple(item)[0]
        if type(name) is not str or not name.isidentifier() or name.startswith("_"):
            raise TypeError(f"Enum member name {name!r:.60} in a check must be an identifier without a leading '_'")
    return names if isinstance(names, str) else [item if type(item) is str else tuple(item) for item in listed]


def _judge_inherited(key: Any, field: Any) -> None:
    """A base's field as `@dataclass` will inherit it: a real Field whose name is an identifier equal to its
    key (TypeError otherwise). `dataclasses` compiles inherited names into `__init__`/`__eq__` as it does its
    own: a Field renamed to code and set into a base's `__dataclass_fields__` ran with the builtins in the
    subclass's `__eq__` (outside re-check rt20-R6 F1)."""
    name = getattr(field, "name", None) if type(field) is dataclasses.Field else field
    if not (_is_field_name(key) and type(name) is str and name == key and not key.startswith("__")):
        raise TypeError(f"inherited dataclass field {key!r:.60} is named {name!r:.60}: a dataclass compiles field"
                        " names into code, so each must be an identifier equal to its key")


def guard_dataclass_field_names() -> None:
    """From here on, `@dataclass` refuses a class annotating a name that is no identifier, or inheriting a
    field that is no identifier equal to its key (TypeError), before it generates any code. The
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
        for base in cls.__mro__[-1:0:-1]:  # the bases' fields, as `_process_class` reads them
            for key, field in getattr(base, "__dataclass_fields__", {}).items():
                _judge_inherited(key, field)
        cls.__annotations__ = annotations
        made = original(cls, *args, **kwargs)
        _judge_class(made)
        _freeze(made)
        return made

    process_class.guarded = True  # type: ignore[attr-defined]
    dataclasses._process_class = process_class  # type: ignore[attr-defined]


def guard_copy() -> None:
    """From here on, `copy.copy`/`copy.deepcopy` (both call `copy._reconstruct` by its module global) make
    the object as before, then write its state, slot state, list and dict items only where a copy honestly
    writes them (TypeError otherwise, `_copy_target`, `_attribute_names`): the state a `__reduce__` returns is
    data a check chose, and was written into `dataclasses`' globals and a class's `__dataclass_fields__`
    (outside re-check rt20-R6 F1, F2, F3). The writes follow `copy._reconstruct` step by step, on a plain
    snapshot of each mapping, so what was judged is what is written."""
    reconstruct = copy._reconstruct  # type: ignore[attr-defined]
    if getattr(reconstruct, "guarded", False):
        return

    def guarded_reconstruct(x: Any, memo: Any, func: Any, args: Any, state: Any = None, listiter: Any = None,
                            dictiter: Any = None, *, deepcopy: Any = copy.deepcopy) -> Any:
        made = reconstruct(x, memo, func, args, deepcopy=deepcopy)  # the object, in `memo` before its state
        if state is None and listiter is None and dictiter is None:
            return made
        if (what := _copy_target(made)) is not None:
            raise TypeError(f"copy writes no state into {what}: a check's __reduce__ chose both")
        deep = memo is not None
        if state is not None:
            state = deepcopy(state, memo) if deep else state
            if hasattr(made, "__setstate__"):
                made.__setstate__(state)
            else:
                slots = None
                if isinstance(state, tuple) and len(state) == 2:
                    state, slots = state
                if state is not None:
                    made.__dict__.update(_attribute_names(state))
                if slots is not None:
                    for key, value in _attribute_names(slots).items():
                        setattr(made, key, value)
        for item in listiter if listiter is not None else ():
            made.append(deepcopy(item, memo) if deep else item)
        for key, value in dictiter if dictiter is not None else ():
            if deep:
                key, value = deepcopy(key, memo), deepcopy(value, memo)
            made[key] = value
        return made

    guarded_reconstruct.guarded = True  # type: ignore[attr-defined]
    copy._reconstruct = guarded_reconstruct  # type: ignore[attr-defined]


def _copy_target(made: Any) -> str | None:
    """What `made` is, if `copy` must write nothing into it: a module or a module's namespace (its globals),
    a class (what every instance and `@dataclass` read), a dataclass Field (frozen once its class is made)."""
    if isinstance(made, types.ModuleType):
        return "a module"
    if isinstance(made, type):
        return "a class"
    if isinstance(made, dataclasses.Field):
        return "a dataclass Field"
    if isinstance(made, dict) and any(getattr(module, "__dict__", None) is made for module in list(sys.modules.values())):
        return "a module's namespace"
    return None


def _attribute_names(state: Any) -> dict[str, Any]:
    """`state` as a plain dict whose keys are identifiers and no dunder (TypeError otherwise): a dunder set by
    data is `__class__`, `__dataclass_fields__`, `__match_args__`; a key that is no `str` is nothing a copy
    makes."""
    plain = dict(state)
    for key in plain:
        if type(key) is not str or not key.isidentifier() or key.startswith("__"):
            raise TypeError(f"copy sets no attribute named {key!r:.60}: only an identifier, and no dunder")
    return plain
