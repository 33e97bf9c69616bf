"""`--format envscaler`: a run as EnvScaler's own files, loadable by its `interact_with_env` and ROLL env.

* `env_metadata.json`: a dict keyed by env id, each value EnvScaler's final env record;
* `rl_scenario_metadata.json` / `sft_scenario_metadata.json`: JSON lists of its final scenario
  record (`env_id, env_class_name, task_id, init_config, task, checklist, checklist_with_func`;
  SFT records without the last two, as EnvScaler's SFT scenarios have none);
* `envscaler_reference_solutions.json`: our sidecar with the reference solution of every verified
  scenario, so `envscaler import envscaler` re-verifies them (the record shape has no room for it), and
  of every scenario that is `not_bool` or `check_error` because of what a check did after its solution
  (the solution is what showed it; without it a re-import would find the scenario only unproven), and the
  supplied solution of every other RL record that had one, as given, failed or not (a re-import replays it
  and gives the same reason; without it, "no reference solution yet": differential round 3, F5).

An imported run is written back from its verbatim records, in their original order, so import ->
export -> import gives the same envs, scenarios and audit. A factory run's records are translated
(`structure.env_record`); its task ids are the scenario fingerprint's first 16 hex digits. By default
everything the run holds is written (the audit travels with it); `verified_only` keeps accepted envs,
verified RL scenarios and the loadable SFT scenarios of accepted envs: the set to train on.
Layout is EnvScaler's own `save_file`: `indent=2, ensure_ascii=False`; lists are streamed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from envscaler_core.export.atomic import atomic_output
from envscaler_core.interop.solutions import SOLUTIONS_FILE, solution_entry, solutions_document
from envscaler_core.interop.structure import env_record
from envscaler_core.models import AcceptedEnv, EnvCandidate, EnvSpec, Scenario
from envscaler_core.models.interop import ImportedEnv, ImportedScenario

ENVS_FILE = "env_metadata.json"
RL_FILE = "rl_scenario_metadata.json"
SFT_FILE = "sft_scenario_metadata.json"
FILES = (ENVS_FILE, RL_FILE, SFT_FILE, SOLUTIONS_FILE)


def _indented(value: Any, level: int) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return text.replace("\n", "\n" + "  " * level)


def write_list(fh: BinaryIO, records: Iterable[Any]) -> int:
    """Exactly `json.dump(list, indent=2, ensure_ascii=False)`, one record at a time."""
    n = 0
    for record in records:
        fh.write(((",\n  " if n else "[\n  ") + _indented(record, 1)).encode("utf-8"))
        n += 1
    fh.write(("\n]\n" if n else "[]\n").encode("utf-8"))
    return n


def write_dict(fh: BinaryIO, items: Iterable[tuple[str, Any]]) -> int:
    n = 0
    for key, value in items:
        fh.write(((",\n  " if n else "{\n  ") + json.dumps(key, ensure_ascii=False) + ": " + _indented(value, 1)).encode("utf-8"))
        n += 1
    fh.write(("\n}\n" if n else "{}\n").encode("utf-8"))
    return n


def factory_scenario_record(env: AcceptedEnv, scenario: Scenario) -> dict[str, Any]:
    return {"env_id": env.env_id, "env_class_name": env.class_name, "task_id": scenario.fingerprint[:16],
            "init_config": scenario.initial_state, "task": scenario.task,
            "checklist": list(scenario.checklist) or [c.item for c in scenario.checks],
            "checklist_with_func": [{"check_item": c.item, "check_func": c.code} for c in scenario.checks]}


def _imported(store: Any, run_id: str, verified_only: bool) -> tuple[list, list, list, list]:
    envs = sorted(store.query(ImportedEnv, run_id=run_id), key=lambda e: e.position)
    if verified_only:
        envs = [e for e in envs if e.status == "accepted"]
    keep = {e.env_id for e in envs}
    scenarios = sorted(store.query(ImportedScenario, run_id=run_id), key=lambda s: (s.split, s.position))
    rl = [s for s in scenarios if s.split == "rl" and s.env_id in keep and (s.audit == "verified" or not verified_only)]
    sft = [s for s in scenarios if s.split == "sft" and s.env_id in keep and (s.audit == "unproven" or not verified_only)]
    solutions = [solution_entry(s.record, s.reference_solution) if s.audit in ("verified", "not_bool", "check_error", "nondeterministic")
                 and s.reference_solution else solution_entry(s.record, s.supplied_solution)
                 for s in rl if s.reference_solution or s.supplied_solution]
    return [(e.env_id, e.record) for e in envs], [s.record for s in rl], [s.record for s in sft], solutions


def _factory(store: Any, run_id: str, verified_only: bool) -> tuple[list, list, list, list]:
    envs = store.query(AcceptedEnv, run_id=run_id)
    candidates = {c.fingerprint: c for c in store.query(EnvCandidate, run_id=run_id)}
    specs = {s.fingerprint: s for s in store.query(EnvSpec, run_id=run_id)}
    by_id = {e.env_id: e for e in envs}
    env_items = []
    for env in envs:
        cand = candidates.get(env.candidate_fp)
        env_items.append((env.env_id, env_record(env, specs.get(cand.spec_fp) if cand and cand.spec_fp else None)))
    rl, solutions = [], []
    for scenario in store.query(Scenario, run_id=run_id):
        env = by_id.get(scenario.env_id)
        if env is None or not scenario.checks or (verified_only and scenario.status != "verified"):
            continue
        record = factory_scenario_record(env, scenario)
        rl.append(record)
        if scenario.status == "verified" and scenario.reference_solution:
            solutions.append(solution_entry(record, scenario.reference_solution))
    return env_items, rl, [], solutions


def _one_per_key(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first entry per key: records identical in env id, task id, init_config and task share one key,
    so their importer reads one solution for all of them; a second entry made our own sidecar "malformed"
    on re-import (interop re-check, F7)."""
    seen: set[str] = set()
    out = []
    for entry in entries:
        if entry["key"] not in seen:
            seen.add(entry["key"])
            out.append(entry)
    return out


def export_envscaler(store: Any, run_id: str, target: Path, *, verified_only: bool = False) -> dict[str, int]:
    """Write the four files atomically into `target`; returns rows per file name."""
    imported = bool(store.query(ImportedEnv, run_id=run_id))
    envs, rl, sft, solutions = (_imported if imported else _factory)(store, run_id, verified_only)
    rows: dict[str, int] = {}
    with atomic_output(target / ENVS_FILE) as fh:
        rows[ENVS_FILE] = write_dict(fh, envs)
    with atomic_output(target / RL_FILE) as fh:
        rows[RL_FILE] = write_list(fh, rl)
    with atomic_output(target / SFT_FILE) as fh:
        rows[SFT_FILE] = write_list(fh, sft)
    solutions = _one_per_key(solutions)
    with atomic_output(target / SOLUTIONS_FILE) as fh:
        fh.write((json.dumps(solutions_document(solutions), indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    rows[SOLUTIONS_FILE] = len(solutions)
    return rows
