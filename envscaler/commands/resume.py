"""CLI verb placeholder until its capability lands."""

from __future__ import annotations

import typer

from envscaler.commands._common import register_placeholder


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    register_placeholder(app, verb, help_text, "resume after a crash (issue 6)")
