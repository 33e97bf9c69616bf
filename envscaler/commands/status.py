"""`envscaler status [RUN_ID] [--watch]`: a run's funnel, tokens, cost, sources, steps, env ids and
top rejection reasons (or the run list). Works while a run is active: a DuckDB store held by the
running process is read through the progress that run publishes beside the file."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import typer

from envscaler.cli_name import cli_call
from envscaler.commands._common import DB_HELP, fail


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    @app.command(verb, help=help_text)
    def status(
        run_id: str | None = typer.Argument(None, help="Run id; omit to list runs."),
        db: str | None = typer.Option(None, "--db", help=DB_HELP),
        config: Path | None = typer.Option(None, "--config", "-c", help="Settings file (.toml/.json/.yaml); only "
                                           "its store location is used here."),
        watch: bool = typer.Option(False, "--watch", "-w", help="Refresh every few seconds until the run ends."),
        every: float = typer.Option(2.0, "--every", min=0.2, help="Seconds between refreshes with --watch."),
        json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
    ) -> None:
        from envscaler.runner import settings_from

        settings = settings_from(config, db)
        if run_id is None:
            _list(settings.store.url, json_out)
            return
        if not watch:
            _show(settings.store.url, run_id, json_out)
            return
        while True:
            finished = _show(settings.store.url, run_id, json_out, clear=not json_out)
            if finished:
                return
            time.sleep(every)


def _list(url: str, json_out: bool) -> None:
    from envscaler.status import ACTIVE, gone_verdict, open_for_reading, published_progress, run_table
    from envscaler_core.store import StoreError, StoreMissing
    from envscaler_core.store.urls import human_store

    try:
        with open_for_reading(url) as store:
            runs = store.list_runs()
    except StoreMissing:
        typer.echo(f"no runs yet: {human_store(url)} does not exist (start one with `{cli_call('demo')}` or `{cli_call('run')}`)")
        return
    except StoreError as exc:
        active = published_progress(url)
        if not active:
            fail(str(exc))
        if json_out:
            typer.echo(json.dumps([p.model_dump(mode="json") for p in active], indent=2))
            return
        typer.echo(f"{human_store(url)} is held by a running process; active run(s):")
        for p in active:
            typer.echo(f"  {p.run_id}  {p.status}  {p.current.name if p.current else '-'}  (pid {p.pid}; "
                       f"`{cli_call('status', p.run_id, '--watch')}`)")
        return
    # nobody holds the DuckDB file, or (PostgreSQL) the run's claim: a run still marked running was killed,
    # lost its store under it, or failed unrecorded
    verdicts = {r.run_id: gone_verdict(r.run_id, r.status, "eval" in r.config, url, r.updated_at)
                for r in runs if r.status in ACTIVE}
    runs = [r.model_copy(update={"status": verdict[0]}) if (verdict := verdicts.get(r.run_id)) else r for r in runs]
    if json_out:
        typer.echo(json.dumps([r.model_dump(mode="json", exclude={"config"}) for r in runs], indent=2))
    elif not runs:
        typer.echo(f"no runs in {human_store(url)}")
    else:
        typer.echo("\n".join(run_table(runs)))


def _show(url: str, run_id: str, json_out: bool, clear: bool = False) -> bool:
    """Print the run once; True when there is nothing more to watch (the run is not active)."""
    from envscaler.status import (
        held_message, is_active, open_for_reading, print_summary, progress_text, run_progress,
    )
    from envscaler_core.pipeline.report import build_summary
    from envscaler_core.store import StoreError, StoreMissing
    from envscaler_core.store.urls import human_store

    live = run_progress(url, run_id)
    active = is_active(live)
    try:
        with open_for_reading(url) as store:
            row = store.get_run(run_id)
            if row is None:
                if active:  # starting up: not recorded yet
                    raise StoreMissing("not recorded yet")
                known = [r.run_id for r in store.list_runs()][-5:]
                fail(f"no run {run_id!r} in {human_store(url)}" + (f"; recent runs: {', '.join(known)}" if known else ""))
            summary = build_summary(store, run_id)
    except StoreError as exc:
        if isinstance(exc, StoreMissing) and not active:
            fail(f"no run {run_id!r}: {exc}")
        if live is None:
            fail(held_message(url, exc, run_id))
        if clear:
            _clear_screen()
        typer.echo(live.model_dump_json(indent=2) if json_out else
                   f"(store held by the running process, pid {live.pid}; live figures)\n{progress_text(live)}")
        return not active
    if active and live is not None:
        summary = summary.model_copy(update={"progress": live})
    else:
        summary = _gone(summary, url, row.updated_at)
    if clear:
        _clear_screen()
    try:
        print_summary(summary.model_dump(mode="json"), json_out, store_url=url)
    except typer.Exit:
        if active:
            return False
        raise
    finally:
        if not json_out:  # Prefect keys are lowercase: not always `funnel-<run id>` (docs/operations.md)
            from envscaler_core.pipeline.artifact_keys import run_artifact_keys

            keys = run_artifact_keys(summary.run_id, summary.evaluation is not None)
            typer.echo(f"Prefect artifacts: {', '.join(keys)}")
    return not active


def _gone(summary: Any, url: str, updated_at: Any = None) -> Any:
    from envscaler.status import gone_verdict

    verdict = gone_verdict(summary.run_id, summary.status, summary.evaluation, url, updated_at)
    if verdict is None:
        return summary
    status, why = verdict
    return summary.model_copy(update={"status": status, "error": why if status != "interrupted" else summary.error or why})


def _clear_screen() -> None:
    """`--watch`'s redraw: written past `VisibleText`, which shows any other escape sequence escaped, and
    only to a terminal (click used to strip it from a pipe; now that nothing is stripped, it is not sent)."""
    from envscaler.terminal_text import raw_stream

    out = raw_stream(sys.stdout)
    if out.isatty():
        out.write("\033[2J\033[H")
        out.flush()
