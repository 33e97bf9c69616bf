"""Helpers shared by CLI verbs: one-line errors."""

from __future__ import annotations

from typing import NoReturn

import typer


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear error line to stderr and exit (2 = could not run)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)
