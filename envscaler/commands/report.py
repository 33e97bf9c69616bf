"""`envscaler report RUN_ID`: write the run's report, one self-contained HTML file (no network needed to
open it), and print its path. Exit 2 for an unknown run or a store that cannot be read."""

from __future__ import annotations

from pathlib import Path

import typer

from envscaler.commands._common import fail


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    @app.command(verb, help=help_text)
    def report(
        run_id: str = typer.Argument(..., help="The run to report on."),
        out: Path | None = typer.Option(None, "--out", "-o", help="HTML file to write (default: "
                                        "<flow.out_dir>/<RUN_ID>/report.html)."),
        db: str | None = typer.Option(None, "--db", help="Store URL (default: config / ENVSCALER_DB_URL / ENVSCALER_DATA_DIR)."),
        config: Path | None = typer.Option(None, "--config", "-c", help="Settings file (.toml/.json/.yaml)."),
    ) -> None:
        from envscaler.runner import settings_from
        from envscaler.status import open_store
        from envscaler_core.report import write_report

        settings = settings_from(config, db)
        with open_store(settings.store.url, run_id) as store:
            run = store.get_run(run_id)
            if run is None:
                known = [r.run_id for r in store.list_runs()][-5:]
                fail(f"no run {run_id!r} in {store.url}" + (f"; recent runs: {', '.join(known)}" if known else ""))
            out_dir = Path(run.config.get("flow", {}).get("out_dir") or settings.flow.out_dir)
            target = out or Path(run.outputs.get("report") or out_dir / run_id / "report.html")
            try:
                written = write_report(store, run_id, target)
            except OSError as exc:
                fail(f"cannot write the report to {target}: {exc.strerror or exc}; pass --out <writable file>")
        typer.echo(str(written))
