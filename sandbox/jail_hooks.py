"""Sandbox hooks that trusted adapter code installs for a class, kept off the class (standard library only).

The worker honours `__sandbox_state__`, `__sandbox_restore__`, `__sandbox_config__` and
`__sandbox_result__` (docs/sandbox.md). A class that defines them itself is trusted code (BFCL's package
classes). An adapter our own code appends to untrusted env code (the EnvScaler importer's type markers,
`envscaler_core/interop/jail_side.py`) registers them here instead of setting them on the env's class, so
the class looks exactly as it does without the adapter (`vars(type(self))` has no hook; a class that
behaved differently when it saw one could tell an audit from EnvScaler's runtime). This module sits next to
the worker in the jail; code in the same process can still import it and look (docs/interop.md, known
limits), and nothing here is a security boundary.
"""

import types

_ADAPTED: dict = {}


def adapt(cls: type, **hooks) -> None:
    """Use `hooks` (any of state, restore, config, result: the hooks without their dunder names) for
    `cls` in this unit."""
    unknown = set(hooks) - {"state", "restore", "config", "result"}
    if unknown:
        raise TypeError(f"unknown sandbox hooks {sorted(unknown)}")
    _ADAPTED[id(cls)] = (cls, dict(hooks))


def hook(cls: type, name: str):
    """The hook `name` ("state", "restore", "config" or "result") for `cls`: registered by an adapter, or
    the class's own `__sandbox_<name>__`; None when there is neither."""
    entry = _ADAPTED.get(id(cls))
    if entry is not None and entry[0] is cls:
        return entry[1].get(name)
    return getattr(cls, f"__sandbox_{name}__", None)


def state_hooks(cls: type):
    """(snapshot, restore) of a class that owns its state representation (Python objects, not JSON):
    `__sandbox_state__(self) -> dict` is the JSON-able state (diffed, committed) and
    `__sandbox_restore__(self, snapshot)` rebuilds the live objects from one; else None."""
    snap, restore = hook(cls, "state"), hook(cls, "restore")  # an adapter's, or the class's
    if snap is None and restore is None:
        return None
    if not (callable(snap) and callable(restore)):
        raise TypeError(f"{cls.__name__} must define both __sandbox_state__ and __sandbox_restore__, or neither")
    return snap, restore


def own_dict_attribute(cls: type) -> type | None:
    """The class in `cls`'s MRO that replaces the `__dict__` descriptor CPython gives it (a property
    there makes `vars(instance)` return whatever it likes, while attributes are still stored in the real
    dictionary), or None. Read through `type.__dict__`, not the class's (perhaps custom) metaclass."""
    for klass in type.__dict__["__mro__"].__get__(cls):
        slot = type.__dict__["__dict__"].__get__(klass).get("__dict__")
        if slot is not None and type(slot) is not types.GetSetDescriptorType:
            return klass
    return None
