"""What each tool of an env class does to its state and where it looks its arguments up, read from the
source with `ast` (nothing is executed here).

Validation without a spec needs two things the schema does not say: whether a tool writes state (to
tell queries from changes) and where a parameter's valid values live (so probes reach the code behind
the "not found" guard). Both are answered from the method bodies, following what real generated and
hand-written classes do: writes through `self.<attr>`, through local aliases of records
(`book = self.books[book_id]; book["copies"] -= 1`), through mutating methods (`append`, `pop`, ...)
and through private helpers or other tools; lookups as dict keys (`self.books[book_id]`,
`book_id not in self.books`, `.get(book_id)`), as record fields (`m["id"] == member_id`) and as list
members (`slot in doctor["available_slots"]`).

Paths name places in the state: `("books", "*", "copies")` is the `copies` field of any record of
`books`. A value that is a *new* container of state objects (`list(self.books.values())`) is marked
`holds`: writing into it is not a state write, writing into its elements is.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from envscaler_core.signature import parameters


Path = tuple[str, ...]
MUTATORS = frozenset({
    "append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault", "add", "discard",
    "sort", "reverse", "appendleft", "popleft", "extendleft", "rotate", "difference_update",
    "intersection_update", "symmetric_difference_update", "__setitem__", "__delitem__",
})
_PASS_THROUGH = frozenset({"list", "sorted", "reversed", "filter", "tuple", "iter", "enumerate"})


@dataclass(frozen=True)
class Ref:
    """An expression that is (or, with `holds`, contains) an object of the state at `path`."""

    path: Path
    holds: bool = False


@dataclass(frozen=True)
class Write:
    attr: str
    line: int
    how: str


@dataclass(frozen=True)
class Binding:
    """Parameter values are found at `path`: its members (dict keys / list items) or, with `values`,
    the values stored there (a record field). With `part`, the parameter is one component of a tuple
    key (`self.seats[(row, col)]`: `row` is part 0 of the keys of `seats`)."""

    path: Path
    values: bool = False
    part: int | None = None


@dataclass
class MethodEffects:
    writes: list[Write] = field(default_factory=list)
    param_writes: set[str] = field(default_factory=set)
    calls: list[tuple[str, int, list[Ref | None], list[str | None]]] = field(default_factory=list)
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    guard_fields: set[str] = field(default_factory=set)
    literals: dict[str, list[object]] = field(default_factory=dict)  # param -> constants it is compared to


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _const_str(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class MethodReader:
    """One pass over a method body, statements in order (aliases are flow-insensitive but ordered)."""

    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.fn = fn
        self.params = [a.arg for a in parameters(fn).every]
        self.aliases: dict[str, Ref] = {p: Ref((f"@{p}",)) for p in self.params}
        self.tuples: dict[str, ast.Tuple] = {}  # `key = (row, col)`: a local naming a tuple of parameters
        self.out = MethodEffects()
        self.bound: set[tuple[str, Binding]] = set()
        self.seen_literals: dict[str, set[object]] = {}

    # ---- references ------------------------------------------------------------------------------
    def ref(self, node: ast.expr | None) -> Ref | None:
        if node is None:
            return None
        if isinstance(node, ast.Attribute):
            if _is_self(node.value):
                return Ref((node.attr,))
            base = self.ref(node.value)
            return Ref(base.path + (node.attr,)) if base and not base.holds else None
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Subscript):
            base = self.ref(node.value)
            if base is None:
                return None
            if base.holds:
                return Ref(base.path)
            key = _const_str(node.slice)
            self.bind_key(node.slice, base.path)
            return Ref(base.path + (key if key is not None else "*",))
        if isinstance(node, ast.Call):
            return self.call_ref(node)
        if isinstance(node, ast.BoolOp):
            return next((r for r in map(self.ref, node.values) if r is not None), None)
        if isinstance(node, ast.IfExp):
            return self.ref(node.body) or self.ref(node.orelse)
        if isinstance(node, ast.ListComp | ast.GeneratorExp | ast.SetComp):
            return self.comprehension_ref(node)
        if isinstance(node, ast.NamedExpr):
            found = self.ref(node.value)
            if found is not None:
                self.aliases[node.target.id] = found
            return found
        return None

    def call_ref(self, node: ast.Call) -> Ref | None:
        func = node.func
        if isinstance(func, ast.Attribute):
            base = self.ref(func.value)
            if base is None or base.holds:
                return None
            if func.attr in ("get", "pop", "setdefault") and node.args:
                self.bind_key(node.args[0], base.path)
                key = _const_str(node.args[0])
                return Ref(base.path + (key if key is not None else "*",))
            if func.attr == "values":
                return Ref(base.path + ("*",), holds=True)
            return None
        if isinstance(func, ast.Name) and func.id == "next" and node.args:
            inner = self.ref(node.args[0])
            return Ref(inner.path) if inner and inner.holds else None
        if isinstance(func, ast.Name) and func.id in _PASS_THROUGH and node.args:
            inner = self.ref(node.args[0])
            if inner is None:
                return None
            return inner if inner.holds else Ref(inner.path + ("*",), holds=True)
        return None

    def element_of(self, node: ast.expr) -> Ref | None:
        """What iterating over `node` yields."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "items":
            return None  # handled by the tuple target
        inner = self.ref(node)
        if inner is None:
            return None
        return Ref(inner.path) if inner.holds else Ref(inner.path + ("*",))

    def bind_target(self, target: ast.expr, iterable: ast.expr) -> None:
        if (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(iterable, ast.Call)
                and isinstance(iterable.func, ast.Attribute) and iterable.func.attr == "items"):
            base = self.ref(iterable.func.value)
            if base is not None and not base.holds and isinstance(target.elts[1], ast.Name):
                self.aliases[target.elts[1].id] = Ref(base.path + ("*",))
            return
        element = self.element_of(iterable)
        if isinstance(target, ast.Name):
            if element is not None:
                self.aliases[target.id] = element
            else:
                self.aliases.pop(target.id, None)

    def comprehension_ref(self, node: ast.ListComp | ast.GeneratorExp | ast.SetComp) -> Ref | None:
        for gen in node.generators:
            self.bind_target(gen.target, gen.iter)
            for cond in gen.ifs:
                self.read_test(cond)
        inner = self.ref(node.elt)
        return Ref(inner.path, holds=True) if inner is not None and not inner.holds else inner

    # ---- bindings and guards ---------------------------------------------------------------------
    def param_of(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name) and node.id in self.params:
            return node.id
        return None

    def bind(self, param: str, binding: Binding) -> None:
        if binding.path and not binding.path[0].startswith("@"):
            if (param, binding) not in self.bound:  # a set: a class may test one parameter thousands of times
                self.bound.add((param, binding))
                self.out.bindings.setdefault(param, []).append(binding)

    def bind_key(self, key: ast.expr, path: Path) -> None:
        param = self.param_of(key)
        if param is not None:
            self.bind(param, Binding(path))
        for part, name in self.tuple_params(key):
            self.bind(name, Binding(path, part=part))

    def tuple_params(self, node: ast.expr) -> list[tuple[int, str]]:
        """(position, parameter) of a tuple key built from parameters: `(row, col)` or a local holding it."""
        if isinstance(node, ast.Name) and node.id in self.tuples:
            node = self.tuples[node.id]
        if not isinstance(node, ast.Tuple):
            return []
        return [(i, p) for i, elt in enumerate(node.elts) if (p := self.param_of(elt)) is not None]

    def read_test(self, node: ast.expr) -> None:
        """A condition: remember which record fields it reads and which parameters it compares."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Subscript) and _const_str(sub.slice) is not None:
                self.out.guard_fields.add(_const_str(sub.slice))  # type: ignore[arg-type]
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "get" \
                    and sub.args and _const_str(sub.args[0]) is not None:
                self.out.guard_fields.add(_const_str(sub.args[0]))  # type: ignore[arg-type]
            elif isinstance(sub, ast.Attribute) and not _is_self(sub.value):
                self.out.guard_fields.add(sub.attr)
            if isinstance(sub, ast.Compare) and len(sub.ops) == 1:
                self.read_compare(sub.left, sub.ops[0], sub.comparators[0])

    def read_compare(self, left: ast.expr, op: ast.cmpop, right: ast.expr) -> None:
        if isinstance(op, ast.In | ast.NotIn):
            param = self.param_of(left)
            container = self.ref(right)
            if container is not None and not container.holds:
                for part, name in self.tuple_params(left):
                    self.bind(name, Binding(container.path, part=part))
            if param and container is not None:
                self.bind(param, Binding(container.path, values=container.holds))
            elif param and isinstance(right, ast.Tuple | ast.List | ast.Set):
                self.literal(param, [e.value for e in right.elts if isinstance(e, ast.Constant)])
        elif isinstance(op, ast.Eq | ast.NotEq | ast.Is | ast.IsNot):
            for a, b in ((left, right), (right, left)):
                param, other = self.param_of(a), self.ref(b)
                if param and other is not None and not other.holds:
                    self.bind(param, Binding(other.path, values=True))

    def literal(self, param: str, values: list[object]) -> None:
        """`mode in ("in_person", "virtual")`: the values a membership test accepts."""
        seen = self.seen_literals.setdefault(param, set())
        fresh = [v for v in dict.fromkeys(values) if v not in seen]
        seen.update(fresh)
        self.out.literals.setdefault(param, []).extend(fresh)

    # ---- writes ----------------------------------------------------------------------------------
    def write(self, ref: Ref | None, node: ast.AST, how: str) -> None:
        if ref is None or ref.holds or not ref.path:
            return
        root = ref.path[0]
        if root.startswith("@"):
            self.out.param_writes.add(root[1:])
        elif not root.startswith("_"):
            self.out.writes.append(Write(root, getattr(node, "lineno", 0), how))

    def write_target(self, target: ast.expr, node: ast.AST) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                self.write_target(elt, node)
        elif isinstance(target, ast.Attribute):
            if _is_self(target.value):
                self.write(Ref((target.attr,)), node, f"assigns self.{target.attr}")
            else:
                self.write(self.ref(target.value), node, f"sets .{target.attr} on {ast.unparse(target.value)}")
        elif isinstance(target, ast.Subscript):
            base = self.ref(target.value)
            if base is not None and not base.holds:
                self.bind_key(target.slice, base.path)
            self.write(base, node, f"assigns {ast.unparse(target)[:60]}")

    def visit_call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            if _is_self(func.value):
                refs = [self.ref(a) for a in node.args]
                params = [self.param_of(a) for a in node.args]
                self.out.calls.append((func.attr, node.lineno, refs, params))
                return
            if func.attr in MUTATORS:
                base = self.ref(func.value)
                if func.attr in ("pop", "setdefault") and node.args:
                    if base is not None and not base.holds:
                        self.bind_key(node.args[0], base.path)
                self.write(base, node, f"calls {ast.unparse(func)[:60]}()")
        elif isinstance(func, ast.Name):
            if func.id == "setattr" and node.args:
                target = node.args[0]
                self.write(Ref(("<any>",)) if _is_self(target) else self.ref(target), node, "calls setattr()")
            elif func.id == "delattr" and node.args and _is_self(node.args[0]):
                self.write(Ref(("<any>",)), node, "calls delattr()")
            else:
                refs = [self.ref(a) for a in node.args]
                params = [self.param_of(a) for a in node.args]
                self.out.calls.append((f"<module>.{func.id}", node.lineno, refs, params))

    def run(self) -> MethodEffects:
        for stmt in self.fn.body:
            self.statement(stmt)
        return self.out

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign):
            value = self.ref(stmt.value)
            for target in stmt.targets:
                if isinstance(target, ast.Name) and isinstance(stmt.value, ast.Tuple):
                    self.tuples[target.id] = stmt.value
                elif isinstance(target, ast.Name):
                    self.tuples.pop(target.id, None)
                if isinstance(target, ast.Name):
                    if value is not None:
                        self.aliases[target.id] = value
                    else:
                        self.aliases.pop(target.id, None)
                else:
                    self.write_target(target, stmt)
        elif isinstance(stmt, ast.AnnAssign):
            if isinstance(stmt.target, ast.Name):
                value = self.ref(stmt.value)
                if value is not None:
                    self.aliases[stmt.target.id] = value
            elif stmt.value is not None:
                self.write_target(stmt.target, stmt)
        elif isinstance(stmt, ast.AugAssign) and not isinstance(stmt.target, ast.Name):
            self.write_target(stmt.target, stmt)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    self.aliases.pop(target.id, None)
                else:
                    self.write_target(target, stmt)
        elif isinstance(stmt, ast.For | ast.AsyncFor):
            self.bind_target(stmt.target, stmt.iter)
        elif isinstance(stmt, ast.If | ast.While):
            self.read_test(stmt.test)
        elif isinstance(stmt, ast.Assert):
            self.read_test(stmt.test)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return  # nested definitions run only when called; their writes are not attributed here
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                self.statement(child)
            elif isinstance(child, ast.expr):
                self.expression(child)

    def expression(self, node: ast.expr) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                self.visit_call(sub)
            elif isinstance(sub, ast.IfExp):
                self.read_test(sub.test)
            elif isinstance(sub, ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp):
                for gen in sub.generators:
                    self.bind_target(gen.target, gen.iter)
                    for cond in gen.ifs:
                        self.read_test(cond)
            elif isinstance(sub, ast.Compare):
                # a comparison anywhere (`return room["status"] == "available"` in a helper the
                # guard calls) reads the fields a rule depends on
                self.read_test(sub)
