"""`envscaler resume RUN_ID`: continue a stopped, interrupted or crashed run with the settings and sources it
started with, reaching its model the way the current environment says (see `envscaler.resume_plan`).

A demo run resumes against the bundled mock LLM started again, as the demo does. A run that already
finished (completed, or finished empty) has nothing to resume: it says so and exits 0. Exit codes are
`run`'s otherwise."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from envscaler.cli_name import cli_call
from envscaler.commands._common import DB_HELP, fail


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    @app.command(verb, help=help_text)
    def resume(
        run_id: str = typer.Argument(..., help="The run to continue."),
        db: str | None = typer.Option(None, "--db", help=DB_HELP),
        config: Path | None = typer.Option(None, "--config", "-c", help="Settings file: its store, endpoint, key, "
                                           "timeouts, concurrency, sandbox and output settings apply; the run keeps "
                                           "its own models, counts, thresholds and budget (docs/configuration.md)."),
        max_tokens: int | None = typer.Option(None, "--max-tokens", help="Raise the run's token budget (e.g. after a "
                                              "budget stop); the run keeps the new value."),
        max_cost: float | None = typer.Option(None, "--max-cost", help="Raise the run's cost budget in USD; the run "
                                              "keeps the new value."),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No live progress; only the summary."),
        json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    ) -> None:
        from envscaler.resume_plan import endpoint_change, resume_settings
        from envscaler.runner import RunRequest, run_factory, settings_from
        from envscaler.status import open_store, print_summary
        from envscaler_core.models.run import FINISHED
        from envscaler_core.store.urls import human_store

        located = settings_from(config, db)
        with open_store(located.store.url, run_id, to_work_on=True) as store:
            run = store.get_run(run_id)
            known = [r.run_id for r in store.list_runs()][-5:]
        if run is None:
            fail(f"no run {run_id!r} in {human_store(located.store.url)}"
                 + (f"; recent runs: {', '.join(known)}" if known else ""))
        if "eval" in run.config:
            from envscaler.commands.eval import resume_options
            from envscaler_core.bfcl.evaluate import EvalRequest

            options = resume_options(EvalRequest.model_validate(run.config["eval"]))
            fail(f"run {run_id} is a BFCL evaluation: continue it with "
                 f"`{cli_call('eval', 'bfcl-mt', '--run-id', run_id, tail=' ' + options)}`")
        if run.status in FINISHED:
            what = "completed" if run.status == "completed" else "finished (it produced nothing)"

            from envscaler.imported_runs import rollout_call
            from envscaler_core.interop.summary import is_import

            again = f"`{rollout_call(run_id)}` rolls it out" if is_import(run) else (
                f"`{cli_call('run', '--run-id', run_id)} -s ...` retries its failed items")
            typer.echo(f"run {run_id} is already {what}: nothing to resume. `{cli_call('status', run_id)}` shows "
                       f"it; {again}.")
            return
        with _endpoint_for(run) as (endpoint, notes):
            settings = resume_settings(run, config, db, max_tokens=max_tokens, max_cost=max_cost, endpoint=endpoint,
                                       note_changes=True)
            change = endpoint_change(run, settings)
            if change and not endpoint:
                notes.append(f"resuming with {change}")
            request = RunRequest(origin=run.origin, resume=True, mock_llm=True if endpoint else None, notes=notes,
                                 json_out=json_out)
            summary = run_factory(settings, run_id, list(run.sources), run.stages, quiet=quiet,
                                  read_sources_first=False, request=request)
        print_summary(summary, json_out, final=True)


@contextlib.contextmanager
def _endpoint_for(run: Any) -> Iterator[tuple[dict[str, Any] | None, list[str]]]:
    """A demo run: the bundled mock LLM again, on a fresh port, for the length of the resume (the cache
    keys hold no endpoint, so the old port does not matter). Any other run: the current environment's."""
    if run.origin != "demo":
        yield None, []
        return
    from mock_llm.server import MockServer

    with MockServer() as mock:
        yield ({"base_url": mock.base_url, "api_key": "mock"},
               [f"[demo] run {run.run_id} resumes against the bundled MOCK LLM, started again at {mock.base_url}"])
