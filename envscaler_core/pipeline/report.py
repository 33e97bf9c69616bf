"""The run summary people read: the funnel, tokens and cost, and the most common failure reasons."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from envscaler_core.models.progress import RunProgress
from envscaler_core.models.source_report import SourceReport


class RunSummary(BaseModel):
    run_id: str
    status: str
    funnel: dict[str, int]
    usage: dict[str, dict[str, Any]] = Field(default_factory=dict)
    top_failures: list[tuple[str, int]] = Field(default_factory=list)
    error: str | None = Field(default=None, description="Why a failed or interrupted run stopped.")
    env_ids: list[str] = Field(default_factory=list, description="Accepted envs (for `serve-mcp ENV_ID`).")
    outputs: dict[str, str] = Field(default_factory=dict, description="'exports', 'report' -> where they went.")
    sources_report: SourceReport | None = None
    progress: RunProgress | None = None
    audit: dict[str, Any] | None = Field(default=None, description="EnvScaler import audit (interop.summary), if any.")

    @property
    def tokens(self) -> int:
        return sum(int(u.get("prompt_tokens", 0)) + int(u.get("completion_tokens", 0)) for u in self.usage.values())

    @property
    def cost_usd(self) -> float:
        return sum(float(u.get("cost_usd", 0.0)) for u in self.usage.values())

    @property
    def llm_calls(self) -> tuple[int, int]:
        """(calls, served from cache)."""
        return (sum(int(u.get("calls", 0)) for u in self.usage.values()),
                sum(int(u.get("cached", 0)) for u in self.usage.values()))


def top_reasons(reasons: list[str], n: int = 5, width: int = 100) -> list[tuple[str, int]]:
    """The most common reasons, cut to `width` characters so messages that differ only in ids or
    tracebacks further on count together."""
    def key(reason: str) -> str:
        first = reason.strip().splitlines()[0] if reason.strip() else "?"
        return first.split(" | ")[0][:width]  # "contract: ... | judge: ..." -> the fact, not the commentary

    return Counter(key(r) for r in reasons).most_common(n)


def summary_markdown(s: RunSummary) -> str:
    calls, cached = s.llm_calls
    lines = [f"# EnvScaler run `{s.run_id}` ({s.status})", "", "| stage | count |", "|---|---:|"]
    lines += [f"| {k} | {v} |" for k, v in s.funnel.items()]
    lines += ["", f"LLM calls: {calls} ({cached} from cache), tokens: {s.tokens}, cost: ${s.cost_usd:.4f}", "",
              "| LLM stage | calls | cached | retries | prompt tokens | completion tokens | cost USD |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {stage} | {u.get('calls', 0)} | {u.get('cached', 0)} | {u.get('retries', 0)} | "
              f"{u.get('prompt_tokens', 0)} | {u.get('completion_tokens', 0)} | {float(u.get('cost_usd', 0.0)):.4f} |"
              for stage, u in sorted(s.usage.items())]
    lines.append("")
    if s.top_failures:
        lines += ["| top failure reasons | n |", "|---|---:|"] + [f"| {r} | {n} |" for r, n in s.top_failures]
    if s.outputs.get("report"):
        lines += ["", f"Report: [{s.outputs['report']}](file://{s.outputs['report']}) (open it in a browser)"]
    if s.outputs.get("exports"):
        lines += ["", f"Exports: `{s.outputs['exports']}`"]
    if s.audit:
        from envscaler_core.interop.summary import audit_markdown

        lines += ["", audit_markdown(s.audit)]
    return "\n".join(lines)


def summary_text(s: RunSummary) -> str:
    from envscaler_core.mine.source_report import report_lines
    from envscaler_core.pipeline.progress_text import progress_lines

    calls, cached = s.llm_calls
    width = max((len(k) for k in s.funnel), default=10)
    lines = [f"run {s.run_id}: {s.status}"]
    if s.error and s.status != "completed":
        lines.append(f"  error: {s.error.strip().splitlines()[0][:400]}")
    lines += [f"  {k.ljust(width)}  {v:>6}" for k, v in s.funnel.items()]
    retries = sum(int(u.get("retries", 0)) for u in s.usage.values())
    lines.append(f"  LLM calls {calls} ({cached} cached, {retries} retries), tokens {s.tokens}, cost ${s.cost_usd:.4f}")
    for reason, n in s.top_failures:
        lines.append(f"  failure x{n}: {reason}")
    if s.sources_report is not None and s.sources_report.files:
        lines += ["sources:"] + report_lines(s.sources_report)
    if s.progress is not None and s.progress.steps:
        lines += ["steps:"] + progress_lines(s.progress)
    if s.env_ids:
        shown = s.env_ids[:20]
        more = f" (+{len(s.env_ids) - len(shown)} more)" if len(s.env_ids) > len(shown) else ""
        lines.append(f"envs: {' '.join(shown)}{more}   (play with one: envscaler serve-mcp ENV_ID)")
    for name in ("exports", "report"):
        if s.outputs.get(name):
            lines.append(f"{name}: {s.outputs[name]}")
    if s.audit:
        from envscaler_core.interop.summary import audit_lines

        lines.append("  EnvScaler import audit:")
        lines += ["  " + line for line in audit_lines(s.audit)]
    return "\n".join(lines)


def build_summary(store: Any, run_id: str) -> RunSummary:
    """Read everything the summary needs from the store (works for finished and crashed runs alike)."""
    from envscaler_core.models import AcceptedEnv, EnvCandidate, Scenario, StageFailure

    run = store.get_run(run_id)
    if run is None:
        raise ValueError(f"no run {run_id!r} in this store")
    reasons = [f"{f.stage}: {f.reason}" for f in store.query(StageFailure, run_id=run_id)]
    reasons += [f"rejected env: {c.failure_reason}" for c in store.query(EnvCandidate, run_id=run_id, where={"status": "rejected"})]
    reasons += [f"rejected scenario: {s.rejection_reason}" for s in store.query(Scenario, run_id=run_id, where={"status": "rejected"})]
    from envscaler_core.interop.summary import audit_summary

    return RunSummary(run_id=run_id, status=run.status, funnel=store.funnel(run_id), usage=store.llm_usage(run_id),
                      top_failures=top_reasons(reasons), error=run.error, outputs=dict(run.outputs),
                      env_ids=[e.env_id for e in store.query(AcceptedEnv, run_id=run_id)],
                      sources_report=run.sources_report, progress=run.progress, audit=audit_summary(store, run_id))
