"""The audit of an imported run in one shape, for `--json`, the Prefect artifact and `status`.

    {"run_id": ..., "envs": {"accepted": n, "rejected": n},
     "scenarios": {"verified": n, "unproven": n, "vacuous": n, "check_error": n, "not_bool": n, "nondeterministic": n,
                   "env_rejected": n},
     "reasons": {"rejected_envs": {reason: n}, "<class>": {reason: n}, "malformed": {"file[index]: why": 1}}}

Every imported scenario (RL and SFT) has exactly one class, so the scenario counts add up to the
records imported; malformed records were skipped and appear only under `reasons.malformed`. Each
rejected env is counted once in `rejected_envs`, under its first reason, so those counts add up to
`envs.rejected`; a scenario is counted once under each distinct reason of its class.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from envscaler_core.models.failure import StageFailure
from envscaler_core.models.interop import AUDIT_CLASSES, ImportedEnv, ImportedScenario

IMPORT_STAGE = "import"
IMPORT_ORIGIN = "import"


def is_import(run: Any) -> bool:
    """An EnvScaler import, also after `run --stages rollout,export` moved its stage on (the origin stays);
    imports written before the origin was set are known by their stage."""
    return run is not None and (run.origin == IMPORT_ORIGIN or run.stage == IMPORT_STAGE)


def summarize(run_id: str, envs: list[ImportedEnv], scenarios: list[ImportedScenario],
              malformed: list[str]) -> dict[str, Any]:
    env_counts = Counter(e.status for e in envs)
    classes = Counter(s.audit for s in scenarios)
    reasons: dict[str, dict[str, int]] = {}
    # one count per rejected env, under its first reason (what rejected it; the rest, and the advice the
    # import appends, are in the env's record): the counts add up to envs.rejected (interop check 3, F8)
    rejected = Counter((e.reasons or ["rejected"])[0] for e in envs if e.status == "rejected")
    if rejected:
        reasons["rejected_envs"] = dict(rejected.most_common())
    for cls in AUDIT_CLASSES:
        found = Counter(r for s in scenarios if s.audit == cls for r in dict.fromkeys(s.reasons))
        if found:
            reasons[cls] = dict(found.most_common())
    if malformed:
        reasons["malformed"] = dict(Counter(malformed))
    return {"run_id": run_id, "envs": {"accepted": env_counts["accepted"], "rejected": env_counts["rejected"]},
            "scenarios": {cls: classes[cls] for cls in AUDIT_CLASSES}, "reasons": reasons}


def audit_summary(store: Any, run_id: str) -> dict[str, Any] | None:
    """The audit of `run_id` read back from the store; None when the run imported nothing."""
    envs = store.query(ImportedEnv, run_id=run_id)
    if not envs:
        return None
    scenarios = store.query(ImportedScenario, run_id=run_id)
    malformed = [f.reason for f in store.query(StageFailure, run_id=run_id, where={"stage": IMPORT_STAGE})]
    return summarize(run_id, envs, scenarios, malformed)


def audit_lines(summary: dict[str, Any], top: int = 3) -> list[str]:
    """Human-readable lines (what `envscaler import` and `status` print)."""
    e, s = summary["envs"], summary["scenarios"]
    lines = [f"  envs: {e['accepted']} accepted, {e['rejected']} rejected",
             "  scenarios: " + ", ".join(f"{n} {cls}" for cls, n in s.items())]
    for key, found in summary["reasons"].items():
        for reason, n in list(found.items())[:top]:
            lines.append(f"  {key} x{n}: {reason}")
        if len(found) > top:
            lines.append(f"  {key}: ... {len(found) - top} more")
    return lines


def audit_markdown(summary: dict[str, Any]) -> str:
    lines = [f"# EnvScaler import `{summary['run_id']}`", "", "| envs | n |", "|---|---:|"]
    lines += [f"| {k} | {v} |" for k, v in summary["envs"].items()]
    lines += ["", "| scenarios | n |", "|---|---:|"] + [f"| {k} | {v} |" for k, v in summary["scenarios"].items()]
    for key, found in summary["reasons"].items():
        lines += ["", f"| {key} | n |", "|---|---:|"]
        lines += [f"| {r.replace('|', '/')[:200]} | {n} |" for r, n in list(found.items())[:20]]
    return "\n".join(lines) + "\n"
