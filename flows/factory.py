"""The end-to-end factory flow, and one flow per stage for partial runs.

A run is the durable unit: its id keys every row in the store. Starting a flow with an existing run
id resumes it: each stage asks the store what is still pending, so finished items are skipped, items
that failed fewer than `flow.max_item_attempts` times are retried, and LLM calls already made are
answered from the gateway's persistent cache. A Prefect flow-run retry does exactly the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact

from envscaler_core.config import load_settings, outputs_root, public_config, store_option
from envscaler_core.models import Run, utcnow
from envscaler_core.pipeline import BatchReport, RunContext
from envscaler_core.pipeline import stages as S
from envscaler_core.pipeline import termination
from envscaler_core.pipeline.funnel_notes import produced_nothing
from envscaler_core.pipeline.source_paths import anchor_run_sources
from envscaler_core.pipeline.report import RunSummary, build_summary, summary_markdown
from envscaler_core.store.claims import claimed_run, live_shards
from envscaler_core.pipeline.progress import ProgressTracker
from flows.progress import artifact_key, make_tracker, publishing
from flows.stale_runs import crash_stale_runs
from tasks import stages as T
from tasks.context import open_context

STAGES = ("mine", "synth", "validate", "scen", "rollout", "export")
SANDBOX_STAGES = ("validate", "scen", "rollout")

Pending = Callable[[RunContext], list[str]]
BatchTask = Callable[[RunContext, Sequence[str]], Awaitable[BatchReport]]

_STEPS: dict[str, list[tuple[str, Pending | None, Any]]] = {
    "mine": [("mine.judge", S.pending_judge, T.judge), ("mine.topic", S.pending_topics, T.topics),
             ("mine.select", None, T.select)],
    "synth": [("synth", S.pending_synth, T.synthesize)],
    "validate": [("validate.dedup", None, T.mark_duplicates), ("validate", S.pending_validate, T.validate)],
    "scen": [("scen", S.pending_scenarios, T.scenarios)],
    "rollout": [("rollout", S.pending_rollouts, T.rollouts)],
}


def _chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def items_per_task(ctx: RunContext, step: str) -> int:
    """`flow.batch_size` items of LLM work per Prefect task. Mine's steps ask about `mine.llm_batch`
    source tasks in one request, so their tasks take that many times more items: at one request per
    task, the 33 judge requests of the API-Bank file went out 8 at a time (`flow.batches_in_flight`),
    2.1 s where the LLM needed 0.3 s (bench_pipeline)."""
    per_request = ctx.settings.mine.llm_batch if step in ("mine.judge", "mine.topic") else 1
    return ctx.settings.flow.batch_size * per_request


def in_shard(fingerprint: str, shard: tuple[int, int]) -> bool:
    """Stable partition of items over `count` workers by fingerprint (hex sha256)."""
    index, count = shard
    return int(fingerprint[:12], 16) % count == index


def _topic_of(ctx: RunContext, step: str) -> Callable[[str], str]:
    """Map a pending item of `step` to the selected topic it descends from.

    Shards partition by this lineage root, not by the item's own fingerprint: a candidate that
    shard 1 accepts must get its scenarios from shard 1 too. Keyed by its own fingerprint, the env
    could fall to shard 0, which may have finished its scen step before shard 1 accepted it, and
    the env would silently never get scenarios."""
    if step in ("mine.judge", "mine.topic", "synth"):
        return lambda fp: fp
    from envscaler_core.models import AcceptedEnv, EnvCandidate, Scenario

    topic = {c.fingerprint: c.topic_fp for c in ctx.store.query(EnvCandidate, run_id=ctx.run_id)}
    if step == "validate":
        return topic.__getitem__
    envs = ctx.store.query(AcceptedEnv, run_id=ctx.run_id)
    if step == "scen":
        return {e.fingerprint: topic[e.candidate_fp] for e in envs}.__getitem__
    by_env = {e.env_id: topic[e.candidate_fp] for e in envs}
    return {s.fingerprint: by_env[s.env_id] for s in ctx.store.query(Scenario, run_id=ctx.run_id)}.__getitem__


async def _run_step(ctx: RunContext, name: str, pending: Pending | None, task: Any,
                    shard: tuple[int, int] = (0, 1), tracker: ProgressTracker | None = None) -> list[BatchReport]:
    log = get_run_logger()
    started = time.perf_counter()
    if pending is None:  # a whole-run step (selection, dedup): one task, sync or async
        if tracker:
            tracker.step_started(name)
        result = task(ctx)
        reports = [await result if inspect.isawaitable(result) else result]
        if tracker:
            tracker.batch_done(reports[0].done, reports[0].failed)
    else:
        todo = pending(ctx)
        if shard[1] > 1:
            root = _topic_of(ctx, name)
            todo = [fp for fp in todo if in_shard(root(fp), shard)]
        if tracker:
            tracker.step_started(name, total=len(todo))
        if not todo:
            log.info("%s: nothing pending", name)
            if tracker:
                tracker.step_finished()
            return []
        limit = asyncio.Semaphore(ctx.settings.flow.batches_in_flight)  # the gateway caps LLM concurrency underneath

        async def one(batch: list[str]) -> BatchReport:
            async with limit:
                report = await task(ctx, batch)
            if tracker:
                tracker.batch_done(report.done, report.failed)
            return report

        reports = list(await asyncio.gather(*(one(b) for b in _chunks(todo, items_per_task(ctx, name)))))
    done, failed = sum(r.done for r in reports), sum(r.failed for r in reports)
    log.info("%s: %d done, %d failed in %.1f s", name, done, failed, time.perf_counter() - started)
    if tracker:
        tracker.step_finished()
    for r in reports:
        for line in r.failures[:5]:
            log.warning("%s failure %s", name, line)
    return reports


STREAMED = ("synth", "validate", "scen", "rollout")
_NARROWED: dict[str, Callable[[RunContext, Sequence[str] | None], list[str]]] = {
    "synth": lambda ctx, _: S.pending_synth(ctx),  # the first lane: only ever asked for the whole run
    "validate": S.pending_validate, "scen": S.pending_scenarios, "rollout": S.pending_rollouts,
}
_LANE_TASKS: dict[str, BatchTask] = {stage: task for stage in STREAMED for name, _, task in _STEPS[stage]
                                     if name == stage}


def streamed_stages(ctx: RunContext, stages: Sequence[str]) -> list[str]:
    """The stages a run streams: two or more of synth -> validate -> scen -> rollout, unless turned off."""
    chosen = [s for s in STREAMED if s in stages]
    return chosen if ctx.settings.flow.stream and len(chosen) > 1 else []


async def _stream(ctx: RunContext, names: list[str], shard: tuple[int, int],
                  tracker: ProgressTracker | None) -> None:
    """Run the streamed stages as one pipeline (envscaler_core/pipeline/streaming.py). Validation's dedup
    runs before each look at what is pending for validation, keeping the candidates already taken."""
    from envscaler_core.pipeline.streaming import Lane, Stream

    log = get_run_logger()

    def lane(name: str) -> Lane:
        def pending(upstream: Sequence[str] | None) -> list[str]:
            todo = _NARROWED[name](ctx, upstream)
            if upstream is None and shard[1] > 1:  # narrowed asks descend from this shard's items already
                root = _topic_of(ctx, name)
                todo = [fp for fp in todo if in_shard(root(fp), shard)]
            return todo

        def dedup(taken: frozenset[str]) -> None:
            marked = S.mark_duplicates(ctx, taken)
            if marked.done:
                log.info("validate.dedup: %d candidate(s) marked duplicate", marked.done)

        return Lane(name, pending, lambda items: _LANE_TASKS[name](ctx, items),
                    prepare=dedup if name == "validate" else None)

    ctx.set_stage("+".join(names))
    if tracker:
        tracker.steps_started(names)
    stream = Stream([lane(n) for n in names], batch_size=ctx.settings.flow.batch_size,
                    in_flight=ctx.settings.flow.batches_in_flight, progress=tracker)
    started = time.perf_counter()
    reports = await stream.run()
    for name in names:
        done, failed = sum(r.done for r in reports[name]), sum(r.failed for r in reports[name])
        took = stream.finished_at.get(name, time.perf_counter()) - started
        log.info("%s: %d done, %d failed, streamed, finished %.1f s after the stream began", name, done, failed, took)
        for r in reports[name]:
            for line in r.failures[:5]:
                log.warning("%s failure %s", name, line)


def _begin(ctx: RunContext, sources: Sequence[str]) -> None:
    """Mark the run running with the settings it runs with now: a resume's raised budget (or its new
    endpoint) is what the next resume starts from. Sources only ever grow (the CLI refuses different
    ones unless asked to add them), so `run.sources` is every file the run has read."""
    run = ctx.store.get_run(ctx.run_id)
    config = public_config(ctx.settings)
    if run is None:
        run = Run(run_id=ctx.run_id, config=config, sources=list(sources))
    known = list(run.sources)
    run = run.model_copy(update={"status": "running", "error": None, "updated_at": utcnow(), "config": config,
                                 "sources": known + [s for s in sources if s not in known]})
    ctx.store.save_run(run)


def planned_steps(stages: Sequence[str], sources: Sequence[str], streamed: Sequence[str] = ()) -> list[str]:
    steps = ["mine.ingest"] if "mine" in stages and sources else []
    for stage in STAGES:
        if stage in streamed:
            steps.append(stage)  # one step per lane; validation's dedup runs inside its lane
        elif stage in stages:
            steps += ["export"] if stage == "export" else [name for name, _, _ in _STEPS[stage]]
    return steps


def _export(ctx: RunContext, tracker: ProgressTracker | None) -> str:
    from envscaler_core.export import export_run

    if tracker:
        tracker.step_started("export")
    manifest = export_run(ctx.store, ctx.run_id, ctx.settings)
    if tracker:
        tracker.batch_done(1, 0)
        tracker.step_finished()
    return str(Path(manifest.out_dir).resolve())


def _write_report(ctx: RunContext) -> str | None:
    """The HTML report beside the exports; a failure to write it is a warning, not a failed run."""
    from envscaler_core.report import write_report

    target = outputs_root(ctx.settings) / ctx.run_id / "report.html"
    try:
        return str(write_report(ctx.store, ctx.run_id, target))
    except Exception as exc:  # noqa: BLE001 - see the docstring
        get_run_logger().warning("report not written to %s: %s: %s", target, type(exc).__name__, exc)
        return None


async def run_stages(ctx: RunContext, sources: Sequence[str], stages: Sequence[str],
                     shard: tuple[int, int] = (0, 1), tracker: ProgressTracker | None = None) -> RunSummary:
    """Chain the requested stages over the store; record the outcome on the run either way.

    With `shard=(i, n)` this process only takes the pending items of partition i of n, so n workers
    sharing a Postgres store split a stage between them (mine's selection step is global: shard
    the later stages, run mine once)."""
    from envscaler_core.llm.errors import BudgetExceeded
    from envscaler_core.llm.model_check import stage_fields

    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise ValueError(f"unknown stage(s) {unknown}; choose from {', '.join(STAGES)}")
    _begin(ctx, sources)
    outputs: dict[str, str] = {}
    try:  # a stage model the endpoint does not serve stops the run here, before anything is paid
        await ctx.gateway.check_models(stage_fields(stages, ctx.settings.rollout.mode == "conversational"))
        if "mine" in stages and sources:
            ctx.set_stage("mine.ingest")
            if tracker:
                tracker.step_started("mine.ingest")
            ingested = T.ingest(ctx, list(sources))
            if tracker:
                tracker.batch_done(ingested.done, 0)
                tracker.step_finished()
            if S.pending_judge(ctx):  # an endpoint without embeddings stops the run before mining pays
                await ctx.gateway.check_embeddings()
        streamed = streamed_stages(ctx, stages)
        for stage in STAGES:
            if stage not in stages:
                continue
            if stage in streamed or stage in SANDBOX_STAGES:
                await _sandbox_started(ctx, wait=True)
            if stage in streamed:
                if stage == streamed[0]:
                    await _stream(ctx, streamed, shard, tracker)
                continue
            if stage == "export":
                ctx.set_stage("export")
                outputs["exports"] = _export(ctx, tracker)
                continue
            for name, pending, task in _STEPS[stage]:
                ctx.set_stage(name)
                await _run_step(ctx, name, pending, task, shard, tracker)
                await _sandbox_started(ctx, wait=False)
        status, error = "completed", None
        left = left_to_other_shards(ctx, stages, shard) if shard[1] > 1 else {}
        if left:  # this shard's part is done, not the run: the run is settled by the shard that ends it
            status, error = _shard_outcome(ctx, shard, left)
        elif "export" not in stages or len(stages) > 1:  # an export-only pass judges nothing
            run = ctx.store.get_run(ctx.run_id)
            if produced_nothing(ctx.store.funnel(ctx.run_id), run.stages if run and run.stages else stages):
                status = "empty"
    except BudgetExceeded as exc:
        status, error = "stopped_budget", str(exc)
    except BaseException as exc:
        final = "failed" if isinstance(exc, Exception) else "interrupted"
        changes = {"progress": tracker.finish(final)} if tracker else {}
        with contextlib.suppress(Exception):  # a broken store must not hide why the run stopped
            error = (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__) if final == "failed" else \
                f"interrupted ({type(exc).__name__}); continue with `envscaler resume {ctx.run_id}{store_option(ctx.settings.store.url)}`"
            if shard[1] > 1:
                error = f"shard {shard[0]} of {shard[1]} {final}: {error}"
            ctx.update_run(status=final, error=error, **changes)
        raise
    # the calls still on the wire (siblings of the stage that hit the budget) land in the store first: the
    # progress, the report and the summary read it, and must count what the run was billed (rt20-R7 F3)
    await ctx.gateway.settle()
    progress = tracker.finish("completed" if status in ("running", "interrupted") and shard[1] > 1 else status) \
        if tracker else None
    ctx.update_run(stage=ctx.store.get_run(ctx.run_id).stage or "done", status=status, error=error,
                   **({"progress": progress} if progress else {}))
    if report := _write_report(ctx):
        outputs["report"] = report
    run = ctx.update_run(outputs={**ctx.store.get_run(ctx.run_id).outputs, **outputs})
    summary = build_summary(ctx.store, ctx.run_id)
    await _publish(summary)
    return summary.model_copy(update={"status": run.status})


def left_to_other_shards(ctx: RunContext, stages: Sequence[str], shard: tuple[int, int]) -> dict[int, dict[str, int]]:
    """Items of the run's other shards that no shard has tried yet, per shard index and step: what a
    shard finishing its own part must not call a completed run (an outside check: one shard of two
    failed at start, the other set the whole run `completed` with 3 of its 6 topics never built).
    Items another shard tried and failed are its own business, as in an unsharded run."""
    from envscaler_core.models import StageFailure

    tried = {f.item_fp for f in ctx.store.query(StageFailure, run_id=ctx.run_id)}
    left: dict[int, dict[str, int]] = {}
    for stage in stages:
        for name, pending, _ in _STEPS.get(stage, []):
            if pending is None:
                continue
            todo = [fp for fp in pending(ctx) if fp not in tried]
            if not todo:
                continue
            root = _topic_of(ctx, name)
            for fp in todo:
                owner = int(root(fp)[:12], 16) % shard[1]
                if owner != shard[0]:
                    counts = left.setdefault(owner, {})
                    counts[name] = counts.get(name, 0) + 1
    return left


def _shard_outcome(ctx: RunContext, shard: tuple[int, int], left: dict[int, dict[str, int]]) -> tuple[str, str | None]:
    """The run's status when this shard ends with other shards' items still pending: still `running`
    while another shard's process works on it (PostgreSQL: its claim is held; it settles the run when
    it ends), else `interrupted` naming the shards that did not finish, or the `failed` another shard
    recorded, kept."""
    others = live_shards(ctx.store, ctx.run_id, shard)
    if others:
        return "running", None
    run = ctx.store.get_run(ctx.run_id)
    if run is not None and run.status == "failed" and run.error:
        return "failed", run.error
    index, count = shard
    what = "; ".join(f"shard {i}: " + ", ".join(f"{n} {step}" for step, n in sorted(steps.items()))
                     for i, steps in sorted(left.items()))
    missing = ", ".join(str(i) for i in sorted(left))
    return "interrupted", (
        f"shard {index} of {count} finished its part, but shard(s) {missing} did not: items no shard has tried are "
        f"still pending ({what}); that shard failed, was stopped or has not run yet. Run it (shard_index {missing}, "
        f"shard_count {count}), or `envscaler resume {ctx.run_id}{store_option(ctx.settings.store.url)}` to finish "
        "them in one process")


async def _sandbox_started(ctx: RunContext, wait: bool) -> None:
    """Raise the error of a sandbox that could not start (`tasks.context.StartingPool`), waiting for
    the start first when `wait`: a run without a sandbox stops after its current step, with the
    sandbox's own message, rather than failing every item of the first stage that needs it."""
    runtime = ctx.runtime
    if wait and hasattr(runtime, "ready"):
        await asyncio.to_thread(runtime.ready)
    elif hasattr(runtime, "problem") and (problem := runtime.problem()) is not None:
        raise problem


async def _publish(summary: RunSummary) -> None:
    await create_markdown_artifact(key=artifact_key("funnel", summary.run_id), markdown=summary_markdown(summary),
                                   description=f"EnvScaler funnel for run {summary.run_id}")


def _roomy_default_executor() -> None:
    """Sandbox round trips and store writes go through `asyncio.to_thread`, whose default pool has
    cpu_count + 4 threads (6 here): with 18 validation chains each waiting on a sandbox call, calls
    queued for a thread while the LLM sat idle. The threads mostly wait on pipes, so many are cheap."""
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=64, thread_name_prefix="factory"))


@flow(name="envscaler-factory", flow_run_name="{run_id}", log_prints=True, validate_parameters=False)
async def factory_flow(run_id: str, sources: list[str], config: dict[str, Any],
                       stages: list[str] | None = None, shard_index: int = 0, shard_count: int = 1) -> dict[str, Any]:
    """The whole pipeline (or the given stages) for one run; safe to re-run with the same run id."""
    termination.reassert()  # a CLI's SIGTERM handler over Prefect's (envscaler_core/pipeline/termination.py)
    if not 0 <= shard_index < shard_count:
        raise ValueError(f"shard_index {shard_index} is not in [0, {shard_count})")
    settings = load_settings(overrides=config)  # environment first (API key, DB URL), explicit config wins
    _roomy_default_executor()
    ctx = await asyncio.to_thread(open_context, settings, run_id)
    chosen = list(stages or STAGES)
    try:
        # a run (or shard) another live process works on is refused before anything is written; the CLI
        # claimed it already in this process (envscaler_core/store/claims.py)
        with claimed_run(ctx.store, run_id, (shard_index, shard_count)):
            await crash_stale_runs(settings.store.url)  # only now: the open store's lock proves the others dead
            # absolute before the run's row is touched: a resume from any directory finds them, and a new
            # run whose source is gone fails with no row written (envscaler_core/pipeline/source_paths.py)
            sources = anchor_run_sources(ctx.store, run_id, sources, reads="mine" in chosen)
            tracker = make_tracker(ctx, (shard_index, shard_count))
            async with publishing(tracker, planned_steps(chosen, sources, streamed_stages(ctx, chosen))):
                summary = await run_stages(ctx, sources, chosen, (shard_index, shard_count), tracker)
    finally:
        await ctx.gateway.aclose()  # its HTTP pool belongs to this event loop, which ends with the flow
        await asyncio.to_thread(ctx.close)
    return summary.model_dump(mode="json")


def _stage_flow(stage: str) -> Any:
    @flow(name=f"envscaler-{stage}", flow_run_name="{run_id}-" + stage, log_prints=True, validate_parameters=False)
    async def stage_flow(run_id: str, config: dict[str, Any], sources: list[str] | None = None) -> dict[str, Any]:
        return await factory_flow.fn(run_id, sources or [], config, [stage])

    stage_flow.__doc__ = f"Only the {stage} stage of run `run_id` (pending items only)."
    return stage_flow


mine_flow = _stage_flow("mine")
synth_flow = _stage_flow("synth")
validate_flow = _stage_flow("validate")
scen_flow = _stage_flow("scen")
rollout_flow = _stage_flow("rollout")
