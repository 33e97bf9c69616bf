"""Reading runs back for people: the store opened briefly, and the summary printed as text or JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer

from envscaler.commands._common import fail


@contextmanager
def open_store(url: str) -> Iterator[Any]:
    from envscaler_core.store import Store, StoreError

    try:
        store = Store.from_url(url)
    except StoreError as exc:
        fail(str(exc))
    try:
        yield store
    finally:
        store.close()


EXIT_BUDGET = 3
"""`run`/`resume` exit code when the run stopped on its budget (resumable, not an error)."""


def print_summary(summary: dict[str, Any], as_json: bool) -> None:
    """Print the summary; a run stopped by its budget exits 3 with the resume hint."""
    from envscaler_core.pipeline.report import RunSummary, summary_text

    s = RunSummary.model_validate(summary)
    if as_json:
        typer.echo(json.dumps(s.model_dump(mode="json") | {"tokens": s.tokens, "cost_usd": s.cost_usd}, indent=2))
    else:
        typer.echo(summary_text(s))
    if s.status == "stopped_budget":
        typer.echo(f"stopped: budget spent; continue with `envscaler resume {s.run_id} --max-tokens N` "
                   "(or --max-cost USD)", err=True)
        raise typer.Exit(EXIT_BUDGET)
