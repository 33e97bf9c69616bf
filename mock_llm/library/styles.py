"""The same environment written the way other models write it: identical meaning, different code.

The library classes load their own state (`config.get(...)` in `__init__`), annotate with builtin
generics and list methods in one order. Real models, and EnvScaler's own generator, do otherwise:

- `envscaler_class`: EnvScaler's convention. `__init__(self, init_config: dict)` declares *empty*
  containers, one TypedDict per entity, stores `self.init_config`, and relies on the runtime to set
  every top-level key of the config as an attribute after construction. A private helper the
  methods never call is added too (models write those).
- `dataclass_records`: record types declared as `@dataclass`es (annotations only; the state still
  holds plain dicts, which is what the runtime's setattr puts there).
- `typing_annotations`: method signatures in `typing` spelling (`Optional[str]`, `Dict[str, Any]`,
  `List[...]`), with the snippet's own `from typing import ...` line.
- `methods_reordered`: the operation list (hence the methods and tools) with state changes first.

Everything here is derived from the library class by AST, so behaviour cannot drift from it: the
healthy classes stay healthy and the defective ones keep exactly their planted defects.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from mock_llm.library.model import Domain
from mock_llm.realism import CODE_STYLES
from mock_llm.safe_ast import parse

__all__ = ["CODE_STYLES", "restyle_method", "restyle_operations", "restyle_skeleton"]
_TYPING_LINE = "from typing import Any, Dict, List, Optional, TypedDict"
_STR_HINTS = ("id", "name", "status", "date", "time", "city", "location", "category", "specialty", "mode",
              "slot", "phone", "email", "type", "reason", "notes", "title", "frequency")
_INT_HINTS = ("count", "quantity", "capacity", "priority", "age", "spots", "number", "seats")


def _record_type(entity: dict[str, Any]) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", str(entity["name"])) if part)


def _field_type(attribute: str) -> str:
    last = attribute.lower().rsplit("_", 1)[-1]
    if last in _INT_HINTS:
        return "int"
    if last in _STR_HINTS or attribute.lower() in _STR_HINTS:
        return "str"
    return "Any"


def _entity_for(container: str, domain: Domain) -> dict[str, Any] | None:
    """`loans` -> the Loan entity, `access_grants` -> AccessGrant, `dose_log` -> DoseLog(Entry)."""
    key = container.lower().replace("_", "")
    for entity in domain.entities:
        name = _record_type(entity).lower()
        if key in (name, name + "s", name + "es") or key.rstrip("s") == name or name.startswith(key.rstrip("s")):
            return entity
    return None


def _records(domain: Domain, dataclasses: bool) -> str:
    blocks = []
    for entity in domain.entities:
        name = _record_type(entity) + ("" if dataclasses else "Info")
        attributes = [a.strip() for a in entity.get("attributes", []) if str(a).strip()]
        if dataclasses:
            body = [f"    {a}: {_field_type(a)} = None" for a in attributes] or ["    pass"]
            blocks.append("@dataclass\nclass " + name + ":\n" + f'    """{entity.get("description", name)}"""\n'
                          + "\n".join(body))
        else:
            body = [f"    {a}: {_field_type(a)}" for a in attributes] or ["    pass"]
            blocks.append(f"class {name}(TypedDict):\n" + "\n".join(body))
    return "\n\n\n".join(blocks)


def _containers(init: ast.FunctionDef) -> list[tuple[str, str, str]]:
    """`(attribute, kind, default source)` for each `self.x: T = config.get("x", default)`."""
    found = []
    for node in init.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Attribute):
            value = node.value
            default = "None"
            if isinstance(value, ast.Call) and len(value.args) == 2:
                default = ast.unparse(value.args[1])
            kind = "list" if default.startswith("[") else "dict" if default.startswith("{") else "value"
            found.append((node.target.attr, kind, default))
    return found


def _class_node(tree: ast.Module, class_name: str) -> ast.ClassDef:
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)


def restyle_skeleton(code: str, domain: Domain, styles: frozenset[str]) -> str:
    """The skeleton answer rewritten in `styles` (only the skeleton-level ones apply)."""
    envscaler, dataclasses = "envscaler_class" in styles, "dataclass_records" in styles
    if not (envscaler or dataclasses):
        return code
    tree = parse(code)
    cls = _class_node(tree, domain.class_name)
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    lines = code.split("\n")
    suffix = "" if dataclasses else "Info"
    containers = _containers(init)
    if envscaler:
        body = ["    def __init__(self, init_config: dict):",
                '        """State containers start empty; the runtime sets each top-level key of init_config."""']
        for attr, kind, default in containers:
            entity = _entity_for(attr, domain)
            record = _record_type(entity) + suffix if entity else "dict"
            annotation = {"dict": f"Dict[str, {record}]", "list": f"List[{record}]"}.get(kind, "Any")
            body.append(f"        self.{attr}: {annotation} = {default}")
        body.append("        self.init_config = init_config")
        body += ["", "    def _lookup(self, container: dict, key: str) -> Any:",
                 '        """The record stored under `key`, or None (a helper the tools may use)."""',
                 "        return container.get(key) if isinstance(container, dict) else None"]
        lines[init.lineno - 1:init.end_lineno] = body
    header = [_TYPING_LINE] + (["from dataclasses import dataclass"] if dataclasses else [])
    before, after = lines[:cls.lineno - 1], lines[cls.lineno - 1:]  # __init__ was replaced below this line
    imports = [line for line in before if line.startswith(("import ", "from ")) and "from typing import" not in line]
    others = [line for line in before if not line.startswith(("import ", "from "))]
    text = "\n".join([*header, *imports, *others]).rstrip() + "\n\n\n" + _records(domain, dataclasses) + "\n\n\n"
    text += "\n".join(after)
    if not envscaler:  # self-loading classes keep their own __init__; only the annotations name records
        text = re.sub(r"self\.(\w+): dict\[str, dict\[str, Any\]\]",
                      lambda m: _annotated(m.group(1), domain, suffix), text)
    return text.rstrip() + "\n"


def _annotated(attr: str, domain: Domain, suffix: str) -> str:
    entity = _entity_for(attr, domain)
    return f"self.{attr}: Dict[str, {_record_type(entity) + suffix if entity else 'dict'}]"


def restyle_operations(operations: list[dict[str, Any]], styles: frozenset[str]) -> list[dict[str, Any]]:
    if "methods_reordered" not in styles:
        return operations
    return [o for o in operations if o["kind"] == "state_change"] + [o for o in operations if o["kind"] != "state_change"]


_OPTIONAL = re.compile(r"\b([A-Za-z_][\w\[\], ]*?) \| None\b")


def restyle_method(code: str, styles: frozenset[str]) -> str:
    """A method answer in `typing` spelling: only its signature changes, plus a typing import."""
    if "typing_annotations" not in styles:
        return code
    fn = next(n for n in parse(code).body if isinstance(n, ast.FunctionDef))
    body_start = fn.body[0].lineno - 1
    lines = code.split("\n")
    signature = "\n".join(lines[:body_start])
    signature = _OPTIONAL.sub(lambda m: f"Optional[{m.group(1)}]", signature)
    signature = re.sub(r"\blist\[", "List[", signature)
    signature = re.sub(r"\bdict\[", "Dict[", signature)
    signature = re.sub(r"->\s*dict\s*:", "-> Dict[str, Any]:", signature)
    return "from typing import Any, Dict, List, Optional\n\n" + signature + "\n" + "\n".join(lines[body_start:])
