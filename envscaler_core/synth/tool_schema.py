"""AST analysis of a generated environment class: OpenAI tool schemas, state attributes, sources.

Fixes the reference's schema defects: the description is the docstring's summary paragraph (not the
whole docstring), `Args:` entries become parameter descriptions, defaults make a parameter optional
(and a `None` default makes it nullable: `x: str = None` takes an explicit null),
`X | None`, `list[T]`, `dict[K, V]` and `Literal[...]` are understood, alone or nested (`Optional[Literal]`,
`List[Union[...]]`), private methods are not tools,
`**kwargs` allows further arguments (`additionalProperties`), `*args` is no parameter (a keyword call
cannot fill it), and an unannotated parameter raises `SchemaError` (a named static-check problem) instead of crashing.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from envscaler_core import pyast
from envscaler_core.models.env import ToolFunction, ToolSchema
from envscaler_core.signature import parameters

_SIMPLE = {"str": "string", "int": "integer", "float": "number", "bool": "boolean",
           "list": "array", "dict": "object", "None": "null"}
_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Return|Raises|Yields|Constraints|Examples?|Notes?):\s*$")
_ARG_LINE = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


class SchemaError(ValueError):
    """A method cannot be turned into a tool schema (e.g. an unannotated parameter)."""


def find_class(tree: ast.Module, class_name: str) -> ast.ClassDef:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return node
    raise SchemaError(f"class {class_name!r} not found at top level")


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _with_null(schema: dict[str, Any]) -> dict[str, Any]:
    if "type" not in schema:
        return schema
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    return {**schema, "type": [*types, "null"] if "null" not in types else types}


_META_KEYS = ("description", "title")


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` widened to accept null too (a parameter whose default is `None`: calling with an explicit
    null is what the default means, and EnvScaler's runtime passes it on unchecked). No constraint stays
    none; a `type` gains "null" (and an `enum` gains None), an `anyOf` a null branch, anything else
    becomes `anyOf: [schema, null]` with its description kept outside."""
    body = {k: v for k, v in schema.items() if k not in _META_KEYS}
    if not body:
        return schema
    if isinstance(schema.get("anyOf"), list):
        if any(isinstance(b, dict) and b.get("type") == "null" for b in schema["anyOf"]):
            return schema
        return {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
    if "type" in schema:
        out = _with_null(schema)
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out = {**out, "enum": [*out["enum"], None]}
        return out
    return {**{k: v for k, v in schema.items() if k in _META_KEYS}, "anyOf": [body, {"type": "null"}]}


_ARRAYS = frozenset({"List", "list", "Sequence", "MutableSequence", "Set", "set", "FrozenSet", "frozenset",
                     "AbstractSet", "MutableSet", "Iterable", "Collection", "Deque", "deque"})
"""Collections a JSON call fills with an array (EnvScaler's runtime passes it as a list)."""
_TUPLES = frozenset({"Tuple", "tuple"})
_MAPPINGS = frozenset({"Dict", "dict", "Mapping", "MutableMapping", "DefaultDict", "defaultdict", "OrderedDict"})
_ABSTRACT: dict[str, dict[str, Any]] = {
    "Text": {"type": "string"}, "AnyStr": {"type": "string"},  # str (or bytes, which no JSON call carries)
    "Hashable": {"type": ["string", "number", "boolean", "null"]},  # a JSON list or object is unhashable
    "SupportsInt": {"type": "number"}, "SupportsFloat": {"type": "number"}, "SupportsAbs": {"type": "number"},
    "SupportsRound": {"type": "number"}, "Number": {"type": "number"}, "Complex": {"type": "number"},
    "Real": {"type": "number"}, "Rational": {"type": "integer"}, "Integral": {"type": "integer"},
    "SupportsIndex": {"type": "integer"},
    "Any": {}, "object": {}, "Never": {}, "NoReturn": {}, "type": {}, "Type": {},
}
"""Names that are no concrete type, as the JSON values the method is given under them (EnvScaler's runtime
passes the agent's value unchecked): `object` and `Any` take any value, and so does what no JSON value can
meet (`Never`, `NoReturn`, a class: `Type[X]`), as the runtime still runs the call (rt19-R4 F3: each kept
step6's object and refused the calls EnvScaler runs). A number is never a bool here, as for `int`."""


_UNREAD = object()
"""What `literal_value` gives for a member that is no JSON constant."""


def literal_value(node: ast.expr) -> Any:
    """The JSON value a `Literal` member (or an Enum member's value) stands for: a str, int, float, bool or
    None constant, or a signed number (`-1`, `+2`, `-2.5`: a unary operator on a number, as
    `ast.literal_eval` reads it); `_UNREAD` for anything else (bytes, a tuple, an expression, a name), which
    no JSON call can give as it is written."""
    if isinstance(node, ast.Constant) and (node.value is None or type(node.value) in (str, int, float, bool)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float):
        return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value
    return _UNREAD


def _literal(members: list[ast.expr]) -> dict[str, Any]:
    """`Literal[...]`: its values as an `enum`, with their JSON type(s) (`["string", "integer"]` for
    `Literal["a", 1]`: the union of their types, in the order they first appear). A member that is no JSON
    constant (`b"x"`, `(1, 2)`, `1 + 2`) makes the whole Literal no constraint: an `enum` without it would
    refuse a value the method takes (outside check rt18-R2 F4: `Literal[-1, 1]` was served as `enum: [1]`)."""
    read = [literal_value(m) for m in members]
    if not read or any(v is _UNREAD for v in read):
        return {}
    values = list({(type(v), v): v for v in read}.values())  # `Literal[0, -0]` is one value
    kinds = list(dict.fromkeys(type(v).__name__ for v in values))
    if any(k not in _SIMPLE for k in kinds):  # None: `Literal["a", None]`
        return {"enum": values}
    types = [_SIMPLE[k] for k in kinds]
    return {"type": types[0] if len(types) == 1 else types, "enum": values}


def annotation_schema(node: ast.expr | None) -> dict[str, Any]:
    """JSON Schema for a type annotation; unknown names (TypedDicts, classes) map to object. Every shape is
    read the same alone or nested (`Optional[Literal[...]]`, `List[Union[int, str]]`, `Set[...] | None`), and
    `Optional`/`X | None` widen what they wrap as `nullable` does (a null branch in an `anyOf`, None in an
    `enum`); `Any`, `object` and the other names in `_ABSTRACT` are read as the JSON values they admit
    (`Any` no constraint, also inside `Optional`; `typing.Text` a string; `numbers.Real` a number)."""
    if node is None:
        raise SchemaError("missing annotation")
    if isinstance(node, ast.Constant):
        if node.value is None:
            return {"type": "null"}
        if isinstance(node.value, str):  # a string annotation: parse what it says
            return annotation_schema(pyast.parse(node.value, mode="eval").body)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = node.left, node.right
        if isinstance(right, ast.Constant) and right.value is None:
            return nullable(annotation_schema(left))
        if isinstance(left, ast.Constant) and left.value is None:
            return nullable(annotation_schema(right))
        return _any_of([annotation_schema(left), annotation_schema(right)])
    name = _name(node)
    if name in _ABSTRACT:
        return dict(_ABSTRACT[name])
    if name in _SIMPLE:
        return {"type": _SIMPLE[name], **({"items": {}} if name == "list" else {})}
    if name in _ARRAYS or name in _TUPLES:
        return {"type": "array", "items": {}}
    if name in _MAPPINGS:
        return {"type": "object"}
    if isinstance(node, ast.Subscript):
        base = _name(node.value)
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base == "Optional":
            return nullable(annotation_schema(args[0]))
        if base == "Literal":
            return _literal(args)
        if base in _ARRAYS:
            return {"type": "array", "items": annotation_schema(args[0])}
        if base in _TUPLES:
            return {"type": "array"}
        if base in _MAPPINGS:
            value = annotation_schema(args[1]) if len(args) == 2 else {}
            return {"type": "object", **({"additionalProperties": value} if value else {})}
        if base == "Union":
            members = [a for a in args if not (isinstance(a, ast.Constant) and a.value is None)]
            if len(members) == 1:
                return nullable(annotation_schema(members[0]))
            return _any_of([annotation_schema(a) for a in args])
        if base in ("Type", "type"):  # a class: no JSON value is one, the runtime runs the call all the same
            return {}
    return {"type": "object"}


def _any_of(branches: list[dict[str, Any]]) -> dict[str, Any]:
    """A union's schema: any of its members', or no constraint when one member has none (`Union[T, int]`
    with an unconstrained TypeVar takes every value)."""
    return {} if any(not b for b in branches) else {"anyOf": branches}


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Google-style docstring -> (summary paragraph, {param: description})."""
    if not doc:
        return "", {}
    lines = doc.strip().splitlines()
    summary: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line.strip()):
            break
        summary.append(line.strip())
    params: dict[str, str] = {}
    in_args, current, indent = False, None, None
    for line in lines:
        stripped = line.strip()
        header = _SECTION.match(stripped)
        if header:
            in_args = header.group(1) in {"Args", "Arguments", "Parameters"}
            current, indent = None, None
            continue
        if not in_args or not stripped:
            continue
        this_indent = len(line) - len(line.lstrip())
        match = _ARG_LINE.match(stripped)
        if match and (indent is None or this_indent <= indent):
            indent = this_indent
            current = match.group(1).lstrip("*")
            params[current] = match.group(2).strip()
        elif current is not None:
            params[current] = f"{params[current]} {stripped}".strip()
    return " ".join(summary), params


def is_property(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`@property`, `@cached_property` and `@x.setter/getter/deleter`: attributes, not callable tools."""
    for dec in fn.decorator_list:
        name = dec.attr if isinstance(dec, ast.Attribute) else dec.id if isinstance(dec, ast.Name) else ""
        if name in ("property", "cached_property", "setter", "getter", "deleter"):
            return True
    return False


def public_methods(cls: ast.ClassDef) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Tool methods: public (no leading underscore) function definitions in the class body, properties
    excluded (the sandbox refuses to call them, and a setter's schema is meaningless)."""
    return [n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            and not n.name.startswith("_") and not is_property(n)]


def method_tool(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> ToolSchema:
    """One tool schema; raises SchemaError naming the method for an unannotated parameter."""
    description, arg_docs = parse_docstring(ast.get_docstring(fn))
    signature = parameters(fn)
    # `*args` and `**kwargs` are what EnvScaler's runtime can call them with, `getattr(env, name)(**arguments)`:
    # `*tags` can never be filled by a keyword (`tags=[...]` is a TypeError there), so it is no parameter;
    # `**fields` takes any further keyword (`email=...`), so the schema allows additional properties
    properties: dict[str, Any] = {}
    required: list[str] = []
    for arg in signature.every:
        if arg.annotation is None:
            raise SchemaError(f"method {fn.name!r}: parameter {arg.arg!r} has no type annotation")
        schema = annotation_schema(arg.annotation)
        if arg.arg in signature.none_defaulted:
            schema = nullable(schema)
        if arg.arg in arg_docs:
            schema = {**schema, "description": arg_docs[arg.arg]}
        properties[arg.arg] = schema
        if arg.arg not in signature.defaults:
            required.append(arg.arg)
    schema_params: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    if signature.kwarg is not None:
        schema_params["additionalProperties"] = True
    return ToolSchema(function=ToolFunction(name=fn.name, description=description or fn.name, parameters=schema_params))


def extract_tools(code: str, class_name: str) -> list[ToolSchema]:
    """OpenAI tool schemas for the public methods of `class_name`, in source order."""
    cls = find_class(pyast.parse(code), class_name)
    return [method_tool(fn) for fn in public_methods(cls)]


def state_attributes(code: str, class_name: str) -> dict[str, str]:
    """`self.<attr>` assigned in __init__ -> annotation source text ('' when unannotated)."""
    cls = find_class(pyast.parse(code), class_name)
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    attrs: dict[str, str] = {}
    if init is None:
        return attrs
    for node in ast.walk(init):
        target, ann = None, None
        if isinstance(node, ast.AnnAssign):
            target, ann = node.target, node.annotation
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            if ann is not None or target.attr not in attrs:
                attrs[target.attr] = ast.unparse(ann) if ann is not None else attrs.get(target.attr, "")
    return attrs


def class_header(code: str, class_name: str) -> str:
    """Source from the file start through the end of `__init__` (what later prompts show)."""
    cls = find_class(pyast.parse(code), class_name)
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    end = init.end_lineno if init is not None and init.end_lineno else cls.lineno
    return "\n".join(code.splitlines()[:end]) + "\n"


def method_sources(code: str, class_name: str) -> dict[str, str]:
    """Method name -> exact source lines (decorators included, class indentation kept)."""
    lines = code.splitlines()
    cls = find_class(pyast.parse(code), class_name)
    out: dict[str, str] = {}
    for fn in cls.body:
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
            out[fn.name] = "\n".join(lines[start - 1: fn.end_lineno]) + "\n"
    return out


def tool_lines(tools: list[ToolSchema]) -> list[str]:
    """`name(param: type, ...) - description`: the compact tool listing prompts use."""
    lines = []
    for t in tools:
        props = t.function.parameters.get("properties", {})
        params = ", ".join(f"{k}: {v.get('type', 'any')}" for k, v in props.items())
        lines.append(f"{t.function.name}({params}) - {t.function.description}")
    return lines
