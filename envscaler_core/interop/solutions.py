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

from pydantic import BaseModel, Field

from envscaler_core.interop.read import ReadError, ReadProblem, load_json
from envscaler_core.interop.strict_json import Duplicated, json_problem
from envscaler_core.models.base import fingerprint_of
from envscaler_core.models.scenario import ToolCall

SOLUTIONS_FILE = "envscaler_reference_solutions.json"
FORMAT = "envscaler-reference-solutions"
VERSION = 1


KEY_RULE = ('the key is sha256 hex of json.dumps({"env_id", "task_id", "init_config", "task"} of the record as '
            'read, sort_keys=True, separators=(",", ":"), ensure_ascii=False) in UTF-8 (docs/interop.md)')
"""How `scenario_key` is computed, said where a key matches nothing (differential round 3, F6)."""


def scenario_key(record: dict[str, Any]) -> str:
    """The sidecar's key of a scenario record: `KEY_RULE` (`fingerprint_of` is that canonical JSON)."""
    return fingerprint_of({"env_id": record.get("env_id"), "task_id": record.get("task_id"),
                           "init_config": record.get("init_config"), "task": record.get("task")})


def solution_entry(record: dict[str, Any], calls: list[ToolCall]) -> dict[str, Any]:
    return {"key": scenario_key(record), "env_id": record.get("env_id"), "task_id": record.get("task_id"),
            "calls": [{"name": c.tool, "arguments": c.args} for c in calls]}


def solutions_document(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "solutions": entries}


class SolutionsRead(BaseModel):
    """The sidecar's usable entries by key, where each came from, and the entries skipped."""

    found: dict[str, list[ToolCall]] = Field(default_factory=dict)
    index: dict[str, int] = Field(default_factory=dict, description="key -> position of its entry in the file.")
    problems: list[ReadProblem] = Field(default_factory=list)

    def unmatched(self, path: Path, keys: set[str]) -> list[str]:
        """One note per entry whose key matches no imported scenario (it is never replayed)."""
        return [str(ReadProblem(file=path.name, index=str(self.index[k]), reason=f"key {k!r} matches no imported "
                                "scenario (its env id, task id, init_config and task differ from every record read): "
                                f"not replayed; {KEY_RULE}")) for k in self.found if k not in keys]


def read_solutions(path: Path) -> SolutionsRead:
    data = load_json(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("solutions"), list):
        raise ReadError(f"{path}: not a reference-solutions file (expected {{\"format\": \"{FORMAT}\", \"solutions\": [...]}})")
    if data.get("version") != VERSION:
        raise ReadError(f"{path}: reference-solutions version {data.get('version')!r}; this envscaler reads {VERSION}")
    if isinstance(data, Duplicated):
        raise ReadError(f"{path}: the top-level object names {', '.join(map(repr, data.repeated))} more than once")
    out = SolutionsRead()
    for i, entry in enumerate(data["solutions"]):
        problem = json_problem(entry)
        calls = entry.get("calls") if isinstance(entry, dict) else None
        key = entry.get("key") if isinstance(entry, dict) else None
        ok = isinstance(key, str) and isinstance(calls, list) and all(
            isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("arguments", {}), dict)
            for c in calls)
        if problem is None and not ok:
            problem = "solution entry needs a string 'key' and 'calls' as a list of {name, arguments}"
        if problem is None and key in out.found and _same_calls(out.found[key], calls):
            continue  # the same solution again (an export before F7 wrote one per identical record): harmless
        if problem is None and key in out.found:
            problem = (f"duplicate key {key!r} (first at [{out.index[key]}]): only the first entry is replayed, "
                       "this one is skipped")
        if problem is not None:
            out.problems.append(ReadProblem(file=path.name, index=str(i), reason=problem))
            continue
        out.found[key] = [ToolCall(tool=c["name"], args=c.get("arguments", {})) for c in calls]
        out.index[key] = i
    return out


def default_solutions_path(envs_path: Path) -> Path | None:
    candidate = envs_path.with_name(SOLUTIONS_FILE)
    return candidate if candidate.is_file() else None


def dump(document: Any) -> bytes:
    """EnvScaler's own layout: `indent=2, ensure_ascii=False`."""
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _same_calls(found: list[ToolCall], calls: list[Any]) -> bool:
    return [(c.tool, c.args) for c in found] == [(c["name"], c.get("arguments", {})) for c in calls]
