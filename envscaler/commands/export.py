"""`envscaler export RUN_ID`: write a run's training data (SFT, LlamaFactory, RL set) and manifest.

Exit codes: 0 written, 2 nothing written (unknown run, bad format, unusable store), 130 interrupted
(no manifest.json: the export is incomplete; its temporary files are removed)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from envscaler.cli_name import cli_call
from envscaler.commands._common import DB_HELP, fail

if TYPE_CHECKING:  # the export package pulls pyarrow: imported when the command runs
    from envscaler_core.config import Settings
    from envscaler_core.export import ExportManifest


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    @app.command(verb, help=help_text)
    def export(
        run_id: str = typer.Argument(..., help="The run to export."),
        db: str | None = typer.Option(None, "--db", help=DB_HELP),
        out: Path | None = typer.Option(None, "--out", help="Base directory; files go to OUT/RUN_ID/ (default: where the "
                                        "run wrote its exports, out/ beside the store; the path is printed)."),
        fmt: str = typer.Option("all", "--format", help="all (= sft,hf,llamafactory,rl) | sft (OpenAI fine-tuning) | hf (Hugging Face chat templates, TRL) | llamafactory | rl | envscaler (EnvScaler's own files); comma-separated allowed."),
        verified_only: bool = typer.Option(False, "--verified-only", help="envscaler format: only accepted envs, "
                                           "verified RL scenarios and loadable SFT scenarios (default: everything, audit included)."),
        config: Path | None = typer.Option(None, "--config", "-c", help="Settings file (.toml/.json/.yaml); see "
                                           "docs/configuration.md."),
        json_out: bool = typer.Option(False, "--json", help="Print the manifest as JSON."),
    ) -> None:
        from envscaler.runner import settings_from, sigterm_as_interrupt
        from envscaler.status import held_message, is_locked, open_for_reading
        from envscaler_core.export import ExportError, export_dir, export_run, resolve_formats
        from envscaler_core.store import StoreError, StoreMissing

        try:
            formats = resolve_formats(f.strip() for f in fmt.split(","))
        except ExportError as exc:
            fail(f"--format: {exc}")
        settings = located = settings_from(config, db)
        if out is not None:
            _check_out(run_id, out)
        started, target = time.time(), None
        try:
            with sigterm_as_interrupt(), open_for_reading(settings.store.url) as store:
                base = _base(store, run_id, out)
                settings = _run_settings(store, run_id, located, config)
                target = export_dir(settings, run_id, base)
                manifest = export_run(store, run_id, settings, base, formats=formats, verified_only=verified_only)
        except KeyboardInterrupt:
            _interrupted(run_id, target, started)
        except ExportError as exc:
            fail(str(exc))
        except StoreMissing as exc:
            fail(f"no run {run_id!r}: {exc}")
        except StoreError as exc:  # before RuntimeError, which it is: a locked store is no interrupt
            if is_locked(exc):
                fail(held_message(settings.store.url, exc, run_id))
            fail(f"export of run {run_id} failed, nothing half-written: {exc}")
        except RuntimeError as exc:  # DuckDB turns a Ctrl-C during a query into "Query interrupted"
            if "interrupted" not in str(exc).lower():
                raise
            _interrupted(run_id, target, started)
        except OSError as exc:
            where = exc.filename or out or settings.flow.out_dir or "the default output directory"
            fail(f"export of run {run_id}: cannot write {where}: {exc.strerror or exc}; pass --out <writable directory>")
        _warn(manifest, settings.store.url)
        if json_out:
            typer.echo(manifest.model_dump_json(indent=2))
        else:
            for line in manifest.summary_lines():
                typer.echo(line)


def _check_out(run_id: str, out: Path) -> None:
    """--out is a directory the files go under (OUT/RUN_ID/): made if its parent exists, as `mkdir` would,
    but a missing parent is an error, not a tree of directories created from a typo (an outside check saw
    `--out /nonexistent/dir` make /nonexistent/dir)."""
    base = out.expanduser().resolve()
    if base.exists() or base.parent.is_dir():
        return
    what = "is not a directory" if base.parent.exists() else "does not exist"
    fail(f"export of run {run_id}: cannot write to --out {base}: the directory {base.parent} {what}; create it "
         "first, or pass --out <existing directory>")


def _warn(manifest: ExportManifest, store_url: str) -> None:
    """What the manifest says that a reader of a complete-looking export must not miss, on stderr."""
    from envscaler.cli_name import resume_call
    from envscaler_core.models.run import FINISHED

    status, run_id = manifest.run_status, manifest.run_id
    if status is not None and status not in FINISHED:
        typer.echo(f"warning: run {run_id} is {status}, not finished: this export holds only what it had made so "
                   f"far (manifest.json: run_status); `{resume_call(run_id, store_url)}` continues it", err=True)
    if manifest.other_files:
        typer.echo(f"warning: {manifest.out_dir} also holds {', '.join(manifest.other_files)} from an earlier export "
                   "(other formats), not part of this one (manifest.json: other_files); remove them if they are stale",
                   err=True)


def _base(store: object, run_id: str, out: Path | None) -> Path | None:
    """--out, else where the run itself wrote its exports (so `status` and `export` name one place), else
    the output directory the run was started with (`run --out`); an evaluation run has nothing to export
    (one line, exit 2)."""
    run = store.get_run(run_id)  # type: ignore[attr-defined]
    if run is not None and "eval" in run.config:
        fail(f"run {run_id} is a BFCL multi-turn evaluation, not a factory run: it has no envs, scenarios or "
             f"trajectories to export (its results: `{cli_call('status', run_id)}`, `{cli_call('report', run_id)}`)")
    if out is not None:
        return out
    recorded = run.outputs.get("exports") if run is not None else None
    if recorded:
        return Path(recorded).parent
    own = ((run.config.get("flow") or {}).get("out_dir") if run is not None else None)
    return Path(own).expanduser() if own else None  # a run stopped before its export stage: its own --out


def _run_settings(store: object, run_id: str, located: Settings, config: Path | None) -> Settings:
    """The run's own settings (its rollout filter above all), as `resume` builds them: an outside check
    saw a plain-shell `export` filter with the default `require_all_passed` and replace the run's own
    4-row SFT file with an empty one. Only how the store and outputs are reached comes from this command;
    an experiment setting given here with another value than the run's is refused before anything is
    written. An unknown run keeps `located`: `export_run` names it and the runs the store has."""
    from envscaler.resume_plan import resume_settings

    run = store.get_run(run_id)  # type: ignore[attr-defined]
    if run is None:
        return located
    return resume_settings(run, config, located.store.url, refuse_changes=True,
                           remedy="drop it to export the run as it was made, or export another run")


def _interrupted(run_id: str, target: Path | None, started: float) -> None:
    """Ctrl-C: the export's temporary files go (export_run removes them, this makes sure), and the user is
    told what the directory holds now: files finished before the interrupt, and no manifest.json, which is
    what marks an export whole. Typer used to turn the interrupt into a silent exit 130."""
    from envscaler_core.export.run import remove_temp_files

    if target is None or not target.is_dir():
        typer.echo(f"interrupted: export of run {run_id} stopped before writing anything", err=True)
        raise typer.Exit(130)
    remove_temp_files(target)
    done = sorted(p.name for p in target.iterdir() if p.is_file() and not p.name.startswith(".")
                  and p.stat().st_mtime >= started - 1)
    typer.echo(f"interrupted: export of run {run_id} to {target} is incomplete: manifest.json was not written; "
               f"written before the interrupt: {', '.join(done) or 'nothing'}; temporary files removed. "
               f"Run the same command again to export the run whole.", err=True)
    raise typer.Exit(130)
