"""Reference solutions beside EnvScaler's files, so a verified scenario stays verified on re-import.

EnvScaler's scenario record has no place for a reference solution (its format is fixed and its
loaders are strict about nothing, but "exactly the final scenario record shape" is what they are
written against). Our export therefore writes them to a sidecar file; the importer reads it (given
with `--solutions`, or found next to the env metadata under its standard name) and *replays* every
solution in the sandbox: a solution is evidence to re-check, never a verdict to trust.

Entries are matched to scenarios by a key over the scenario's identity (env id, task id, initial
config and task text), because EnvScaler's task ids are timestamps that need not be unique.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envscaler_core.interop.read import ReadError, ReadProblem, load_json, sound
from envscaler_core.models.base import fingerprint_of
from envscaler_core.models.scenario import ToolCall

SOLUTIONS_FILE = "envscaler_reference_solutions.json"
FORMAT = "envscaler-reference-solutions"
VERSION = 1


def scenario_key(record: dict[str, Any]) -> str:
    return fingerprint_of({"env_id": record.get("env_id"), "task_id": record.get("task_id"),
                           "init_config": record.get("init_config"), "task": record.get("task")})


def solution_entry(record: dict[str, Any], calls: list[ToolCall]) -> dict[str, Any]:
    return {"key": scenario_key(record), "env_id": record.get("env_id"), "task_id": record.get("task_id"),
            "calls": [{"name": c.tool, "arguments": c.args} for c in calls]}


def solutions_document(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "solutions": entries}


def read_solutions(path: Path) -> tuple[dict[str, list[ToolCall]], list[ReadProblem]]:
    data = load_json(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("solutions"), list):
        raise ReadError(f"{path}: not a reference-solutions file (expected {{\"format\": \"{FORMAT}\", \"solutions\": [...]}})")
    if data.get("version") != VERSION:
        raise ReadError(f"{path}: reference-solutions version {data.get('version')!r}; this envscaler reads {VERSION}")
    found: dict[str, list[ToolCall]] = {}
    problems: list[ReadProblem] = []
    for i, entry in enumerate(data["solutions"]):
        calls = entry.get("calls") if isinstance(entry, dict) else None
        key = entry.get("key") if isinstance(entry, dict) else None
        ok = isinstance(key, str) and isinstance(calls, list) and all(
            isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("arguments", {}), dict)
            for c in calls)
        if ok:
            try:
                sound(entry)
            except ValueError as exc:
                problems.append(ReadProblem(file=path.name, index=str(i), reason=str(exc)))
                continue
        if not ok:
            problems.append(ReadProblem(file=path.name, index=str(i), reason="solution entry needs a string 'key' "
                                        "and 'calls' as a list of {name, arguments}"))
            continue
        found[key] = [ToolCall(tool=c["name"], args=c.get("arguments", {})) for c in calls]
    return found, problems


def default_solutions_path(envs_path: Path) -> Path | None:
    candidate = envs_path.with_name(SOLUTIONS_FILE)
    return candidate if candidate.is_file() else None


def dump(document: Any) -> bytes:
    """EnvScaler's own layout: `indent=2, ensure_ascii=False`."""
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
