"""A BFCL multi-turn evaluation over the store: what is pending, one task end to end, the results table.

Prefect-free (`flows/eval.py` orchestrates). An evaluation is a run id: each finished task is written
at once as a `BFCLTaskResult`, so a killed evaluation resumed with the same id plays only the tasks
without a result (and the gateway's cache answers the LLM calls of a task that was in flight).
Scoring follows BFCL's `eval_runner`: a task whose played turns are fewer than its ground-truth turns
(force-quit before its last turn) is invalid without running the checker, as is one whose inference
failed; every other task, a force-quit in its last turn included (BFCL's handler keeps that turn, so
the counts match), is what `multi_turn_checker` says, run in the sandbox.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from typing import Any

from pydantic import Field, field_validator, model_validator

from envscaler_core.bfcl.data import SUBSET_SIZE, SUBSETS, BFCLTask, Subset, load_tasks
from envscaler_core.bfcl.executor import SandboxedTask, Verdict, force_terminated
from envscaler_core.bfcl.play import GoldAgent, ModelAgent, Playthrough, play_task
from envscaler_core.llm.errors import LLMError, LLMRequestRejected
from envscaler_core.models import BFCLEvalReport, BFCLTaskResult, Model, SubsetScore
from envscaler_core.models.bfcl import EvalAgent
from envscaler_core.rollout.agents import Agent
from envscaler_core.rollout.loop import _ends_episode
from envscaler_core.runtime import EnvRuntime

GOLD_MODEL = "gold"
log = logging.getLogger(__name__)


class EvalRequest(Model):
    """What to evaluate; stored on the run so a resume can be checked against it."""

    subsets: list[Subset] = Field(min_length=1)
    limit: int | None = Field(default=None, ge=1, description="First N tasks of each subset.")
    agent: EvalAgent = "gold"
    model: str = GOLD_MODEL
    temperature: float | None = Field(default=None, ge=0, le=2, description=(
        "Sent with every request of --agent llm (the CLI's default is BFCL's 0.001); None for the gold agent, "
        "and for an evaluation stored before the option existed (its requests carried none)."))

    @field_validator("temperature", mode="before")
    @classmethod
    def _finite_and_unsigned(cls, value: Any) -> Any:
        """NaN and infinities are no temperature (NaN slipped past the range as "less than or equal to 2");
        -0.0 is 0.0, so a run stored at 0 keeps 0 and its resume hint says --temperature 0."""
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"temperature must be a number from 0 to 2, got {value!r}")
        return value + 0.0 if isinstance(value, float) and value == 0 else value

    @model_validator(mode="after")
    def _temperature_is_the_models(self) -> EvalRequest:
        if self.agent == "gold" and self.temperature is not None:
            raise ValueError("a temperature only applies to --agent llm (the gold agent replays the ground truth)")
        return self

    @field_validator("limit")
    @classmethod
    def _no_limit_past_the_subsets(cls, limit: int | None) -> int | None:
        """A limit no subset reaches is no limit: stored as none, so a resume need not repeat its digits."""
        return None if limit is not None and limit >= SUBSET_SIZE else limit

    def tasks(self) -> list[BFCLTask]:
        return [task for subset in self.subsets for task in load_tasks(subset, self.limit)]


def parse_subsets(value: str) -> list[Subset]:
    """`base`, `miss_func,long_context` or `all` -> subsets in BFCL's order; ValueError names a bad one."""
    names = [part.strip() for part in value.split(",")]
    if len(names) > 1 and not all(names):  # `base,,miss_func`: a name lost in a script's variable
        raise ValueError(f"{value!r} has an empty subset name; list subsets as base,miss_func")
    names = [n for n in names if n]
    if "all" in names:
        if names != ["all"]:
            raise ValueError(f"--subset {value!r}: `all` already means every subset ({', '.join(SUBSETS)}); "
                             "give it alone or list subsets")
        return list(SUBSETS)
    bad = [n for n in names if n not in SUBSETS]
    if bad or not names:
        raise ValueError(f"unknown subset(s) {bad or [value]}; choose from {', '.join(SUBSETS)} or all")
    return [s for s in SUBSETS if s in names]


def _results(store: Any, run_id: str, request: EvalRequest) -> list[BFCLTaskResult]:
    rows = store.query(BFCLTaskResult, run_id=run_id, where={"subset": list(request.subsets)})
    return [r for r in rows if r.agent == request.agent and r.model == request.model]


def pending(store: Any, run_id: str, request: EvalRequest) -> list[BFCLTask]:
    """Requested tasks without a result in this run, in dataset order."""
    done = {r.task_id for r in _results(store, run_id, request)}
    return [task for task in request.tasks() if task.id not in done]


def forced_quit_verdict(play: Playthrough, task: BFCLTask) -> Verdict:
    """BFCL's eval_runner verdict for a task whose played turns are not its ground-truth turns: the
    handler keeps the turn it force-quits in, so only a force-quit before the last turn gets here."""
    return force_terminated(len(play.decoded), len(task.ground_truth))


def _history_refused(exc: LLMError, play: Playthrough) -> bool:
    """A request refused for its form once the model has spoken: the history goes back as the model sent
    it, so a strict server refusing it (an empty `tool_calls` list, arguments as an object) refuses the
    model's own turns, and BFCL's handler fails that task and goes on. Refused before the model said
    anything, the form is ours (a model name, a parameter): every task would meet it, so it stops."""
    return isinstance(exc, LLMRequestRejected) and exc.status_code in (400, 422) and play.steps > 0


async def evaluate_task(task: BFCLTask, request: EvalRequest, runtime: EnvRuntime, gateway: Any = None,
                        agent: Agent | None = None) -> BFCLTaskResult:
    """Play `task` in a sandbox episode and score it; infrastructure errors (endpoint down, budget)
    propagate so the task stays pending, a model that answers unusably makes the task invalid."""
    if agent is None:
        agent = GoldAgent(task) if request.agent == "gold" else ModelAgent(gateway, request.model, request.temperature)
    started = time.perf_counter()
    executor = await asyncio.to_thread(SandboxedTask, runtime, task, request.model)
    play, verdict = Playthrough(), None  # filled as the task is played: an early end keeps what was played
    try:
        try:
            await play_task(task, agent, executor, play)
        except LLMError as exc:
            if not (_ends_episode(exc) or _history_refused(exc, play)):
                raise
            verdict = Verdict(valid=False, error_type="multi_turn:inference_error",
                              error_message=f"the model's answer could not be used: {exc}")
        if verdict is None:  # scored before the episode closes: in its unit's clean spare (executor.py)
            verdict = (forced_quit_verdict(play, task) if len(play.decoded) != len(task.ground_truth)
                       else await asyncio.to_thread(executor.score, play.decoded))
    finally:
        await asyncio.to_thread(executor.close)
    return BFCLTaskResult(
        task_id=task.id, subset=task.subset, agent=request.agent, model=request.model, valid=verdict.valid,
        error_type=verdict.error_type, error_message=verdict.error_message, details=verdict.details,
        turns=len(play.decoded), steps=play.steps, tool_calls=len(play.observations), force_quit=play.force_quit,
        decoded=play.decoded, messages=play.messages, usage=play.usage,
        elapsed_s=round(time.perf_counter() - started, 4),
    )


def build_report(store: Any, run_id: str, request: EvalRequest) -> BFCLEvalReport:
    """Accuracy per subset over the tasks evaluated so far (denominator: requested tasks with a result)."""
    results = _results(store, run_id, request)
    requested = request.tasks()
    wanted = {t.id for t in requested}
    scores: dict[str, SubsetScore] = {}
    for subset in request.subsets:
        rows = [r for r in results if r.subset == subset and r.task_id in wanted]
        valid = sum(r.valid for r in rows)
        scores[subset] = SubsetScore(tasks=len(rows), valid=valid, accuracy=round(valid / len(rows), 4) if rows else 0.0)
    scored = [s.accuracy for s in scores.values() if s.tasks]
    return BFCLEvalReport(agent=request.agent, model=request.model, subsets=scores,
                          overall=round(sum(scored) / len(scored), 4) if scored else None,
                          complete={r.task_id for r in results} >= wanted)


def longest_first(tasks: list[BFCLTask]) -> list[BFCLTask]:
    """Tasks by expected length, longest first (ties keep their order). With a fixed number in flight,
    a long task started last leaves the other slots idle while it finishes; starting the long ones
    first is the classic fix for that tail (LPT scheduling). Expected length: one model step per
    ground-truth call plus one per turn to end it; only the order changes, never what is evaluated."""
    return sorted(tasks, key=lambda t: -(sum(len(calls) for calls in t.ground_truth) + len(t.turns)))


async def run_eval(store: Any, runtime: EnvRuntime, gateway: Any, run_id: str, request: EvalRequest,
                   concurrency: int | asyncio.Semaphore = 8, on_result: Any = None,
                   tasks: list[BFCLTask] | None = None) -> None:
    """Evaluate `tasks` (default: every pending one), `concurrency` at a time, storing each result as
    it finishes; on an error the tasks already finished stay stored and the rest stay pending."""
    gate = concurrency if isinstance(concurrency, asyncio.Semaphore) else asyncio.Semaphore(max(1, concurrency))

    async def one(task: BFCLTask) -> None:
        async with gate:
            result = await evaluate_task(task, request, runtime, gateway)
        await asyncio.to_thread(store.upsert, [result], run_id)
        if on_result is not None:
            on_result(result)

    todo = longest_first(pending(store, run_id, request) if tasks is None else tasks)
    jobs = [asyncio.ensure_future(one(task)) for task in todo]
    try:
        await asyncio.gather(*jobs)
    except BaseException:
        for job in jobs:
            job.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
        raise


def results_table(report: BFCLEvalReport) -> list[list[str]]:
    """Rows for printing: subset, tasks, valid, accuracy (%), then the unweighted overall."""
    rows = [[name, str(s.tasks), str(s.valid), f"{100 * s.accuracy:.2f}"] for name, s in report.subsets.items()]
    if report.overall is not None:  # with one subset too: the JSON summary always has it
        rows.append(["overall (mean)", "", "", f"{100 * report.overall:.2f}"])
    return rows


def summary_json(report: BFCLEvalReport, run_id: str, status: str = "completed") -> dict[str, Any]:
    """The `--json` summary; `status` is the run's (`completed`, or `stopped_budget`/`interrupted`/`failed`
    for an evaluation that stopped: its table is then the finished tasks'), as `run --json` has it."""
    return {"subsets": {name: s.model_dump() for name, s in report.subsets.items()}, "overall": report.overall,
            "agent": report.agent, "model": report.model, "complete": report.complete, "run_id": run_id,
            "status": status}


def warn_without_usage(gateway: Any) -> None:
    """Warn once (at the evaluation's end, stopped or not) when the endpoint answered without `usage`:
    its tokens were estimated here and its tasks scored, where BFCL's own handler raises on the missing
    `usage.prompt_tokens` and scores every task an inference error (docs/bfcl.md, an outside check)."""
    estimated = sum(int(row.get("estimated_tokens", 0)) for row in gateway.usage_by_stage().values())
    if estimated:
        log.warning("LLM endpoint %s sends no `usage` with its replies (%d tokens estimated here): BFCL's own runs "
                    "fail every task on such replies (AttributeError on usage.prompt_tokens), so these scores are "
                    "not comparable with BFCL's; serve the model with usage reporting", gateway.endpoint, estimated)
