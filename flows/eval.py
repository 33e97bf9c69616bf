"""BFCL multi-turn evaluation as a Prefect flow: one durable, resumable run per evaluation.

The run id keys every task result in the store. Re-running the flow with the same id resumes it:
tasks with a result are not played again, and the LLM calls of a task that was in flight when the
process died are answered by the gateway's persistent cache. Tasks are cut into Prefect tasks of
`flow.batch_size`; inside a batch, tasks run `llm.max_concurrency`-bounded in parallel, each in its
own sandbox episode. The results table is stored (`BFCLEvalReport`), published as the artifact
`bfcl-<run id>` and returned.
"""

from __future__ import annotations

import asyncio
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from envscaler_core.bfcl.evaluate import (
    EvalRequest, build_report, longest_first, pending, results_table, run_eval, summary_json, warn_without_usage,
)
from envscaler_core.config import load_settings, public_config
from envscaler_core.models import Run, utcnow
from envscaler_core.pipeline import termination
from envscaler_core.store.claims import claimed_run
from flows.progress import artifact_key
from flows.stale_runs import crash_stale_runs

CONCURRENCY_CAP = 16


class EvalConflict(ValueError):
    """The run id belongs to a factory run or to an evaluation of another agent/model."""


def _open(settings: Any, run_id: str, request: EvalRequest) -> tuple[Any, Any, Any]:
    from envscaler_core.bfcl.package import jail_imports
    from envscaler_core.llm import LLMGateway
    from envscaler_core.store import Store
    from sandbox import JailImports, SandboxPool

    store = Store.from_url(settings.store.url)
    try:
        pool = SandboxPool(settings.sandbox, imports=JailImports(**jail_imports()))
    except BaseException:
        store.close()
        raise
    gateway = None
    if request.agent == "llm":
        gateway = LLMGateway(settings.llm, store=store, run_id=run_id, budget=settings.budget, own_answers_only=True)
    return store, pool, gateway


def _begin(store: Any, run_id: str, request: EvalRequest, settings: Any) -> None:
    run = store.get_run(run_id)
    if run is not None:
        stored = run.config.get("eval")
        if stored is None:
            what = "an EnvScaler import" if run.origin == "import" else "a factory run"
            raise EvalConflict(f"run {run_id} is {what}, not an evaluation; pick another --run-id")
        previous = EvalRequest.model_validate(stored)
        if (previous.agent, previous.model) != (request.agent, request.model):
            raise EvalConflict(f"run {run_id} evaluated agent {previous.agent} with model {previous.model}; "
                               f"resume it with the same --agent/--model or pick another --run-id")
        if previous.temperature != request.temperature:
            was = "no temperature (the endpoint's default)" if previous.temperature is None \
                else f"--temperature {previous.temperature:g}"
            raise EvalConflict(f"run {run_id} sampled with {was}; resume it with the same --temperature or pick "
                               "another --run-id (answers at two temperatures are not one evaluation)")
        if (previous.subsets, previous.limit) != (request.subsets, request.limit):
            # a resume with other tasks would mark the run complete on them and hide what it had scored
            limit = f" --limit {previous.limit}" if previous.limit else " (no --limit)"
            raise EvalConflict(f"run {run_id} evaluates --subset {','.join(previous.subsets)}{limit}; resume it "
                               "with the same --subset/--limit, or pick another --run-id for other tasks")
    config = {**public_config(settings), "eval": request.model_dump(mode="json")}
    run = (run or Run(run_id=run_id, config=config)).model_copy(
        update={"status": "running", "error": None, "stage": "eval.bfcl-mt", "config": config, "updated_at": utcnow()})
    store.save_run(run)


def _finish(store: Any, run_id: str, status: str, error: str | None = None) -> None:
    run = store.get_run(run_id)
    if run is not None:
        store.save_run(run.model_copy(update={"status": status, "error": error, "updated_at": utcnow()}))


def report_markdown(report: Any, run_id: str) -> str:
    state = "" if report.complete else " (incomplete)"
    lines = [f"# BFCL multi-turn: run {run_id}", "", f"agent **{report.agent}**, model `{report.model}`{state}", "",
             "| subset | tasks | valid | accuracy % |", "|---|---:|---:|---:|"]
    lines += [f"| {' | '.join(row)} |" for row in results_table(report)]
    return "\n".join(lines) + "\n"


@task(name="bfcl-batch", cache_policy=NO_CACHE, persist_result=False)
async def evaluate_batch(ctx: dict[str, Any], task_ids: list[str]) -> int:
    """Play and score one batch of tasks (those of `task_ids` still pending); returns how many ran."""
    request: EvalRequest = ctx["request"]
    ids = set(task_ids)
    todo = [t for t in pending(ctx["store"], ctx["run_id"], request) if t.id in ids]
    if not todo:
        return 0
    log = get_run_logger()

    def note(result: Any) -> None:
        log.info("%s: %s%s", result.task_id, "valid" if result.valid else "invalid",
                 "" if result.valid else f" ({result.error_type})")

    await run_eval(ctx["store"], ctx["pool"], ctx["gateway"], ctx["run_id"], request,
                   concurrency=ctx["gate"], on_result=note, tasks=todo)
    return len(todo)


async def _check_model(gateway: Any, request: EvalRequest, settings: Any) -> None:
    """The factory's model check for the agent's model; a model given by --model is named as that flag."""
    if request.model != settings.llm.models.agent:
        gateway.model_origins[request.model] = f"--model {request.model!r}"
        remedy = "Give --model a served name"
    else:
        remedy = "Set ENVSCALER_LLM__MODELS__AGENT (or --model) to a served name"
    remedy += (" (an evaluation that has begun keeps its model: use a new --run-id for another), or serve the name "
               "on the server")
    await gateway.check_models(["agent"], {"agent": request.model}, remedy)


@flow(name="envscaler-eval-bfcl-mt", flow_run_name="{run_id}", log_prints=True, validate_parameters=False)
async def bfcl_eval_flow(run_id: str, request: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Evaluate (or resume evaluating) `request` under run `run_id`; returns the summary JSON."""
    termination.reassert()  # a CLI's SIGTERM handler over Prefect's (envscaler_core/pipeline/termination.py)
    req = EvalRequest.model_validate(request)
    settings = load_settings(overrides=config)
    store, pool, gateway = await asyncio.to_thread(_open, settings, run_id, req)
    try:
        # an evaluation another live process works on (PostgreSQL) is refused before anything is written
        with claimed_run(store, run_id):
            await crash_stale_runs(settings.store.url)  # the open store's lock proves its earlier flow runs dead
            if gateway is not None:  # a model the server does not serve stops here, before anything is written
                await _check_model(gateway, req, settings)
            await asyncio.to_thread(_begin, store, run_id, req, settings)
            # one gate for all batches: at most this many tasks (episodes, LLM conversations) in flight
            ctx = {"store": store, "pool": pool, "gateway": gateway, "run_id": run_id, "request": req,
                   "gate": asyncio.Semaphore(min(CONCURRENCY_CAP, settings.llm.max_concurrency))}
            todo = [t.id for t in longest_first(pending(store, run_id, req))]
            size = settings.flow.batch_size
            try:
                await asyncio.gather(*(evaluate_batch(ctx, todo[start:start + size])
                                       for start in range(0, len(todo), size)))
            except BaseException as exc:
                from envscaler_core.llm.errors import BudgetExceeded

                status = ("stopped_budget" if isinstance(exc, BudgetExceeded) else
                          "failed" if isinstance(exc, Exception) else "interrupted")
                why = (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__) \
                    if status != "interrupted" else f"interrupted ({type(exc).__name__}); finished tasks are kept: run the same `eval bfcl-mt` again"
                await asyncio.to_thread(_finish, store, run_id, status, why)
                raise
            report = await asyncio.to_thread(build_report, store, run_id, req)
            await asyncio.to_thread(store.upsert, [report], run_id)
            await asyncio.to_thread(_finish, store, run_id, "completed")
            summary = summary_json(report, run_id)
            await create_markdown_artifact(key=artifact_key("bfcl", run_id), markdown=report_markdown(report, run_id),
                                           description=f"BFCL multi-turn results of run {run_id}")
            return summary
    finally:
        if gateway is not None:
            warn_without_usage(gateway)
            await gateway.aclose()
        await asyncio.to_thread(pool.close)
        await asyncio.to_thread(store.close)
