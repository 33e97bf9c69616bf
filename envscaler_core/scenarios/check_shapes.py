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
    found += [f"type(x) as a value in line {call.lineno} (its result may only be compared or tested: type(P)(name,"
              " bases, dict) builds a class)" for call in _type_of_results(tree, _parents(tree)) if call is not None]
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
    return found + positional_class_patterns(tree)


SELF_MATCHING = frozenset({"bool", "bytearray", "bytes", "dict", "float", "frozenset", "int", "list", "set", "str",
                           "tuple"})
"""The builtins whose one positional sub-pattern matches the subject itself (`case int(n)`): no name is read."""


def positional_class_patterns(tree: ast.AST) -> list[str]:
    """Each `case C(p, ...)` whose class is not a self-matching builtin named by a name the check never binds.
    A positional sub-pattern reads `getattr(subject, C.__match_args__[i])`, a name taken from data on the
    class, and each outside check found another way to put data there after the class was judged (a class
    built by `type` reached through `typing`, an ABC registration before `@dataclass`, `copy`'s `setattr`:
    rt19-R3 F1-F3, the clock and a frame's builtins). A keyword sub-pattern names its attribute in the code,
    where the rule judges it like any other attribute name."""
    bound = bound_names(tree)
    return [f"case {dotted(node.cls) or '...'}(p) in line {node.lineno} (a positional sub-pattern reads a name from"
            f" data; write case {dotted(node.cls) or '...'}(x=p))"
            for node in ast.walk(tree) if isinstance(node, ast.MatchClass) and node.patterns and not (
                isinstance(node.cls, ast.Name) and node.cls.id in SELF_MATCHING and node.cls.id not in bound)]


def dotted(node: ast.AST) -> str:
    """`a.b.C` as written, or "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return ""



_TESTS = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot, ast.In, ast.NotIn)
"""The comparisons the result of `type(x)` may take part in."""


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _type_of_results(tree: ast.AST, parents: dict[int, ast.AST]) -> list[ast.Call | None]:
    """Each `type(x)` call whose result is called, stored, passed or returned: `type(P)` is `type` itself for any
    plain class, and `type(P)(name, bases, dict)` built a class from a namespace (outside re-check rt18-R1 F1).
    Compared (`==`, `!=`, `is`, `is not`, `in`) with a type (a name the check never assigns, a dotted name,
    another `type(y)`, None, or a literal tuple of these), or tested (`isinstance`'s types, `issubclass` against
    such a type), or followed by a dunder (refused as such), it is fine: an object the check made could take
    it in its reflected `__eq__`, `__contains__` or `__subclasscheck__`."""
    assigned = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)} | {
        a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
        for a in n.posonlyargs + n.args + n.kwonlyargs + [n.vararg, n.kwarg] if a is not None}
    found: list[ast.Call | None] = []
    for node in ast.walk(tree):
        if not _is_type_of(node):
            continue
        at, parent = node, parents.get(id(node))
        if isinstance(parent, ast.Tuple | ast.List | ast.Set):
            at, parent = parent, parents.get(id(parent))
        if isinstance(parent, ast.Compare) and all(isinstance(op, _TESTS) for op in parent.ops) and all(
                _type_like(side, assigned) for side in [parent.left, *parent.comparators] if side is not at):
            continue
        if isinstance(parent, ast.Call) and _last(parent.func) in ("isinstance", "issubclass") \
                and len(parent.args) == 2 and at in parent.args and not parent.keywords:
            if (_last(parent.func) == "isinstance" and at is parent.args[1]) or _type_like(
                    parent.args[1 - parent.args.index(at)], assigned):
                continue
        if isinstance(parent, ast.Attribute) and parent.attr.startswith("__") and at is node:
            continue
        found.append(node)
    return found


def _is_type_of(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type" \
        and len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred)


def _type_like(node: ast.AST, assigned: set[str]) -> bool:
    """A type named where no object of the check can stand in for it: a name the check never assigns (a
    builtin, an import, a class statement's name), a dotted name, `type(y)`, a constant, or a literal of these."""
    if isinstance(node, ast.Constant) or _is_type_of(node):
        return True
    if isinstance(node, ast.Name):
        return node.id not in assigned
    if isinstance(node, ast.Attribute):
        return not node.attr.startswith("_") and _type_like(node.value, assigned)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(_type_like(elt, assigned) for elt in node.elts)
    return False


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


def bound_names(tree: ast.AST) -> set[str]:
    """Every name the code binds, anywhere: assigned, a parameter, defined, imported, caught, matched or
    declared global."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return names


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
