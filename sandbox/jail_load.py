"""Loading a class on a config exactly as EnvScaler's runtime does (jail side, standard library only;
copied next to worker.py).

EnvScaler's `init_env_instance` builds the instance from one deep copy of the config and then sets every
top-level key of THAT SAME copy, as the constructor left it, as an attribute. A constructor that consumes
or rewrites keys of the dict it is given therefore changes what EnvScaler sets; the host can only judge
whether the state "loaded" if it knows what the constructor did to the copy, which is reported here.
"""

import copy

import jail_hooks

MISSING = object()


def _equal(a: object, b: object) -> bool:
    """`a == b` as the class's own values answer it; a raise is no answer (not equal)."""
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - the env's own __eq__ may raise anything
        return False


def construct(cls: type, init: dict | None) -> tuple[object, dict[str, list[str]]]:
    """EnvScaler's runtime, step for step: one deep copy of the config, `cls(copy)` (`cls({})` when there is
    none), `cls()` if that raises TypeError, then every top-level key of THE SAME copy set as an attribute.
    Classes in EnvScaler's own style declare empty containers and rely on that setattr; self-loading
    classes get the very objects they were built from, so an index made in `__init__`
    (`self.by_email = {u["email"]: u for u in ...}`) still points into the live containers, as in the
    reference (a second copy for the setattr broke that: writes through the index never reached the
    state). A stored `init_config` aliases the live containers too, as in the reference. A class's
    `__sandbox_config__(config) -> config` (the EnvScaler importer's type-marker restorer) turns the copy
    into the values both steps get.

    Returns the instance and what the host needs to judge the load against what EnvScaler would hold,
    which is the copy *as the constructor left it*, not the scenario's config: "loaded", the keys whose
    attribute is the object set (the constructor may have changed it in place through the shared copy,
    sorting a list or filling defaults: its own normalisation); "consumed", the keys the constructor took
    out of the copy (pop, del, clear), which EnvScaler never sets; "rewritten", the keys whose value the
    constructor replaced in the copy (or added) and whose attribute then kept neither that object nor an
    equal value: a property or `__setattr__` swallowed what EnvScaler sets. A key rewritten and kept
    (equal) is "loaded": the scenario's value is no reference for it."""
    config = copy.deepcopy(init or {})
    prepare = jail_hooks.hook(cls, "config")
    if callable(prepare):
        config = prepare(config)
    given = dict(config)  # the very objects the constructor receives: which did it replace or take out?
    try:
        inst = cls(config)
    except TypeError as first:
        try:
            inst = cls()
        except TypeError:
            raise first from None
    for key, value in config.items():
        setattr(inst, key, value)
    held: dict[str, list[str]] = {"loaded": [], "consumed": [], "rewritten": []}
    for key, value in config.items():
        if not isinstance(key, str):
            continue
        now = getattr(inst, key, MISSING)
        if now is value:
            held["loaded"].append(key)
        elif given.get(key, MISSING) is not value:  # the constructor put this value there itself
            held["loaded" if _equal(now, value) else "rewritten"].append(key)
    held["consumed"] = [k for k in given if isinstance(k, str) and k not in config]
    return inst, held
