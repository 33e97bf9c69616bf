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
