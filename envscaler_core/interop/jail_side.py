"""EnvScaler's type markers, on both sides of the sandbox wall (standard library only).

EnvScaler's files carry sets, tuples, datetimes and Decimals as `{"__type__": ...}` markers, which its
`read_file` restores before any code sees them; our sandbox only moves JSON. One marker is ours, not
EnvScaler's: `{"__type__": "float", "value": "inf"|"-inf"|"nan"}` carries a non-finite float a class keeps
(`self.lowest_bid = float("inf")`), which JSON cannot hold; EnvScaler's runtime keeps it in memory. So the importer sends
marker JSON and this module's source text runs *inside* the env's or the check's own isolation unit
(appended by `interop/sandboxed.py`), where it restores markers on the way in and writes them on the
way out. The host imports the same module for the same helpers, so there is one implementation.

Nothing here is a security boundary: it runs next to untrusted code in that code's own unit, and the
unit can only affect its own result (docs/sandbox.md).
"""

import datetime
import decimal
import math

NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


class UnsupportedValue(TypeError):
    """A value EnvScaler's type markers cannot carry (its own save would fall back to jsonpickle)."""


def restore_markers(obj):
    """EnvScaler's `restore_after_load`, returning `obj` itself when nothing inside it is a marker
    (so aliasing between attributes survives and marker-free values cost no copy)."""
    if isinstance(obj, dict):
        kind = obj.get("__type__")
        if kind is None:
            return _restored_items(obj)
        items = obj.get("items")
        if kind == "set" and isinstance(items, list):
            return {restore_markers(i) for i in items}
        if kind == "tuple" and isinstance(items, list):
            return tuple(restore_markers(i) for i in items)
        if kind == "datetime" and isinstance(obj.get("value"), str):
            return datetime.datetime.fromisoformat(obj["value"])
        if kind == "decimal" and isinstance(obj.get("value"), str):
            return decimal.Decimal(obj["value"])
        if kind == "float" and obj.get("value") in NON_FINITE:
            return NON_FINITE[obj["value"]]
        if kind == "key" and "value" in obj:
            return restore_markers(obj["value"])
        if kind == "dict" and isinstance(items, list):
            out = {}
            for key, value in items:
                if isinstance(key, dict) and key.get("__type__") == "key":
                    key = restore_markers(key.get("value"))
                out[key] = restore_markers(value)
            return out
        return obj  # an unknown marker stays a dict, as in EnvScaler
    if isinstance(obj, list):
        new = [restore_markers(i) for i in obj]
        return obj if all(a is b for a, b in zip(new, obj)) else new
    return obj


def _restored_items(obj):
    new = {k: restore_markers(v) for k, v in obj.items()}
    return obj if all(new[k] is v for k, v in obj.items()) else new


def _ordered(items):
    """Set members in a stable order when they are comparable (marker output must not depend on hashing)."""
    try:
        return sorted(items)
    except TypeError:
        return sorted(items, key=repr)


def save_markers(obj):
    """Inverse of `restore_markers`, lossless: non-string keys (and a real `__type__` key) use the
    dict marker, so an int key stays an int (EnvScaler's own save turns it into a string)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        # JSON has no inf/nan; EnvScaler's runtime keeps them in memory (`self.lowest_bid = float("inf")`)
        # and its json.dump would write the non-standard `Infinity`/`NaN`. Ours is a marker of our own.
        return {"__type__": "float", "value": "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")}
    if obj is None or isinstance(obj, (str, bool, int, float)):
        return obj
    if isinstance(obj, list):
        return [save_markers(i) for i in obj]
    if isinstance(obj, dict):
        if "__type__" not in obj and all(isinstance(k, str) for k in obj):
            return {k: save_markers(v) for k, v in obj.items()}
        pairs = [[k if isinstance(k, str) else {"__type__": "key", "value": save_markers(k)}, save_markers(v)]
                 for k, v in obj.items()]
        return {"__type__": "dict", "items": pairs}
    if isinstance(obj, (set, frozenset)):
        return {"__type__": "set", "items": [save_markers(i) for i in _ordered(obj)]}
    if isinstance(obj, tuple):
        return {"__type__": "tuple", "items": [save_markers(i) for i in obj]}
    if isinstance(obj, datetime.datetime):
        return {"__type__": "datetime", "value": obj.isoformat()}
    if isinstance(obj, decimal.Decimal):
        return {"__type__": "decimal", "value": str(obj)}
    raise UnsupportedValue(f"a {type(obj).__name__} value cannot be written with EnvScaler's type markers")


def install(module_globals, class_name, public_only=False):
    """Make the env's own class marker-aware in the sandbox.

    No subclass, no per-instance flag, nothing on the class and no extra global: the class is the env's
    own object, so `type(self) is Cls`, `self.__class__.counter += 1`, `super(Cls, self)`, `vars(self)`
    and `vars(type(self))` are exactly as in EnvScaler (a class that looked for our hooks there could
    tell an audit from EnvScaler's runtime: red team sandbox-3 F5). The sandbox gets four hooks for the
    class through its `jail_hooks` registry (docs/sandbox.md): `config` restores markers in the config
    before the sandbox constructs the instance and
    sets every key from that same object (so attributes alias what the constructor built from them),
    `state` is EnvScaler's state written as marker JSON (`_private` attributes included),
    `restore` rebuilds the instance from such a state (roll back, restart), and
    `result` writes a tool result's sets, tuples, datetimes and Decimals as markers (EnvScaler
    shows the agent `str()` of the result; our wire is JSON, and a set must not fail the call). An absent
    class gets nothing: the sandbox then says the class is missing. `public_only`: the state is the
    public attributes only and a restore keeps the private ones, as the sandbox's own default does."""
    base = module_globals.get(class_name)
    if not isinstance(base, type):
        return
    def shown(key):  # EnvScaler's `get_state_info` keeps every attribute but dunders
        return not key.startswith("_") if public_only else not (key.startswith("__") and key.endswith("__"))

    def snapshot(self):
        return save_markers({k: v for k, v in vars(self).items() if shown(k)})

    def restore(self, state):
        attrs = vars(self)
        for key in [k for k in attrs if shown(k)]:
            del attrs[key]
        attrs.update(restore_markers(state))

    import jail_hooks  # the worker's registry, next to it in the jail (never imported on the host)

    # result: a set/datetime/Decimal in a tool's result, written as a marker
    jail_hooks.adapt(base, config=restore_markers, result=save_markers, state=snapshot, restore=restore)


def marker_check(source, initial_state, builtins_module):
    """EnvScaler's `run_check_function` on restored states: `exec` the check with globals
    `__builtins__` (the dict, as the unit got it) and `initial_state`, and give `check_func` the
    restored final state."""
    namespace = {"__builtins__": builtins_module, "initial_state": restore_markers(initial_state)}
    exec(compile(source, "<check>", "exec", dont_inherit=True), namespace)
    inner = namespace.get("check_func")
    if not callable(inner):
        raise LookupError("Function 'check_func' not found.")

    def check_func(final_state):
        return inner(restore_markers(final_state))

    return check_func
