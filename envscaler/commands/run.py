"""`envscaler run`: the factory on source task files, as one durable, resumable run.

Exit codes: 0 completed, 2 could not start (bad sources, config, key, endpoint, store, a run id that
names a run with other sources), 3 stopped on its budget (resumable), 4 finished but produced nothing
(status `empty`: the summary says which stage came out empty and why), 130 interrupted by Ctrl-C
(resumable), 143 terminated by SIGTERM (resumable, as Ctrl-C), 1 failed unexpectedly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from envscaler.commands._common import DB_HELP, checked_run_id, fail


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    @app.command(verb, help=help_text)
    def run(
        source: list[Path] = typer.Option([], "--source", "-s", help="Source task file (API-Bank JSON list, BFCL or "
                                          "{\"task\": ...} JSON Lines; see docs/source_formats.md); repeatable. "
                                          "Required, except to roll out an EnvScaler import (--run-id IMP "
                                          "--stages rollout,export; docs/interop.md)."),
        config: Path | None = typer.Option(None, "--config", "-c", help="Settings file (.toml/.json/.yaml); see "
                                           "docs/configuration.md."),
        run_id: str | None = typer.Option(None, "--run-id", callback=checked_run_id, help="Run id (default: a new one). An existing id "
                                          "continues that run with its own settings (its sources must be the same, "
                                          "see --add-sources)."),
        add_sources: bool = typer.Option(False, "--add-sources", help="With an existing --run-id: add these source "
                                         "files to the run (topic selection then runs over all its topics)."),
        stages: str | None = typer.Option(None, "--stages", help="Comma-separated subset: mine,synth,validate,scen,rollout,export."),
        db: str | None = typer.Option(None, "--db", help=DB_HELP),
        out: Path | None = typer.Option(None, "--out", help="Where the exports and the report go: OUT/RUN_ID/ "
                                        "(default: out/ beside the store, ~/.local/share/envscaler/out)."),
        strict: bool = typer.Option(False, "--strict", help="Refuse to start if any source record is malformed."),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No source report or live progress; only the summary."),
        json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    ) -> None:
        from envscaler.runner import RunRequest, new_run_id, run_factory, settings_from, source_paths
        from envscaler.status import print_summary

        chosen = [s.strip() for s in stages.split(",") if s.strip()] if stages else None
        if chosen:
            from flows.factory import STAGES  # imports Prefect: only when needed

            bad = [s for s in chosen if s not in STAGES]
            if bad:
                import difflib

                close = [m[0] for b in bad if (m := difflib.get_close_matches(b, STAGES, n=1, cutoff=0.5))]
                guess = f"did you mean {', '.join(close)}? " if len(close) == len(bad) else ""
                fail(f"--stages: unknown stage(s) {', '.join(bad)}; {guess}choose from {', '.join(STAGES)}")
        if add_sources and not run_id:
            fail("--add-sources adds files to an existing run: name it with --run-id")
        paths = source_paths(source)
        if not paths:
            _rolling_out_an_import(run_id, db, config)
        overrides: dict = {"mine": {"strict_sources": True}} if strict else {}
        if out is not None:
            overrides["flow"] = {"out_dir": str(out.expanduser().resolve())}
        settings = settings_from(config, db, overrides)
        rid = run_id or new_run_id()
        _check_out_dir(settings, rid)

        def continued(existing: Any) -> Any:
            """An existing run id continues that run with its own settings, built as `resume` builds them
            (only how it reaches its model, sandbox and store, and where its outputs go, come from this
            command); an experiment setting given here that differs from the run's is refused."""
            from envscaler.resume_plan import resume_settings

            return resume_settings(existing, config, settings.store.url, flags=overrides, refuse_changes=True)

        summary = run_factory(settings, rid, paths, chosen, quiet=quiet,
                              request=RunRequest(add_sources=add_sources, continued=continued, json_out=json_out))
        print_summary(summary, json_out, final=True)


def _rolling_out_an_import(run_id: str | None, db: str | None, config: Path | None) -> None:
    """No -s: only an existing EnvScaler import may go on (checked read-only: a refusal creates no store)."""
    from envscaler.imported_runs import no_sources_problem
    from envscaler.runner import settings_from
    from envscaler.status import open_store

    run = None
    if run_id:
        with open_store(settings_from(config, db).store.url, run_id, to_work_on=True) as store:
            run = store.get_run(run_id)
    if (problem := no_sources_problem(run, run_id)) is not None:
        fail(problem)


def _check_out_dir(settings: Any, run_id: str) -> None:
    """Exports go to <out>/<RUN_ID>/ at the end of the run: a path that can never be a directory there
    (a regular file on the way) is said now, before any LLM call is paid for (it used to fail at export)."""
    from envscaler_core.config import outputs_root

    if not settings.flow.out_dir:  # beside the store: the store's own check speaks first
        return
    target = outputs_root(settings) / run_id
    for place in (target, *target.parents):
        if place.exists():
            if not place.is_dir():
                fail(f"the output directory {target} cannot be made: {place} is a file, not a directory; "
                     "pass --out <directory>")
            return

