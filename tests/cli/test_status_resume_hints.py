"""Spec: every resume hint `status` prints names the run's store when it is not the default one, so it
works as pasted (operations.md). An outside check saw `envscaler status trickle --db runs/trickle/x.duckdb`
print `continue with envscaler resume trickle`: the flow wrote the hint into the run's error without the
store, and the budget hint never named it either."""

from __future__ import annotations

import json

import pytest
import typer

from envscaler.status import print_summary
from envscaler_core.config import default_store_url

STORE = "/tmp/elsewhere/x.duckdb"


def test_a_stored_interrupted_hint_is_printed_with_the_store(capsys) -> None:  # type: ignore[no-untyped-def]
    summary = {"run_id": "trickle", "status": "interrupted", "funnel": {},
               "error": "interrupted (CancelledError); continue with `envscaler resume trickle`"}
    print_summary(summary, as_json=True, store_url=STORE)
    shown = json.loads(capsys.readouterr().out)
    assert shown["error"].endswith(f"continue with `envscaler resume trickle --db {STORE}`")


def test_the_default_store_is_not_named(capsys) -> None:  # type: ignore[no-untyped-def]
    summary = {"run_id": "r", "status": "interrupted", "funnel": {},
               "error": "interrupted (CancelledError); continue with `envscaler resume r`"}
    print_summary(summary, as_json=True, store_url=default_store_url())
    assert json.loads(capsys.readouterr().out)["error"].endswith("`envscaler resume r`")


def test_the_budget_hint_names_the_store(capsys) -> None:  # type: ignore[no-untyped-def]
    summary = {"run_id": "bud", "status": "stopped_budget", "funnel": {}}
    with pytest.raises(typer.Exit):
        print_summary(summary, as_json=True, store_url=STORE)
    assert f"resume bud --db {STORE} --max-tokens N" in capsys.readouterr().err

