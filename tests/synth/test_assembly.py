"""AST-based assembly: imports hoisted and deduplicated, methods indented into the named class."""

from __future__ import annotations

import ast

import pytest

from envscaler_core.synth import AssemblyError, assemble_module, parse_method, strip_fences

SKELETON = '''from typing import Dict

# Rules: stock >= 0


class Shop:
    """A shop."""

    def __init__(self, init_config: dict | None = None):
        cfg = init_config or {}
        self.stock: Dict[str, int] = dict(cfg.get("stock", {}))
'''

METHOD = '''```python
import copy
from typing import Dict

def get_stock(self, item: str) -> dict:
    """Stock of an item.

    Example: import this is not an import
    """
    return {"success": True, "data": copy.deepcopy(self.stock.get(item, 0))}
```
Some trailing prose the model added.'''


def test_strip_fences_drops_prose_after_the_closing_fence() -> None:
    assert strip_fences("```python\nx = 1\n```\nthanks") == "x = 1"
    assert strip_fences("x = 1") == "x = 1"


def test_parse_method_separates_module_imports_from_the_function() -> None:
    imports, body = parse_method(METHOD, "get_stock")
    assert imports == ["import copy", "from typing import Dict"]
    assert body.startswith("def get_stock(self, item: str) -> dict:")
    assert "import this is not an import" in body


def test_parse_method_rejects_wrong_name_and_missing_self() -> None:
    with pytest.raises(AssemblyError, match="defines 'get_stock' instead"):
        parse_method(METHOD, "list_stock")
    with pytest.raises(AssemblyError, match="'self'"):
        parse_method("def f(x: int) -> dict:\n    return {}\n", "f")


def test_parse_method_reports_syntax_errors_with_line() -> None:
    with pytest.raises(AssemblyError, match="syntax error at line 2"):
        parse_method("def f(self) -> dict:\n    return {\n", "f")


def test_assembly_hoists_deduplicated_imports_and_indents_methods_into_the_class() -> None:
    indented = "    def set_stock(self, item: str, n: int) -> dict:\n        \"\"\"Set.\"\"\"\n        " \
               "self.stock[item] = n\n        return {'success': True, 'message': 'ok'}\n"
    module = assemble_module(SKELETON, "Shop", [parse_method(METHOD, "get_stock"), parse_method(indented, "set_stock")])
    tree = ast.parse(module)
    assert [ast.unparse(n) for n in tree.body[:2]] == ["from typing import Dict", "import copy"]
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    assert [n.name for n in cls.body if isinstance(n, ast.FunctionDef)] == ["__init__", "get_stock", "set_stock"]
    assert "# Rules: stock >= 0" in module
    assert module.count("from typing import Dict") == 1


def test_assembly_places_methods_in_the_named_class_even_if_code_follows_it() -> None:
    skeleton = SKELETON + "\n\nHELPER_CONSTANT = 3\n"
    module = assemble_module(skeleton, "Shop", [parse_method(METHOD, "get_stock")])
    tree = ast.parse(module)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    assert any(isinstance(n, ast.FunctionDef) and n.name == "get_stock" for n in cls.body)
    assert isinstance(tree.body[-1], ast.Assign)


def test_assembly_requires_the_named_class() -> None:
    with pytest.raises(AssemblyError, match="class 'Store' not found"):
        assemble_module(SKELETON, "Store", [])
