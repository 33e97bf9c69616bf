"""Progress figures as text: the plain lines `envscaler run` prints off a terminal, `status` shows for an
active run, and the Prefect progress artifact carries. One formatter so the three always agree."""

from __future__ import annotations

from envscaler_core.models.progress import RunProgress, StepProgress


def duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def tokens(n: int) -> str:
    return f"{n / 1e6:.2f}M" if n >= 1_000_000 else f"{n / 1e3:.1f}k" if n >= 1000 else str(n)


def cost(usd: float, mock: bool = False) -> str:
    """Dollars; against the bundled mock LLM they are the list prices of tokens nobody paid for: said so."""
    return f"${usd:.4f}" + (" (mock)" if mock else "")


COUNTED_APART = {"rollout": ("trajectories", "scenarios")}
"""Steps whose done items are not the items they were given: rollout is handed scenarios and plays
`per_scenario` trajectories of each, so `300/15 done` mixed the two (outside check, 2026-11-26)."""


def items(step: StepProgress) -> str:
    units = COUNTED_APART.get(step.name)
    if units and step.total:
        return f"{step.done} {units[0]} of {step.total} {units[1]} done"
    if step.total:
        return f"{step.done}/{step.total} done"
    return f"{step.done} done" if step.finished_at is not None else "running"


def step_line(step: StepProgress, mock: bool = False) -> str:
    state = " (running)" if step.finished_at is None else f" ({step.stopped})" if step.stopped else ""
    failed = f", {step.failed} failed" if step.failed else ""
    return (f"{step.name}{state} {items(step)}{failed} · {step.llm_calls} LLM calls · {tokens(step.tokens)} tokens · "
            f"{cost(step.cost_usd, mock)} · {duration(step.elapsed_s)}")


def progress_lines(progress: RunProgress) -> list[str]:
    return [f"  {step_line(s, progress.mock_llm)}" for s in progress.steps]


def headline(progress: RunProgress) -> str:
    """One line for the whole run: what is running and the totals so far."""
    steps = progress.running or ([progress.current] if progress.current else [])
    now = "; ".join(f"{s.name} {items(s)}" + (f", {s.failed} failed" if s.failed else "") for s in steps) or \
        progress.note or "starting"
    return (f"[{duration(progress.elapsed_s)}] {progress.run_id} {progress.status}: {now} · "
            f"{progress.llm_calls} LLM calls · {tokens(progress.tokens)} tokens · {cost(progress.cost_usd, progress.mock_llm)}")
