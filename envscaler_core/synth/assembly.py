"""Assemble a class skeleton and per-operation methods into one module, by AST, not by text.

The reference found `__init__` by line prefix, indented methods by prepending four spaces, and hoisted
every line that *looked* like an import (docstring lines included). Here imports are real
`Import`/`ImportFrom` statements found by `ast`, deduplicated, and placed at the top; each method is
parsed on its own, dedented, and re-indented to the class body's indentation; the class is the one
named, wherever it sits in the module.
"""

from __future__ import annotations

import ast
import textwrap

from envscaler_core import pyast
from envscaler_core.llm.replies import defines, extract_code


class AssemblyError(ValueError):
    """The pieces cannot be put together (names the piece and the reason)."""


def strip_fences(text: str, *names: str) -> str:
    """The Python source in a model's code field (fences, prose and reasoning removed by
    `envscaler_core.llm.replies.extract_code`); with `names`, the piece that defines them wins."""
    return extract_code(text, defines(*names) if names else None)


def _import_lines(tree: ast.Module, source: str) -> tuple[list[str], set[int]]:
    """Top-level import statements (as source text) and the line numbers they occupy."""
    lines, used = [], set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            lines.append(ast.get_source_segment(source, node) or ast.unparse(node))
            used.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines, used


def parse_method(code: str, name: str | None = None) -> tuple[list[str], str]:
    """Split a generated method snippet into (its module-level imports, the dedented `def` source).

    Imports inside the function body stay where they are (they are real and local). Raises
    AssemblyError if the snippet does not parse or does not define exactly one function `name`.
    """
    source = textwrap.dedent(strip_fences(code, *([name] if name else []))).strip("\n")
    try:
        tree = pyast.parse(source)
    except SyntaxError as exc:
        raise AssemblyError(f"method {name or '?'}: syntax error at line {exc.lineno}: {exc.msg}") from None
    imports, used = _import_lines(tree, source)
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    others = [n for n in tree.body if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Import | ast.ImportFrom)]
    if len(functions) != 1 or others:
        raise AssemblyError(f"method {name or '?'}: expected exactly one function definition, "
                            f"got {len(functions)} function(s) and {len(others)} other statement(s)")
    fn = functions[0]
    if name is not None and fn.name != name:
        raise AssemblyError(f"method {name}: snippet defines {fn.name!r} instead")
    if not fn.args.args or fn.args.args[0].arg != "self":
        raise AssemblyError(f"method {fn.name}: first parameter must be 'self'")
    start = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
    body = "\n".join(source.splitlines()[start - 1: fn.end_lineno])
    return imports, textwrap.dedent(body)


def assemble_module(skeleton: str, class_name: str, methods: list[tuple[list[str], str]]) -> str:
    """Module = hoisted, deduplicated imports (skeleton's, then each method's) + the skeleton without
    its imports, with each dedented method re-indented into the class body after its last statement.

    `methods` are `(imports, def_source)` pairs as returned by `parse_method`.
    """
    source = strip_fences(skeleton)
    try:
        tree = pyast.parse(source)
    except SyntaxError as exc:
        raise AssemblyError(f"skeleton: syntax error at line {exc.lineno}: {exc.msg}") from None
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name), None)
    if cls is None:
        raise AssemblyError(f"skeleton: class {class_name!r} not found at top level")
    imports, used = _import_lines(tree, source)
    for extra, _ in methods:
        imports.extend(extra)
    seen: list[str] = []
    for line in imports:
        if line not in seen:
            seen.append(line)
    lines = source.splitlines()
    end = cls.end_lineno or len(lines)
    indent = " " * (cls.body[0].col_offset if cls.body else cls.col_offset + 4)
    method_text = "\n\n".join(textwrap.indent(code, indent) for _, code in methods)
    kept = [(i, line) for i, line in enumerate(lines, start=1) if i not in used]
    before = "\n".join(line for i, line in kept if i <= end)
    after = "\n".join(line for i, line in kept if i > end)
    parts = ["\n".join(seen), before.strip("\n")]
    if method_text:
        parts[-1] += "\n\n" + method_text
    if after.strip():
        parts.append(after.strip("\n"))
    module = "\n\n".join(p for p in parts if p.strip()) + "\n"
    try:
        pyast.parse(module)
    except SyntaxError as exc:
        raise AssemblyError(f"assembled module: syntax error at line {exc.lineno}: {exc.msg}") from None
    return module
