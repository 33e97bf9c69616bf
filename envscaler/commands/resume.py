"""`envscaler resume RUN_ID`: continue a stopped or crashed run with the config and sources it started with."""

from __future__ import annotations

from pathlib import Path

import typer

from envscaler.commands._common import fail


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    @app.command(verb, help=help_text)
    def resume(
        run_id: str = typer.Argument(..., help="The run to continue."),
        db: str | None = typer.Option(None, "--db", help="Store URL (default: config / ENVSCALER_DB_URL)."),
        config: Path | None = typer.Option(None, "--config", "-c", help="Only to locate the store; the run keeps its own settings."),
        max_tokens: int | None = typer.Option(None, "--max-tokens", help="Raise the run's token budget (e.g. after a budget stop)."),
        max_cost: float | None = typer.Option(None, "--max-cost", help="Raise the run's cost budget in USD."),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No live progress; only the summary."),
        json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    ) -> None:
        from envscaler.runner import run_factory, settings_from
        from envscaler.status import open_store, print_summary

        located = settings_from(config, db)
        with open_store(located.store.url, run_id) as store:
            run = store.get_run(run_id)
            known = [r.run_id for r in store.list_runs()][-5:]
        if run is None:
            fail(f"no run {run_id!r} in {located.store.url}" + (f"; recent runs: {', '.join(known)}" if known else ""))
        config = dict(run.config)
        if max_tokens is not None or max_cost is not None:
            budget = dict(config.get("budget") or {})
            budget.update({k: v for k, v in (("max_tokens", max_tokens), ("max_cost_usd", max_cost)) if v is not None})
            config["budget"] = budget
        settings = settings_from(None, None, config)  # the run's own settings; the key from the environment
        if db:  # the same run, reached through a different URL (e.g. a moved file)
            settings = settings.model_copy(update={"store": settings.store.model_copy(update={"url": db})})
        summary = run_factory(settings, run_id, list(run.sources), quiet=quiet, read_sources_first=False)
        print_summary(summary, json_out)
