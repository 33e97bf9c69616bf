"""Helpers shared by CLI verbs: one-line errors and the 'not built yet' exit."""

from __future__ import annotations

from typing import NoReturn

import typer


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear error line to stderr and exit (2 = could not run)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def not_implemented(topic: str) -> NoReturn:
    fail(f"not implemented yet: {topic}")


def register_placeholder(app: typer.Typer, verb: str, help_text: str, topic: str) -> None:
    """A verb whose capability is not built yet: it says so and exits 2, never pretends."""

    @app.command(
        verb,
        help=f"{help_text} [not implemented yet]",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )
    def _placeholder(ctx: typer.Context) -> None:
        not_implemented(topic)
