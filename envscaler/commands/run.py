"""`envscaler run`: the factory on source task files, as one durable, resumable run.

Exit codes: 0 completed, 2 could not start (bad sources, config, key, endpoint, store), 3 stopped on
its budget (resumable), 130 interrupted by Ctrl-C (resumable), 1 failed unexpectedly."""

from __future__ import annotations

from pathlib import Path

import typer

from envscaler.commands._common import fail


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    @app.command(verb, help=help_text)
    def run(
        source: list[Path] = typer.Option(..., "--source", "-s", help="Source task file (API-Bank JSON list, BFCL or "
                                          "{\"task\": ...} JSON Lines; see docs/source_formats.md); repeatable."),
        config: Path | None = typer.Option(None, "--config", "-c", help="Settings file (.toml/.json/.yaml)."),
        run_id: str | None = typer.Option(None, "--run-id", help="Run id (default: a new one). An existing id resumes it."),
        stages: str | None = typer.Option(None, "--stages", help="Comma-separated subset: mine,synth,validate,scen,rollout,export."),
        db: str | None = typer.Option(None, "--db", help="Store URL (overrides config / ENVSCALER_DB_URL; default: "
                                      "a DuckDB file under ENVSCALER_DATA_DIR, ~/.local/share/envscaler)."),
        strict: bool = typer.Option(False, "--strict", help="Refuse to start if any source record is malformed."),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No source report or live progress; only the summary."),
        json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    ) -> None:
        from envscaler.runner import new_run_id, run_factory, settings_from, source_paths
        from envscaler.status import print_summary

        chosen = [s.strip() for s in stages.split(",") if s.strip()] if stages else None
        if chosen:
            from flows.factory import STAGES  # imports Prefect: only when needed

            bad = [s for s in chosen if s not in STAGES]
            if bad:
                fail(f"--stages: unknown stage(s) {', '.join(bad)}; choose from {', '.join(STAGES)}")
        paths = source_paths(source)
        settings = settings_from(config, db, {"mine": {"strict_sources": True}} if strict else None)
        rid = run_id or new_run_id()
        summary = run_factory(settings, rid, paths, chosen, quiet=quiet)
        print_summary(summary, json_out)
