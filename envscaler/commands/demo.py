"""`envscaler demo`: the factory end to end on bundled real API-Bank tasks and the built-in MOCK LLM."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from envscaler.commands._common import DB_HELP, fail


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    @app.command(verb, help=help_text)
    def demo(
        workdir: Path | None = typer.Option(None, "--workdir", help="Where the demo's Prefect server keeps its "
                                            "database and log, in WORKDIR/prefect (default: $PREFECT_HOME if set, "
                                            "else var/demo)."),
        db: str | None = typer.Option(None, "--db", help=DB_HELP),
        out: Path | None = typer.Option(None, "--out", help="Where the exports and the report go: OUT/RUN_ID/ "
                                        "(default: out/ beside the store)."),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No live progress; only the summary."),
        prefect: str = typer.Option("server", "--prefect", help="'server': reuse or start a local Prefect server "
                                    "(dashboard; later commands report to it too); 'ephemeral': a temporary one "
                                    "for this process only."),
        port: int = typer.Option(4200, "--prefect-port", help="Port for a Prefect server the demo starts."),
        max_tasks: int = typer.Option(80, "--max-tasks", help="Source tasks read from the bundled API-Bank slice."),
    ) -> None:
        # before prefect is imported anywhere; a --workdir given wins over an inherited PREFECT_HOME
        if workdir is not None or not os.environ.get("PREFECT_HOME"):
            os.environ["PREFECT_HOME"] = str((workdir or Path("var/demo")).expanduser().resolve() / "prefect")
        home = Path(os.environ["PREFECT_HOME"]).expanduser()
        _make_prefect_home(home)
        from envscaler.demo import DEMO_OVERRIDES, SLICE, where_to_look
        from envscaler.prefect_server import (PrefectServer, StartInterrupted, ensure_prefect_server, record_server,
                                              recorded_server)
        from envscaler.runner import RunRequest, new_run_id, run_factory, settings_from
        from envscaler.status import print_summary
        from mock_llm.server import MockServer

        if prefect not in ("server", "ephemeral"):
            fail("--prefect must be 'server' or 'ephemeral'")
        server = None
        if prefect == "server":
            typer.echo(f"[demo] Prefect: looking for a local server (or starting one on 127.0.0.1:{port}; "
                       "starting takes 30-60 s) ...")
            earlier = recorded_server()  # a server an earlier demo started, still running (its pid is alive)
            try:
                server = ensure_prefect_server(home, port)
            except StartInterrupted as exc:
                typer.echo(f"[demo] interrupted while the Prefect server it started was coming up: stopped it "
                           f"(pid {exc.pid}); nothing is left running on 127.0.0.1:{port}", err=True)
                raise typer.Exit(130) from None
            except RuntimeError as exc:
                fail(str(exc))
            os.environ["PREFECT_API_URL"] = server.api_url
            started_by = "`envscaler demo`"
            if server.pid is None and earlier is not None and earlier[0].pid is not None \
                    and earlier[0].api_url == server.api_url:
                # the demo's own server from an earlier demo: keep its pid, so the stop hint stays
                server, started_by = PrefectServer(server.api_url, earlier[0].pid), earlier[1]
                typer.echo(f"[demo] Prefect: reporting to the server an earlier demo started at {server.ui_url} "
                           f"(pid {server.pid})")
            elif server.pid is None:  # a server that was already answering: say whose it is not
                typer.echo(f"[demo] Prefect: reporting to the server already answering at {server.ui_url} (not started "
                           "by the demo; --prefect-port N or --prefect ephemeral to use one of its own)")
            record_server(server, started_by)
        with MockServer() as mock:
            typer.echo(f"[demo] MOCK LLM (scripted, not a model) at {mock.base_url}")
            overrides = {**DEMO_OVERRIDES, "mine": {**DEMO_OVERRIDES["mine"], "max_tasks": max_tasks},
                         "llm": {"base_url": mock.base_url, "api_key": "mock"}}
            if out is not None:
                overrides["flow"] = {**DEMO_OVERRIDES["flow"], "out_dir": str(out.expanduser().resolve())}
            settings = settings_from(None, db, overrides)
            run_id = new_run_id("demo")
            typer.echo(f"[demo] run {run_id}: {SLICE.name} -> topics -> envs -> validation -> scenarios -> rollouts -> exports")
            summary = run_factory(settings, run_id, [str(SLICE)], quiet=quiet,
                                  request=RunRequest(origin="demo", mock_llm=True))
            requests = mock.stats()["requests_total"]
        typer.echo("")
        print_summary(summary, False)
        typer.echo("")
        for line in where_to_look(summary, settings, server, requests):
            typer.echo(line)


def _make_prefect_home(home: Path) -> None:
    """Prefect only warns when it cannot create its home, and a temporary server then dies at start-up
    with "Application startup failed": the directory is made here, or the reason is the one line."""
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"--workdir: cannot create the Prefect home {home}: {exc.strerror or exc}")
