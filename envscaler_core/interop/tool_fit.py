"""EnvScaler's tool list, fitted to what its runtime really executes, before any agent or check sees it.

EnvScaler's step6 writes the tools from the method signatures with a small type map, and its runtime
never checks arguments (`getattr(env, name)(**arguments)`). Our sandbox does check them against the
tools, so what step6 could not express would refuse calls EnvScaler runs:

* every parameter is listed as `required`, also one with a default (`days: int = 14`): here a parameter
  the signature gives a default is optional;
* `Union[...]`, lowercase `list[str]`, `Tuple`, `X | None`, ... become a placeholder `{"type": "object"}`:
  here such a placeholder (no properties) is replaced by the annotation's own schema
  (`synth.tool_schema.annotation_schema`: `Union[int, str]` -> integer or string), or by no constraint
  at all when there is no annotation; a placeholder whose annotation *is* a mapping (`Dict`, a TypedDict
  or class name) stays an object; so is that fallback inside step6's `Optional[...]` (`["object", "null"]`)
  or `List[...]` (an array of objects), and `Optional[Any]`'s `{"type": ["null"]}` (rt17-C F4:
  `Optional[Literal[...]]`, `Optional[Set[str]]`, `List[Literal[...]]` refused the calls EnvScaler runs);
  an annotation that names no concrete type gets the JSON values the method is given under it (`typing.Text`
  a string, a TypeVar its bound or constraints or any value, `object` and a `Protocol` any value: rt19-R4 F3);
* a parameter whose default is `None` (`priority: str = None`) is written as its annotation's type only
  (`{"type": "string"}`), so an explicit null, which is what the default means and which EnvScaler's
  runtime passes through, would be refused: here it is nullable (`["string", "null"]`, or a null branch
  in an `anyOf`), as the factory's own schema extraction writes it (`synth.tool_schema.nullable`);
* a quoted annotation (`qty: "int"`, `"Optional[int]"`, `"List[str]"`) becomes `{"type": "string"}` (step6 maps
  any constant to its type's name): here it gets the schema of the type the string names, read through the
  one AST parser (never evaluated); kept, it refused every integer and rejected the env on coverage (outside
  check 10, C-F5); so is a string nested in another type (`Optional["int"]`, which step6 writes as
  `["string", "null"]`: outside check 11, C-F2);
* a name the module defines as a type alias (`SKU = str`, `NewType`, a `str` Enum, `Opt = Optional`)
  becomes `{"type": "object"}`, alone or nested (`List[SKU]`): here it gets the schema of the type it
  stands for (`type_aliases.py`; outside check 11, C-F4, B-F5: the probes sent objects and the env was
  rejected, or the reference call was refused);
* `*args` and `**kwargs` become ordinary properties (`tags`, `fields`): EnvScaler's runtime calls
  `getattr(env, name)(**arguments)`, so `fields="x"` lands in the method as the key `fields` and `tags=...`
  raises TypeError; here `*args` is no parameter and `**kwargs` allows further arguments by name
  (`additionalProperties: true`);
* every `_helper` becomes a tool, but only public methods are tools here (the sandbox refuses calls to
  private names): they are left out of the list, so no agent or RL framework is offered a tool that
  can only fail;
* a parameter of the signature can be missing from the schema (no `parameters` at all, or a property left
  out): EnvScaler's runtime passes whatever arguments the agent gives to the method, so the method's own
  parameters are what a call needs, and a schema without one made the tool uncallable here (an argument
  the schema does not name is refused, and leaving it out is a missing argument). Here every parameter a
  call by name can fill is in the schema: a missing one is added with its annotation's schema (none when
  there is no annotation), required when the signature gives it no default; a note names each. Where that
  cannot be done (`parameters` is not an object schema with an object of `properties`, or a required
  parameter is positional-only, which no call by name fills) the env is rejected naming
  `tools[<name>].parameters` and what is missing. A property the method does not take (not a parameter,
  or a positional-only one, and no `**kwargs`) is removed from `properties` and `required`, with a note
  naming tool and property: EnvScaler's runtime offers it, and runs a call that leaves it out but raises
  TypeError on one that gives it (so does an imported env's episode here: `rollout/rules.py`); kept as
  `required`, it made the tool uncallable and its env rejected (differential re-check 2026-11-26, F4).
  A `"parameters": null` is read as no `parameters` (read.py, with a note), fitted as above (F5: it was
  taken as a malformed record, and the env and its scenarios skipped);
* a tool can name a property (`@property def loan_count`, which step6 lists as it lists every definition)
  or a class constant: it is kept, as EnvScaler's runtime offers it, with a note; a call to it calls the
  value and raises TypeError there, and so ends an imported env's episode at 0 here (the sandbox reads
  and calls the value), and validation does not call it (`envjob.validated_tools`: nothing it could do
  would succeed, so it cannot reject the env on coverage, outside check 10, C-F1). One whose value is
  callable (`lend = lend_book`, a lambda, a getter returning a lambda: `rules.CALLABLE`) is called there
  and here, gets no note, and is probed like a method (outside check 11, B-F3);
* a tool named `chat_with_user` is never run by EnvScaler's runtime (`synth/reserved.py`: the call is
  the agent's message to the user and ends a non-conversational episode): it is left out too, and a
  reference solution's call to it ends the replay there, as it ends the episode there.

Schemas that say something definite (`integer`, `string`, an object with properties) are kept as they
are, but no key starting with `_` leaves the fitting (`_unmarked`: step6's `_optional` in the items of
`List[Optional[int]]` was served and exported, rt18-R2 F5). The verbatim record keeps EnvScaler's own list (export writes it back unchanged).
"""

from __future__ import annotations

import ast
from typing import Any

from envscaler_core import pyast
from envscaler_core.interop.type_aliases import CLASS_NODES, ClassReading, Reading, type_aliases
from envscaler_core.models.env import ToolSchema
from envscaler_core.rollout.rules import no_method_tools
from envscaler_core.synth.reserved import RESERVED_TOOLS
from envscaler_core.signature import parameters
from envscaler_core.synth.tool_schema import SchemaError, annotation_schema, is_property, nullable

_PLACEHOLDER_KEYS = frozenset({"type", "description", "title"})
_STEP6_KEYS = _PLACEHOLDER_KEYS | {"items", "_optional"}
_META = ("description", "title")


def is_placeholder(schema: Any) -> bool:
    """`{"type": "object"}` that says nothing more (step6's fallback for what its type map lacks)."""
    return isinstance(schema, dict) and schema.get("type") == "object" and set(schema) <= _PLACEHOLDER_KEYS


def _plain(schema: Any) -> bool:
    """A schema of the kind step6 writes from an annotation's names: `type`, `items` (of the same kind), a
    description or title (and step6's `_optional` marker, which it leaves in nested items); one that says more
    (an enum, properties, anyOf) was written with intent: kept."""
    return (isinstance(schema, dict) and set(schema) <= _STEP6_KEYS
            and ("items" not in schema or _plain(schema["items"])))


def _vague(schema: dict[str, Any]) -> bool:
    """step6's fallback is in it: a `type` of nothing but object or null (`{"type": "object"}` for a name its
    map lacks, `["object", "null"]` for `Optional` of one, `["null"]` for `Optional[Any]`), at the top or in
    the `items` of an array (`List[Literal[...]]`)."""
    types = schema.get("type")
    kinds = set(types if isinstance(types, list) else [types]) - {"null"}
    if "type" in schema and kinds <= {"object"}:
        return True
    items = schema.get("items")
    return "array" in kinds and isinstance(items, dict) and _vague(items)


def _agrees(step6: dict[str, Any], ours: dict[str, Any]) -> bool:
    """step6's schema already says what the annotation's own does, as far as the fitting goes: the same, or
    the same type where that is a mapping (written as an object, its values unchecked, as step6 left them:
    docs/interop.md) or an array whose items agree."""
    body = {k: v for k, v in step6.items() if k not in (*_META, "_optional")}
    if body == ours:
        return True
    if "type" not in body or body.get("type") != ours.get("type"):
        return False
    kinds = body["type"] if isinstance(body["type"], list) else [body["type"]]
    if "object" in kinds:
        return True
    items, own = body.get("items", {}), ours.get("items", {})
    return "array" in kinds and isinstance(items, dict) and isinstance(own, dict) and _agrees(items, own)


def _fitted(reading: Reading | None, schema: Any) -> dict[str, Any] | None:
    """The annotation's own schema in place of step6's, or None to keep step6's. step6 maps an annotation's
    names through a small table, and what it cannot map becomes an object (alone, inside `Optional`, in a
    `List`), `Optional[Any]` a null, any string a string; its runtime never checks arguments, ours does, so
    such a schema would refuse the calls EnvScaler runs (rt17-C F4: `Optional[Literal[...]]` as object or
    null, 9 of 13 verified scenarios not promoted). So a schema of step6's kind is replaced when it holds that
    fallback, or the annotation was read through an alias or a quoted part, unless it already agrees with
    the annotation's own; one that says more than step6 could (an enum, an anyOf) is kept. No annotation
    reads as no constraint, and so does a string that holds no type expression."""
    if not isinstance(schema, dict):
        return None
    if reading is None:
        return {k: v for k, v in schema.items() if k in _META} if is_placeholder(schema) else None
    if not _plain(schema) or not (reading.aliased or reading.quoted or _vague(schema)):
        return None
    try:
        ours = annotation_schema(reading.expr)
    except (SchemaError, SyntaxError, ValueError, RecursionError):
        ours = {}
    return None if _agrees(schema, ours) else {**ours, **{k: v for k, v in schema.items() if k in _META}}


def _unread(schema: Any) -> Any:
    """A parameter's schema when its annotation is not read: no constraint in place of one of step6's kind
    (written from names it could not read either), its description kept; one written with intent is kept."""
    return {k: v for k, v in schema.items() if k in ("description", "title")} if _plain(schema) else schema


def _missing_schema(annotation: ast.expr | None) -> dict[str, Any]:
    """The schema of a parameter the tool schema left out: its annotation's, or no constraint."""
    try:
        return annotation_schema(annotation) if annotation is not None else {}
    except (SchemaError, SyntaxError, ValueError, RecursionError):
        return {}


def _unfittable(name: str, params: dict[str, Any], missing: list[str], positional_only: list[str]) -> str | None:
    """Why the signature's parameters cannot be put into this tool's schema, or None."""
    if positional_only:
        return (f"tools[{name}].parameters: the method's required parameter(s) {', '.join(positional_only)} are "
                "positional-only, which no call by name can fill (EnvScaler's runtime calls tools with keywords "
                "only), so the tool can never run")
    if missing and (params.get("type", "object") != "object" or not isinstance(params.get("properties", {}), dict)):
        shape = (f"'type' is {params.get('type')!r}, not 'object'" if params.get("type", "object") != "object"
                 else f"'properties' is a {type(params['properties']).__name__}, not an object")
        return (f"tools[{name}].parameters: {shape}, so the method's parameter(s) {', '.join(missing)} cannot be "
                "added to it and no call could give them")
    return None


def untakeable_names(required: Any, annotations: dict[str, Any], by_position: frozenset[str]) -> list[str]:
    """Names in `required` that no call by name can give the method (not a parameter, or positional-only)."""
    if not isinstance(required, list):
        return []
    return [r for r in required if isinstance(r, str) and (r not in annotations or r in by_position)]


def fit_tools(tools: list[ToolSchema], code: str, class_name: str) -> tuple[list[ToolSchema], list[str], list[str]]:
    """The tools an agent is offered and our argument check enforces, notes saying what changed, and the
    problems that make the env unusable as given (a tool no call can run, each naming its schema)."""
    public = [t for t in tools if not t.function.name.startswith("_") and t.function.name not in RESERVED_TOOLS]
    private = [t.function.name for t in tools if t.function.name.startswith("_")]
    reserved = [t.function.name for t in tools if t.function.name in RESERVED_TOOLS]
    notes = []
    if private:
        notes.append(f"{len(private)} private helper(s) not offered as tools ({', '.join(private)}): EnvScaler's "
                     "step6 lists every method, but only public methods are tools here and a call to a private "
                     "name is refused")
    for name in dict.fromkeys(reserved):
        notes.append(f"tool {name!r} not offered: {RESERVED_TOOLS[name]}; a reference solution's call to it "
                     "ends the replay there, as it ends the episode there")
    try:
        tree = pyast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [_unmarked_tool(t) for t in public], notes, []  # the audit rejects the env for that
    attributes = no_method_tools(code, class_name, [t.function.name for t in public])
    if attributes:
        notes.append(f"{len(attributes)} tool(s) that are no method of the class kept ("
                     f"{', '.join(f'{n}: {k}' for n, k in attributes.items())}): EnvScaler's step6 lists them and its "
                     "runtime offers them, but a call to one calls its value, which is not callable: a TypeError "
                     "that ends the episode at 0 there and here; neither validation nor an episode runs them")
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name), None)
    methods = {n.name: n for n in (cls.body if cls else []) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    optional: list[str] = []
    widened: list[str] = []
    variadic: list[str] = []
    nulls: list[str] = []
    added: list[str] = []
    quoted: list[str] = []
    aliased: list[str] = []
    reading = ClassReading(type_aliases(tree))
    unread: list[str] = []
    untakeable: list[str] = []
    problems: list[str] = []
    fitted = []
    for tool in public:
        fn = _callee(methods, tool.function.name)
        params = tool.function.parameters
        if fn is None or not isinstance(params, dict):
            fitted.append(tool)
            continue
        signature = parameters(fn)
        annotations = {a.arg: a.annotation for a in signature.every}
        read_or_not = {n: reading.read(a) for n, a in annotations.items() if a is not None}
        readings = {n: r for n, r in read_or_not.items() if r is not None}
        read = {n: r.expr for n, r in readings.items()}
        skipped = [n for n, r in read_or_not.items() if r is None]
        defaulted, by_position = signature.defaulted, signature.positional_only
        props_given = params.get("properties", {})
        missing = [p for p in annotations if p not in by_position
                   and (not isinstance(props_given, dict) or p not in props_given)]
        problem = _unfittable(tool.function.name, params, missing,
                              [p for p in annotations if p in by_position and p not in defaulted])
        if problem is not None or not isinstance(props_given, dict):
            problems += [problem] if problem is not None else []
            fitted.append(tool)
            continue
        props = dict(props_given or {})
        required = params.get("required")
        for name in missing:
            props[name] = _missing_schema(read.get(name))
            if name not in defaulted:
                required = [*(required if isinstance(required, list) else []), name]
            added.append(f"{tool.function.name}.{name}{'' if name in defaulted else ' (required)'}")
        for name in [n for n in skipped if n in props]:  # the class's budget is spent: read as a quoted part too long
            props[name] = _unread(props.get(name, {}))
            unread.append(f"{tool.function.name}.{name}")
        for name, schema in props.items():
            named = _fitted(readings.get(name), schema) if name in annotations and name not in skipped else None
            if named is None:
                continue
            props[name] = named
            if name in readings and readings[name].aliased:
                aliased.append(f"{tool.function.name}.{name}: {_cut(ast.unparse(annotations[name]), 80)} as "
                               f"{_cut(ast.unparse(read[name]), 120)}")
            elif name in readings and readings[name].quoted:
                quoted.append(f"{tool.function.name}.{name}: {ast.unparse(annotations[name])}")
            else:
                widened.append(f"{tool.function.name}.{name}")
        for name in sorted(signature.none_defaulted & set(props)):
            if isinstance(props[name], dict) and nullable(props[name]) != props[name]:
                props[name] = nullable(props[name])
                nulls.append(f"{tool.function.name}.{name}")
        extra: dict[str, Any] = {}
        for star, keyword in ((fn.args.vararg, False), (fn.args.kwarg, True)):
            if star is None:
                continue
            if props.pop(star.arg, None) is not None or star.arg in (params.get("required") or []):
                variadic.append(f"{tool.function.name}.{'**' if keyword else '*'}{star.arg}")
            if keyword:
                extra["additionalProperties"] = True
        stars = {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
        if fn.args.kwarg is None:  # a name the method cannot take: giving it is a TypeError, leaving it out runs
            for name in [p for p in props if p not in annotations or p in by_position]:
                del props[name]
                untakeable.append(f"{tool.function.name}.{name}")
            gone = [n for n in untakeable_names(required, annotations, by_position) if n not in stars]
            untakeable += [f"{tool.function.name}.{n}" for n in dict.fromkeys(gone)
                           if f"{tool.function.name}.{n}" not in untakeable]
            stars |= set(gone)
        if isinstance(required, list):
            required = [r for r in required if r not in stars]
            dropped = [r for r in required if r in defaulted]
            optional += [f"{tool.function.name}.{r}" for r in dropped]
            required = [r for r in required if r not in defaulted]
        new = {**params, "properties": props, **({"required": required} if isinstance(required, list) else {}), **extra}
        fitted.append(tool.model_copy(update={"function": tool.function.model_copy(update={"parameters": new})}))
    if added:
        notes.append(f"{len(added)} parameter(s) of the methods missing from their tool schemas added ({', '.join(added)}): "
                     "EnvScaler's runtime gives the agent's arguments to the method whatever the schema says, so "
                     "without them the tool could not be called here")
    if untakeable:
        notes.append(f"{len(untakeable)} schema propert(ies) the method cannot take removed ({', '.join(untakeable)}): "
                     "EnvScaler's runtime offers them, and a call giving one raises TypeError there (the episode "
                     "ends at 0, as it does here), while a call leaving a 'required' one out runs; kept, it made "
                     "the tool uncallable here")
    if optional:
        notes.append(f"{len(optional)} parameter(s) with a default made optional ({', '.join(optional[:8])}"
                     f"{', ...' if len(optional) > 8 else ''}): EnvScaler's step6 lists every parameter as required, "
                     "its runtime uses the default")
    if nulls:
        notes.append(f"{len(nulls)} parameter(s) whose default is None made nullable ({', '.join(nulls[:8])}"
                     f"{', ...' if len(nulls) > 8 else ''}): EnvScaler's step6 writes the annotation's type only, "
                     "its runtime passes an explicit null through to the method, whose default it is")
    if variadic:
        notes.append(f"{len(variadic)} variadic parameter(s) not offered as one argument ({', '.join(variadic[:8])}"
                     f"{', ...' if len(variadic) > 8 else ''}): EnvScaler's step6 lists them as ordinary properties, "
                     "but its runtime calls tools with keywords only, so **kwargs takes any further argument by "
                     "its own name and *args cannot be filled at all")
    if quoted:
        notes.append(f"{len(quoted)} quoted annotation(s) read as the type they name ({', '.join(quoted[:8])}"
                     f"{', ...' if len(quoted) > 8 else ''}): EnvScaler's step6 writes every quoted annotation as "
                     "a string, nested ones too, its runtime never checks arguments")
    if aliased:
        notes.append(f"{len(aliased)} annotation(s) read through module-level type aliases ({', '.join(aliased[:8])}"
                     f"{', ...' if len(aliased) > 8 else ''}): EnvScaler's step6 writes a name it cannot map as "
                     "{\"type\": \"object\"}, its runtime never checks arguments (interop/type_aliases.py)")
    if unread:
        notes.append(f"{len(unread)} annotation(s) not read through type aliases or quoted parts ({', '.join(unread[:8])}"
                     f"{', ...' if len(unread) > 8 else ''}): the class's annotations had expanded to "
                     f"{CLASS_NODES:,} nodes, the most one class's are read to (rt17-B F4), so these take no "
                     "constraint, as EnvScaler's runtime checks none")
    if widened:
        notes.append(f"{len(widened)} schema(s) EnvScaler's step6 wrote for types it cannot express taken from the "
                     f"annotation ({', '.join(widened[:8])}{', ...' if len(widened) > 8 else ''}): step6 writes "
                     "{\"type\": \"object\"} for a name outside its type map, also inside Optional (object or null) "
                     "and List, and Optional[Any] as null; its runtime never checks arguments")
    return [_unmarked_tool(t) for t in fitted], notes, problems


_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_VALUES = ("enum", "const", "default", "examples", "required")


def _unmarked(schema: Any) -> Any:
    """`schema` without a key starting with `_` at any depth (step6's `_optional`, which it leaves in the
    items of `List[Optional[int]]`): no JSON Schema keyword starts with one, so it is an internal marker, and
    kept it was served, exported and sent to every model (outside check rt18-R2 F5). The names in a
    `properties` map are parameters, and values (`enum`, `default`) data: both kept as written."""
    if isinstance(schema, list):
        return [_unmarked(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if isinstance(key, str) and key.startswith("_"):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _unmarked(inner) for name, inner in value.items()}
        else:
            out[key] = value if key in _VALUES else _unmarked(value)
    return out


def _unmarked_tool(tool: ToolSchema) -> ToolSchema:
    """`tool` with `_unmarked` parameters (the same tool when there was no marker)."""
    params = tool.function.parameters
    clean = _unmarked(params)
    if clean == params:
        return tool
    return tool.model_copy(update={"function": tool.function.model_copy(update={"parameters": clean})})


def _cut(text: str, limit: int) -> str:
    """A note's annotation, cut: an alias can expand to 10,000 nodes, and each import note is printed (rt12-B
    F4 printed 75 MB of notes)."""
    return text if len(text) <= limit else f"{text[:limit]}...[{len(text) - limit} more characters]"


def _callee(methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef], name: str) -> Any:
    """The def whose signature a call of tool `name` meets: its own, or for a property whose every `return`
    is `self.<method>` of one plain method, that method's (rt12-C F2: `return self.lend_book` was fitted
    to the getter's own signature, `self` alone, and its `book_id` removed); None for any other getter,
    whose value's signature the source does not show (its schema is kept as written)."""
    fn = methods.get(name)
    if fn is None or not is_property(fn):
        return fn
    returns = [n.value for n in ast.walk(fn) if isinstance(n, ast.Return)]
    targets = {r.attr for r in returns if isinstance(r, ast.Attribute) and isinstance(r.value, ast.Name)
               and r.value.id == "self"}
    one = len(targets) == 1 and all(isinstance(r, ast.Attribute) for r in returns)
    target = methods.get(next(iter(targets))) if one else None
    return target if target is not None and not is_property(target) else None
