"""`envscaler import envscaler --envs ENV_METADATA.json [--scenarios FILE ...]`: bring EnvScaler's own
data into the store as one run and audit it (env classes validated, check functions classified).

Exit codes: 0 imported (the audit may still reject envs and scenarios: that is its job), 1 nothing
imported because every env record is malformed, 2 nothing written (unreadable file, wrong top-level
shape, run id taken, store or sandbox unusable), 130 interrupted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from envscaler.commands._common import DB_HELP, checked_run_id, fail

if TYPE_CHECKING:
    from envscaler_core.config import Settings


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    sub = typer.Typer(help=help_text, no_args_is_help=True)

    @sub.command("envscaler", help="EnvScaler's env metadata and scenario files (RL with checklist_with_func, SFT without).")
    def envscaler_import(
        envs: Path = typer.Option(..., "--envs", help="Env metadata JSON: a dict keyed by env id (or a list)."),
        scenarios: list[Path] = typer.Option([], "--scenarios", help="Scenario JSON list(s); more files may follow."),
        more: list[Path] = typer.Argument(None, help="Further scenario files (so `--scenarios a.json b.json` works)."),
        solutions: Path | None = typer.Option(None, "--solutions", help="Reference-solutions sidecar (default: "
                                              "envscaler_reference_solutions.json beside --envs, if present)."),
        db: str | None = typer.Option(None, "--db", help=DB_HELP),
        run_id: str | None = typer.Option(None, "--run-id", callback=checked_run_id, help="Run id for the import (default: import-<time>-<hex>)."),
        solve: bool = typer.Option(False, "--solve", help="Ask the agent model to solve each unproven RL scenario."),
        attempts: int = typer.Option(2, "--attempts", min=1, max=10, help="Agent episodes per unproven scenario with --solve."),
        config: Path | None = typer.Option(None, "--config", "-c", help="Settings file (.toml/.json/.yaml)."),
        as_flow: bool = typer.Option(False, "--flow", help="Run as the Prefect flow (publishes the audit as an artifact)."),
        json_out: bool = typer.Option(False, "--json", help="Print only the audit as JSON."),
    ) -> None:
        from envscaler.runner import check_endpoint, new_run_id, settings_from, source_kind
        from envscaler_core.interop.summary import audit_lines

        files = [*scenarios, *(more or [])]
        for path in (envs, *files, *([solutions] if solutions else [])):
            if (kind := source_kind(path)) != "file":
                fail(f"no such file: {path}" if kind == "not found" else f"{path} {kind}, not a JSON file")
        settings = settings_from(config, db)
        if run_id is not None:
            _refuse_other_settings(run_id, settings, config)
        if solve:
            check_endpoint(settings)
        run_id = run_id or new_run_id("import")
        report = _run(envs, files, solutions, settings, run_id, solve, attempts, as_flow)
        from envscaler.terminal_text import visible_line

        for line in report["problems"]:  # the files' own text: escape sequences shown, never run (F5)
            typer.echo(visible_line(f"skipped {line}"), err=True)
        for line in report["notes"]:
            typer.echo(visible_line(f"note: {line}"), err=True)
        if json_out:
            typer.echo(json.dumps(report["summary"], indent=2))
            return
        typer.echo(f"imported EnvScaler data as run {run_id} ({len(report['problems'])} malformed record(s) skipped)")
        for line in audit_lines(report["summary"]):
            typer.echo(line)

    app.add_typer(sub, name=verb, help=help_text)


def _refuse_other_settings(run_id: str, located: Settings, config: Path | None) -> None:
    """Importing the same inputs into an existing import answers with its stored audit and changes
    nothing: a run setting given now with another value than the run's (say a rollout filter meant for
    its rollouts and exports) would be silently ignored while the run keeps its own. Refused in one line
    naming it, as `run --run-id` and `export` refuse it; the current settings (endpoint, sandbox, store)
    may differ. A factory run or an unreadable store is left to the importer, which names it."""
    from envscaler.resume_plan import resume_settings
    from envscaler.status import open_for_reading
    from envscaler_core.interop.summary import is_import
    from envscaler_core.store import StoreError

    try:
        with open_for_reading(located.store.url) as store:
            run = store.get_run(run_id)
    except StoreError:
        return
    if run is not None and is_import(run):
        resume_settings(run, config, located.store.url, refuse_changes=True,
                        remedy="drop it (the import keeps the settings it was made with), or import under a new --run-id")


def _run(envs: Path, files: list[Path], solutions: Path | None, settings: Settings, run_id: str, solve: bool,
         attempts: int, as_flow: bool) -> dict[str, Any]:
    import asyncio

    from envscaler.runner import EXIT_INTERRUPTED, claimed_store, flow_session, sigterm_as_interrupt
    from envscaler_core.config import public_config
    from envscaler_core.interop.importer import ImportRefused, NothingImportable
    from envscaler_core.interop.read import ReadError
    from envscaler_core.llm.errors import LLMConfigError
    from envscaler_core.store import StoreError
    from sandbox import SandboxUnavailable

    try:
        if as_flow:
            from flows.interop import import_flow

            with flow_session(settings), sigterm_as_interrupt():
                return asyncio.run(import_flow(run_id=run_id, envs=str(envs), scenarios=[str(f) for f in files],
                                               config=public_config(settings), solve=solve, attempts=attempts,
                                               solutions=str(solutions) if solutions else None))
        with sigterm_as_interrupt(), claimed_store(settings, run_id) as store:
            return _in_process(store, envs, files, solutions, settings, run_id, solve, attempts)
    except KeyboardInterrupt:
        _interrupted(settings, run_id)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except RuntimeError as exc:  # DuckDB turns a Ctrl-C during a query into "Query interrupted"
        if "interrupted" not in str(exc).lower():
            raise
        _interrupted(settings, run_id)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except NothingImportable as exc:
        fail(f"{exc}; nothing imported", code=1)
    except (ReadError, ImportRefused) as exc:
        fail(f"{exc}; nothing imported")
    except SandboxUnavailable as exc:
        fail(f"the sandbox is unavailable, nothing imported: {exc}")
    except (StoreError, LLMConfigError) as exc:
        fail(f"import failed, nothing written: {exc}")


def _interrupted(settings: Settings, run_id: str) -> None:
    """Say what the store holds now, not what it held when the import began: a Ctrl-C just after the
    import was stored was reported as 'nothing written' while `status` said completed."""
    from envscaler.status import open_for_reading

    status = None
    try:
        store = open_for_reading(settings.store.url, wait_s=0)  # never creates a store just to ask it
        try:
            run = store.get_run(run_id)
            status = run.status if run is not None else None
        finally:
            store.close()
    except Exception:  # noqa: BLE001 - the store may be what was interrupted; say what is known
        pass
    if status == "completed":
        from envscaler.cli_name import cli_call
        from envscaler_core.config import store_option

        shown = cli_call("status", run_id, tail=store_option(settings.store.url))
        typer.echo(f"interrupted after the import was stored: run {run_id} is complete ({shown})", err=True)
    else:
        typer.echo(f"interrupted: run {run_id} was not stored (an import is stored whole or not at all; "
                   "importing again starts over)", err=True)


def _in_process(store: Any, envs: Path, files: list[Path], solutions: Path | None, settings: Settings, run_id: str,
                solve: bool, attempts: int) -> dict[str, Any]:
    from envscaler_core.interop.importer import import_envscaler
    from sandbox import SandboxPool

    runtime = SandboxPool(settings.sandbox)
    try:
        report = import_envscaler(envs, files, store=store, runtime=runtime, settings=settings, run_id=run_id,
                                  solve=solve, attempts=attempts, solutions_path=solutions)
    finally:
        runtime.close()
    return report.model_dump(mode="json")
