"""The run summary people read: the funnel, tokens and cost, the most common failure reasons, and in
plain words which stage came out empty and why (with the judge's reasons when no task was stateful).
An evaluation run (`envscaler eval`) is summarised by its results instead of a factory funnel."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from envscaler_core.inert_text import inert_line
from envscaler_core.models.progress import RunProgress
from envscaler_core.models.source_report import SourceReport
from envscaler_core.pipeline.funnel_notes import funnel_notes
from envscaler_core.shell import shell_word, shell_words

MOCK_NOTE = "mock endpoint: prices are illustrative"
JUDGED_EXAMPLES = 20
"""Tasks judged not stateful kept in the summary with the judge's reason (all of them are in the report)."""


class JudgedTask(BaseModel):
    task: str
    origin: str
    reason: str


class Judged(BaseModel):
    """Stage 1's verdicts: how many source tasks were judged stateful, not stateful, or could not be judged."""

    stateful: int = 0
    not_stateful: int = 0
    failed: int = 0
    not_stateful_examples: list[JudgedTask] = Field(default_factory=list)


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
    notes: list[str] = Field(default_factory=list, description="Which stage came out empty, why, and what it means.")
    judged: Judged | None = None
    mock_llm: bool = Field(default=False, description="Answered by the bundled MOCK LLM (costs are illustrative).")
    unpriced_models: list[str] = Field(default_factory=list, description=(
        "Models the run called that have no entry in llm.prices: their calls are counted at cost 0."))
    origin: str = "run"
    evaluation: dict[str, Any] | None = Field(default=None, description="An evaluation run's results (BFCL multi-turn).")
    audit: dict[str, Any] | None = Field(default=None, description="EnvScaler import audit (interop.summary), if any.")

    @property
    def tokens(self) -> int:
        return sum(int(u.get("prompt_tokens", 0)) + int(u.get("completion_tokens", 0)) for u in self.usage.values())

    @property
    def cached_tokens(self) -> int:
        """Prompt tokens the provider served from its prefix cache (billed at the cached-input rate)."""
        return sum(int(u.get("cached_tokens", 0)) for u in self.usage.values())

    @property
    def cost_usd(self) -> float:
        return sum(float(u.get("cost_usd", 0.0)) for u in self.usage.values())

    @property
    def llm_calls(self) -> tuple[int, int]:
        """(calls, served from cache)."""
        return (sum(int(u.get("calls", 0)) for u in self.usage.values()),
                sum(int(u.get("cached", 0)) for u in self.usage.values()))


def clip(text: str, width: int) -> str:
    """`text` in at most `width` characters: whole, or cut at the last word boundary with an ellipsis
    (mid-word only when one word fills most of the room, such as a long path)."""
    if len(text) <= width:
        return text
    room = text[: width - 1]
    if not text[width - 1].isspace():
        space = room.rfind(" ")
        if space >= width // 2:
            room = room[:space]
    return room.rstrip(" ,;:-") + "…"


def top_reasons(reasons: list[str], n: int = 5, width: int = 100) -> list[tuple[str, int]]:
    """The most common reasons, cut to `width` characters (at a word, with an ellipsis) so messages that
    differ only in ids or tracebacks further on count together."""
    def key(reason: str) -> str:
        first = reason.strip().splitlines()[0] if reason.strip() else "?"
        return clip(first.split(" | ")[0], width)  # "contract: ... | judge: ..." -> the fact, not the commentary

    return Counter(key(r) for r in reasons).most_common(n)


def cost_text(s: RunSummary) -> str:
    unpriced = f" (without {', '.join(s.unpriced_models)}: no price in llm.prices)" if s.unpriced_models else ""
    return f"${s.cost_usd:.4f}" + unpriced + (f" ({MOCK_NOTE})" if s.mock_llm else "")


def unpriced_models_of(config: dict[str, Any], usage: dict[str, dict[str, Any]]) -> list[str]:
    """The models of the stages that made calls (as the run was configured) that have no price."""
    llm = config.get("llm") if isinstance(config.get("llm"), dict) else {}
    models, prices = llm.get("models") or {}, llm.get("prices") or {}
    return sorted({model for stage, model in models.items()
                   if isinstance(model, str) and model not in prices and int((usage.get(stage) or {}).get("calls", 0))})


def summary_markdown(s: RunSummary) -> str:
    calls, cached = s.llm_calls
    lines = [f"# EnvScaler run `{s.run_id}` ({s.status})", "", "| stage | count |", "|---|---:|"]
    lines += [f"| {k} | {v} |" for k, v in s.funnel.items()]
    lines += [""] + [f"**{note}**" for note in s.notes]
    lines += ["", f"LLM calls: {calls} ({cached} from cache), tokens: {s.tokens} ({s.cached_tokens} prompt tokens "
                  f"served by the provider's prefix cache), cost: {cost_text(s)}", "",
              "| LLM stage | calls | cached | retries | prompt tokens | prefix-cached prompt tokens | completion tokens "
              "| cost USD |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {stage} | {u.get('calls', 0)} | {u.get('cached', 0)} | {u.get('retries', 0)} | "
              f"{u.get('prompt_tokens', 0)} | {u.get('cached_tokens', 0)} | {u.get('completion_tokens', 0)} | "
              f"{float(u.get('cost_usd', 0.0)):.4f} |"
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


def steps_heading(progress: RunProgress) -> str:
    """What the steps listed count: a shard's steps are that shard's alone (each shard publishes its own,
    the run row keeps the last one published), which was shown as if it were the run's."""
    if progress.shard:
        return (f"steps ({progress.shard} only, its latest publish: other shards count their own items; the funnel "
                "counts the whole run):")
    if progress.resumed:
        return "steps (this invocation, which resumed the run; the funnel counts the whole run):"
    return "steps:"


def summary_text(s: RunSummary, cli: str = "envscaler") -> str:
    """`cli` is how the user's shell reaches the CLI (a venv path when it is not on PATH), for the
    commands the summary suggests."""
    from envscaler_core.mine.source_report import report_lines
    from envscaler_core.pipeline.progress_text import progress_lines

    if s.evaluation is not None:
        return evaluation_text(s)
    calls, cached = s.llm_calls
    width = max((len(k) for k in s.funnel), default=10)
    lines = [f"run {s.run_id}: {s.status}" + (" (nothing produced)" if s.status == "empty" else "")]
    if s.error and s.status not in ("completed", "empty"):
        lines.append(f"  error: {clip(s.error.strip().splitlines()[0], 400)}")
    lines += [f"  {k.ljust(width)}  {v:>6}" for k, v in s.funnel.items()]
    lines += [f"  note: {inert_line(note)}" for note in s.notes]  # one line each, whatever an id in it holds
    if s.judged is not None and s.judged.not_stateful_examples and any(n.startswith("stateful tasks: 0") for n in s.notes):
        lines += judged_lines(s.judged)
    retries = sum(int(u.get("retries", 0)) for u in s.usage.values())
    prefix = f" ({s.cached_tokens} prompt tokens from the provider's prefix cache)" if s.cached_tokens else ""
    lines.append(f"  LLM calls {calls} ({cached} cached, {retries} retries), tokens {s.tokens}{prefix}, "
                 f"cost {cost_text(s)}")
    for reason, n in s.top_failures:
        lines.append(f"  failure x{n}: {reason}")
    if s.sources_report is not None and s.sources_report.files:
        lines += ["sources:"] + report_lines(s.sources_report)
    if s.progress is not None and s.progress.steps:
        lines += [steps_heading(s.progress)] + progress_lines(s.progress)
    if s.env_ids:
        shown = s.env_ids[:20]
        more = f" (+{len(s.env_ids) - len(shown)} more)" if len(s.env_ids) > len(shown) else ""
        # each id as the word to paste after `serve-mcp`: ids come from data (an imported file's
        # `env_$(id>/tmp/x);x` was printed bare, F4), so any that needs quoting is shown quoted; `--run`:
        # env ids are unique per run, not per store (red team 8, F4)
        lines.append(f"envs: {shell_words(*shown)}{more}   (play with one: {cli} serve-mcp --run "
                     f"{shell_word(s.run_id)} ENV_ID)")
    for name in ("exports", "report"):
        if s.outputs.get(name):
            lines.append(f"{name}: {s.outputs[name]}")
    if s.audit:
        from envscaler_core.interop.summary import audit_lines

        lines.append("  EnvScaler import audit:")
        lines += ["  " + line for line in audit_lines(s.audit)]
    return "\n".join(lines)


def judged_lines(judged: Judged, limit: int = 5) -> list[str]:
    lines = [f"  judged not stateful: {judged.not_stateful} of {judged.stateful + judged.not_stateful + judged.failed} "
             "source tasks" + (f" ({judged.failed} could not be judged)" if judged.failed else "")]
    for item in judged.not_stateful_examples[:limit]:
        task = " ".join(item.task.split())
        lines.append(f"    - {clip(task, 70)}  ({item.origin})")
        lines.append(f"      judge: {clip(' '.join(item.reason.split()), 220)}")
    if judged.not_stateful > limit:
        lines.append(f"    ... {judged.not_stateful - limit} more (all in `envscaler report`)")
    return lines


def evaluation_text(s: RunSummary) -> str:
    ev = s.evaluation or {}
    state = "" if ev.get("complete", True) else " (incomplete)"
    lines = [f"run {s.run_id}: {s.status} · BFCL multi-turn evaluation{state}: agent {ev.get('agent')}, "
             f"model {ev.get('model')}"]
    if s.error and s.status != "completed":
        lines.append(f"  error: {clip(s.error.strip().splitlines()[0], 400)}")
    lines.append(f"  {'subset':<16}{'tasks':>7}{'valid':>7}{'accuracy %':>12}")
    for name, sc in (ev.get("subsets") or {}).items():
        lines.append(f"  {name:<16}{sc['tasks']:>7}{sc['valid']:>7}{100 * sc['accuracy']:>12.2f}")
    if len(ev.get("subsets") or {}) > 1 and ev.get("overall") is not None:
        lines.append(f"  {'overall (mean)':<30}{100 * ev['overall']:>12.2f}")
    calls, cached = s.llm_calls
    if calls:
        lines.append(f"  LLM calls {calls} ({cached} cached), tokens {s.tokens}, cost {cost_text(s)}")
    lines.append("  (an evaluation run: it has no factory funnel and nothing to export)")
    return "\n".join(lines)


def build_summary(store: Any, run_id: str) -> RunSummary:
    """Read everything the summary needs from the store (works for finished and crashed runs alike)."""
    from envscaler_core.models import AcceptedEnv, EnvCandidate, Scenario, StageFailure

    run = store.get_run(run_id)
    if run is None:
        raise ValueError(f"no run {run_id!r} in this store")
    if "eval" in run.config:
        return RunSummary(run_id=run_id, status=run.status, funnel={}, usage=store.llm_usage(run_id), error=run.error,
                          outputs=dict(run.outputs), origin="eval", mock_llm=run.mock_llm,
                          evaluation=evaluation_of(store, run_id, run.config["eval"]))
    reasons = [f"{f.stage}: {f.reason}" for f in store.query(StageFailure, run_id=run_id)]
    reasons += [f"rejected env: {c.failure_reason}" for c in store.query(EnvCandidate, run_id=run_id, where={"status": "rejected"})]
    reasons += [f"rejected scenario: {s.rejection_reason}" for s in store.query(Scenario, run_id=run_id, where={"status": "rejected"})]
    from envscaler_core.interop.summary import audit_summary

    funnel = store.funnel(run_id)
    usage = store.llm_usage(run_id)
    audit = audit_summary(store, run_id)
    # an import reads no source tasks: its audit says what it did, not "the run had nothing to work on"
    finished = run.status in ("completed", "empty") and audit is None
    judged = judged_of(store, run_id)
    notes = funnel_notes(funnel, run.stages, judged.stateful + judged.not_stateful, judged.failed) if finished else []
    return RunSummary(run_id=run_id, status=run.status, funnel=funnel, usage=usage,
                      unpriced_models=unpriced_models_of(run.config or {}, usage),
                      top_failures=top_reasons(reasons), error=run.error, outputs=dict(run.outputs),
                      env_ids=[e.env_id for e in store.query(AcceptedEnv, run_id=run_id)],
                      sources_report=run.sources_report, progress=run.progress,
                      notes=notes, judged=judged,
                      mock_llm=run.mock_llm, origin=run.origin, audit=audit)


def judged_of(store: Any, run_id: str) -> Judged:
    """Stage 1's verdicts, with the judge's reason for the first tasks judged not stateful."""
    from envscaler_core.models import SourceTask, StageFailure

    tasks = store.query(SourceTask, run_id=run_id)
    failed = {f.item_fp for f in store.query(StageFailure, run_id=run_id, where={"stage": "mine.judge"})}
    no = [t for t in tasks if t.stateful is False]
    return Judged(stateful=sum(1 for t in tasks if t.stateful), not_stateful=len(no),
                  failed=sum(1 for t in tasks if t.stateful is None and t.fingerprint in failed),
                  not_stateful_examples=[JudgedTask(task=t.text, origin=t.origin, reason=t.judge_reason or "(no reason given)")
                                         for t in no[:JUDGED_EXAMPLES]])


def evaluation_of(store: Any, run_id: str, request: dict[str, Any]) -> dict[str, Any]:
    """The stored results table of an evaluation run, or one counted from its task results so far."""
    from envscaler_core.models import BFCLEvalReport, BFCLTaskResult

    stored = store.query(BFCLEvalReport, run_id=run_id)
    if stored:
        report = stored[-1]
        return {"agent": report.agent, "model": report.model, "complete": report.complete, "overall": report.overall,
                "subsets": {k: v.model_dump() for k, v in report.subsets.items()}}
    subsets: dict[str, dict[str, Any]] = {name: {"tasks": 0, "valid": 0, "accuracy": 0.0}
                                          for name in request.get("subsets") or []}
    for r in store.query(BFCLTaskResult, run_id=run_id):
        row = subsets.setdefault(r.subset, {"tasks": 0, "valid": 0, "accuracy": 0.0})
        row["tasks"] += 1
        row["valid"] += int(r.valid)
    for row in subsets.values():
        row["accuracy"] = round(row["valid"] / row["tasks"], 4) if row["tasks"] else 0.0
    scored = [r["accuracy"] for r in subsets.values() if r["tasks"]]
    return {"agent": request.get("agent"), "model": request.get("model"), "complete": False, "subsets": subsets,
            "overall": round(sum(scored) / len(scored), 4) if scored else None}
