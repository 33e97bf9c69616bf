"""Spec: a PREFECT_API_URL that is not an http(s) URL is one line naming the variable and its value,
exit 2, before anything else is checked or written (it used to surface mid-run as "unexpected
ValueError: unknown url type", after the store was made)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.helpers import assert_one_line_error, clean_env, envscaler


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, object]:
    (tmp_path / "home").mkdir()
    src = tmp_path / "t.jsonl"
    src.write_text('{"task": "Cancel my order 58291 and refund it to the original card."}\n')
    return {"src": src, "db": tmp_path / "s.duckdb", "home": tmp_path / "home"}


@pytest.mark.parametrize("value", ["notaurl", "ftp://127.0.0.1:4200/api", "http://", "http://127.0.0.1:notaport/api"])
def test_run_with_a_prefect_api_url_that_is_no_url_stops_first_naming_it(setup: dict, value: str) -> None:
    env = clean_env(setup["home"], PREFECT_API_URL=value, OPENAI_API_KEY="mock", OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    out = envscaler("run", "-s", str(setup["src"]), "--db", str(setup["db"]), env=env, timeout=120)
    assert_one_line_error(out, f"PREFECT_API_URL={value!r}", "http://")
    assert not setup["db"].exists()


def test_status_with_a_prefect_api_url_that_is_no_url_names_it(setup: dict) -> None:
    out = envscaler("status", "--db", str(setup["db"]), env=clean_env(setup["home"], PREFECT_API_URL="notaurl"), timeout=120)
    assert_one_line_error(out, "PREFECT_API_URL='notaurl'")
    assert not setup["db"].exists()
