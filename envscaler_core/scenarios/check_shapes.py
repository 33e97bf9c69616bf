"""Shapes of check code the purity rule of `determinism.py` judges beyond single names: classes built so the
interpreter reads their behaviour from data, the places where `object` is only a type, and a hashlib
constructor named without being called.

A `match` class pattern with positional sub-patterns reads `getattr(subject, C.__match_args__[i])`, and a
metaclass's `__instancecheck__` decides what it matches: a check that made `C` from a namespace dict
(`type(name, bases, dict)`, `make_dataclass(namespace=)`) or with a metaclass of its own had `getattr` by a
computed name, and reached the clock and a frame's builtins (outside check rt17-A F1). A key can be computed,
so the creation forms are refused, not only the strings; the sandbox judges what they would build at run
time too (`sandbox/jail_check_guards.py`)."""

from __future__ import annotations

import ast
import hashlib
import re

_METACLASSES = frozenset({"type", "ABCMeta", "EnumMeta", "EnumType"})
"""Bases that make a class statement a metaclass (a subclass of `type`)."""
_HOOK = re.compile(r"__\w+__\Z")
_PLAIN_DUNDERS = frozenset({"__main__", "__name__", "__module__", "__qualname__", "__doc__"})
_TYPE_TAKERS = {"make_dataclass": 1, "NamedTuple": 1, "namedtuple": None, "TypedDict": 1, "cast": 0, "NewType": 1}
"""Calls that take types as data and never call them, with the position of the types: `make_dataclass` and
`NamedTuple` a list of `(name, type)` pairs, `TypedDict` a dict of types, `cast` and `NewType` one type."""


def class_breaches(tree: ast.AST) -> list[str]:
    """A metaclass (`metaclass=`, a class deriving from `type`), a class from a namespace (`type` with three
    arguments or as a value, `namespace=`), and a string naming a hook the interpreter reads (`'__match_args__'`)."""
    found: list[str] = []
    called_once = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call) and len(node.args) == 1
                   and not node.keywords and not isinstance(node.args[0], ast.Starred)} | names_as_types(tree, "type")
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            if any(k.arg == "metaclass" for k in node.keywords) or any(
                    _last(base) in _METACLASSES for base in node.bases):
                found.append(f"class {node.name} (a metaclass: its hooks run inside the interpreter; derive from abc.ABC)")
        elif isinstance(node, ast.Name) and node.id == "type" and isinstance(node.ctx, ast.Load) and id(node) not in called_once:
            found.append("type(name, bases, dict) or type as a value (a class built from a namespace)")
        elif isinstance(node, ast.Call) and any(k.arg == "namespace" for k in node.keywords):
            found.append(f"{_last(node.func) or '...'}(namespace=...) (a class built from a namespace)")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _HOOK.match(node.value) \
                and node.value not in _PLAIN_DUNDERS:
            found.append(f"{node.value!r} as a string (a name the interpreter reads)")
    return found


def names_as_types(tree: ast.AST, name: str = "object") -> set[int]:
    """The `name` names (`object`, `type`) that stand for the type, not a value whose repr is an address: in an annotation, a
    class's bases, the types `isinstance`/`issubclass` test (rt16-R F4), a subscript (`Dict[str, object]`)
    and the type positions of `make_dataclass`, `NamedTuple`, `TypedDict`, `cast` (rt17-A F3). A default
    factory (`field(default_factory=object)`) or a key function may call it: judged as `object()`."""
    places: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            places.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            places.append(node.returns)
        elif isinstance(node, ast.ClassDef):
            places.extend(node.bases)
        elif isinstance(node, ast.Subscript):
            places.append(node.slice)
        elif isinstance(node, ast.Call) and _last(node.func) in ("isinstance", "issubclass") and len(node.args) == 2:
            places.append(node.args[1])
        elif isinstance(node, ast.Call) and _last(node.func) in _TYPE_TAKERS:
            places.extend(_type_positions(node, _TYPE_TAKERS[_last(node.func)]))
    return {id(n) for place in places for n in _types_in(place, name)}


def _type_positions(call: ast.Call, at: int | None) -> list[ast.AST]:
    """The type arguments of a call in `_TYPE_TAKERS`: a bare type, the second item of each pair, a dict's
    values, or a keyword's value (`NamedTuple('R', lent=object)`)."""
    found: list[ast.AST] = [k.value for k in call.keywords if k.arg not in (None, "default_factory", "default")]
    arg = call.args[at] if at is not None and len(call.args) > at else None
    if isinstance(arg, ast.ListComp | ast.GeneratorExp):  # `[(k, object) for k in keys]`
        arg = ast.List(elts=[arg.elt])
    if isinstance(arg, ast.List | ast.Tuple):
        found.extend(item.elts[1] for item in arg.elts if isinstance(item, ast.Tuple) and len(item.elts) >= 2)
    elif isinstance(arg, ast.Dict):
        found.extend(arg.values)
    elif arg is not None and at == 0:
        found.append(arg)
    return [place for place in found if place is not None]


def _types_in(node: ast.AST, name: str) -> list[ast.Name]:
    """`name` names in a type expression: itself, or inside a subscript, tuple or `|` union of types; a call
    there (`Dict[str, f(object)]`) is not a type, and its names are judged as values."""
    if isinstance(node, ast.Name):
        return [node] if node.id == name else []
    if isinstance(node, ast.Subscript):
        return _types_in(node.slice, name)
    if isinstance(node, ast.Tuple | ast.List):
        return [n for elt in node.elts for n in _types_in(elt, name)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _types_in(node.left, name) + _types_in(node.right, name)
    return []


def uncalled_hashlib(tree: ast.AST, modules: dict[str, str]) -> list[str]:
    """A hashlib constructor named but not called (`hashlib.sha256.__name__`, `repr(sha256)`): its name and type
    follow the host's OpenSSL build (`openssl_sha256` or `sha256`; rt17-B F1); `hashlib.sha256(b).hexdigest()`
    does not."""
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    names = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module == "hashlib"
             and not node.level for a in node.names if callable(getattr(hashlib, a.name, None))}
    found = []
    for node in ast.walk(tree):
        if id(node) in called:
            continue
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and modules.get(node.value.id) == "hashlib" \
                and callable(getattr(hashlib, node.attr, None)):
            found.append(f"{node.value.id}.{node.attr} not called (its name and type follow the host's OpenSSL build)")
        elif isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
            found.append(f"{node.id} not called (its name and type follow the host's OpenSSL build)")
    return found


def _last(node: ast.AST) -> str:
    """The last part of a dotted name (`abc.ABCMeta` -> ABCMeta), or ""."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
