"""Saying plainly when a stage produced nothing, and what that means for the run.

A run can do all its work and still yield nothing: three tasks none of which is stateful give no
topic, no env and empty export files. The funnel shows zeros; these notes say which stage emptied it,
why (in the terms of that stage) and what to try. `produced_nothing` decides the run's `empty` status:
nothing to train on from the stages it ran (for a run that reaches scenarios: no verified scenario and
no trajectory)."""

from __future__ import annotations

from collections.abc import Sequence

# funnel key -> the stage that produces it (pipeline order)
STAGE_OF: dict[str, str] = {
    "source_tasks": "mine", "stateful_tasks": "mine", "topics": "mine", "selected_topics": "mine",
    "candidates": "synth", "accepted_envs": "validate", "scenarios": "scen", "verified_scenarios": "scen",
    "trajectories": "rollout",
}
ORDER = ("mine", "synth", "validate", "scen", "rollout")

WHY: dict[str, str] = {
    "source_tasks": "no source task was read; the run had nothing to work on",
    "stateful_tasks": ("no source task was judged stateful, so there was nothing to build an env for (Stage 1 keeps "
                       "tasks that read and change the records of a domain system, such as bookings, accounts or "
                       "inventories; questions, chit-chat and one-off computations do not qualify); the judge's "
                       "reasons are listed below"),
    "topics": "topic inference failed for every stateful task (see the failure reasons)",
    "selected_topics": ("no topic was selected: every one scored below mine.min_usefulness/mine.min_modelability "
                        "or duplicated another"),
    "candidates": "no env class could be written for any selected topic (see the failure reasons)",
    "accepted_envs": "no env class passed validation (see the rejection reasons), so no scenario could be written",
    "scenarios": "no scenario could be written for any accepted env (see the failure reasons)",
    "verified_scenarios": "no scenario passed verification (see the rejection reasons), so nothing was rolled out",
    "trajectories": "no rollout was recorded (see the failure reasons)",
}
AFTER: dict[str, str] = {
    "trajectories": "the SFT exports are empty; the RL scenario set was still written",
}


def ran(stages: Sequence[str] | None) -> list[str]:
    chosen = list(stages) if stages else list(ORDER)
    return [s for s in ORDER if s in chosen]


def first_empty(funnel: dict[str, int], stages: Sequence[str] | None) -> str | None:
    """The first funnel key, among the stages that ran, that came out 0 (None if none did)."""
    wanted = set(ran(stages))
    for key, stage in STAGE_OF.items():
        if stage in wanted and key in funnel and funnel[key] == 0:
            return key
    return None


def produced_nothing(funnel: dict[str, int], stages: Sequence[str] | None) -> bool:
    """Nothing to train on from the stages that ran."""
    done = ran(stages)
    if not done:
        return False
    last = done[-1]
    if last in ("scen", "rollout"):
        return funnel.get("verified_scenarios", 0) == 0 and funnel.get("trajectories", 0) == 0
    key = {"mine": "selected_topics", "synth": "candidates", "validate": "accepted_envs"}[last]
    return funnel.get(key, 0) == 0


def funnel_notes(funnel: dict[str, int], stages: Sequence[str] | None, judged: int | None = None,
                 judge_failed: int = 0) -> list[str]:
    """One plain sentence for the stage that came out empty (and what it means downstream). `judged` and
    `judge_failed`: how many source tasks got a verdict, and how many a judgement failed for: when no
    task got one, the judge's failures emptied the run, not its verdicts."""
    key = first_empty(funnel, stages)
    if key is None:
        return []
    label = key.replace("_", " ")
    why = WHY[key]
    if key == "stateful_tasks" and judge_failed and not judged:
        why = (f"the stateful judgement failed for all {judge_failed} source task(s) (see the failure reasons), "
               "so no task could be judged stateful; running the run id again retries them")
    note = f"{label}: 0 — {why}"
    if key in AFTER:
        note += f"; {AFTER[key]}"
    elif produced_nothing(funnel, stages):
        note += "; the run produced nothing to train on (its export files are empty)"
    return [note]
