"""Static checks on an assembled environment module, before any code runs.

The reference only checked that the module parsed (its return-shape check could never fail), so an
unimported `Optional` surfaced as a NameError in Stage 3 and the env vanished. Each check here yields
named problems; an empty list means the candidate is "generated", otherwise "static_failed".
"""

from __future__ import annotations

import ast
import builtins
import sys

from pydantic import BaseModel

from envscaler_core import pyast
from envscaler_core.synth.reserved import reserved_why
from envscaler_core.synth.tool_schema import SchemaError, method_tool, public_methods

MAX_TOOLS = 200
"""Tools (public methods) one env class may have. EnvScaler-style classes have a few dozen at most (the
bundled EnvScaler fixtures 2-4); validation costs about 70 ms per tool before any LLM round, so 500
trivial tools took 35 s and the 256,000-character limit allows ~6,000 (~7 min a candidate). Past this
the class is refused naming the limit (red team round 6, F7)."""

_BUILTINS = set(dir(builtins)) | {"__name__", "__file__", "__class__"}
_DICT_ANNOTATIONS = {"dict", "Dict", "Mapping"}


class StaticProblem(BaseModel):
    """One failed check: `name` is stable (for counting), `detail` says where and what."""

    name: str
    detail: str
    line: int | None = None

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.name}: {self.detail}{where}"


def _bound_names(node: ast.AST) -> set[str]:
    """Every name bound anywhere inside `node` (params, assignments, loop/with/except targets,
    comprehension variables, local imports, nested defs)."""
    bound: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store | ast.Del):
            bound.add(sub.id)
        elif isinstance(sub, ast.arg):
            bound.add(sub.arg)
        elif isinstance(sub, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in sub.names)
        elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(sub.name)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            bound.add(sub.name)
        elif isinstance(sub, ast.MatchAs | ast.MatchStar) and sub.name:
            bound.add(sub.name)
    return bound


def _module_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        else:
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names


def check_imports(tree: ast.Module) -> list[StaticProblem]:
    """Only the standard library exists in the sandbox; relative imports cannot resolve."""
    problems = []
    for node in ast.walk(tree):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                problems.append(StaticProblem(name="unresolvable-import", detail="relative import", line=node.lineno))
                continue
            modules = [node.module or ""]
        for module in modules:
            if module.split(".")[0] not in sys.stdlib_module_names:
                problems.append(StaticProblem(
                    name="unresolvable-import", detail=f"{module!r} is not in the standard library", line=node.lineno))
    return problems


def check_undefined_names(tree: ast.Module) -> list[StaticProblem]:
    """Names read but never bound (e.g. `Optional` used without `from typing import Optional`).

    Scopes are over-approximated (a name bound anywhere in a function counts as bound in all of it),
    so this never reports a false positive for valid code paths, only misses some exotic cases.
    """
    problems: list[StaticProblem] = []
    seen: set[tuple[str, int]] = set()

    def walk(node: ast.AST, scope: set[str]) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            args = node.args
            outer = [*getattr(node, "decorator_list", []), *args.defaults, *(d for d in args.kw_defaults if d)]
            outer += [a.annotation for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.annotation]
            if getattr(node, "returns", None) is not None:
                outer.append(node.returns)
            for part in outer:
                walk(part, scope)
            inner = scope | _bound_names(node)
            for stmt in node.body if isinstance(node.body, list) else [node.body]:
                walk(stmt, inner)
            return
        if isinstance(node, ast.ClassDef):
            for part in (*node.bases, *node.decorator_list, *(k.value for k in node.keywords)):
                walk(part, scope)
            for stmt in node.body:
                walk(stmt, scope | _class_level_names(node))
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in scope:
            if (node.id, node.lineno) not in seen:
                seen.add((node.id, node.lineno))
                problems.append(StaticProblem(name="undefined-name", detail=f"name {node.id!r} is not defined",
                                              line=node.lineno))
        for child in ast.iter_child_nodes(node):
            walk(child, scope)

    walk(tree, _module_names(tree) | _BUILTINS)
    return problems


def _class_level_names(cls: ast.ClassDef) -> set[str]:
    names: set[str] = set()
    for node in cls.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)  # `@items.setter` reads the property defined just above
    return names


def _returns(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Return]:
    """Return statements of `fn` itself, not of nested functions."""
    found: list[ast.Return] = []
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            stack.extend(ast.iter_child_nodes(node))
    return found


_NON_DICT = (ast.List, ast.Tuple, ast.Set, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.JoinedStr, ast.BinOp,
             ast.Compare, ast.BoolOp, ast.UnaryOp)
# Last statements after which a method may still always return (checked per return statement).
_MAY_END_WITH = (ast.Return, ast.Raise, ast.If, ast.Try, ast.With, ast.For, ast.While, ast.Match)


def _problem(name: str, detail: str, line: int | None) -> StaticProblem:
    return StaticProblem(name=name, detail=detail, line=line)


def _is_dict_annotation(ret: ast.expr) -> bool:
    if isinstance(ret, ast.Constant):
        return isinstance(ret.value, str) and ret.value.split("[")[0] in _DICT_ANNOTATIONS
    base = ret.value if isinstance(ret, ast.Subscript) else ret
    return isinstance(base, ast.Name) and base.id in _DICT_ANNOTATIONS


def check_method(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[StaticProblem]:
    """A tool method is annotated (params and return), documented, and returns dicts on every path."""
    problems: list[StaticProblem] = []
    name, line = fn.name, fn.lineno
    if ast.get_docstring(fn) is None:
        problems.append(_problem("undocumented-method", f"method {name!r} has no docstring", line))
    try:
        method_tool(fn)
    except SchemaError as exc:
        kind = "unannotated-parameter" if "annotation" in str(exc) else "bad-signature"
        problems.append(_problem(kind, str(exc), line))
    if fn.returns is None:
        problems.append(_problem("unannotated-return", f"method {name!r} has no return annotation", line))
    elif not _is_dict_annotation(fn.returns):
        detail = f"method {name!r} is annotated -> {ast.unparse(fn.returns)}, not dict"
        problems.append(_problem("non-dict-return", detail, line))
    returns = _returns(fn)
    if not returns:
        problems.append(_problem("non-dict-return", f"method {name!r} never returns a value", line))
    for r in returns:
        if r.value is None or isinstance(r.value, (ast.Constant, *_NON_DICT)):
            shown = ast.unparse(r.value) if r.value is not None else "(bare return)"
            problems.append(_problem("non-dict-return", f"method {name!r} returns {shown}", r.lineno))
    if returns and not isinstance(fn.body[-1], _MAY_END_WITH):
        problems.append(_problem("non-dict-return", f"method {name!r} can fall off its end (returns None)", line))
    return problems


SANDBOX_HOOK = "__sandbox_"


def _names_in(node: ast.AST) -> list[str]:
    """Every name a node spells: identifiers it binds or reads, attributes, keywords, strings."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword):
        return [node.arg or ""]
    if isinstance(node, ast.alias):
        return [node.name, node.asname or ""]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    return []


def check_sandbox_hooks(tree: ast.Module) -> list[StaticProblem]:
    """The sandbox's own hooks (`__sandbox_state__`, `__sandbox_restore__`, `__sandbox_config__`,
    `__sandbox_result__`, docs/sandbox.md) let a class choose the state the host sees and loads; only
    adapters our own code installs may define them. Any mention in env code (a method, an assignment,
    `setattr` with the name as a string) is refused; a name built at run time is not seen here."""
    problems: list[StaticProblem] = []
    for node in ast.walk(tree):
        for name in _names_in(node):
            if SANDBOX_HOOK in name:
                shown = name if len(name) <= 60 else name[:57] + "..."
                problems.append(_problem("sandbox-hook", f"{shown!r} names one of the sandbox's own hooks "
                                         "(__sandbox_*__), which env code may not define or use",
                                         getattr(node, "lineno", None)))
                break
    return problems[:5]


def static_problems(code: str, class_name: str) -> list[StaticProblem]:
    """All static problems of the module `code` whose environment class is `class_name`."""
    try:
        tree = pyast.parse(code)
    except pyast.SourceTooLarge as exc:
        return [StaticProblem(name="code-too-large", detail=exc.msg)]
    except pyast.NestedTooDeep as exc:
        return [StaticProblem(name="code-too-deep", detail=exc.msg, line=exc.lineno)]
    except SyntaxError as exc:
        return [StaticProblem(name="syntax-error", detail=exc.msg, line=exc.lineno)]
    problems = check_imports(tree) + check_undefined_names(tree) + check_sandbox_hooks(tree)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name]
    if not classes:
        return [*problems, StaticProblem(name="missing-class", detail=f"no top-level class {class_name!r}")]
    cls = classes[0]
    if cls.bases or cls.keywords:
        problems.append(_problem("class-has-base", f"class {class_name!r} must not have a base class", cls.lineno))
    methods = public_methods(cls)
    if len(methods) > MAX_TOOLS:
        return [*problems, _problem("too-many-tools", f"class {class_name!r} has {len(methods):,} public methods "
                                    f"(tools), past the {MAX_TOOLS} one env class may have "
                                    "(static_checks.MAX_TOOLS)", cls.lineno)]
    if not methods:
        problems.append(_problem("no-tools", f"class {class_name!r} has no public methods", cls.lineno))
    for fn in methods:
        problems.extend(check_method(fn))
        if (why := reserved_why(fn.name)) is not None:  # our exports must run the same under EnvScaler's runtime
            problems.append(_problem("reserved-tool-name", f"method {fn.name!r} cannot be a tool: {why}; rename it",
                                     fn.lineno))
    return problems
