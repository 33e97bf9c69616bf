"""BFCL function docs as the OpenAI tool schemas BFCL's own OpenAI FC handler sends.

The package's path is `load_dataset_entry` (appends " Note that the provided function is in Python 3
syntax." to every description) then `convert_to_tool(functions, GORILLA_TO_OPENAPI,
ModelStyle.OPENAI_COMPLETIONS)` in `bfcl_eval.model_handler.utils`. That module cannot be imported
without the package's heavy dependencies, so the two steps are re-implemented here for the
OpenAI-completions style only; `tests/bfcl/test_schemas.py` runs the package's own functions (taken
from its source) on every doc and requires identical output.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from envscaler_core.bfcl.data import BFCLTask, function_docs_for

PYTHON_HINT = " Note that the provided function is in Python 3 syntax."
GORILLA_TO_OPENAPI = {
    "integer": "integer", "number": "number", "float": "number", "string": "string", "boolean": "boolean",
    "bool": "boolean", "array": "array", "list": "array", "dict": "object", "object": "object", "tuple": "array",
    "any": "string", "byte": "integer", "short": "integer", "long": "integer", "double": "number",
    "char": "string", "ArrayList": "array", "Array": "array", "HashMap": "object", "Hashtable": "object",
    "Queue": "array", "Stack": "array", "Any": "string", "String": "string", "Bigint": "integer",
}


def _cast_types(properties: dict[str, Any]) -> dict[str, Any]:
    """`_cast_to_openai_type` with the GORILLA_TO_OPENAPI mapping (mutates and returns `properties`)."""
    for key, value in properties.items():
        if "type" not in value:
            value["type"] = "string"
        else:
            var_type = value["type"]
            if var_type == "float":
                value["format"] = "float"
                value["description"] += " This is a float type value."
            value["type"] = GORILLA_TO_OPENAPI.get(var_type, "string")
        if value["type"] in ("array", "object"):
            if "properties" in value:
                value["properties"] = _cast_types(value["properties"])
            elif "items" in value:
                items = value["items"]
                items["type"] = GORILLA_TO_OPENAPI[items["type"]]
                if items["type"] == "array" and "items" in items:
                    items["items"]["type"] = GORILLA_TO_OPENAPI[items["items"]["type"]]
                elif items["type"] == "object" and "properties" in items:
                    items["properties"] = _cast_types(items["properties"])
        properties[key] = value
    return properties


def to_openai_tools(docs: list[dict[str, Any]], hint: bool = True) -> list[dict[str, Any]]:
    """BFCL docs -> `[{"type": "function", "function": {...}}]` exactly as BFCL's OpenAI FC handler."""
    tools = []
    for doc in json.loads(json.dumps(docs)):  # a deep copy of plain JSON data, ~5x cheaper than copy.deepcopy
        if hint:
            doc["description"] = doc["description"] + PYTHON_HINT
        if "." in doc["name"]:
            doc["name"] = re.sub(r"\.", "_", doc["name"])
        doc["parameters"]["type"] = "object"
        doc["parameters"]["properties"] = _cast_types(doc["parameters"]["properties"])
        tools.append({"type": "function", "function": doc})
    return tools


@lru_cache(maxsize=512)
def _tools_text(classes: tuple[str, ...], names: tuple[str, ...], held: frozenset[str]) -> str:
    """Held-out functions come back without the Python 3 note: BFCL removes them from the docs before
    it adds the note (`populate_test_cases_with_predefined_functions`, then the language hint) and
    adds them back later as they were."""
    docs = {d["name"]: d for d in function_docs_for(list(classes))}
    return json.dumps([*to_openai_tools([docs[name] for name in names if name not in held]),
                       *to_openai_tools([docs[name] for name in names if name in held], hint=False)])


def tools_for(task: BFCLTask, turn: int) -> list[dict[str, Any]]:
    """The tools offered at `turn` (held-out functions appear from their turn on, appended).

    Converted once per (classes, offered names) and handed out as a fresh copy: a task asks for its
    ~30 tools every turn, and converting them again (`to_openai_tools`) cost ~6% of the host's CPU
    in an LLM evaluation; parsing the cached text is several times cheaper and keeps callers apart."""
    held = frozenset(name for names in task.held_out.values() for name in names)
    return json.loads(_tools_text(tuple(task.involved_classes), tuple(task.function_names(turn)), held))


def all_tools(task: BFCLTask) -> list[dict[str, Any]]:
    """Every function of the task's classes (what an MCP client or gym policy may call)."""
    return to_openai_tools(function_docs_for(task.involved_classes))


def function_names(task: BFCLTask) -> frozenset[str]:
    """The names an MCP client or gym policy may call. BFCL's own loop `eval`s any name (a builtin such
    as `open` or `__import__` runs, inside our jail); our surfaces offer these functions and refuse
    the rest, as they do for synthesized envs. The eval keeps BFCL's behaviour, for fidelity."""
    return frozenset(doc["name"] for doc in function_docs_for(task.involved_classes))
