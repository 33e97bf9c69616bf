"""`envscaler status [RUN_ID]`: the funnel, tokens, cost and top rejection reasons of a run (or the run list)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from envscaler.commands._common import fail


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    @app.command(verb, help=help_text)
    def status(
        run_id: str | None = typer.Argument(None, help="Run id; omit to list runs."),
        db: str | None = typer.Option(None, "--db", help="Store URL (default: config / ENVSCALER_DB_URL)."),
        config: Path | None = typer.Option(None, "--config", "-c"),
        json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
    ) -> None:
        from envscaler.runner import settings_from
        from envscaler.status import open_store, print_summary
        from envscaler_core.pipeline.report import build_summary

        settings = settings_from(config, db)
        with open_store(settings.store.url) as store:
            if run_id is None:
                runs = store.list_runs()
                if json_out:
                    typer.echo(json.dumps([r.model_dump(mode="json", exclude={"config"}) for r in runs], indent=2))
                for r in [] if json_out else runs:
                    typer.echo(f"{r.run_id}  {r.status:<15} stage={r.stage or '-':<12} updated={r.updated_at:%Y-%m-%d %H:%M:%S}")
                if not runs and not json_out:
                    typer.echo(f"no runs in {settings.store.url}")
                return
            if store.get_run(run_id) is None:
                fail(f"no run {run_id!r} in {settings.store.url}")
            summary = build_summary(store, run_id)
        print_summary(summary.model_dump(mode="json"), json_out)
