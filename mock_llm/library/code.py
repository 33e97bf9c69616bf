"""Cut a library class file into what Stage 2 asks for, by AST: the skeleton (everything except the
public methods), the operations (public methods with their docstring summary and kind), and one
method's source.

Private helpers stay in the skeleton: the pipeline's method step accepts exactly one `def` per
operation, and `assemble_module` inserts the methods into the skeleton's class body, so helpers must
already be there for every method to resolve `self._helper`.
"""

from __future__ import annotations

import ast
import textwrap
import threading
from functools import lru_cache

from mock_llm.library.model import Domain, class_file
from mock_llm.safe_ast import parse

_CACHE_LOCK = threading.Lock()


def _class(tree: ast.Module, class_name: str) -> ast.ClassDef:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return node
    raise ValueError(f"class {class_name!r} not found in the library file")


def _public(cls: ast.ClassDef) -> list[ast.FunctionDef]:
    return [n for n in cls.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]


def skeleton(domain: Domain) -> str:
    """The class file without its public methods (imports, constants, __init__, private helpers)."""
    with _CACHE_LOCK:
        return _skeleton(domain.env_file, domain.class_name, domain.source_class)


@lru_cache(maxsize=4096)
def _skeleton(env_file: str, class_name: str, source_class: str | None = None) -> str:
    source = _source(env_file, source_class, class_name)
    cls = _class(parse(source), class_name)
    drop: set[int] = set()
    for fn in _public(cls):
        start = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
        drop.update(range(start, (fn.end_lineno or fn.lineno) + 1))
    lines = [line for i, line in enumerate(source.splitlines(), start=1) if i not in drop]
    text = "\n".join(lines)
    while "\n\n\n\n" in text:  # removed methods leave runs of blank lines behind
        text = text.replace("\n\n\n\n", "\n\n\n")
    return text.rstrip() + "\n"


def operations(domain: Domain) -> list[dict[str, str]]:
    """`[{"name", "description", "kind"}]` in source order; description = docstring summary line."""
    with _CACHE_LOCK:
        summaries = _summaries(domain.env_file, domain.class_name, domain.source_class)
    ops = []
    for name, doc in summaries:
        kind = domain.tool_kinds.get(name)
        if kind is None:
            raise ValueError(f"{domain.name}: tool {name!r} has no kind in tool_kinds")
        ops.append({"name": name, "description": doc, "kind": kind})
    return ops


@lru_cache(maxsize=4096)
def _summaries(env_file: str, class_name: str, source_class: str | None = None) -> tuple[tuple[str, str], ...]:
    cls = _class(parse(_source(env_file, source_class, class_name)), class_name)
    return tuple((fn.name, (ast.get_docstring(fn) or fn.name).strip().splitlines()[0]) for fn in _public(cls))


def method_source(domain: Domain, name: str) -> str:
    """The dedented `def` of public method `name`, exactly as written in the library file."""
    with _CACHE_LOCK:
        methods = _methods(domain.env_file, domain.class_name, domain.source_class)
    if name not in methods:
        raise KeyError(name)
    return methods[name]


@lru_cache(maxsize=4096)
def _methods(env_file: str, class_name: str, source_class: str | None = None) -> dict[str, str]:
    source = _source(env_file, source_class, class_name)
    cls = _class(parse(source), class_name)
    out = {}
    for fn in _public(cls):
        start = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
        out[fn.name] = textwrap.dedent("\n".join(source.splitlines()[start - 1: fn.end_lineno])) + "\n"
    return out


def _source(env_file: str, source_class: str | None = None, class_name: str | None = None) -> str:
    return class_file(env_file, source_class, class_name)
