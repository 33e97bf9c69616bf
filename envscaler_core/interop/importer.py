"""`import_envscaler`: EnvScaler's env metadata and scenario files -> one audited run in the store.

Read and check every record (malformed ones are reported by file and index and skipped), audit each
env with its scenarios in the sandbox (`envjob`), optionally ask the agent model to solve what is
still unproven (`solve`), then write everything in one store transaction and the run record last:
an import that fails anywhere before that leaves nothing behind.

Besides the verbatim records and their audit (`ImportedEnv`, `ImportedScenario`), the run gets the
factory's own records, so the rest of the factory works on imported data: an `EnvCandidate` (and its
validation rounds) per env, an `AcceptedEnv` per accepted env, and a verified `Scenario` per verified
RL scenario (RL export, rollouts, MCP serving).
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from envscaler_core.config import Settings, public_config
from envscaler_core.interop.classify import false_on_initial
from envscaler_core.interop.sandboxed import has_markers, parallel
from envscaler_core.interop.served_form import SERVED_FORM, served_form_problem
from envscaler_core.interop.envjob import AUDIT_RAISED, EnvOutcome, audit_or_reject, static_problems
from envscaler_core.interop.read import EnvInput, ScenarioInput, env_execution_config, read_envs, read_scenarios
from envscaler_core.interop.solutions import default_solutions_path, read_solutions, scenario_key
from envscaler_core.interop.identity import counted, difference, import_sources
from envscaler_core.interop.summary import IMPORT_ORIGIN, IMPORT_STAGE, audit_summary, is_import, summarize
from envscaler_core.models import Record, Run, StageFailure, fingerprint_of, utcnow
from envscaler_core.models.interop import ImportedEnv, ImportedScenario, record_text
from envscaler_core.models.run import run_id_problem
from envscaler_core.models.scenario import CheckSpec, Scenario, ToolCall
from envscaler_core.models.source_report import SourceReport
from envscaler_core.runtime import EnvLoadError, EnvRuntime, load_failure
from envscaler_core.scenarios.footprint import FOOTPRINT_SCHEME
from envscaler_core.scenarios.verify import verify_scenario




class ImportRefused(ValueError):
    """The import cannot start (e.g. the run id belongs to another run); nothing was written."""


class NothingImportable(ImportRefused):
    """Every record of the env metadata is malformed: an import of nothing is the user's file being wrong,
    not a result (it used to be stored as an empty, completed run and exit 0). Nothing was written."""


class ImportReport(BaseModel):
    run_id: str
    summary: dict[str, Any]
    problems: list[str] = Field(default_factory=list, description="Malformed records, 'file[index]: why'.")
    notes: list[str] = Field(default_factory=list, description="Warnings that did not skip anything.")
    seconds: dict[str, float] = Field(default_factory=dict, description="Wall time per phase: read, audit, solve, write.")


def _existing_import(store: Any, run_id: str, inputs: SourceReport) -> Run | None:
    """The import already stored under `run_id` from exactly these inputs (then importing again is a no-op),
    None when there is no such run; anything else under that id is refused before a file is read."""
    if (problem := run_id_problem(run_id)) is not None:
        raise ImportRefused(problem)
    run = store.get_run(run_id)
    if run is None:
        return None
    if not is_import(run):
        raise ImportRefused(f"run {run_id!r} already exists as a factory run in {store.url}; choose another --run-id")
    if (differs := difference(run.sources_report, inputs)) is not None:
        raise ImportRefused(f"run {run_id!r} already holds an import and these inputs differ from it: {differs}; "
                            "a run id names one import: import them under a new --run-id")
    return run


def _unchanged(store: Any, run: Run) -> ImportReport:
    """The stored audit, for an import of the same inputs into its own run: nothing is read or written."""
    summary = audit_summary(store, run.run_id) or summarize(run.run_id, [], [], [])
    problems = [f.reason for f in store.query(StageFailure, run_id=run.run_id, where={"stage": IMPORT_STAGE})]
    return ImportReport(run_id=run.run_id, summary=summary, problems=problems, notes=[
        f"run {run.run_id} already holds an import of these same files, sidecar and options: nothing changed"])


def _jobs(envs: list[EnvInput], scenarios: list[ScenarioInput], solutions: dict, runtime: EnvRuntime,
          settings: Settings, solve: bool, threads: int) -> tuple[list[Any], list[list[ScenarioInput]], list[EnvInput]]:
    groups: dict[str, list[ScenarioInput]] = {e.env_id: [] for e in envs}
    for s in scenarios:
        groups[s.env_id].append(s)

    def job(env: EnvInput, mine: list[ScenarioInput]) -> Any:
        try:
            static = static_problems(env)  # here, on this thread: ast.parse is not thread-safe on 3.11
        except Exception as exc:  # noqa: BLE001 - this env's verdict; the others must still be imported
            static = [AUDIT_RAISED.format(error=f"{type(exc).__name__}: {exc}"[:300])]
        return lambda: audit_or_reject(env, mine, solutions, runtime, settings, static, keep_states=solve,
                                       threads=threads)

    # Largest envs first: with a thread pool, the long jobs should not start last.
    order = sorted(envs, key=lambda e: -len(groups[e.env_id]))
    return [job(e, groups[e.env_id]) for e in order], [groups[e.env_id] for e in order], order


def import_envscaler(
    envs_path: Path, scenario_paths: list[Path], *, store: Any, runtime: EnvRuntime, settings: Settings, run_id: str,
    solve: bool = False, attempts: int = 2, solutions_path: Path | None = None, gateway: Any = None,
    threads: int | None = None,
) -> ImportReport:
    envs_path, scenario_paths = Path(envs_path), [Path(p) for p in scenario_paths]
    sources = [str(p.resolve()) for p in (envs_path, *scenario_paths)]
    solutions_path = solutions_path or default_solutions_path(envs_path)
    inputs = import_sources(envs_path, scenario_paths, solutions_path, solve, attempts)
    if (existing := _existing_import(store, run_id, inputs)) is not None:
        return _unchanged(store, existing)
    clock = _Clock()
    envs, env_problems, skipped = read_envs(envs_path)
    if not envs and env_problems:
        raise NothingImportable(f"{envs_path}: all {len(env_problems)} env records are malformed (first: "
                                f"{env_problems[0]})")
    scenarios, scen_problems = read_scenarios(scenario_paths, envs, skipped)
    notes = [f"{e.source}: {n}" for e in envs for n in e.notes]
    solutions: dict = {}
    sol_problems: list = []
    if solutions_path is not None:
        sidecar = read_solutions(Path(solutions_path))
        solutions, sol_problems = sidecar.found, sidecar.problems
        notes.append(f"reference solutions from {solutions_path} ({len(solutions)}), replayed before use")
        notes += sidecar.unmatched(Path(solutions_path), {scenario_key(s.record) for s in scenarios})
    problems = [str(p) for p in (*env_problems, *scen_problems, *sol_problems) if not getattr(p, "duplicate", False)]
    notes += [str(p) for p in scen_problems if p.duplicate]  # counted as duplicates, not as malformed

    clock.lap("read")
    threads = threads or settings.sandbox.workers or os.cpu_count() or 1
    jobs, groups, order = _jobs(envs, scenarios, solutions, runtime, settings, solve, threads)
    outcomes: list[EnvOutcome] = parallel(lambda job: job(), jobs, threads)
    clock.lap("audit")
    stopped = None
    if solve:
        stopped = _solve(outcomes, order, groups, runtime, settings, attempts, threads, gateway, store, run_id)
        if stopped:
            notes.append(stopped)
        clock.lap("solve")
    notes += [f"{env.source}: {n}" for env, outcome in zip(order, outcomes) for n in outcome.notes]
    promoted = _promotable(groups, outcomes, runtime, settings, threads)
    clock.lap("promote")
    records, imported_envs, imported_scenarios = _records(order, groups, outcomes, problems, promoted, solutions)
    store.upsert(records, run_id)
    store.save_run(Run(run_id=run_id, status="completed", stage=IMPORT_STAGE, sources=sources, origin=IMPORT_ORIGIN,
                       config=public_config(settings), error=stopped, updated_at=utcnow(),
                       sources_report=counted(inputs, len(envs), env_problems, scenarios, scen_problems,
                                              len(solutions), len(sol_problems))))
    clock.lap("write")
    return ImportReport(run_id=run_id, summary=summarize(run_id, imported_envs, imported_scenarios, problems),
                        problems=problems, notes=notes, seconds=clock.laps)


class _Clock:
    def __init__(self) -> None:
        self.start, self.laps = time.perf_counter(), {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = round(now - self.start, 3)
        self.start = now


def _solve(outcomes: list[EnvOutcome], order: list[EnvInput], groups: list[list[ScenarioInput]], runtime: EnvRuntime,
           settings: Settings, attempts: int, threads: int, gateway: Any, store: Any, run_id: str) -> str | None:
    from envscaler_core.interop.solve import solve

    targets, where = [], []
    for e, (env, mine, outcome) in enumerate(zip(order, groups, outcomes)):
        for k, (s, verdict) in enumerate(zip(mine, outcome.scenarios)):
            if outcome.env is not None and s.split == "rl" and verdict.audit == "unproven":
                targets.append((env, outcome.env, s, verdict))
                where.append((e, k))
    if not targets:
        return None

    async def go() -> tuple[list[Any], str | None]:
        from envscaler_core.llm import LLMGateway

        gw = gateway or LLMGateway(settings.llm, store=store, run_id=run_id, budget=settings.budget)
        try:
            return await solve(targets, runtime, gw, settings, attempts, threads)
        finally:
            if gateway is None:
                await gw.aclose()

    verdicts, stopped = asyncio.run(go())
    for (e, k), verdict in zip(where, verdicts):
        outcomes[e].scenarios[k] = verdict
    return stopped


NOT_PROMOTED_HEAD = ("verified under our emulation of EnvScaler's runtime (in the sandbox), but not promoted to a "
                     "factory scenario (gym, RL export, rollouts)")
NOT_PROMOTED = NOT_PROMOTED_HEAD + ", where its reference solution does not pass: "
LOST = ("; likely why: after the solution its state holds what the factory's form of it does not keep: {} "
        "(docs/interop.md, Known limits)")


def _promotable(groups: list[list[ScenarioInput]], outcomes: list[EnvOutcome], runtime: EnvRuntime,
                settings: Settings, threads: int) -> dict[tuple[int, int], Scenario | str]:
    """Each verified scenario as the factory scenario it would become, verified again the factory's way
    (`verify_scenario`: our loader with markers flattened, states without `_private` attributes, checks
    on those states), or why not. The audit judged it as EnvScaler's runtime does; a scenario whose own
    solution fails here would be an RL row that can never be rewarded (markers read by datetime methods,
    a check reading a private attribute), so it stays verified in the import and is not promoted. Nor is a
    scenario holding markers whose env, validated in that served form, is rejected (`served_form`)."""
    jobs = [((i, k), _factory_scenario(s, verdict.solution), outcome.env, verdict.lost)
            for i, (mine, outcome) in enumerate(zip(groups, outcomes)) if outcome.env is not None
            for k, (s, verdict) in enumerate(zip(mine, outcome.scenarios)) if verdict.audit == "verified"]
    timeout = settings.scen.check_timeout_s
    envs = sorted({i for (i, _), _, _, _ in jobs})
    problems = dict(zip(envs, parallel(lambda i: _served_form_problem(
        outcomes[i].candidate, [groups[i][k].config for (j, k), _, _, _ in jobs if j == i], runtime, settings), envs,
        threads)))

    def check(job: tuple[tuple[int, int], Scenario, Any, list[str]]) -> Scenario | str:
        (i, k), scenario, env, lost = job
        if problems[i] is not None and has_markers(groups[i][k].config):
            return NOT_PROMOTED_HEAD + ": " + SERVED_FORM + str(problems[i])
        try:
            report = verify_scenario(scenario, env, runtime, timeout, false_if_raised=false_on_initial,
                                     repeats=settings.scen.check_repeats)
        except EnvLoadError as exc:
            return NOT_PROMOTED + "its " + load_failure(exc)
        if report.ok and report.failure is None:
            return scenario.model_copy(update={"footprint": report.footprint, "footprint_scheme": FOOTPRINT_SCHEME})
        return NOT_PROMOTED + str(report.reason or report.failure) + (LOST.format(", ".join(lost)) if lost else "")

    return dict(zip((key for key, _, _, _ in jobs), parallel(check, jobs, threads)))


def _served_form_problem(candidate: Any, configs: list[Any], runtime: EnvRuntime, settings: Settings) -> str | None:
    """`served_form_problem`, or what raised in it: one env's validation must not end the import (F2)."""
    try:
        return served_form_problem(candidate, configs, runtime, settings)
    except Exception as exc:  # noqa: BLE001 - its scenarios stay unpromoted; the import goes on
        return f"its validation in that form could not finish: {type(exc).__name__}: {exc}"[:400]


def _records(order: list[EnvInput], groups: list[list[ScenarioInput]], outcomes: list[EnvOutcome],
             problems: list[str], promoted: dict[tuple[int, int], Scenario | str],
             solutions: dict[str, list[ToolCall]]) -> tuple[list[Record], list[ImportedEnv], list[ImportedScenario]]:
    records: list[Record] = []
    imported_envs: list[ImportedEnv] = []
    imported_scenarios: list[ImportedScenario] = []
    for i, (env, mine, outcome) in enumerate(zip(order, groups, outcomes)):
        imported_envs.append(ImportedEnv(
            env_id=env.env_id, position=env.position, source=env.source, record_json=record_text(env.record),
            class_name=env.class_name,
            candidate_fp=outcome.candidate.fingerprint, status="accepted" if outcome.accepted else "rejected",
            reasons=outcome.reasons, score=outcome.score))
        records += [outcome.candidate, *outcome.rounds, *([outcome.env] if outcome.env else [])]
        for k, (s, verdict) in enumerate(zip(mine, outcome.scenarios)):
            factory = promoted.get((i, k))
            imported_scenarios.append(ImportedScenario(
                split=s.split, position=s.position, source=s.source, env_id=s.env_id, task_id=s.task_id,
                record_json=record_text(s.record), audit=verdict.audit, checks=verdict.checks,  # type: ignore[arg-type]
                reasons=[*verdict.reasons, *([factory] if isinstance(factory, str) else [])],
                reference_solution=verdict.solution, solution_origin=verdict.origin,  # type: ignore[arg-type]
                attempts=verdict.attempts, scenario_fp=factory.fingerprint if isinstance(factory, Scenario) else None,
                supplied_solution=solutions.get(scenario_key(s.record), []) if s.split == "rl" else []))
            if isinstance(factory, Scenario):
                records.append(factory)
    records += imported_envs + imported_scenarios
    records += [StageFailure(stage=IMPORT_STAGE, item_fp=fingerprint_of(p), reason=p) for p in problems]
    return records, imported_envs, imported_scenarios


def _factory_scenario(s: ScenarioInput, solution: list[Any]) -> Scenario:
    config = env_execution_config(s.config)
    items = s.record.get("checklist")
    checklist = [i for i in items if isinstance(i, str)] if isinstance(items, list) else []
    return Scenario(env_id=s.env_id, initial_state=config if isinstance(config, dict) else {}, task=s.task,
                    checklist=checklist or [item for item, _ in s.checks or []],
                    checks=[CheckSpec(item=item or f"check {k + 1}", code=src) for k, (item, src) in enumerate(s.checks or [])],
                    reference_solution=solution, status="verified", checks_in_identity=True)
