"""Scenario generation per accepted env: state -> task -> checklist -> checks -> reference plan -> verify.

Failures get a bounded repair loop that regenerates only the broken part (a vacuous or crashing
check, or the plan) with the verifier's diagnosis as `feedback`; what still fails is kept as a
`rejected` scenario with its reason, so the funnel shows why scenarios were lost.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from envscaler_core.config import Settings
from envscaler_core.llm.errors import LLMOutputInvalid
from envscaler_core.llm.replies import defines, extract_code
from envscaler_core.models.env import AcceptedEnv
from envscaler_core.models.scenario import CheckSpec, Scenario
from envscaler_core.models.spec import Operation
from envscaler_core.prompts.scen import (
    CHECK_FUNCTION, CHECK_FUNCTIONS, CHECKLIST, REFERENCE_SOLUTION, TASK,
    CheckFunctionInput, CheckFunctionsInput, ChecklistInput, NumberedItem, SolutionInput, TaskInput,
)
from envscaler_core.runtime import EnvRuntime
from envscaler_core.scenarios.states import StateRejected, make_initial_state
from envscaler_core.scenarios.footprint import FOOTPRINT_SCHEME
from envscaler_core.scenarios.verify import VerificationReport, verify_scenario
from envscaler_core.synth.tool_schema import tool_lines

log = logging.getLogger(__name__)
NO_TASK = "(no task: the initial state was rejected)"


def _operations(env: AcceptedEnv) -> list[Operation]:
    # model_construct: accepted tool names are already whitelisted by the sandbox schema; the spec's
    # snake_case pattern must not hide a (camelCase) tool from the task writer.
    return [
        Operation.model_construct(name=t.function.name, description=t.function.description or t.function.name,
                                  kind=env.tool_kinds.get(t.function.name, "state_change"))
        for t in env.tools
    ]


async def _check(env: AcceptedEnv, gateway: Any, state: dict[str, Any], task: str, item: str, feedback: str | None) -> CheckSpec:
    inp = CheckFunctionInput(introduction=env.introduction, initial_state=state, task=task, item=item, feedback=feedback)
    out = await gateway.structured(CHECK_FUNCTION, inp, stage="check")  # the reference writes checks with the small model
    return CheckSpec(item=item, code=extract_code(out.code, defines("check_func")))


async def _checks(env: AcceptedEnv, gateway: Any, state: dict[str, Any], task: str, items: list[str]) -> list[CheckSpec]:
    """Every item's check in one request (`scen.check_functions`); an item the answer leaves out, or every
    item when the answer is not valid, is asked on its own (`_check`), so batching never loses an item."""
    if len(items) == 1:
        return [await _check(env, gateway, state, task, items[0], None)]
    answers: dict[int, Any] = {}
    try:
        out = await gateway.structured(CHECK_FUNCTIONS, CheckFunctionsInput(
            introduction=env.introduction, initial_state=state, task=task,
            items=[NumberedItem(id=i + 1, item=it) for i, it in enumerate(items)]), stage="check")
        for answer in out.checks:
            answers.setdefault(answer.id, answer)  # a repeated id: the first answer counts
    except LLMOutputInvalid:
        pass
    missing = [i for i in range(len(items)) if i + 1 not in answers]
    again = dict(zip(missing, await asyncio.gather(*(_check(env, gateway, state, task, items[i], None) for i in missing)),
                     strict=True))
    return [again[i] if i in again else CheckSpec(item=it, code=extract_code(answers[i + 1].code, defines("check_func")))
            for i, it in enumerate(items)]


async def _solution(env: AcceptedEnv, gateway: Any, sc: Scenario, feedback: str | None) -> list:
    inp = SolutionInput(introduction=env.introduction, tools=tool_lines(env.tools), initial_state=sc.initial_state,
                        task=sc.task, checklist=sc.checklist, feedback=feedback)
    return list((await gateway.structured(REFERENCE_SOLUTION, inp, stage="scen")).calls)


async def repair(env: AcceptedEnv, gateway: Any, sc: Scenario, report: VerificationReport, attempt: int) -> Scenario:
    """Regenerate the part the report blames: broken checks, or the plan (alternating when both fit)."""
    by_index = {d.index: d for d in report.checks}
    blame_checks = report.failure in ("check_error", "nondeterministic", "vacuous") or (report.failure == "unsatisfied" and attempt % 2 == 0)
    if blame_checks:
        checks = list(sc.checks)
        broken = list(report.broken_checks())
        feedback = [(f"The previous check_func was rejected ({d.problem}): on the initial state it gave {d.on_initial}"
                     f" ({d.on_initial_error or 'no error'}); after the reference solution it gave {d.on_solved}"
                     f" ({d.on_solved_error or 'no error'}). It must be False initially and True once the item is done.")
                    for d in (by_index[i] for i in broken)]
        fixed = await asyncio.gather(*(_check(env, gateway, sc.initial_state, sc.task, by_index[i].item, fb)
                                       for i, fb in zip(broken, feedback)))  # independent of each other: at once
        for i, check in zip(broken, fixed):
            checks[i] = check
        return sc.model_copy(update={"checks": checks})
    feedback = f"The previous plan did not solve the task: {report.reason}"
    return sc.model_copy(update={"reference_solution": await _solution(env, gateway, sc, feedback)})


UNUSABLE_LLM_ERRORS = (LLMOutputInvalid,)
"""LLM failures that doom one scenario but not the batch (budget, outages and refusals propagate)."""


async def _one(env: AcceptedEnv, runtime: EnvRuntime, gateway: Any, settings: Settings,
               attributes: dict[str, str], variation: int) -> Scenario:
    unusable = UNUSABLE_LLM_ERRORS
    cfg = settings.scen
    try:
        state = await make_initial_state(env, runtime, gateway, attributes, variation, cfg.repair_attempts)
    except (StateRejected, *unusable) as exc:
        return Scenario(env_id=env.env_id, initial_state={}, task=f"{NO_TASK} [variation {variation}]",
                        status="rejected", rejection_reason=f"initial state: {exc}")
    sc = Scenario(env_id=env.env_id, initial_state=state, task=NO_TASK)
    try:
        task = (await gateway.structured(TASK, TaskInput(env_id=env.env_id, introduction=env.introduction,
                rules=env.rules, operations=_operations(env), initial_state=state), stage="scen")).task
        items = (await gateway.structured(CHECKLIST, ChecklistInput(task=task), stage="scen")).items
        sc = sc.model_copy(update={"task": task, "checklist": items})
        # the plan and the checks both follow from the checklist alone: written at once, not one after the other
        solution, checks = await asyncio.gather(_solution(env, gateway, sc, None), _checks(env, gateway, state, task, items))
        sc = sc.model_copy(update={"checks": checks, "reference_solution": solution})
        report = await asyncio.to_thread(verify_scenario, sc, env, runtime, cfg.check_timeout_s,
                                             repeats=cfg.check_repeats)
        attempt = 0
        # "load"/"empty" cannot be repaired by regenerating checks or the plan, nor can the env's own
        # "contract" breach (a query that changed state on the plan's second call to it, say).
        while not report.ok and report.failure not in ("load", "empty", "contract") and attempt < cfg.repair_attempts:
            attempt += 1
            sc = await repair(env, gateway, sc, report, attempt)
            report = await asyncio.to_thread(verify_scenario, sc, env, runtime, cfg.check_timeout_s,
                                             repeats=cfg.check_repeats)
    except unusable as exc:
        return sc.model_copy(update={"status": "rejected", "rejection_reason": f"LLM output unusable: {exc}"})
    status = "verified" if report.ok else "rejected"
    if not report.ok:
        log.info("scenario for %s rejected after %d repairs: %s", env.env_id, attempt, report.reason)
    return sc.model_copy(update={"status": status, "rejection_reason": report.reason, "repair_attempts": attempt,
                                 "footprint": report.footprint if report.ok else None,
                                 "footprint_scheme": FOOTPRINT_SCHEME})


async def generate_scenarios(env: AcceptedEnv, runtime: EnvRuntime, gateway: Any, settings: Settings) -> list[Scenario]:
    """`settings.scen.per_env` scenarios (variation 0..K-1), each verified or rejected with a reason."""
    from envscaler_core.synth.tool_schema import state_attributes

    attributes = state_attributes(env.class_code, env.class_name)
    return list(await asyncio.gather(
        *(_one(env, runtime, gateway, settings, attributes, i) for i in range(settings.scen.per_env))
    ))
