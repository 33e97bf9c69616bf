"""The factory's stages as resumable batch operations over the store.

Every stage has two halves: `pending_<stage>(ctx)` asks the store what is still to do (items with no
output yet whose failures are below the attempt limit), and `<stage>(ctx, fps)` does a batch of
those and writes the results back with idempotent upserts. Because "what is done" is read from the
store every time, re-running a stage after a crash (or `envscaler resume`) repeats nothing that
finished, and because LLM calls go through the gateway's persistent cache, a half-finished item
re-spends no tokens on the calls it had already made.

Nothing here imports Prefect: the flows decide batching and retries; these functions decide what an
item is and when it is done.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from envscaler_core.mine import infer_topics, judge_tasks, read_sources, select_topics
from envscaler_core.models import (
    AcceptedEnv, EnvCandidate, EnvSpec, EnvTopic, Record, Scenario, SourceTask, StageFailure, Trajectory,
)
from envscaler_core.pipeline.context import RunContext
from envscaler_core.rollout import run_rollout
from envscaler_core.scenarios import generate_scenarios
from envscaler_core.synth import synthesize_env
from envscaler_core.validation import validate_candidate


class BatchReport(BaseModel):
    """What one batch did; the flow sums these into the run's funnel and failure table."""

    stage: str
    done: int = 0
    failed: int = 0
    written: int = 0
    failures: list[str] = Field(default_factory=list, description="'<item fp[:12]>: <reason>' lines.")


# ---- bookkeeping --------------------------------------------------------------------------------

def _failures(ctx: RunContext, stage: str) -> dict[str, StageFailure]:
    return {f.item_fp: f for f in ctx.store.query(StageFailure, run_id=ctx.run_id) if f.stage == stage}


def _given_up(ctx: RunContext, stage: str) -> set[str]:
    limit = ctx.settings.flow.max_item_attempts
    return {fp for fp, f in _failures(ctx, stage).items() if f.attempts >= limit}


def _fail(ctx: RunContext, report: BatchReport, item_fp: str, reason: str) -> StageFailure:
    previous = ctx.store.get(StageFailure, StageFailure(stage=report.stage, item_fp=item_fp, reason="").fingerprint,
                             ctx.run_id)
    attempts = previous.attempts + 1 if previous else 1
    report.failed += 1
    report.failures.append(f"{item_fp[:12]}: {reason}")
    return StageFailure(stage=report.stage, item_fp=item_fp, attempts=attempts, reason=reason[:2000])


def _write(ctx: RunContext, report: BatchReport, records: Sequence[Record]) -> None:
    if records:
        counts = ctx.store.upsert(list(records), ctx.run_id)
        report.written += counts.inserted + counts.updated


async def _each(coros: Sequence[Any]) -> list[Any]:
    """Run item coroutines concurrently; an item's own exception comes back as its result so that
    one bad item cannot throw away the finished work of its batch-mates."""
    import asyncio

    return list(await asyncio.gather(*coros, return_exceptions=True))


def _is_infra(exc: BaseException) -> bool:
    """A failure about the world, not the item (endpoint down, bad key, budget, cancellation): it is
    not charged to the item; the batch writes what it finished and re-raises it (see `_finish`)."""
    from envscaler_core.llm.errors import BudgetExceeded, LLMConfigError, LLMRequestRejected, LLMUnavailableError

    return isinstance(exc, BudgetExceeded | LLMConfigError | LLMRequestRejected | LLMUnavailableError) or \
        not isinstance(exc, Exception)


def _item_failed(ctx: RunContext, report: BatchReport, item_fp: str, exc: BaseException, records: list[Record]) -> None:
    if not _is_infra(exc):
        records.append(_fail(ctx, report, item_fp, f"{type(exc).__name__}: {exc}"))


def _by_fp(ctx: RunContext, model: type[Record], fps: Sequence[str]) -> list[Any]:
    """The batch's records, read by key: reading the whole table per batch made a stage's reads grow
    with the square of the run's size (bench_scale)."""
    return ctx.store.query(model, run_id=ctx.run_id, where={"fingerprint": sorted(set(fps))}) if fps else []


# ---- Stage 1: mine ------------------------------------------------------------------------------

class SourceError(ValueError):
    """The sources cannot feed a run (a file with no task, an unreadable format, nothing at all)."""


def ingest(ctx: RunContext, paths: Sequence[Path]) -> BatchReport:
    """Read, filter and dedup the source files into `source_tasks` (idempotent), and keep the per-file
    report on the run. Unusable sources raise `SourceError` before any task is written. Files added to
    a run later (`--add-sources`) are read after the ones it read before, so their report counts a task
    the run already has as a duplicate (first seen wins, across all files)."""
    from envscaler_core.mine.source_report import build_source_report, changed_sources, reading_order, source_errors

    before = ctx.store.get_run(ctx.run_id)
    earlier = before.sources_report if before is not None else None
    paths = reading_order(earlier, paths)
    gone = [str(p) for p in paths if not Path(p).is_file()]
    if gone:  # moved or deleted since the run began: its resume must say so, not fail on a FileNotFoundError
        from envscaler_core.pipeline.source_paths import missing_message, search_dirs

        raise SourceError(missing_message(gone, search_dirs(), before))
    result = read_sources([Path(p) for p in paths], max_tasks=ctx.settings.mine.max_tasks,
                          max_task_chars=ctx.settings.mine.max_task_chars)
    sources_report = build_source_report(paths, result, ctx.settings.mine.max_tasks)
    changed = changed_sources(earlier, sources_report)
    if changed:
        raise SourceError("; ".join(changed) + "; a run id names one run over one dataset: start the new contents "
                          "under a new --run-id, or put the old file back to continue this run")
    if earlier is not None:  # files added later (--add-sources) join the report; the earlier ones keep their digests
        now = {f.path for f in sources_report.files}
        sources_report = sources_report.model_copy(update={
            "files": [f for f in earlier.files if f.path not in now] + sources_report.files})
    ctx.update_run(sources_report=sources_report)
    errors = source_errors(sources_report, strict=ctx.settings.mine.strict_sources)
    if errors:
        raise SourceError("; ".join(errors))
    report = BatchReport(stage="mine.ingest", done=len(result.tasks))
    known = ctx.store.fingerprints(SourceTask, ctx.run_id)
    _write(ctx, report, [t for t in result.tasks if t.fingerprint not in known])
    report.failures = [f"{p.path}:{p.line}: {p.reason}" for p in result.problems][:50]
    return report


def pending_judge(ctx: RunContext) -> list[str]:
    skip = _given_up(ctx, "mine.judge")
    return [t.fingerprint for t in ctx.store.query(SourceTask, run_id=ctx.run_id)
            if t.stateful is None and t.fingerprint not in skip]


async def judge(ctx: RunContext, fps: Sequence[str]) -> BatchReport:
    report = BatchReport(stage="mine.judge")
    judged = await judge_tasks(_by_fp(ctx, SourceTask, fps), ctx.gateway, concurrency=ctx.settings.llm.max_concurrency,
                               batch=ctx.settings.mine.llm_batch)
    failures = [_fail(ctx, report, t.fingerprint, t.judge_reason or "no judgement") for t in judged if t.stateful is None]
    report.done = len(judged) - len(failures)
    _write(ctx, report, [t for t in judged if t.stateful is not None] + failures)
    return report


def pending_topics(ctx: RunContext) -> list[str]:
    have = {t.source_task_fp for t in ctx.store.query(EnvTopic, run_id=ctx.run_id)}
    skip = _given_up(ctx, "mine.topic")
    return [t.fingerprint for t in ctx.store.query(SourceTask, run_id=ctx.run_id, where={"stateful": True})
            if t.fingerprint not in have and t.fingerprint not in skip]


async def topics(ctx: RunContext, fps: Sequence[str]) -> BatchReport:
    report = BatchReport(stage="mine.topic")
    results = await infer_topics(_by_fp(ctx, SourceTask, fps), ctx.gateway, concurrency=ctx.settings.llm.max_concurrency,
                                 batch=ctx.settings.mine.llm_batch)
    records: list[Record] = []
    for r in results:
        if r.topic is not None:
            records.append(r.topic)
            report.done += 1
        else:
            records.append(_fail(ctx, report, r.task_fp, r.failure or "no topic"))
    _write(ctx, report, records)
    return report


async def select(ctx: RunContext) -> BatchReport:
    """Dedup and select over ALL topics of the run (deterministic, so re-running it is a no-op)."""
    report = BatchReport(stage="mine.select")
    all_topics = sorted(ctx.store.query(EnvTopic, run_id=ctx.run_id), key=lambda t: t.fingerprint)
    built = frozenset(c.topic_fp for c in ctx.store.query(EnvCandidate, run_id=ctx.run_id))
    chosen = await select_topics(all_topics, ctx.gateway, ctx.settings.mine, keep=built)
    report.done = sum(1 for t in chosen if t.selected)
    _write(ctx, report, chosen)
    return report


# ---- Stage 2: synthesize ------------------------------------------------------------------------

def pending_synth(ctx: RunContext) -> list[str]:
    have = {c.topic_fp for c in ctx.store.query(EnvCandidate, run_id=ctx.run_id)}
    skip = _given_up(ctx, "synth")
    return [t.fingerprint for t in ctx.store.query(EnvTopic, run_id=ctx.run_id, where={"selected": True})
            if t.fingerprint not in have and t.fingerprint not in skip]


async def synthesize(ctx: RunContext, fps: Sequence[str]) -> BatchReport:
    report = BatchReport(stage="synth")
    chosen = _by_fp(ctx, EnvTopic, fps)
    results = await _each([synthesize_env(t, ctx.gateway, ctx.settings) for t in chosen])
    records: list[Record] = []
    for topic, result in zip(chosen, results, strict=True):
        if isinstance(result, BaseException):
            _item_failed(ctx, report, topic.fingerprint, result, records)
            continue
        if result.spec is not None:
            records.append(result.spec)
        if result.candidate is not None:
            records.append(result.candidate)
            report.done += 1
        else:
            records.append(_fail(ctx, report, topic.fingerprint, result.failure or "no candidate"))
    return _finish(ctx, report, records, results)


# ---- Stage 3: validate --------------------------------------------------------------------------

def mark_duplicates(ctx: RunContext, validating: frozenset[str] = frozenset()) -> BatchReport:
    """Candidates with identical code (two topics, one class) are validated once. The keeper is one
    that validation already decided (or, streaming, is deciding now: `validating`), else one still
    waiting for validation (the one earlier looks kept: a resume's stream has taken nothing yet), else
    the smallest fingerprint, so shards running this step at different moments agree; the others are
    marked `duplicate` with a pointer to it. A keeper that is itself marked duplicate (a group left
    with no candidate to validate) goes back to `generated`: a group always keeps one.

    A red team lost an accepted env this way: a streamed run killed while its keeper was being
    validated resumed with nothing taken, and the smallest fingerprint, already a duplicate, was kept.

    Residual race (documented): two shards may each start validating a same-code candidate before
    either has run this step after the other's synthesis; both are then validated. Nothing is lost,
    the second env is a duplicate by content."""
    report = BatchReport(stage="validate.dedup")
    groups: dict[tuple[str, str], list[EnvCandidate]] = {}
    for cand in ctx.store.query(EnvCandidate, run_id=ctx.run_id):
        groups.setdefault((cand.class_name, cand.class_code), []).append(cand)
    marked: list[Record] = []
    for group in groups.values():
        keep = min(group, key=lambda c: (_dedup_rank(c, validating), c.fingerprint))
        if keep.status == "duplicate":
            marked.append(keep.model_copy(update={"status": "generated", "failure_reason": None}))
        marked += [c.model_copy(update={"status": "duplicate",
                                        "failure_reason": f"same code as candidate {keep.fingerprint[:12]}"})
                   for c in group if c is not keep and c.status == "generated" and c.fingerprint not in validating]
    report.done = len(marked)
    _write(ctx, report, marked)
    return report


def _dedup_rank(cand: EnvCandidate, validating: frozenset[str]) -> int:
    """0: decided or being validated; 1: waiting for validation; 2: marked duplicate."""
    if cand.status not in ("generated", "duplicate") or cand.fingerprint in validating:
        return 0
    return 1 if cand.status == "generated" else 2


def pending_validate(ctx: RunContext, topics: Sequence[str] | None = None) -> list[str]:
    """`topics`: only the candidates synthesized from these (a streamed run asks after each synth batch)."""
    skip = _given_up(ctx, "validate")
    where: dict[str, Any] = {"status": "generated"} | ({"topic_fp": list(topics)} if topics is not None else {})
    return [c.fingerprint for c in ctx.store.query(EnvCandidate, run_id=ctx.run_id, where=where)
            if c.fingerprint not in skip]


async def validate(ctx: RunContext, fps: Sequence[str]) -> BatchReport:
    report = BatchReport(stage="validate")
    candidates = _by_fp(ctx, EnvCandidate, fps)
    specs = {s.fingerprint: s for s in _by_fp(ctx, EnvSpec, [c.spec_fp for c in candidates if c.spec_fp])}
    outcomes = await _each([
        validate_candidate(c, ctx.runtime, ctx.gateway, ctx.settings, spec=specs.get(c.spec_fp or ""))
        for c in candidates])
    records: list[Record] = []
    for cand, out in zip(candidates, outcomes, strict=True):
        if isinstance(out, BaseException):
            _item_failed(ctx, report, cand.fingerprint, out, records)
            continue
        records.extend(out.rounds)
        if out.env is not None:
            records += [out.env, cand.model_copy(update={"status": "accepted", "failure_reason": None})]
        else:
            why = out.failure or "; ".join((out.report.critical + out.report.blocking)[:3]) or (
                f"score {out.report.score:.2f} < threshold {out.report.threshold:.2f}")
            records.append(cand.model_copy(update={"status": "rejected", "failure_reason": why[:2000]}))
        report.done += 1
    return _finish(ctx, report, records, outcomes)


# ---- ScenGenerator ------------------------------------------------------------------------------

def pending_scenarios(ctx: RunContext, candidates: Sequence[str] | None = None) -> list[str]:
    """`candidates`: only the envs accepted from these (a streamed run asks after each validate batch)."""
    envs = ctx.store.query(AcceptedEnv, run_id=ctx.run_id,
                           where={"candidate_fp": list(candidates)} if candidates is not None else None)
    have = {s.env_id for s in ctx.store.query(
        Scenario, run_id=ctx.run_id, where={"env_id": [e.env_id for e in envs]} if candidates is not None else None)}
    skip = _given_up(ctx, "scen")
    return [e.fingerprint for e in envs if e.env_id not in have and e.fingerprint not in skip]


async def scenarios(ctx: RunContext, fps: Sequence[str]) -> BatchReport:
    report = BatchReport(stage="scen")
    envs = _by_fp(ctx, AcceptedEnv, fps)
    results = await _each([generate_scenarios(e, ctx.runtime, ctx.gateway, ctx.settings) for e in envs])
    records: list[Record] = []
    for env, made in zip(envs, results, strict=True):
        if isinstance(made, BaseException):
            _item_failed(ctx, report, env.fingerprint, made, records)
            continue
        records.extend(made)
        if not any(s.status == "verified" for s in made):
            reasons = sorted({s.rejection_reason or "?" for s in made})
            records.append(_fail(ctx, report, env.fingerprint, "no verified scenario: " + "; ".join(reasons)[:1500]))
        else:
            report.done += 1
    return _finish(ctx, report, records, results)


# ---- Rollouts -----------------------------------------------------------------------------------

def pending_rollouts(ctx: RunContext, envs: Sequence[str] | None = None) -> list[str]:
    """Verified scenarios that still miss at least one of their `per_scenario` samples; with `envs` (env
    fingerprints), only theirs (a streamed run asks after each scen batch)."""
    cfg = ctx.settings.rollout
    where: dict[str, Any] = {"status": "verified"}
    if envs is not None:
        where["env_id"] = [e.env_id for e in ctx.store.query(AcceptedEnv, run_id=ctx.run_id,
                                                             where={"fingerprint": list(envs)})]
    scenarios = ctx.store.query(Scenario, run_id=ctx.run_id, where=where)
    done: dict[str, int] = {}
    for t in ctx.store.query(Trajectory, run_id=ctx.run_id, where={"mode": cfg.mode} | (
            {"scenario_fp": [s.fingerprint for s in scenarios]} if envs is not None else {})):
        done[t.scenario_fp] = done.get(t.scenario_fp, 0) + 1
    skip = _given_up(ctx, "rollout")
    return [s.fingerprint for s in scenarios if done.get(s.fingerprint, 0) < cfg.per_scenario and s.fingerprint not in skip]


async def rollouts(ctx: RunContext, fps: Sequence[str]) -> BatchReport:
    report = BatchReport(stage="rollout")
    chosen = _by_fp(ctx, Scenario, fps)
    # the batch's envs and trajectories only: whole-table reads per batch grow with the square of the run
    envs = {e.env_id: e for e in ctx.store.query(AcceptedEnv, run_id=ctx.run_id,
                                                 where={"env_id": sorted({s.env_id for s in chosen})})} if chosen else {}
    have = {(t.scenario_fp, t.sample) for t in ctx.store.query(
        Trajectory, run_id=ctx.run_id, where={"mode": ctx.settings.rollout.mode, "scenario_fp": sorted(set(fps))})}
    jobs = [(s, k) for s in chosen for k in range(ctx.settings.rollout.per_scenario)
            if (s.fingerprint, k) not in have]
    results = await _each([run_rollout(envs[s.env_id], s, ctx.runtime, ctx.gateway, ctx.settings, sample=k)
                           for s, k in jobs])
    records: list[Record] = []
    for (scenario, _), res in zip(jobs, results, strict=True):
        if isinstance(res, BaseException):
            _item_failed(ctx, report, scenario.fingerprint, res, records)
        else:
            records.append(res)
            report.done += 1
    return _finish(ctx, report, records, results)


def _finish(ctx: RunContext, report: BatchReport, records: list[Record], results: Sequence[Any]) -> BatchReport:
    """Write the batch, then surface the first infrastructure error so the orchestrator retries or stops."""
    _write(ctx, report, records)
    for r in results:
        if isinstance(r, BaseException) and _is_infra(r):
            raise r
    return report
