"""Helpers shared by CLI verbs: one-line errors."""

from __future__ import annotations

from typing import NoReturn

import typer

# Every verb reads and writes the same store, so every verb describes `--db` in the same words.
DB_HELP = ("Store: a DuckDB file path or a postgresql:// URL (overrides config / ENVSCALER_DB_URL; default: "
           "envscaler.duckdb under ENVSCALER_DATA_DIR, else ~/.local/share/envscaler).")


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear error line to stderr and exit (2 = could not run)."""
    from envscaler.terminal_text import visible_line

    typer.echo(f"error: {visible_line(message)}", err=True)
    raise typer.Exit(code)


def checked_run_id(value: str | None) -> str | None:
    """`--run-id` callback: a run id that cannot name a run (it names a directory too) is a usage error."""
    from envscaler_core.models.run import run_id_problem

    if value is not None and (problem := run_id_problem(value)) is not None:
        raise typer.BadParameter(problem)
    return value
