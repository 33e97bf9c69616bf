"""Module-level type aliases and quoted annotations, read as the types they stand for (never evaluated).

EnvScaler's step6 maps an annotation through a small table of type names: a name it cannot map (`SKU` where
the module says `SKU = str`, `UserId = NewType("UserId", str)`, a `str` Enum, `Opt[int]` where
`from typing import Optional as Opt`) becomes `{"type": "object"}`, and a string nested in another type
(`Optional["int"]`, `List["Item"]`) becomes a string. Its runtime never checks arguments, so those schemas
cost it nothing; our sandbox checks every call against the schema, so kept, they refused the strings and
integers the methods take (outside check 11, C-F4, B-F5, C-F2). Here an annotation is rewritten to the type
expression it stands for before `synth.tool_schema.annotation_schema` reads it:

* `Name = <type expression>` (or `Name: TypeAlias = ...`) at module level: a name, `typing.X`, a subscript
  or `X | Y` (a constant, a literal container or a call is data, not a type);
* `Name = NewType("Name", <type>)`: its base type;
* `class Name(str, Enum)` / `(int, Enum)`, `IntEnum`, `StrEnum`: `str` or `int` (its members' values are what
  a call gives; the member names are not enforced, EnvScaler enforces nothing); a `Flag` or `IntFlag`: `int`
  (a call may combine members, `R | W` is 3, rt18-R2 F4);
* a plain `class Name(Enum)`: `Literal[<its members' values>]` (strings -> a string `enum`, mixed -> the union
  of their types; all `auto()` -> 1, 2, ...), or `Any` when a value is no plain constant. A call gives a value,
  never a member: EnvScaler's runtime passes the agent's JSON (`status="closed"`), so the member's value is
  all a method is ever given (outside check rt17-C F1: kept as step6's object, `status="closed"` was refused);
  a value may be a signed number (`LOW = -1`);
* a functional Enum, `Name = Enum("Name", "A B")` (or a list of names: 1, 2, ...; `(name, value)` pairs or a
  dict: the values; `IntEnum(...)`, `Flag(...)`: `int`), as its class form; members not written out: `Any`
  (rt18-R2 F4: kept as step6's object, every call was refused);
* `Name = TypeVar("Name", ...)`: any of its constraints, its bound, or `Any` (also a `ParamSpec` or
  `TypeVarTuple`); a `class Name(Protocol)`: `Any` (a structural type any JSON value may meet; rt19-R4 F3);
* `from <module> import X as Y`: `X`;
* a string anywhere in the annotation: the expression it holds, parsed by the one AST parser.

A name the module binds more than once is left alone (which binding a method sees depends on order).

One class's annotations are read by one `ClassReading`: an annotation written alike twice and a quoted part
are read once, and all the expansion the class's parameters use is bounded together (rt17-B F4: the budget
was per annotation, so a 9.6 K-character quoted alias was parsed and expanded again for each of 5,000
parameters naming it, 16 s of host CPU for a 70 KB class)."""

from __future__ import annotations

import ast
from typing import Any

from pydantic import BaseModel, ConfigDict

from envscaler_core import pyast
from envscaler_core.synth.tool_schema import literal_value

_ENUMS = {"Enum": None, "IntEnum": "int", "StrEnum": "str", "IntFlag": "int", "Flag": "int"}
"""Enum bases and the type a call gives for their members (None: the members' values). A `Flag` takes any
integer: a call may combine its members (`R | W` is 3), which no list of member values holds."""
_TYPE_VARS = frozenset({"TypeVar", "ParamSpec", "TypeVarTuple"})
_MAX_DEPTH = 16  # alias of alias of ...: a cycle (`A = B`, `B = A`) stops here and reads as no alias
_MAX_NODES = 10_000
"""Nodes one annotation may expand to: aliases of wide tuples of aliases (`A = Tuple[B, B, B, B]`, `B = ...`)
grow by their width at every level, 4**16 nodes within the depth bound; past this the rest stays unexpanded.
A quoted part longer than the nodes left is not parsed (it reads as no constraint)."""
CLASS_NODES = 100_000
"""Nodes the annotations of one class may expand to in all, ten annotations at the bound above: each
parameter whose reading an alias or a quoted part changed spends the nodes its reading has, as its schema,
note and checks walk them again; past this such parameters are not read (`ClassReading.read`)."""


class Reading(BaseModel):
    """An annotation as read here: the expression it stands for, and whether an alias or a quoted part
    changed it (each then named in the import notes)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    expr: Any  # ast.expr
    aliased: bool
    quoted: bool
    nodes: int = 0  # nodes the reading walked: what using it costs
    cut: bool = False  # the budget ran out before the whole annotation was read


def _is_type_expr(node: ast.expr) -> bool:
    if isinstance(node, ast.Name | ast.Attribute | ast.Subscript):
        return True
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr)


def _enum_type(cls: ast.ClassDef) -> ast.expr | None:
    """The type a call gives for an Enum subclass (`str`/`int` for a mixin, its members' values for a plain
    `Enum`), or None for a class that is no Enum."""
    names = [_base_name(b) for b in cls.bases]
    enums = [n for n in names if n in _ENUMS]
    if not enums:
        return None
    base = next((n for n in names if n in ("str", "int")), None) or _ENUMS[enums[0]]
    return ast.Name(id=base, ctx=ast.Load()) if base else _member_values(cls)


def _member_values(cls: ast.ClassDef) -> ast.expr:
    """`Literal[v1, v2, ...]` of a plain Enum's member values (`NAME = <constant>`; all `auto()`: 1, 2, ...),
    `Any` when a value is anything else or there is no member (nothing to say what a call may give)."""
    values: list[ast.expr] = []
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        else:
            continue  # a method, a docstring, a nested class: no member
        if isinstance(target, ast.Name) and not target.id.startswith("_"):  # `_ignore_` and the like are none
            values.append(value)
    autos = [isinstance(v, ast.Call) and _base_name(v.func) == "auto" and not v.args for v in values]
    if values and all(autos):
        values = [ast.Constant(value=i) for i in range(1, len(values) + 1)]
    return _literal_of(values)


def _literal_of(values: list[ast.expr]) -> ast.expr:
    """`Literal[v1, v2, ...]` of an Enum's member values, each a constant or a signed number (`-1`), an alias
    member's repeated value once; `Any` when a value is anything else (a tuple, a call) or there is none."""
    read = [literal_value(v) for v in values]
    if not values or any(r is None or type(r) not in (str, int, float, bool) for r in read):
        return ast.Name(id="Any", ctx=ast.Load())
    values = list({(type(r), r): v for r, v in zip(read, values, strict=True)}.values())
    members = ast.Tuple(elts=values, ctx=ast.Load()) if len(values) > 1 else values[0]
    return ast.Subscript(value=ast.Name(id="Literal", ctx=ast.Load()), slice=members, ctx=ast.Load())


def _functional_enum(call: ast.Call) -> ast.expr | None:
    """The type a call gives for a functional Enum (`Enum("Func", "OPEN CLOSED")`), as for its class form:
    `int`/`str` for an `IntEnum`, `IntFlag`, `Flag`, `StrEnum` or a `type=` mixin, else its members' values
    (names in a string or a list: 1, 2, ... from `start`; `(name, value)` pairs or a dict: the values);
    `Any` when the members are not written out (`Enum("Odd", names())`); None for a call that is no Enum."""
    kind = _base_name(call.func)
    if kind not in _ENUMS:
        return None
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    mixin = _base_name(keywords["type"]) if "type" in keywords else ""
    base = mixin if mixin in ("str", "int") else _ENUMS[kind]
    if base:
        return ast.Name(id=base, ctx=ast.Load())
    names = call.args[1] if len(call.args) > 1 else keywords.get("names")
    start = literal_value(keywords["start"]) if "start" in keywords else 1
    values: list[ast.expr] = []
    if isinstance(names, ast.Constant) and isinstance(names.value, str) and type(start) is int:
        count = len(names.value.replace(",", " ").split())
        values = [ast.Constant(value=start + n) for n in range(count)]
    elif isinstance(names, ast.List | ast.Tuple) and type(start) is int:
        if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in names.elts):
            values = [ast.Constant(value=start + n) for n in range(len(names.elts))]
        elif all(isinstance(e, ast.Tuple | ast.List) and len(e.elts) == 2 for e in names.elts):
            values = [e.elts[1] for e in names.elts]  # type: ignore[attr-defined]
    elif isinstance(names, ast.Dict):
        values = list(names.values)
    return _literal_of(values)


def _type_var(call: ast.Call) -> ast.expr:
    """What a `TypeVar` stands for in a parameter: any of its constraints (`TypeVar("K", str, int)` ->
    `Union[str, int]`), its bound (`bound=int`, also quoted), or `Any`; a `ParamSpec` or `TypeVarTuple`:
    `Any`. EnvScaler's runtime passes any JSON value to the method; the TypeVar is all that says which
    (rt19-R4 F3: `T`, `bound=int` and `(str, int)` kept step6's object and refused every call it runs)."""
    if _base_name(call.func) != "TypeVar":
        return ast.Name(id="Any", ctx=ast.Load())
    bound = next((k.value for k in call.keywords if k.arg == "bound"), None)
    if len(call.args) > 2:
        members = ast.Tuple(elts=list(call.args[1:]), ctx=ast.Load())
        return ast.Subscript(value=ast.Name(id="Union", ctx=ast.Load()), slice=members, ctx=ast.Load())
    return bound if bound is not None else ast.Name(id="Any", ctx=ast.Load())


def _protocol(cls: ast.ClassDef) -> ast.expr | None:
    """`Any` for a `Protocol` class (also `Protocol[T]`): a structural type, met by whichever JSON value has
    its members (a list has `__len__`, a dict no attribute `name`), which no schema of ours tells apart; None
    for any other class (a TypedDict, a dataclass: an object, as step6 writes it)."""
    bases = [_base_name(b.value if isinstance(b, ast.Subscript) else b) for b in cls.bases]
    return ast.Name(id="Any", ctx=ast.Load()) if "Protocol" in bases else None


def _base_name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def type_aliases(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level names that stand for a type, each with the expression it stands for."""
    found: dict[str, ast.expr] = {}
    bound: dict[str, int] = {}
    for stmt in tree.body:
        pairs: list[tuple[str, ast.expr | None]] = []
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            value = stmt.value
            if isinstance(value, ast.Call) and (getattr(value.func, "id", None) == "NewType"
                                                or getattr(value.func, "attr", None) == "NewType"):
                pairs.append((stmt.targets[0].id, value.args[1] if len(value.args) == 2 else None))
            elif isinstance(value, ast.Call) and _base_name(value.func) in _ENUMS:
                pairs.append((stmt.targets[0].id, _functional_enum(value)))
            elif isinstance(value, ast.Call) and _base_name(value.func) in _TYPE_VARS:
                pairs.append((stmt.targets[0].id, _type_var(value)))
            else:
                pairs.append((stmt.targets[0].id, value if _is_type_expr(value) else None))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            quoted = _base_name(stmt.annotation) == "TypeAlias" and isinstance(stmt.value, ast.Constant) \
                and isinstance(stmt.value.value, str)  # `Code: TypeAlias = "str"` (rt12-C F3)
            pairs.append((stmt.target.id, stmt.value if quoted or _is_type_expr(stmt.value) else None))
        elif isinstance(stmt, ast.ImportFrom):
            pairs += [(a.asname, ast.Name(id=a.name, ctx=ast.Load())) for a in stmt.names if a.asname and a.asname != a.name]
        elif isinstance(stmt, ast.ClassDef):
            pairs.append((stmt.name, _enum_type(stmt) or _protocol(stmt)))
        elif isinstance(stmt, ast.Import | ast.FunctionDef | ast.AsyncFunctionDef):
            names = [a.asname or a.name for a in stmt.names] if isinstance(stmt, ast.Import) else [stmt.name]
            pairs += [(n, None) for n in names]
        for name, expr in pairs:
            bound[name] = bound.get(name, 0) + 1
            if expr is not None:
                found[name] = expr
    for name in _bound_elsewhere(tree):
        bound[name] = bound.get(name, 0) + 1
    if any(isinstance(n, ast.Name) and n.id in ("globals", "vars", "setattr") for n in ast.walk(tree)):
        return {}  # `globals()['SKU'] = str` rebinds what no reading of the statements sees
    return {n: e for n, e in found.items() if bound[n] == 1}


def _bound_elsewhere(tree: ast.Module) -> list[str]:
    """Module-level names bound inside a block (`if`, `for`, `with`, `try`, a walrus), one entry per
    binding: a name rebound there is no alias (which binding a method sees depends on the run, rt12-B F5)."""
    names: list[str] = []
    blocks = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.TryStar, ast.Match)
    todo: list[ast.AST] = [top for top in tree.body if isinstance(top, blocks)]
    todo += [n for top in tree.body if not isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
             for n in ast.walk(top) if isinstance(n, ast.NamedExpr)]
    for node in todo:
        for inner in ast.walk(node):
            if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.append(inner.name)
            elif isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
                names.append(inner.id)
            elif isinstance(inner, ast.alias):
                names.append(inner.asname or inner.name.split(".")[0])
    return names


def read_annotation(node: ast.expr, aliases: dict[str, ast.expr], limit: int = _MAX_NODES,
                    parsed: dict[str, ast.expr | None] | None = None) -> Reading:
    """`node` with every alias replaced by what it stands for and every string by the expression it holds,
    within `limit` nodes; `parsed` keeps each quoted part's expression (None: no expression) for the next
    annotation. A string that is no expression stays as it is (`annotation_schema` then reads it as no
    constraint)."""
    flags = {"aliased": False, "quoted": False}
    budget = [limit]
    parsed = {} if parsed is None else parsed

    def walk(n: ast.expr, depth: int) -> ast.expr:
        budget[0] -= 1
        if depth > _MAX_DEPTH or budget[0] < 0:
            return n
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            if len(n.value) > budget[0]:  # every node takes a character: a longer string could hold more nodes
                return n  # than are left (rt14-B F4: a 225,000-character quoted Tuple was read in full)
            if n.value not in parsed:
                parsed[n.value] = _quoted_expr(n.value)
            inner = parsed[n.value]
            if inner is None:
                return n
            flags["quoted"] = True
            return walk(inner, depth + 1)
        if isinstance(n, ast.Name) and n.id in aliases:
            flags["aliased"] = True
            return walk(aliases[n.id], depth + 1)
        if isinstance(n, ast.Subscript):
            base = walk(n.value, depth + 1)
            if _base_name(base) == "Literal":  # its strings are values, not types
                return ast.Subscript(value=base, slice=n.slice, ctx=ast.Load())
            if _base_name(base) == "Annotated":  # `Annotated[int, "n"]` is an int with metadata (rt12-C F3)
                first = n.slice.elts[0] if isinstance(n.slice, ast.Tuple) and n.slice.elts else n.slice
                flags["aliased"] = True
                return walk(first, depth + 1)
            return ast.Subscript(value=base, slice=walk(n.slice, depth + 1), ctx=ast.Load())
        if isinstance(n, ast.Tuple):
            return ast.Tuple(elts=[walk(e, depth + 1) for e in n.elts], ctx=ast.Load())
        if isinstance(n, ast.BinOp):
            return ast.BinOp(left=walk(n.left, depth + 1), op=n.op, right=walk(n.right, depth + 1))
        return n

    expr = walk(node, 0)
    return Reading(expr=expr, nodes=min(limit, limit - budget[0]), cut=budget[0] < 0, **flags)


def _quoted_expr(text: str) -> ast.expr | None:
    """The expression a quoted annotation holds, or None when it holds none."""
    try:
        return pyast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class ClassReading:
    """The annotations of one class read through its module's aliases: each annotation written alike and
    each quoted part once, and all of them within `CLASS_NODES` (rt17-B F4). What its parameters' schemas,
    notes and checks walk is then bounded by the class's size, whatever its aliases."""

    def __init__(self, aliases: dict[str, ast.expr]) -> None:
        self.aliases = aliases
        self.left = CLASS_NODES
        self._readings: dict[str, Reading] = {}
        self._parsed: dict[str, ast.expr | None] = {}

    def read(self, node: ast.expr) -> Reading | None:
        """`read_annotation(node)`, or None once the class's budget is spent and an alias or a quoted part
        would have to be read (the parameter is then not read: its schema says nothing of it)."""
        if not any(isinstance(n, ast.Name) and n.id in self.aliases
                   or isinstance(n, ast.Constant) and isinstance(n.value, str) for n in ast.walk(node)):
            return Reading(expr=node, aliased=False, quoted=False)  # nothing to read: what it says is all
        key = ast.dump(node)
        reading = self._readings.get(key)
        if reading is None:
            if self.left <= 0:
                return None
            limit = min(_MAX_NODES, self.left)
            reading = read_annotation(node, self.aliases, limit, self._parsed)
            if reading.cut and limit < _MAX_NODES:  # cut by the class's budget, not the annotation's own
                self.left = 0
                return None
            self._readings[key] = reading
        if reading.aliased or reading.quoted:
            if reading.nodes > self.left:
                self.left = 0
                return None
            self.left -= reading.nodes
        return reading
