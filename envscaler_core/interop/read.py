"""Reading EnvScaler's files: env metadata (a dict keyed by env id, or a list) and scenario lists.

Every record is checked against what EnvScaler's own loaders read (`interact_with_env` and its ROLL
env raise on a missing `environment_introduction`, `tools`, `task_id`, `init_config`, `task`,
`env_class_name`, or a check item without `check_func`). A record that fails is a `ReadProblem`
naming the file and the index (or key) and is skipped; a file that is not a JSON list/object at all
is a `ReadError` and stops the import before anything is written.

Type markers: EnvScaler writes sets/tuples/datetimes/Decimals as `{"__type__": ...}` markers and,
when those do not suffice, jsonpickle (`{"py/tuple": ...}`, `{"py/set": ...}`, `{"py/object": ...}`).
Records are kept verbatim; `execution_form` turns `py/tuple`/`py/set` into markers for the sandbox,
and a record holding any other jsonpickle tag is refused (decoding it would instantiate arbitrary
classes, which EnvScaler's `read_file` does without a second thought).
"""

from __future__ import annotations

import json

import unicodedata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from envscaler_core.interop.strict_json import Duplicated, json_problem, load_json, safe
from envscaler_core.interop.tool_fit import fit_tools
from envscaler_core.interop.strict_json import FileError as ReadError  # a whole file is unusable
from envscaler_core.models.env import ToolSchema, is_python_identifier
from envscaler_core.validation.tool_kinds import declared_kinds

QUERY_LABELS = {"query": "query", "state_change": "state_change", "modify": "state_change"}
"""operation_type values -> our tool kinds ("modify" is the label EnvScaler's README still documents)."""


class ReadProblem(BaseModel):
    file: str
    index: str = Field(description="List index or dict key of the record.")
    reason: str
    duplicate: bool = Field(default=False, description=(
        "A sound record that repeats an earlier one's identity: counted as a duplicate, not as malformed."))

    def __str__(self) -> str:
        return safe(f"{self.file}[{self.index}]: {self.reason}")


class EnvInput(BaseModel):
    env_id: str
    position: int
    source: str
    record: dict[str, Any]
    class_name: str
    code: str
    tools: list[ToolSchema]
    tool_kinds: dict[str, str]
    summary: str
    introduction: str
    rules: list[str]
    notes: list[str] = Field(default_factory=list)
    tool_problems: list[str] = Field(
        default_factory=list, description="Tools no call can run as their schema stands (tool_fit), each naming it.")


class ScenarioInput(BaseModel):
    split: str
    position: int
    source: str
    record: dict[str, Any]
    env_id: str
    task_id: str
    class_name: str
    config: Any = Field(description="init_config in execution form (markers, no jsonpickle tags).")
    task: str
    checks: list[tuple[str, Any]] | None = Field(description="(check_item, check_func) per RL check; None for SFT.")


class _Bad(ValueError):
    """One record is malformed (message = the reason)."""


def sound(record: Any) -> None:
    """Strict, storable JSON: not nested absurdly deep, no NaN/Infinity, no lone surrogates, no huge
    integer literal, no key named twice in one object (`strict_json`)."""
    problem = json_problem(record)
    if problem is not None:
        raise _Bad(problem)


# ---- jsonpickle tags -> markers --------------------------------------------------------------------

_SAFE_PICKLE = {"py/tuple": "tuple", "py/set": "set"}


def _has_pickle_tags(value: Any) -> bool:
    if isinstance(value, dict):
        return any(isinstance(k, str) and k.startswith("py/") for k in value) or any(_has_pickle_tags(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_pickle_tags(v) for v in value)
    return False


def execution_form(value: Any, where: str = "") -> Any:
    """`value` with jsonpickle's `py/tuple`/`py/set` as EnvScaler markers; any other `py/` tag -> _Bad.
    A value without tags is returned as is (no copy: 10k scenarios should not cost two trees each)."""
    if not _has_pickle_tags(value):
        return value
    if isinstance(value, dict):
        tags = [k for k in value if isinstance(k, str) and k.startswith("py/")]
        if tags:
            tag = tags[0]
            if tag in _SAFE_PICKLE and len(value) == 1 and isinstance(value[tag], list):
                return {"__type__": _SAFE_PICKLE[tag], "items": [execution_form(v, where) for v in value[tag]]}
            raise _Bad(f"{where or 'value'} holds the jsonpickle tag {tag!r}: refused (decoding it would "
                       "instantiate arbitrary Python objects)")
        return {k: execution_form(v, f"{where}.{k}" if where else str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [execution_form(v, where) for v in value]
    return value


# ---- env metadata ----------------------------------------------------------------------------------

EMPTY_TASK = ("'task' is empty: the agent would be given nothing to do (EnvScaler's runtime still plays such "
              "a record, with an empty task as its first user turn; a factory scenario needs a task)")


def _text(record: dict[str, Any], key: str, *, empty_ok: bool = True, empty_why: str | None = None) -> str:
    value = record.get(key)
    if isinstance(value, str) and not empty_ok and not value.strip():
        raise _Bad(empty_why or f"'{key}' is empty (EnvScaler's loaders need it)")
    if not isinstance(value, str):
        what = "missing" if key not in record else f"a {type(value).__name__}, not a string"
        raise _Bad(f"'{key}' is {what} (EnvScaler's loaders read it)")
    return value


def _summary(record: dict[str, Any]) -> str:
    value = record.get("environment_summary")
    return value if isinstance(value, str) else ""


def _tools(record: dict[str, Any], notes: list[str]) -> list[ToolSchema]:
    raw = record.get("tools")
    if not isinstance(raw, list):
        raise _Bad("'tools' is missing or not a list (EnvScaler's runtime gives it to the agent)")
    tools = []
    for i, tool in enumerate(raw):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise _Bad(f"tools[{i}] is not an OpenAI function schema with a name")
        params = fn.get("parameters")
        if params is None:  # no `parameters`, or null: the method's signature fills it in (tool_fit)
            if "parameters" in fn:
                notes.append(f"tools[{i}] ({fn['name']}): 'parameters' is null, read as no parameters: the "
                             "method's signature gives them, as EnvScaler's runtime passes the agent's arguments "
                             "whatever the schema says")
            params = {"type": "object", "properties": {}}
        if not isinstance(params, dict):
            raise _Bad(f"tools[{i}] ({fn['name']}): 'parameters' is not an object")
        description = fn.get("description")
        try:
            tools.append(ToolSchema.model_validate({"type": "function", "function": {
                "name": fn["name"], "description": description if isinstance(description, str) else "",
                "parameters": params}}))
        except ValidationError as exc:
            raise _Bad(f"tools[{i}] ({fn['name']}): {exc.errors()[0]['msg']}") from None
    return tools


DECLARED_QUERY = ("operation {name!r} is labelled state_change in operation_list, but its {by} declare(s) a "
                  "query: judged as a query, so a call that changes state is a breach (docs/interop.md)")


def _tool_kinds(record: dict[str, Any], tools: list[ToolSchema], notes: list[str], code: str,
                class_name: str) -> dict[str, str]:
    """The tools' labels from `operation_list`, except a `state_change` label on a tool whose name or
    docstring declares a query: the declared purpose wins (docs/validation.md), else the file could label
    a `get_book` that lends the book a state change and have it accepted (rt11-B F7)."""
    kinds = _file_kinds(record, tools, notes)
    changes = [n for n, k in kinds.items() if k == "state_change"]
    for name, (kind, by) in declared_kinds(code, class_name, changes).items() if changes else ():
        if kind == "query":
            kinds[name] = "query"
            notes.append(DECLARED_QUERY.format(name=name, by=by))
    return kinds


def _file_kinds(record: dict[str, Any], tools: list[ToolSchema], notes: list[str]) -> dict[str, str]:
    ops = record.get("operation_list")
    if ops is None:
        notes.append("no operation_list: tools are not labelled query/state_change")
        return {}
    if not isinstance(ops, list):
        raise _Bad("'operation_list' is not a list")
    names = {t.function.name for t in tools}
    kinds: dict[str, str] = {}
    for op in ops:
        if not isinstance(op, dict) or not isinstance(op.get("operation_name"), str):
            continue
        label = QUERY_LABELS.get(str(op.get("operation_type", "")).strip().lower())
        if label is None:
            notes.append(f"operation {op['operation_name']!r} has unknown operation_type {op.get('operation_type')!r}")
        elif op["operation_name"] in names:
            kinds[op["operation_name"]] = label
    return kinds


def _env(env_id: str, position: int, source: str, record: Any) -> EnvInput:
    if not isinstance(record, dict):
        raise _Bad(f"env record is a {type(record).__name__}, not an object")
    sound(record)
    code = _text(record, "env_class_code", empty_ok=False)
    class_name = _text(record, "env_class_name", empty_ok=False)
    if not is_python_identifier(class_name):
        raise _Bad(f"'env_class_name' {class_name!r} is not a Python identifier")
    introduction = _text(record, "environment_introduction")
    rules = record.get("constraints_rules", [])
    if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
        raise _Bad("'constraints_rules' is not a list of strings (EnvScaler's runtime joins them as text)")
    read_notes: list[str] = []
    tools, notes, tool_problems = fit_tools(_tools(record, read_notes), code, class_name)
    notes = [*read_notes, *notes]
    kinds = _tool_kinds(record, tools, notes, code, class_name)
    if isinstance(record.get("env_id"), str) and record["env_id"] != env_id:
        notes.append(f"record's env_id {record['env_id']!r} differs from its key {env_id!r}; the key is the id")
    return EnvInput(env_id=env_id, position=position, source=source, record=record, class_name=class_name,
                    code=code, tools=tools, tool_kinds=kinds, summary=_summary(record),
                    introduction=introduction, rules=list(rules), notes=notes, tool_problems=tool_problems)


def read_envs(path: Path) -> tuple[list[EnvInput], list[ReadProblem], set[str]]:
    """Env metadata: EnvScaler's dict `{env_id: record}`, or a list of records carrying `env_id`.
    Returns the envs, the problems, and the ids of envs skipped as malformed."""
    data = load_json(path)
    name = path.name
    if isinstance(data, dict):
        pairs = data.pairs if isinstance(data, Duplicated) else list(data.items())
        entries = [(safe(key), key, value) for key, value in pairs]
    elif isinstance(data, list):
        entries = []
        for i, value in enumerate(data):
            env_id = value.get("env_id") if isinstance(value, dict) else None
            entries.append((str(i), env_id, value))
    else:
        raise ReadError(f"{path}: env metadata must be a JSON object keyed by env id (or a list), got {type(data).__name__}")
    envs: list[EnvInput] = []
    problems: list[ReadProblem] = []
    seen: dict[str, str] = {}
    skipped: set[str] = set()
    for index, env_id, record in entries:
        try:
            if not isinstance(env_id, str) or not env_id.strip():
                raise _Bad("empty env id" if isinstance(data, dict) else "list entry without a string 'env_id'")
            if safe(env_id) != env_id:
                raise _Bad("env id holds text that is not valid Unicode (a lone surrogate)")
            if env_id in seen:
                raise _Bad(f"duplicate env_id {env_id!r} (first at [{seen[env_id]}])" if isinstance(data, list) else
                           f"duplicate env id {env_id!r}: the object names it {data.repeated[env_id]} times (a JSON "
                           "reader keeps only the last, silently); the first is imported, this one skipped")
            envs.append(_env(env_id, len(envs), f"{name}[{index}]", record))
            seen[env_id] = index
        except _Bad as exc:
            problems.append(ReadProblem(file=name, index=index, reason=str(exc)))
            if isinstance(env_id, str) and env_id not in seen:
                skipped.add(env_id)
    return envs, problems, skipped


# ---- scenarios ---------------------------------------------------------------------------------------

def _checks(record: dict[str, Any]) -> list[tuple[str, Any]] | None:
    if "checklist_with_func" not in record:
        return None
    raw = record["checklist_with_func"]
    if not isinstance(raw, list):
        raise _Bad(f"'checklist_with_func' is a {type(raw).__name__}, not a list")
    checks = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or "check_func" not in item:
            raise _Bad(f"checklist_with_func[{i}] has no 'check_func' (EnvScaler's reward raises KeyError on it)")
        label = item.get("check_item")
        checks.append((label if isinstance(label, str) else "", item["check_func"]))
    return checks


def _scenario(record: Any, known: dict[str, EnvInput], skipped: set[str]) -> tuple[str, dict[str, Any]]:
    if not isinstance(record, dict):
        raise _Bad(f"scenario record is a {type(record).__name__}, not an object")
    sound(record)
    env_id = record.get("env_id")
    if not isinstance(env_id, str):
        raise _Bad("'env_id' is missing or not a string")
    if env_id not in known:
        raise _Bad(f"env {env_id!r} was skipped as malformed" if env_id in skipped
                   else f"env_id {env_id!r} is not in the env metadata{_near_miss(env_id, [*known, *skipped])}")
    class_name = _text(record, "env_class_name", empty_ok=False)
    task_id = record.get("task_id")
    if not isinstance(task_id, (str, int)) or isinstance(task_id, bool):
        raise _Bad("'task_id' is missing or not a string/integer (EnvScaler's runtime reads it)")
    if "init_config" not in record or not isinstance(record["init_config"], (dict, type(None))):
        raise _Bad("'init_config' is missing or not an object")
    task = _text(record, "task", empty_ok=False, empty_why=EMPTY_TASK)
    config = execution_form(record["init_config"], "init_config")
    return env_id, {"task_id": str(task_id), "class_name": class_name, "config": config, "task": task,
                    "checks": _checks(record)}


def _near_miss(env_id: str, ids: list[str]) -> str:
    """Why an id that prints like one of `ids` is still not it (round-trip check 4, F6: an NFD 'café'
    and the metadata's NFC one looked identical in the message). EnvScaler's runtime looks ids up by
    exact code points too, so the record stays skipped; the message only has to show the difference."""
    def loose(text: str) -> str:
        return unicodedata.normalize("NFKC", text).strip()

    for other in ids:
        if loose(other) == loose(env_id):
            if unicodedata.normalize("NFC", other) == unicodedata.normalize("NFC", env_id):
                how = "Unicode normalisation (NFC: the same text in other code points)"
            elif unicodedata.normalize("NFKC", other) == unicodedata.normalize("NFKC", env_id):
                how = ("Unicode compatibility forms (NFKC: characters that look alike but are others, such as "
                       "full-width letters)")
            else:
                how = "leading or trailing whitespace or Unicode compatibility forms (NFKC)"
            # both sides as escapes: a non-ASCII one shows its \uXXXX code points (re-check F6e)
            return (f": it differs from the metadata's {ascii(other)} only in {how}; as escapes, this record's is "
                    f"{ascii(env_id)} and the metadata's {ascii(other)}")
    return "" if env_id.isascii() else f" (as escapes: {ascii(env_id)})"


def reading_names(paths: list[Path]) -> list[str]:
    """The name each scenario file's records are reported under: its file name, and `name#2`, `name#3` for
    a file given again, so each reading is counted on its own (`identity.counted`)."""
    seen: dict[Path, int] = {}
    names = []
    for path in paths:
        seen[path] = seen.get(path, 0) + 1
        names.append(path.name if seen[path] == 1 else f"{path.name}#{seen[path]}")
    return names


def read_scenarios(paths: list[Path], envs: list[EnvInput], skipped_envs: set[str]) -> tuple[list[ScenarioInput], list[ReadProblem]]:
    """Scenario lists; RL records are those with `checklist_with_func`, SFT records those without. A record
    identical to an earlier one (the same file passed twice, a list holding a record twice) is a `duplicate`
    problem: the first is imported, the second named and skipped. Both used to be imported, and the counts
    disagreed: 2 verified, 1 in the RL export, 2 identical rows in EnvScaler's export (rt22-R11 F5).
    Different records sharing an env id and task id stay two records (EnvScaler's task ids need not be
    unique; the export warns that a join on them is ambiguous)."""
    known = {e.env_id: e for e in envs}
    scenarios: list[ScenarioInput] = []
    problems: list[ReadProblem] = []
    positions = {"rl": 0, "sft": 0}
    first: dict[str, str] = {}
    for path, name in zip(paths, reading_names(paths)):
        data = load_json(path)
        if not isinstance(data, list):
            raise ReadError(f"{path}: a scenario file must be a JSON list, got {type(data).__name__}")
        again = f" ({path.name} is given more than once)" if name != path.name else ""
        for i, record in enumerate(data):
            try:
                env_id, parsed = _scenario(record, known, skipped_envs)
            except _Bad as exc:
                problems.append(ReadProblem(file=name, index=str(i), reason=str(exc)))
                continue
            split = "sft" if parsed["checks"] is None else "rl"
            identity = json.dumps(record, sort_keys=True)  # sound: strict JSON, so it dumps (task_id keeps its type)
            if identity in first:
                problems.append(ReadProblem(file=name, index=str(i), duplicate=True, reason=(
                    f"duplicate of {first[identity]}{again} (the same record: env_id {env_id!r}, task_id "
                    f"{record['task_id']!r}): the first is imported, this one skipped")))
                continue
            first[identity] = safe(f"{name}[{i}]")
            scenarios.append(ScenarioInput(split=split, position=positions[split], source=f"{name}[{i}]",
                                           record=record, env_id=env_id, **parsed))
            positions[split] += 1
    return scenarios, problems


def env_execution_config(config: Any) -> Any:
    """The env's config as plain JSON for our own sandbox episodes (validation probes, agent play):
    markers become lists/strings there; the audit's own checks always use the faithful form."""
    if isinstance(config, dict):
        kind = config.get("__type__")
        if kind in ("set", "tuple") and isinstance(config.get("items"), list):
            return [env_execution_config(v) for v in config["items"]]
        if kind in ("datetime", "decimal") and isinstance(config.get("value"), str):
            return config["value"]
        if kind == "dict" and isinstance(config.get("items"), list):
            return {str(env_execution_config(k.get("value") if isinstance(k, dict) else k)): env_execution_config(v)
                    for k, v in (p for p in config["items"] if isinstance(p, list) and len(p) == 2)}
        return {k: env_execution_config(v) for k, v in config.items()}
    if isinstance(config, list):
        return [env_execution_config(v) for v in config]
    return config
